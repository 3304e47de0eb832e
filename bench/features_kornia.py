"""kornia's SIFT (PyTorch) on the slices features_bench dumped, for the feature bench's GPU peer (issue 21).
usage: features_kornia.py DUMP.u8 WIDTH HEIGHT SLICES [--batch B] [--features N] [--seconds S] [--device cuda|cpu]

Settings, as close to OpenCV's SIFT defaults as kornia allows: SIFTFeatureScaleSpace, i.e. a Gaussian pyramid of
3 layers per octave with sigma 1.6 on the doubled image (OpenCV's first octave -1), 3-D DoG extrema of both
polarities with quadratic sub-pixel refinement, one dominant orientation per keypoint (OpenCV adds one per
secondary peak above 80 %) and the 128-D SIFT descriptor (rootsift off: OpenCV's is plain SIFT) on 41x41 patches.
kornia has no contrast or edge threshold; it keeps the N strongest |DoG| extrema per image. N defaults to OpenCV's
mean keypoint count on the first slices, so both libraries return about as many keypoints. Where the installed
kornia also has the pyramid descriptor backend, that one is measured too.

Timed per backend: one warm-up batch, then the slices in batches of B, from host uint8 to descriptors on the
device, torch.cuda.synchronize() after each batch; the pass stops after S seconds and reports the slices it did.
Keypoints per slice count the filled slots (kornia pads each image to N slots with zero frames).
When kornia or the device is missing it prints one "kornia: ..." line and exits 0, so the bench goes on."""
import argparse
import inspect
import sys
import time

import numpy as np

parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
parser.add_argument('dump')
parser.add_argument('width', type=int)
parser.add_argument('height', type=int)
parser.add_argument('slices', type=int)
parser.add_argument('--batch', type=int, default=16)
parser.add_argument('--features', type=int, default=0, help='keypoints kept per slice; 0: OpenCV\'s mean count')
parser.add_argument('--seconds', type=float, default=15.0, help='time budget of each timed pass')
parser.add_argument('--device', default='cuda')
args = parser.parse_args()

try:
    import torch
    import kornia
    from kornia.feature import SIFTFeatureScaleSpace
except ImportError as error:
    print('kornia: not installed (%s); no kornia figure' % error)
    sys.exit(0)
except Exception as error:  # an installed kornia that does not load with this PyTorch
    print('kornia: import failed (%s: %s); no kornia figure' % (type(error).__name__, error))
    sys.exit(0)
if args.device.startswith('cuda') and not torch.cuda.is_available():
    print('kornia: PyTorch %s sees no CUDA device; no kornia figure' % torch.__version__)
    sys.exit(0)

volume = np.fromfile(args.dump, dtype=np.uint8)
if volume.size != args.slices * args.height * args.width:
    sys.exit('features_kornia.py: %s holds %d bytes, not %d slices of %dx%d' %
             (args.dump, volume.size, args.slices, args.width, args.height))
volume = volume.reshape(args.slices, args.height, args.width)

features, features_source = args.features, 'given'
if features <= 0:
    try:
        import cv2
        sample = volume[:min(8, args.slices)]
        features = max(1, round(np.mean([len(cv2.SIFT_create().detect(s, None)) for s in sample])))
        features_source = 'OpenCV\'s mean count on %d slices' % len(sample)
    except ImportError:
        features, features_source = 2000, 'no OpenCV here to count'
device = torch.device(args.device)


def synchronize():
    if device.type == 'cuda':
        torch.cuda.synchronize(device)


def run_batch(model, first, count):
    """SIFT on slices [first, first + count): returns the filled keypoint slots per slice."""
    images = torch.from_numpy(volume[first:first + count]).to(device).unsqueeze(1).float().div_(255.0)
    lafs, _, descriptors = model(images)
    synchronize()
    assert descriptors.shape[-1] == 128
    return (lafs.abs().flatten(2).sum(-1) > 0).sum(1)


def measure(backend):
    options = {'num_features': features, 'upright': False, 'rootsift': False, 'device': device}
    if backend != 'patch':
        options['descriptor_backend'] = backend
    model = SIFTFeatureScaleSpace(**options).eval()
    batch = min(args.batch, args.slices)
    with torch.inference_mode():
        while True:
            try:
                run_batch(model, 0, batch)
                break
            except torch.cuda.OutOfMemoryError:
                if batch == 1:
                    raise
                batch //= 2
                torch.cuda.empty_cache()
        done, keypoints = 0, 0
        start = time.perf_counter()
        while done < args.slices and time.perf_counter() - start < args.seconds:
            count = min(batch, args.slices - done)
            keypoints += int(run_batch(model, done, count).sum())
            done += count
        elapsed = time.perf_counter() - start
    name = torch.cuda.get_device_name(device) if device.type == 'cuda' else 'CPU'
    print('kornia %s SIFTFeatureScaleSpace(%s) %s batch %d: %dx%dx%d  %.1f ms = %.3f ms/slice  keypoints/slice %.0f '
          '(N %d)%s' % (kornia.__version__, backend, name, batch, args.width, args.height, done, 1e3 * elapsed,
                        1e3 * elapsed / done, keypoints / done, features,
                        '' if done == args.slices else ' (stopped after %.0f s of %d slices)' % (args.seconds,
                                                                                              args.slices)))


backends = ['patch']
if 'descriptor_backend' in inspect.signature(SIFTFeatureScaleSpace.__init__).parameters:
    backends.append('pyramid')
print('kornia %s, PyTorch %s, %s; N %d keypoints per slice (%s)' %
      (kornia.__version__, torch.__version__, device, features, features_source))
for backend in backends:
    measure(backend)
