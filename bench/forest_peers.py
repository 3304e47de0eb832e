"""scikit-learn's RandomForestClassifier (100 trees, all cores) on the samples bench/forest_bench wrote: the same
61 features of the same scribbled voxels; train time, prediction time on the test voxels (and that rate
extrapolated to the whole volume, filters not included) and accuracy beside each; voxlabel's accuracy on the same
test voxels for comparison.
usage: forest_peers.py PREFIX VOLUME_VOXELS [TREES]"""
import os
import sys
import time

import numpy as np
from sklearn.ensemble import RandomForestClassifier

prefix, volume = sys.argv[1], int(sys.argv[2])
trees = int(sys.argv[3]) if len(sys.argv) > 3 else 100
F = 61
x = np.fromfile(prefix + '_train.f32', np.float32).reshape(-1, F)
y = np.fromfile(prefix + '_train.u8', np.uint8)
xt = np.fromfile(prefix + '_test.f32', np.float32).reshape(-1, F)
yt = np.fromfile(prefix + '_test.u8', np.uint8)
ours = np.fromfile(prefix + '_test_pred.u8', np.uint8)
forest = RandomForestClassifier(n_estimators=trees, n_jobs=-1, random_state=0)
t = time.perf_counter()
forest.fit(x, y)
fit = time.perf_counter() - t
t = time.perf_counter()
pred = forest.predict(xt)
predict = time.perf_counter() - t
print('scikit-learn train   %d cores, %d trees, %d samples: %.3f s; out-of-bag n/a, test accuracy %.4f'
      % (os.cpu_count(), trees, len(y), fit, np.mean(pred == yt)))
print('scikit-learn predict %d test voxels: %.3f s = %.2f Mvoxels/s -> %.1f s for %d voxels (forest only); '
      'test accuracy %.4f' % (len(yt), predict, len(yt) / predict / 1e6, predict / len(yt) * volume, volume,
                              np.mean(pred == yt)))
print('voxlabel test accuracy on the same voxels: %.4f' % np.mean(ours == yt))

# The GPU anchor, when XGBoost is installed: its GPU `hist` trainer, a random forest of the same size
# (one boosting round of `trees` parallel trees, row and column subsampling as bagging).
try:
    import xgboost
except ImportError:
    print('xgboost: not installed, no GPU anchor')
    sys.exit(0)
params = {'tree_method': 'hist', 'device': 'cuda', 'num_parallel_tree': trees, 'subsample': 0.632,
          'colsample_bynode': 1 / np.sqrt(F), 'learning_rate': 1.0, 'max_depth': 0, 'max_leaves': 0,
          'grow_policy': 'lossguide', 'objective': 'multi:softprob', 'num_class': int(y.max())}
t = time.perf_counter()
booster = xgboost.train(params, xgboost.DMatrix(x, label=y - 1), num_boost_round=1)
fit = time.perf_counter() - t
t = time.perf_counter()
pred = booster.predict(xgboost.DMatrix(xt)).argmax(1) + 1
predict = time.perf_counter() - t
print('xgboost gpu hist     random forest of %d trees: train %.3f s, predict %d test voxels %.3f s; test accuracy %.4f'
      % (trees, fit, len(yt), predict, np.mean(pred == yt)))
