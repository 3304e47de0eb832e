#!/usr/bin/env python3
"""Per-kernel totals of one forest_bench run under `ncu --csv --metrics
gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum`: launches, time and DRAM bytes summed by kernel
name, then the training kernels' DRAM bytes per tree. With START_KERNEL, only the launches before its second
launch count (one prediction of several in the run: prediction starts with widen_kernel).
usage: forest_ncu_summary.py NCU_CSV TREES [START_KERNEL]"""
import csv
import sys

TRAINING = ('transpose_kernel', 'bootstrap_kernel', 'entries_kernel', 'search_kernel', 'choose_kernel',
            'partition_kernel')


def main():
    path, trees = sys.argv[1], int(sys.argv[2])
    with open(path) as handle:
        lines = [line for line in handle if line.startswith('"')]
    launches = {}
    for row in csv.DictReader(lines):
        name = row['Kernel Name'].replace('(anonymous namespace)::', '').replace('<unnamed>::', '')
        if name.startswith('void '):
            name = name[5:]
        name = name.split('(')[0].split('<')[0].split('::')[-1].strip()
        value = float(row['Metric Value'].replace(',', ''))
        scale = {'ns': 1e-6, 'nsecond': 1e-6, 'us': 1e-3, 'usecond': 1e-3, 'ms': 1, 'msecond': 1, 'byte': 1e-6,
                 'B': 1e-6, 'Kbyte': 1e-3, 'KB': 1e-3, 'Mbyte': 1, 'MB': 1, 'Gbyte': 1e3, 'GB': 1e3}
        launch = launches.setdefault((row['ID'], name), {})
        launch[row['Metric Name']] = value * scale.get(row['Metric Unit'], 1)
    if len(sys.argv) > 3:
        starts = sorted(int(launch_id) for launch_id, name in launches if name == sys.argv[3])
        if len(starts) > 1:
            launches = {key: value for key, value in launches.items() if int(key[0]) < starts[1]}
    totals = {}
    for (_, name), metrics in launches.items():
        total = totals.setdefault(name, [0, 0.0, 0.0, 0.0])
        total[0] += 1
        total[1] += metrics.get('gpu__time_duration.sum', 0)
        total[2] += metrics.get('dram__bytes_read.sum', 0)
        total[3] += metrics.get('dram__bytes_write.sum', 0)
    all_ms = sum(t[1] for t in totals.values()) or 1
    print('| kernel | launches | ms | share | DRAM read MB | DRAM write MB |\n|---|---|---|---|---|---|')
    for name, (count, ms, read, write) in sorted(totals.items(), key=lambda item: -item[1][1]):
        print('| %s | %d | %.2f | %.1f%% | %.1f | %.1f |' % (name, count, ms, 100 * ms / all_ms, read, write))
    train = [totals[name] for name in TRAINING if name in totals]
    ms = sum(t[1] for t in train)
    moved = sum(t[2] + t[3] for t in train)
    print('training kernels: %.2f ms, DRAM %.1f MB in all = %.2f MB per tree (%d trees)' % (ms, moved, moved / trees,
                                                                                          trees))


if __name__ == '__main__':
    main()
