"""Peers of the issue-19 columns on the same raw labels (x fastest): ITK's shape label map (SimpleITK
LabelShapeStatisticsImageFilter) with Perimeter, Feret diameter and oriented bounding box on (itk_feret), the same
without the Feret diameter (itk), and skimage regionprops with euler_number, solidity and feret_diameter_max
(skimage). Prints "<peer> <wall seconds> wall <CPU seconds> cpu" lines; a peer still running after LIMIT wall
seconds is stopped and prints "<peer> >LIMIT wall".
usage: stats_shape_peers.py LABELS.u32 NX NY NZ THREADS LIMIT_SECONDS [PEER...]   (default: itk itk_feret skimage)"""
import multiprocessing
import sys
import time

import numpy as np


def itk(labels, threads, feret=False):
    import SimpleITK as sitk
    image = sitk.GetImageFromArray(labels)
    shape = sitk.LabelShapeStatisticsImageFilter()
    shape.SetNumberOfThreads(threads)
    shape.ComputePerimeterOn()
    if feret:
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
    start, cpu = time.perf_counter(), time.process_time()
    peers = {"itk": itk, "itk_feret": lambda l, t: itk(l, t, feret=True), "skimage": skimage_props}
    peers[peer](labels, threads)
    queue.put((time.perf_counter() - start, time.process_time() - cpu))


def main():
    path, nx, ny, nz, threads, limit = sys.argv[1], *map(int, sys.argv[2:6]), float(sys.argv[6])
    for peer in sys.argv[7:] or ["itk", "itk_feret", "skimage"]:
        queue = multiprocessing.Queue()
        child = multiprocessing.Process(target=run, args=(peer, path, (nz, ny, nx), threads, queue))
        child.start()
        child.join(limit)
        if child.is_alive():
            child.terminate()
            child.join()
            print(f"{peer} >{limit:.0f} wall", flush=True)
        else:
            wall, cpu = queue.get()
            print(f"{peer} {wall:.3f} wall {cpu:.3f} cpu", flush=True)


if __name__ == "__main__":
    main()
