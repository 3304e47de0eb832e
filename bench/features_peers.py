"""OpenCV's SIFT on the slices features_bench dumped, for the feature bench (kornia's: features_kornia.py).
usage: features_peers.py DUMP.u8 WIDTH HEIGHT SLICES THREADS [REPEATS]
Per slice: detectAndCompute on slice 0, median of REPEATS, cv2.setNumThreads(THREADS). Per volume: every slice
in turn with setNumThreads(THREADS), and every slice in a pool of THREADS workers with setNumThreads(1); the
faster of the two is OpenCV's volume time."""
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

path, width, height, slices, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), \
    int(sys.argv[5])
repeats = int(sys.argv[6]) if len(sys.argv) > 6 else 5
volume = np.fromfile(path, dtype=np.uint8).reshape(slices, height, width)
sift = cv2.SIFT_create()


def detect(image):
    keypoints, _ = cv2.SIFT_create().detectAndCompute(image, None)
    return len(keypoints)


cv2.setNumThreads(threads)
times = []
for _ in range(repeats):
    start = time.perf_counter()
    count = detect(volume[0])
    times.append(time.perf_counter() - start)
print('OpenCV %s SIFT threads %d: one %dx%d slice  median %.2f ms  keypoints %d' %
      (cv2.__version__, threads, width, height, 1e3 * statistics.median(times), count))
if slices > 1:
    start = time.perf_counter()
    total = sum(detect(s) for s in volume)
    serial = time.perf_counter() - start
    cv2.setNumThreads(1)
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        total_pool = sum(pool.map(detect, volume))
    pooled = time.perf_counter() - start
    best = min(serial, pooled)
    print('OpenCV %s SIFT threads %d: %dx%dx%d  %.1f ms (slices in turn %.1f, %d-slice pool %.1f) = %.3f ms/slice  '
          'keypoints/slice %.0f' % (cv2.__version__, threads, width, height, slices, 1e3 * best, 1e3 * serial, threads,
                                    1e3 * pooled, 1e3 * best / slices, total / slices))
