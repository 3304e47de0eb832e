"""CuPy arrays and CUDA DLPack tensors labelled on their device (vl_label_device_array) must equal the CPU labels
of the same mask, stay on the device (a CuPy array comes back, on the array's device), run on the caller's
stream, and honour axes, out_dtype, return_sizes, min_size and largest, call after call (the labeller reuses
its scratch) on alternating streams. PyTorch tensors go through DLPack.
Exit 77 without CuPy or a usable CUDA device. --quick: a few small shapes (for compute-sanitizer).
usage: python_gpu.py [--quick]"""
import os
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402


def main():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        cupy.zeros(1).sum()
    except Exception as error:
        print("SKIP: no CuPy or no CUDA device (%s)" % error)
        return 77
    import voxlabel
    rng = numpy.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    shapes = [(1, 1, 1), (3, 5, 7), (17, 33, 65), (64, 128, 96), (2, 300, 301), (5, 1, 200), (40, 40)]
    densities, connectivities, orders = (0.05, 0.3, 0.6), (6, 18, 26, 4, 8), ("matlab", "matlab-xy", "size", "size-raster")
    if "--quick" in sys.argv:
        shapes, densities, connectivities, orders = [(3, 5, 7), (17, 33, 65)], (0.3,), (6, 26), ("matlab", "size")
    for shape in shapes:
        for density in densities:
            mask = rng.random(shape) < density
            for connectivity in (connectivities if len(shape) == 3 else (4, 8)):
                for order in orders:
                    expected, count = voxlabel.label(mask, connectivity=connectivity, order=order, device="cpu")
                    device_mask = cupy.asarray(mask)
                    labels, n = voxlabel.label(device_mask, connectivity=connectivity, order=order)
                    what = "%s p=%.2f conn %d %s" % (shape, density, connectivity, order)
                    check(isinstance(labels, cupy.ndarray), what + ": not a CuPy array")
                    check(n == count, what + ": count %d, CPU %d" % (n, count))
                    check(numpy.array_equal(cupy.asnumpy(labels), expected), what + ": labels differ from the CPU")
    mask = rng.random((30, 40, 50)) < 0.3
    expected, count, sizes = voxlabel.label(mask, return_sizes=True, device="cpu")
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        labels, n, device_sizes = voxlabel.label(cupy.asarray(mask), return_sizes=True)
    stream.synchronize()
    check(numpy.array_equal(cupy.asnumpy(labels), expected), "on a user stream: labels differ")
    check(numpy.array_equal(cupy.asnumpy(device_sizes), sizes), "sizes differ from the CPU")
    # The labeller keeps its scratch from call to call (a pool per device): calls that alternate two user
    # streams, volume sizes and orders each still give the CPU's labels.
    streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(2)]
    masks = [rng.random(shape) < 0.4 for shape in ((48, 70, 80), (9, 10, 11), (30, 90, 61))]
    for k in range(8):
        order = ("matlab", "size")[k % 2]
        alternate, stream_k = masks[k % 3], streams[(k // 2) % 2]
        expected_k, count_k = voxlabel.label(alternate, order=order, device="cpu")
        with stream_k:
            labels_k, n_k = voxlabel.label(cupy.asarray(alternate), order=order)
        stream_k.synchronize()
        check(n_k == count_k and numpy.array_equal(cupy.asnumpy(labels_k), expected_k),
              "call %d (%s, %s order, stream %d) differs from the CPU" % (k, alternate.shape, order, (k // 2) % 2))
    f_labels, _ = voxlabel.label(cupy.asfortranarray(cupy.asarray(mask.T)))     # a[x, y, z] F order
    check(numpy.array_equal(cupy.asnumpy(f_labels).T, expected), "F-ordered device array differs")
    v_labels, _ = voxlabel.label(cupy.asfortranarray(cupy.asarray(mask.transpose(1, 2, 0))), axes="yxz")
    check(numpy.array_equal(cupy.asnumpy(v_labels), expected.transpose(1, 2, 0)), "axes='yxz' differs")
    for dtype in (cupy.uint8, cupy.int16, cupy.float32):
        typed, _ = voxlabel.label(cupy.asarray(mask).astype(dtype) * 3)
        check(numpy.array_equal(cupy.asnumpy(typed), expected), "dtype %s differs" % numpy.dtype(dtype))
    small, _ = voxlabel.label(cupy.asarray(mask), out_dtype="auto")
    check(small.dtype == numpy.dtype(voxlabel.label(mask, out_dtype="auto")[0].dtype), "out_dtype auto differs")
    for min_size, largest in ((3, 0), (0, 4), (2, 3)):
        cpu, cpu_n = voxlabel.label(mask, min_size=min_size, largest=largest, device="cpu")
        gpu, gpu_n = voxlabel.label(cupy.asarray(mask), min_size=min_size, largest=largest)
        check(gpu_n == cpu_n and numpy.array_equal(cupy.asnumpy(gpu), cpu),
              "min_size %d largest %d differ from the CPU" % (min_size, largest))
    try:
        import torch
        if torch.cuda.is_available():
            for tensor in (torch.from_numpy(mask.astype(numpy.uint8)).cuda(), torch.from_numpy(mask).cuda()):
                torch_labels, torch_n = voxlabel.label(tensor)
                check(isinstance(torch_labels, cupy.ndarray) and torch_n == count and
                      numpy.array_equal(cupy.asnumpy(torch_labels), expected), "PyTorch %s tensor differs" % tensor.dtype)
    except ImportError:
        print("note: PyTorch not installed, DLPack tensor case skipped")
    print("device:", cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
    return finish()


if __name__ == "__main__":
    sys.exit(main())
