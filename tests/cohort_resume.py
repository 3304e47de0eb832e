"""voxlabel batch killed with SIGKILL at several points (at once, with a series half written, after two series,
after the last series around the writing of the cohort table; with series queued for the writer thread) and run
again gives the same outputs byte for byte as one uninterrupted run (also with --write-behind 0, and with 3
writers of one thread each) (timings.json, the event log and cohort.csv's seconds aside, docs/cohorts.md); a
rerun of a complete cohort labels nothing; other label options are refused without --force; usage errors
are one error line and exit 2.
usage: cohort_resume.py VOXLABEL WORKDIR"""
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cohort_common import differences, make_phantoms, run  # noqa: E402
from test_check import check, finish  # noqa: E402

OPTIONS = ["--preset", "bone", "--conn", "6", "--threads", "1"]


def staged_or_complete(out):
    staged = complete = 0
    for _, _, names in os.walk(out):
        staged += sum(name.startswith(".staged-") or ".tmp-" in name for name in names)
        complete += "series.csv" in names
    return staged, complete


def kill_when(voxlabel, root, out, ready, extra=()):
    """Starts a batch and SIGKILLs it once ready(out) holds (or it ends); True when it was killed."""
    process = subprocess.Popen([voxlabel, "batch", root, "-o", out, *OPTIONS, *extra], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while process.poll() is None and time.time() < deadline:
        if ready(out):
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.002)
    process.wait()
    return False


def main():
    voxlabel, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    root = os.path.join(work, "root")
    make_phantoms(voxlabel, root, 6)
    reference = os.path.join(work, "reference")
    result = run(voxlabel, "batch", root, "-o", reference, *OPTIONS)
    check(result.returncode == 0, "uninterrupted run: exit %d %s" % (result.returncode, result.stderr[-2000:]))
    table = os.path.join(reference, "cohort.csv")

    points = {
        "at once": lambda out: True,
        "a series half written": lambda out: staged_or_complete(out)[0] > 0,
        "two series complete": lambda out: staged_or_complete(out)[1] >= 2,
        "every series complete": lambda out: staged_or_complete(out)[1] >= 6,
    }
    out = os.path.join(work, "killed")
    killed = 0
    for name, ready in points.items():
        was_killed = kill_when(voxlabel, root, out, ready)
        killed += was_killed
        print("%s: %s" % (name, "killed" if was_killed else "ended before the kill"))
    check(killed >= 2, "the run was killed at %d of %d points (the rest ended first)" % (killed, len(points)))
    again = run(voxlabel, "batch", root, "-o", out, *OPTIONS)
    check(again.returncode == 0, "rerun after the kills: exit %d %s" % (again.returncode, again.stderr[-2000:]))
    problems = differences(reference, out, table, os.path.join(out, "cohort.csv"))
    check(not problems, "killed and resumed equals uninterrupted: %s" % problems[:10])

    # With --jobs 2 the job processes go with the killed run: none is left writing, and the rerun completes it.
    jobs_out = os.path.join(work, "killed_jobs")
    was_killed = kill_when(voxlabel, root, jobs_out, lambda out: staged_or_complete(out)[0] > 0, ["--jobs", "2"])
    time.sleep(0.2)
    left = [pid for pid in os.listdir("/proc") if pid.isdigit() and jobs_out.encode() in
            (open("/proc/%s/cmdline" % pid, "rb").read() if os.path.exists("/proc/%s/cmdline" % pid) else b"")]
    check(not left, "--jobs 2 killed%s: job processes left running: %s" % ("" if was_killed else " (ended first)", left))
    again = run(voxlabel, "batch", root, "-o", jobs_out, *OPTIONS, "--jobs", "2")
    check(again.returncode == 0, "rerun with --jobs 2 after the kill: exit %d %s" % (again.returncode, again.stderr[-2000:]))
    problems = differences(reference, jobs_out, table, os.path.join(jobs_out, "cohort.csv"))
    check(not problems, "--jobs 2 killed and resumed equals uninterrupted: %s" % problems[:10])

    # The writer thread: written by the labelling thread itself (--write-behind 0), or several series labelled
    # ahead of the writer and killed with series queued for it: the same bytes.
    for extra in (["--write-behind", "0", "--prefetch", "0"],
                  ["--write-behind", "3", "--prefetch", "2", "--write-threads", "1"]):
        behind_out = os.path.join(work, "behind_" + extra[1])
        was_killed = kill_when(voxlabel, root, behind_out, lambda out: staged_or_complete(out)[1] >= 1, extra)
        again = run(voxlabel, "batch", root, "-o", behind_out, *OPTIONS, *extra)
        check(again.returncode == 0, "%s%s, then a rerun: exit %d %s" % (
            " ".join(extra), " killed" if was_killed else "", again.returncode, again.stderr[-2000:]))
        problems = differences(reference, behind_out, table, os.path.join(behind_out, "cohort.csv"))
        check(not problems, "%s equals the defaults: %s" % (" ".join(extra), problems[:10]))

    # A complete cohort: nothing labelled again, the outputs untouched.
    before = os.stat(os.path.join(out, "cohort.csv")).st_mtime_ns
    series_files = sorted(os.path.join(d, n) for d, _, ns in os.walk(out) for n in ns if n == "labels.nii.gz")
    stamps = [os.stat(path).st_mtime_ns for path in series_files]
    third = run(voxlabel, "batch", root, "-o", out, *OPTIONS)
    check(third.returncode == 0 and "0 labelled now" in third.stdout, "rerun of a complete cohort: " + third.stdout)
    check(stamps == [os.stat(path).st_mtime_ns for path in series_files], "no series rewritten")
    check(os.stat(os.path.join(out, "cohort.csv")).st_mtime_ns >= before, "cohort.csv rewritten")
    # --threads and --device do not change the options hash; --conn does.
    same = run(voxlabel, "batch", root, "-o", out, "--preset", "bone", "--conn", "6", "--threads", "2")
    check(same.returncode == 0 and "0 labelled now" in same.stdout, "--threads keeps the hash: " + same.stdout)
    other = run(voxlabel, "batch", root, "-o", out, "--preset", "bone", "--conn", "26")
    check(other.returncode == 4 and "other label options" in other.stderr, "other options refused: " + other.stderr)
    check(not differences(reference, out, table, os.path.join(out, "cohort.csv")), "refusal changed nothing")
    forced = run(voxlabel, "batch", root, "-o", out, "--preset", "bone", "--conn", "26", "--force")
    check(forced.returncode == 0 and "6 labelled now" in forced.stdout, "--force redoes them: " + forced.stdout)

    # Usage errors: one error line, exit 2, nothing written.
    for bad in (["batch", root, "--preset", "bone"], ["batch", "-o", out], ["batch", root, "-o", out],
                ["batch", root, "-o", out, "--preset", "bone", "--series", "1"],
                ["batch", root, "-o", out, "--preset", "bone", "--shard", "4/3"],
                ["batch", root, "-o", out, "--preset", "bone", "--jobs", "0"],
                ["batch", root, "-o", out, "--preset", "bone", "--write-behind", "9"]):
        result = run(voxlabel, *bad)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        check(result.returncode == 2 and len(lines) == 1 and lines[0].startswith("voxlabel: error: "),
              "%s: exit %d, stderr %r" % (" ".join(bad[2:]), result.returncode, result.stderr))
    nothing = run(voxlabel, "batch", "--merge", root)
    check(nothing.returncode == 3 and "no cohort-shard" in nothing.stderr, "merge without shards: " + nothing.stderr)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
