"""What users run today after dcm2niix, one series per call: threshold a NIfTI CT, label with cc3d (26-connected),
per-component voxel counts and centroids with cc3d.statistics, labels written as .nii.gz and a CSV.
usage: cohort_cc3d_label.py CT.nii[.gz] LO OUT_PREFIX"""
import sys

import cc3d
import nibabel
import numpy

image = nibabel.load(sys.argv[1])
ct = numpy.asanyarray(image.dataobj)
mask = ct >= float(sys.argv[2])
labels, count = cc3d.connected_components(mask, connectivity=26, return_N=True)
labels = labels.astype(numpy.uint16 if count < 65536 else numpy.uint32)
statistics = cc3d.statistics(labels)
nibabel.save(nibabel.Nifti1Image(labels, image.affine), sys.argv[3] + "_labels.nii.gz")
with open(sys.argv[3] + "_components.csv", "w") as out:
    out.write("label,voxels,centroid_x,centroid_y,centroid_z\n")
    for k in range(1, count + 1):
        c = statistics["centroids"][k]
        out.write("%d,%d,%.6f,%.6f,%.6f\n" % (k, statistics["voxel_counts"][k], c[0], c[1], c[2]))
