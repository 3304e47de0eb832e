#!/usr/bin/env python3
"""GPU arrays from Python: voxlabel.label on a CuPy mask (the device labeller on the caller's stream, no host
round trip) against cupyx.scipy.ndimage.label and bkeccl (BKE on CuPy, PyPI; 3D 26-connectivity only, so
its column is empty for 6 and 18) on the same mask, and a PyTorch tensor through DLPack; the
docs/gpu.md kernel table is the C-level reference for the same volumes. Masks are made on the device:
Bernoulli 0.5 and 0.2 at 512^3 and a CT-like pattern (thresholded smooth noise) at 512x512x400.
Wall time per call around a stream synchronize, median of REPEATS after 3 warm-ups (bkeccl compiles its
kernels in the first). Numberings differ (bkeccl's dense labels follow its own scan); the counts of every peer
must equal voxlabel's, else a MISMATCH line. bkeccl is optional: "-" when it is not importable.
A second table splits one call (conn 26, and conn 6 on the CT-like volume) into its layers: voxlabel.label
from Python, the C entry vl_label_device_array called directly through ctypes, the labeller
vl_gpu_label_device with its CUDA-event timing, and the kernels' time from those events (first event before
the first memset, last after the last kernel: the docs/gpu.md figure); "call - kernels" is what a Python
call costs beyond the kernels.
usage: python_gpu_bench.py [REPEATS]   (PYTHONPATH and VOXLABEL_LIBRARY set by bench/python_device_run.sh)"""
import ctypes
import sys
import time

import cupy
import numpy
from cupyx.scipy import ndimage

import voxlabel
from voxlabel import _label, _lib


class LabelRun(ctypes.Structure):
    """vl_gpu_label_run (cuda/label/ccl_gpu.h)."""
    _fields_ = [("count", ctypes.c_uint32), ("sizes", ctypes.c_void_p), ("union_ms", ctypes.c_float),
                ("total_ms", ctypes.c_float), ("scratch_bytes", ctypes.c_size_t), ("stream", ctypes.c_void_p)]


def call_layers(mask, conn, repeats):
    """(python ms, C entry ms, labeller ms, kernels ms) medians for a C-contiguous bool (z, y, x) mask."""
    library = _lib.lib
    labeller = library.vl_gpu_label_device
    labeller.restype = ctypes.c_int
    labeller.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                         ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(LabelRun)]
    library.vl_gpu_label_run_free.restype = None
    library.vl_gpu_label_run_free.argtypes = [ctypes.POINTER(LabelRun)]
    nz, ny, nx = mask.shape
    order = _label.order_code("matlab")
    foreground = mask.view(cupy.uint8)
    labels = cupy.empty(mask.shape, dtype=cupy.uint32)
    stream = cupy.cuda.get_current_stream().ptr or None
    count = ctypes.c_uint32()
    python_ms = timed(lambda: voxlabel.label(mask, connectivity=conn), repeats)[0]

    def entry():
        _lib.check(library.vl_label_device_array(foreground.data.ptr, labels.data.ptr, nx, ny, nz, conn, order,
                                                 mask.device.id, stream, ctypes.byref(count)))
    entry_ms = timed(entry, repeats)[0]
    kernels = []

    def labelled():
        run = LabelRun()
        _lib.check(labeller(foreground.data.ptr, labels.data.ptr, nx, ny, nz, conn, order, stream, 1,
                            ctypes.byref(run)))
        kernels.append(run.total_ms)
        library.vl_gpu_label_run_free(ctypes.byref(run))
    labeller_ms = timed(labelled, repeats)[0]
    return python_ms, entry_ms, labeller_ms, float(numpy.median(kernels[3:]))


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
    print()
    print("| volume | conn | voxlabel.label ms | vl_label_device_array ms | vl_gpu_label_device ms | kernels ms "
          "| call - kernels ms |")
    print("|---|---|---|---|---|---|---|")
    for name, mask in volumes:
        for conn in ((6, 26) if name.startswith("CT") else (26,)):
            python_ms, entry_ms, labeller_ms, kernel_ms = call_layers(mask, conn, repeats)
            print("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f |" % (name, conn, python_ms, entry_ms, labeller_ms,
                                                                      kernel_ms, python_ms - kernel_ms), flush=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
