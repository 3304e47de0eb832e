"""Sums of the per-stage seconds of a voxlabel batch output (each labelled series' timings.json), for the
cohort bench. usage: cohort_stages.py OUT  ->  one line: series=N read=S ... total=S total/read=R"""
import json
import os
import sys

stages = ["read", "threshold", "label", "filter", "stats", "write", "total"]
sums = dict.fromkeys(stages, 0.0)
count = 0
for directory, _, names in os.walk(sys.argv[1]):
    if "timings.json" in names and "summary.json" in names:
        timings = json.load(open(os.path.join(directory, "timings.json")))
        count += 1
        for stage in stages:
            sums[stage] += timings[stage]
ratio = sums["total"] / sums["read"] if sums["read"] > 0 else float("nan")
print("series=%d " % count + " ".join("%s=%.2f" % (stage, sums[stage]) for stage in stages) +
      " total/read=%.2f" % ratio)
