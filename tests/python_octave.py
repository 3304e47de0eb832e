"""voxlabel.label(order="matlab") against Octave's bwlabeln on fresh random volumes (the seed is printed; rerun
with it as the argument). Each volume is a pydicom-style stack a[z, y, x]; Octave gets the same slices as
V(row, col, slice) and its labels must equal ours voxel for voxel, for 6, 18 and 26. The F-ordered V(row, col,
slice) itself (as scipy.io.loadmat gives it) is labelled with axes="yxz" and must equal bwlabeln(V) too.
Exit 77 without octave-cli and the image package."""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy

import voxlabel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402

OCTAVE = r"""
pkg load image
dir = argv(){1};
fid = fopen(fullfile(dir, 'manifest.txt')); m = textscan(fid, '%s %d %d %d'); fclose(fid);
for k = 1:numel(m{1})
  nx = double(m{2}(k)); ny = double(m{3}(k)); nz = double(m{4}(k));
  fid = fopen(fullfile(dir, [m{1}{k} '.mask']), 'rb'); raw = fread(fid, nx * ny * nz, 'uint8=>uint8'); fclose(fid);
  V = permute(reshape(raw, [nx ny nz]) ~= 0, [2 1 3]);          % V(row, col, slice)
  for conn = [6 18 26]
    L = uint32(bwlabeln(V, conn));
    fid = fopen(fullfile(dir, sprintf('%s.c%d', m{1}{k}, conn)), 'wb'); fwrite(fid, permute(L, [2 1 3]), 'uint32'); fclose(fid);
  end
end
"""


def main():
    if not shutil.which("octave-cli"):
        print("SKIP: octave-cli not installed (scripts/install-deps installs octave and octave-image)")
        return 77
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else int.from_bytes(os.urandom(4), "little")
    print("seed %d (rerun: python_octave.py %d)" % (seed, seed))
    rng = numpy.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as work:
        volumes = []
        for k in range(40):
            shape = tuple(int(n) for n in rng.integers(1, 14, 3))
            mask = rng.random(shape) < rng.choice([0.2, 0.35, 0.5, 0.7])
            volumes.append(mask)
            mask.astype(numpy.uint8).tofile(os.path.join(work, "v%d.mask" % k))
        with open(os.path.join(work, "manifest.txt"), "w") as manifest:
            for k, mask in enumerate(volumes):
                manifest.write("v%d %d %d %d\n" % (k, mask.shape[2], mask.shape[1], mask.shape[0]))
        script = os.path.join(work, "oracle.m")
        with open(script, "w") as f:
            f.write(OCTAVE)
        run = subprocess.run(["octave-cli", "--no-gui", "-q", script, work], capture_output=True, text=True)
        if run.returncode != 0 and "package image" in run.stderr:
            print("SKIP: Octave's image package is missing:", run.stderr.strip())
            return 77
        check(run.returncode == 0, "octave failed: " + run.stderr[-500:])
        for k, mask in enumerate(volumes):
            for conn in (6, 18, 26):
                path = os.path.join(work, "v%d.c%d" % (k, conn))
                if not check(os.path.exists(path), "octave wrote no %s" % path):
                    continue
                expected = numpy.fromfile(path, dtype=numpy.uint32).reshape(mask.shape)
                ours, count = voxlabel.label(mask, connectivity=conn, order="matlab", device="cpu")
                check(numpy.array_equal(ours, expected),
                      "v%d %s conn %d: %d voxels differ from bwlabeln" % (k, mask.shape, conn,
                                                                         int((ours != expected).sum())))
                check(count == int(expected.max()), "v%d conn %d: count %d, bwlabeln %d"
                      % (k, conn, count, int(expected.max())))
                matlab_v = numpy.asfortranarray(mask.transpose(1, 2, 0))       # V(row, col, slice)
                from_mat, _ = voxlabel.label(matlab_v, connectivity=conn, axes="yxz")
                check(numpy.array_equal(from_mat, expected.transpose(1, 2, 0)),
                      "v%d conn %d: V(row, col, slice) with axes='yxz' differs from bwlabeln(V)" % (k, conn))
    print("octave bwlabeln oracle: %d volumes x 3 connectivities" % len(volumes))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
