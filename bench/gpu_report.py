#!/usr/bin/env python3
"""Merges the gpu_bench RESULT lines and the gpu_cupy_peer PEER lines of one run into a markdown table:
kernel time (label + matlab-order relabel + sizes), Gvox/s, ratio to the floor measured in the same run,
CuPy's time and the speed-up, and the issue 3 target with its verdict.
usage: gpu_report.py BENCH_LOG PEER_LOG"""
import sys

TARGETS = {("noise50", 26): 2.0, ("noise20", 26): 2.0, ("ct", 26): 0.6,
           ("noise50", 6): 2.5, ("ct", 6): 1.5, ("noise20", 18): 3.0, ("ct", 18): 1.0}
VOXELS = {"noise50": 512 ** 3, "noise20": 512 ** 3, "ct": 512 * 512 * 400}


def read(path, tag):
    rows = {}
    with open(path) as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == tag:
                rows[(fields[1], int(fields[2]))] = fields[3:]
    return rows


def main():
    ours, peers = read(sys.argv[1], "RESULT"), read(sys.argv[2], "PEER") if len(sys.argv) > 2 else {}
    print("| volume | conn | N | N (CuPy) | union ms | label+relabel+sizes ms (matlab) | matlab-xy ms | size ms"
          " | Gvox/s | x floor | floor ms | e2e ms | CuPy ms | x CuPy | target ms | met |")
    print("|" + "---|" * 16)
    for (volume, conn), r in ours.items():
        count, union, total, total_xy, total_size, floor, e2e, scratch = r
        total = float(total)
        peer = peers.get((volume, conn))
        peer_ms = float(peer[1]) if peer else float("nan")
        target = TARGETS.get((volume, conn))
        verdict = "-" if target is None else ("yes" if total <= target else f"no (+{total - target:.2f} ms)")
        slowest = max(total, float(total_xy), float(total_size))
        ratio = peer_ms / slowest if peer else float("nan")
        print(f"| {volume} | {conn} | {count} | {peer[0] if peer else '-'} | {float(union):.3f} | {total:.3f} | "
              f"{float(total_xy):.3f} | {float(total_size):.3f} | {VOXELS[volume] / total / 1e6:.1f} | "
              f"{total / float(floor):.2f} | {float(floor):.4f} | {float(e2e):.2f} | {peer_ms:.2f} | {ratio:.1f} | "
              f"{target if target else '-'} | {verdict} |")
    mismatched = [key for key, r in ours.items() if key in peers and peers[key][0] != r[0]]
    if mismatched:
        print(f"\ncomponent counts differ from CuPy on {mismatched}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
