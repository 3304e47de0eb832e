"""Peers of the issue-19 columns on the same raw labels (x fastest): ITK's shape label map with Perimeter,
Feret diameter and oriented bounding box on (SimpleITK LabelShapeStatisticsImageFilter), and skimage
regionprops with euler_number, convex area/solidity and feret_diameter_max. Prints "<peer> <seconds>" lines;
a peer that exceeds the time limit prints "<peer> >LIMIT" (it runs in a child process that is stopped).
usage: stats_shape_peers.py LABELS.u32 NX NY NZ THREADS LIMIT_SECONDS [PEER...]   (peers: itk skimage)"""
import multiprocessing
import sys
import time

import numpy as np


def itk(labels, threads):
    import SimpleITK as sitk
    image = sitk.GetImageFromArray(labels)
    shape = sitk.LabelShapeStatisticsImageFilter()
    shape.SetNumberOfThreads(threads)
    shape.ComputePerimeterOn()
    shape.ComputeFeretDiameterOn()
    shape.ComputeOrientedBoundingBoxOn()
    shape.Execute(image)


def skimage_props(labels, threads):
    from skimage import measure
    for region in measure.regionprops(labels):
        region.euler_number, region.solidity
        try:
            region.feret_diameter_max
        except ValueError:
            pass


def run(peer, path, shape, threads, queue):
    labels = np.fromfile(path, dtype=np.uint32).reshape(shape)
    start = time.perf_counter()
    {"itk": itk, "skimage": skimage_props}[peer](labels, threads)
    queue.put(time.perf_counter() - start)


def main():
    path, nx, ny, nz, threads, limit = sys.argv[1], *map(int, sys.argv[2:6]), float(sys.argv[6])
    for peer in sys.argv[7:] or ["itk", "skimage"]:
        queue = multiprocessing.Queue()
        child = multiprocessing.Process(target=run, args=(peer, path, (nz, ny, nx), threads, queue))
        child.start()
        child.join(limit)
        if child.is_alive():
            child.terminate()
            child.join()
            print(f"{peer} >{limit:.0f}", flush=True)
        else:
            print(f"{peer} {queue.get():.3f}", flush=True)


if __name__ == "__main__":
    main()
