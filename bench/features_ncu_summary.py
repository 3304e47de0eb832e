#!/usr/bin/env python3
"""Per-kernel totals of one features_bench call profiled by `ncu --csv --metrics
gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum`: time, launches, mean time and DRAM bytes
(read + write) of each kernel, summed over its launches, slowest first, and the total per slice.
usage: features_ncu_summary.py NCU_CSV SLICES"""
import csv
import sys


def main():
    with open(sys.argv[1]) as handle:
        lines = [line for line in handle if line.startswith('"')]
    slices = int(sys.argv[2])
    scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1, "msecond": 1,
             "B": 1e-6, "byte": 1e-6, "KB": 1e-3, "Kbyte": 1e-3, "MB": 1, "Mbyte": 1, "GB": 1e3, "Gbyte": 1e3}
    launches = {}
    for row in csv.DictReader(lines):
        key = (row["ID"], row["Kernel Name"].split("(")[0].split("<")[0].replace("void ", "").strip())
        value = float(row["Metric Value"].replace(",", "")) * scale.get(row["Metric Unit"], 1)
        launches.setdefault(key, {})[row["Metric Name"]] = value
    kernels = {}
    for (_, name), metrics in launches.items():
        k = kernels.setdefault(name, [0.0, 0, 0.0])
        k[0] += metrics.get("gpu__time_duration.sum", 0.0)
        k[1] += 1
        k[2] += metrics.get("dram__bytes_read.sum", 0.0) + metrics.get("dram__bytes_write.sum", 0.0)
    total = sum(k[0] for k in kernels.values())
    print("| kernel | ms | launches | mean us | DRAM MB |\n|---|---|---|---|---|")
    for name, (ms, count, mb) in sorted(kernels.items(), key=lambda item: -item[1][0]):
        print("| %s | %.2f | %d | %.0f | %.0f |" % (name, ms, count, 1e3 * ms / count, mb))
    print("kernel total %.2f ms = %.3f ms/slice over %d slices" % (total, total / slices, slices))


if __name__ == "__main__":
    main()
