"""Shared pieces of the cohort tests: running voxlabel batch, making small phantom cohorts, and comparing two
batch outputs byte for byte on what docs/cohorts.md calls reproducible (everything but timings.json, the
.jsonl event logs and cohort.csv's seconds column)."""
import os
import subprocess

REPRODUCIBLE_SKIP = ("timings.json",)


def run(voxlabel, *args, **kwargs):
    return subprocess.run([voxlabel, *args], capture_output=True, text=True, **kwargs)


def make_phantoms(voxlabel, root, count, size="48x40x24"):
    """`count` phantom series (each its own study) under root/study_k/, small enough for 2 CI cores."""
    for k in range(count):
        target = os.path.join(root, "study_%02d" % k)
        if not os.path.isdir(target):
            result = run(voxlabel, "phantom", "-o", target, "--size", size, "--seed", str(k + 1))
            if result.returncode != 0:
                raise RuntimeError("phantom failed: " + result.stderr)


def table_without_seconds(path):
    """cohort.csv's lines with the last column (seconds) cut off."""
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n").rsplit(",", 1)[0] for line in handle]


def reproducible_files(out):
    """{relative path: bytes} of every series output (hidden staging files would be a failure: kept)."""
    files = {}
    for directory, _, names in os.walk(out):
        for name in names:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, out)
            if name in REPRODUCIBLE_SKIP or name.endswith(".jsonl") or relative.startswith("cohort"):
                continue
            with open(path, "rb") as handle:
                files[relative] = handle.read()
    return files


def differences(first, second, table_first, table_second):
    """What differs between two batch outputs, as short lines (empty when identical)."""
    problems = []
    a, b = reproducible_files(first), reproducible_files(second)
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            problems.append("%s only in %s" % (name, first if name in a else second))
        elif a[name] != b[name]:
            problems.append("%s differs" % name)
    if table_without_seconds(table_first) != table_without_seconds(table_second):
        problems.append("%s and %s differ (seconds aside)" % (table_first, table_second))
    return problems
