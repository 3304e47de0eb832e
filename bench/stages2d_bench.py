"""OpenCV peer for the 2D stages bench: the same inputs (dumped by stages2d_bench_cpu --dump DIR), the
comparable OpenCV calls: cvtColor(RGB2HSV_FULL) + inRange (two ranges for the red wrap) for HSV +
threshold, erode(5x5 cross) + dilate(3x3 cross) with a zero border, connectedComponents(conn 4, CV_32S).
Medians in ms, with 1 thread (as the thesis) and with OpenCV's default threads.
usage: stages2d_bench.py DIR [REPEATS]"""
import glob
import os
import sys
import time

import cv2
import numpy as np

directory = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
cross5 = cv2.getStructuringElement(cv2.MORPH_CROSS, (5, 5))
cross3 = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))


def timed(function, *args):
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        result = function(*args)
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times[1:])), result


def colour(rgb):
    hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV_FULL)
    return cv2.bitwise_or(cv2.inRange(hsv, (0, 30, 30), (21, 255, 255)), cv2.inRange(hsv, (236, 30, 30), (255, 255, 255)))


def morphology(mask):
    eroded = cv2.erode(mask, cross5, borderType=cv2.BORDER_CONSTANT, borderValue=0)
    return cv2.dilate(eroded, cross3, borderType=cv2.BORDER_CONSTANT, borderValue=0)


def morphology_stack(stack):
    return [morphology(s) for s in stack]


def label(mask):
    return cv2.connectedComponents(mask, connectivity=4, ltype=cv2.CV_32S)[0] - 1


def label_stack(stack):
    return sum(label(s) for s in stack)


for threads in (1, cv2.getNumberOfCPUs()):
    cv2.setNumThreads(threads)
    print(f"# OpenCV {cv2.__version__}, {threads} thread(s), median of {repeats} (ms)")
    print(f"{'input':14s} {'hsv+thr':>10s} {'ero+dil':>10s} {'ccl4':>10s} {'total3':>10s} {'N':>8s}")
    frames = sorted(glob.glob(os.path.join(directory, "frame_*.rgb")), key=os.path.getsize)
    for path in frames:
        width, height = (int(v) for v in os.path.basename(path)[6:-4].split("x"))
        rgb = np.fromfile(path, np.uint8).reshape(height, width, 3)
        t_colour, mask = timed(colour, rgb)
        t_morph, cleaned = timed(morphology, mask)
        t_label, count = timed(label, cleaned)
        print(f"{width}x{height:<9d} {t_colour:10.2f} {t_morph:10.2f} {t_label:10.2f} "
              f"{t_colour + t_morph + t_label:10.2f} {count:8d}")
    for path in glob.glob(os.path.join(directory, "ct_512x512x*.u8")):
        slices = int(os.path.basename(path)[11:-3])
        stack = list(np.fromfile(path, np.uint8).reshape(slices, 512, 512))
        t_morph, cleaned = timed(morphology_stack, stack)
        t_label, count = timed(label_stack, cleaned)
        print(f"512x512x{slices:<6d} {'-':>10s} {t_morph:10.1f} {t_label:10.1f} {t_morph + t_label:10.1f} {count:8d}"
              f"   (per slice: ero+dil {t_morph / slices:.3f}, ccl4 {t_label / slices:.3f})")
