"""Sums of the per-stage seconds of a voxlabel batch output (each labelled series' timings.json), and the
wall time of its labelling phase (cohort.jsonl: from the "start" event, after discovery, to "end"), for the
cohort bench. usage: cohort_stages.py OUT [KEY]
  without KEY: one line  series=N read=S ... write=S total=S total/read=R pipeline_wall=S, then
               compute (threshold + label + filter + stats) and bound = max(read, compute, write), the wall a
               perfect three-stage pipeline would take
  with KEY (a stage, "series" or "pipeline_wall"): that number alone"""
import datetime
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


def event_time(event):
    return datetime.datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


wall = float("nan")
log = os.path.join(sys.argv[1], "cohort.jsonl")
if os.path.exists(log):
    times = {}
    for line in open(log):
        event = json.loads(line)
        if event.get("event") in ("start", "end"):
            times[event["event"]] = event_time(event)  # the last run's, after a resume
    if "start" in times and "end" in times:
        wall = times["end"] - times["start"]
compute = sums["threshold"] + sums["label"] + sums["filter"] + sums["stats"]
bound = max(sums["read"], compute, sums["write"])
values = dict(sums, series=count, pipeline_wall=wall, compute=compute, bound=bound)
if len(sys.argv) > 2:
    print("%.3f" % values[sys.argv[2]])
    sys.exit(0)
ratio = sums["total"] / sums["read"] if sums["read"] > 0 else float("nan")
print("series=%d " % count + " ".join("%s=%.2f" % (stage, sums[stage]) for stage in stages) +
      " total/read=%.2f pipeline_wall=%.2f compute=%.2f bound=%.2f" % (ratio, wall, compute, bound))
