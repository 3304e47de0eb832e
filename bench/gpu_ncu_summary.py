#!/usr/bin/env python3
"""Per-kernel time and DRAM bytes of one `gpu_bench --only` call from `ncu --csv --metrics
gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum` output. The bench runs the floor kernel
several times: it is shown once (its median) and left out of the labelling's sum. Further metrics in the
output (registers, occupancy, instructions, ...) get a column each, under their ncu names and units.
usage: gpu_ncu_summary.py NCU_CSV"""
import csv
import sys


def main():
    with open(sys.argv[1]) as handle:
        lines = [line for line in handle if line.startswith('"')]
    rows = {}
    order = []
    known = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]
    extra, units = [], []
    for row in csv.DictReader(lines):
        key = (row["ID"], row["Kernel Name"].split("(")[0][:60])
        if key not in rows:
            rows[key] = {}
            order.append(key)
        value = float(row["Metric Value"].replace(",", ""))
        unit = row["Metric Unit"]
        scale = {"ns": 1e-6, "us": 1e-3, "usecond": 1e-3, "nsecond": 1e-6, "ms": 1, "msecond": 1,
                 "byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1, "Gbyte": 1e3, "KB": 1e-3, "MB": 1, "GB": 1e3, "B": 1e-6}
        rows[key][row["Metric Name"]] = value * scale.get(unit, 1)
        if row["Metric Name"] not in known + extra:
            extra.append(row["Metric Name"])
            units.append(unit)
    print(f"\n{sys.argv[1]}\n| kernel | ms | DRAM read MB | DRAM write MB |" +
          "".join(f" {name} ({unit}) |" for name, unit in zip(extra, units)) + "\n|---|---|---|---|" + "---|" * len(extra))
    total = 0.0
    floors = []
    for key in order:
        r = rows[key]
        if "floor_kernel" in key[1]:
            floors.append(r)
            continue
        total += r.get("gpu__time_duration.sum", 0)
        print(f"| {key[1]} | {r.get('gpu__time_duration.sum', 0):.4f} | {r.get('dram__bytes_read.sum', 0):.1f} | "
              f"{r.get('dram__bytes_write.sum', 0):.1f} |" + "".join(f" {r.get(name, 0):.4g} |" for name in extra))
    print(f"| labelling, all kernels | {total:.4f} | | |" + " |" * len(extra))
    if floors:
        floors.sort(key=lambda r: r.get("gpu__time_duration.sum", 0))
        r = floors[len(floors) // 2]
        print(f"| floor (median of {len(floors)}) | {r.get('gpu__time_duration.sum', 0):.4f} | "
              f"{r.get('dram__bytes_read.sum', 0):.1f} | {r.get('dram__bytes_write.sum', 0):.1f} |")


if __name__ == "__main__":
    main()
