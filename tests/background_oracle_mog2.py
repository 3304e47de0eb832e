"""G1: voxlabel's MOG2 foreground equals OpenCV's BackgroundSubtractorMOG2 (Debian's python3-opencv, defaults,
detectShadows off) on at least 99.9 % of the pixels of a 200-frame synthetic cine; also on a cine of pure
noise (many modes, pruning) and with OpenCV's odd frame sizes. G2: F1 >= 0.93 against the cine's true
moving objects (frames from the 50th on, once the learning rate has come down to 1/100).

usage: background_oracle_mog2.py BACKGROUND_TOOL WORKDIR [cpu|gpu]"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_check import check, finish  # noqa: E402

try:
    import cv2
    import numpy as np
except ImportError as error:
    print(f"SKIP: OpenCV or numpy missing ({error}); apt-get install python3-opencv")
    sys.exit(77)
from background_cine import synthetic_cine  # noqa: E402

tool, work = sys.argv[1], sys.argv[2]
device = sys.argv[3] if len(sys.argv) > 3 else "cpu"
os.makedirs(work, exist_ok=True)


def opencv_masks(frames):
    model = cv2.createBackgroundSubtractorMOG2(history=500, varThreshold=16, detectShadows=False)
    return np.stack([model.apply(frame) for frame in frames])


def our_masks(frames, name):
    n, h, w = frames.shape
    source, target = os.path.join(work, name + ".u8"), os.path.join(work, name + ".mask")
    frames.tofile(source)
    result = subprocess.run([tool, source, str(w), str(h), str(n), device, target], capture_output=True, text=True)
    if result.returncode == 77:
        print(result.stdout.strip())
        sys.exit(77)
    if result.returncode != 0:
        return None
    masks = np.fromfile(target, np.uint8).reshape(frames.shape)
    os.unlink(source), os.unlink(target)
    return masks


def agreement(name, frames):
    ours = our_masks(frames, name)
    if not check(ours is not None, f"{name}: background_tool failed"):
        return None
    theirs = opencv_masks(frames)
    share = float((ours == theirs).mean())
    check(share >= 0.999, f"{name}: {100 * share:.4f} % of pixels agree with OpenCV, want >= 99.9 %")
    print(f"{name}: {100 * share:.5f} % agreement with OpenCV ({int((ours != theirs).sum())} pixels differ)")
    return ours


frames, truth = synthetic_cine()
ours = agreement("cine-256x256x200", frames)
if ours is not None:
    predicted, actual = ours[50:] > 0, truth[50:] > 0
    tp = float((predicted & actual).sum())
    precision = tp / max(predicted.sum(), 1)
    recall = tp / max(actual.sum(), 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-12)
    check(f1 >= 0.93, f"G2: F1 {f1:.4f} < 0.93")
    print(f"G2: precision {precision:.4f} recall {recall:.4f} F1 {f1:.4f}")

rng = np.random.default_rng(5)
agreement("noise-97x61x200", rng.integers(0, 256, (200, 61, 97), dtype=np.uint8))
steps = np.repeat(rng.integers(0, 256, (8, 1, 1), dtype=np.uint8), 25, axis=0) + np.zeros((1, 40, 33), np.uint8)
agreement("steps-33x40x200", steps)
sys.exit(finish())
