"""The synthetic cine of the MOG2 tests and bench (docs/stages2d.md section 7): a textured static background,
a bright disc crossing from left to right and a dark square from top to bottom, each
crossing on a new line, Gaussian noise of sigma 6, 8-bit. Both
objects move 5 pixels a frame and pass a pixel once, so no pixel is covered long or often enough to be
learned as background.
Returns the frames and the true foreground (the moving objects), both (n, height, width) uint8."""
import numpy as np


def synthetic_cine(n=200, height=256, width=256, sigma=6.0, seed=23):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    background = 90 + 40 * np.sin(xx / 23.0) * np.cos(yy / 31.0) + 20 * (xx / width)
    frames = np.empty((n, height, width), np.uint8)
    truth = np.zeros((n, height, width), np.uint8)
    radius = height / 14
    for t in range(n):
        image = background.copy()
        crossing, step = divmod(t, 60)
        cx = 5 * step - radius
        cy = height * (0.15 + 0.23 * (crossing % 4))
        disc = (xx - cx) ** 2 + (yy - cy) ** 2 <= radius ** 2
        image[disc] = 200
        sy = 5 * step - radius
        sx = width * (0.85 - 0.23 * (crossing % 4))
        square = (np.abs(xx - sx) <= radius) & (np.abs(yy - sy) <= radius)
        image[square] = 5
        truth[t] = disc | square
        frames[t] = np.clip(np.rint(image + rng.normal(0, sigma, image.shape)), 0, 255).astype(np.uint8)
    return frames, truth
