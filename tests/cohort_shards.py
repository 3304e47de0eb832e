"""voxlabel batch --shard I/N for every I, run by GNU parallel as docs/cohorts.md shows (or one after another
where parallel is not installed), then --merge: the union of the shards equals the unsharded run, byte for byte
(seconds aside), and so does --jobs 2 --prefetch 2. A missing shard, or shards of other label options, make
--merge fail. The class-map mode (--multilabel) is refused before anything is written.
usage: cohort_shards.py VOXLABEL WORKDIR"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cohort_common import differences, make_phantoms, run  # noqa: E402
from test_check import check, finish  # noqa: E402

OPTIONS = ["--preset", "bone", "--threads", "1"]


def main():
    voxlabel, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    root = os.path.join(work, "root")
    make_phantoms(voxlabel, root, 5)
    whole = os.path.join(work, "whole")
    result = run(voxlabel, "batch", root, "-o", whole, *OPTIONS)
    check(result.returncode == 0, "unsharded: " + result.stderr[-2000:])
    table = os.path.join(whole, "cohort.csv")

    sharded = os.path.join(work, "sharded")
    command = ["parallel", "-j", "2", voxlabel, "batch", root, "-o", sharded, *OPTIONS, "--quiet", "--shard",
               "{}/3", ":::", "1", "2", "3"]
    if shutil.which("parallel"):
        done = subprocess.run(command, capture_output=True, text=True)
        check(done.returncode == 0, "GNU parallel line: " + done.stderr[-2000:])
    else:
        print("note: GNU parallel is not installed; the shards run one after another")
        for shard in (1, 2, 3):
            done = run(voxlabel, "batch", root, "-o", sharded, *OPTIONS, "--quiet", "--shard", "%d/3" % shard)
            check(done.returncode == 0, "shard %d: %s" % (shard, done.stderr))
    names = sorted(name for name in os.listdir(sharded) if name.startswith("cohort-shard-"))
    check(names == ["cohort-shard-%d-of-3.%s" % (i, e) for i in (1, 2, 3) for e in ("csv", "jsonl")],
          "shard tables and logs: %s" % names)
    merged = run(voxlabel, "batch", "--merge", sharded)
    check(merged.returncode == 0, "merge: " + merged.stderr)
    problems = differences(whole, sharded, table, os.path.join(sharded, "cohort.csv"))
    check(not problems, "union of the shards equals the unsharded run: %s" % problems[:10])

    os.rename(os.path.join(sharded, "cohort-shard-2-of-3.csv"), os.path.join(work, "aside.csv"))
    missing = run(voxlabel, "batch", "--merge", sharded, "-o", os.path.join(work, "merged-missing"))
    check(missing.returncode == 3 and "shard 2 of 3 is missing" in missing.stderr, "missing shard: " + missing.stderr)

    os.rename(os.path.join(work, "aside.csv"), os.path.join(sharded, "cohort-shard-2-of-3.csv"))
    odd = run(voxlabel, "batch", root, "-o", sharded, "--preset", "bone", "--conn", "6", "--quiet", "--shard", "2/3")
    check(odd.returncode == 4 and "other label options" in odd.stderr, "a shard with other options: " + odd.stderr)
    mixed = os.path.join(work, "mixed")
    odd = run(voxlabel, "batch", root, "-o", mixed, "--preset", "bone", "--conn", "6", "--quiet", "--shard", "2/3")
    shutil.copy(os.path.join(sharded, "cohort-shard-1-of-3.csv"), mixed)
    shutil.copy(os.path.join(sharded, "cohort-shard-3-of-3.csv"), mixed)
    merged = run(voxlabel, "batch", "--merge", mixed)
    check(merged.returncode == 3 and "other label options" in merged.stderr, "mixed options refused: " + merged.stderr)

    classes = os.path.join(work, "classes")
    refused = run(voxlabel, "batch", root, "-o", classes, "--multilabel")
    check(refused.returncode == 2 and "label each class map with" in refused.stderr and not os.path.exists(classes),
          "--multilabel refused with nothing written: " + refused.stderr)

    jobs = os.path.join(work, "jobs")
    result = run(voxlabel, "batch", root, "-o", jobs, "--preset", "bone", "--jobs", "2", "--prefetch", "2")
    check(result.returncode == 0, "--jobs 2: " + result.stderr[-2000:])
    problems = differences(whole, jobs, table, os.path.join(jobs, "cohort.csv"))
    check(not problems, "--jobs 2 --prefetch 2 equals one job: %s" % problems[:10])
    return finish()


if __name__ == "__main__":
    sys.exit(main())
