#!/usr/bin/env python3
"""GPU arrays from Python: voxlabel.label on a CuPy mask (the device labeller on the caller's stream, no host
round trip) against cupyx.scipy.ndimage.label and bkeccl (BKE on CuPy, PyPI; 3D 26-connectivity only, so
its column is empty for 6 and 18) on the same mask, and a PyTorch tensor through DLPack; the
docs/gpu.md kernel table is the C-level reference for the same volumes. Masks are made on the device:
Bernoulli 0.5 and 0.2 at 512^3 and a CT-like pattern (thresholded smooth noise) at 512x512x400.
Wall time per call around a stream synchronize, median of REPEATS after 3 warm-ups (bkeccl compiles its
kernels in the first). Numberings differ (bkeccl's dense labels follow its own scan); the counts of every peer
must equal voxlabel's, else a MISMATCH line. bkeccl is optional: "-" when it is not importable.
usage: python_gpu_bench.py [REPEATS]   (PYTHONPATH and VOXLABEL_LIBRARY set by bench/python_device_run.sh)"""
import sys
import time

import cupy
import numpy
from cupyx.scipy import ndimage

import voxlabel


def timed(function, repeats):
    times = []
    for run in range(3 + repeats):
        cupy.cuda.get_current_stream().synchronize()
        start = time.perf_counter()
        result = function()
        cupy.cuda.get_current_stream().synchronize()
        if run >= 3:
            times.append((time.perf_counter() - start) * 1e3)
    return float(numpy.median(times)), result


def ct_like(shape, seed):
    noise = cupy.random.default_rng(seed).random(shape, dtype=cupy.float32)
    smooth = ndimage.uniform_filter(noise, 5)
    return smooth > float(cupy.percentile(smooth, 80))


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    mismatches = 0
    rng = cupy.random.default_rng(7)
    volumes = [("noise50 512^3", rng.random((512, 512, 512)) < 0.5),
               ("noise20 512^3", rng.random((512, 512, 512)) < 0.2),
               ("CT-like 400x512x512", ct_like((400, 512, 512), 8))]
    print("| volume | conn | N | voxlabel.label(cupy) ms | cupyx.scipy.ndimage.label ms | x cupyx | bkeccl ms "
          "| x bkeccl | torch tensor ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    try:
        import torch
    except ImportError:
        torch = None
    try:
        import bkeccl
        print("bkeccl", bkeccl.__version__, bkeccl.__file__)
    except ImportError as error:
        bkeccl = None
        print("bkeccl not importable (%s): its columns stay empty" % error)
    for name, mask in volumes:
        for conn, rank in ((6, 1), (18, 2), (26, 3)):
            ours_ms, (labels, n) = timed(lambda: voxlabel.label(mask, connectivity=conn), repeats)
            structure = ndimage.generate_binary_structure(3, rank)
            peer_ms, (_, peer_n) = timed(lambda: ndimage.label(mask, structure), repeats)
            if int(peer_n) != n:
                print("MISMATCH %s conn %d: voxlabel %d, cupyx %d" % (name, conn, n, int(peer_n)))
                mismatches += 1
            bke_ms, bke_ratio = "-", "-"
            if bkeccl is not None and conn == 26:
                milliseconds, (_, bke_n) = timed(lambda: bkeccl.ccl(mask, dimensionality="3D"), repeats)
                if int(bke_n) != n:
                    print("MISMATCH %s conn %d: voxlabel %d, bkeccl %d" % (name, conn, n, int(bke_n)))
                    mismatches += 1
                bke_ms, bke_ratio = "%.2f" % milliseconds, "%.1f" % (milliseconds / ours_ms)
            torch_ms = "-"
            if torch is not None and torch.cuda.is_available():
                tensor = torch.as_tensor(mask.view(cupy.uint8), device="cuda")
                torch_ms = "%.2f" % timed(lambda: voxlabel.label(tensor, connectivity=conn), repeats)[0]
            print("| %s | %d | %d | %.2f | %.2f | %.1f | %s | %s | %s |" % (name, conn, n, ours_ms, peer_ms,
                                                                           peer_ms / ours_ms, bke_ms, bke_ratio,
                                                                           torch_ms), flush=True)
            del labels
            cupy.get_default_memory_pool().free_all_blocks()
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
