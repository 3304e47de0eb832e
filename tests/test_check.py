"""The Python tests' counterpart of test_check.h: every check is counted, every failure is printed once, and
finish() prints the closing line 'N passed, M failed' and gives the exit code."""
import sys

_counts = {"checks": 0}
failures = []


def check(condition, message):
    _counts["checks"] += 1
    if not condition:
        failures.append(message)
        print("FAIL:", message, flush=True)
    return bool(condition)


def checks():
    return _counts["checks"]


def finish():
    print(f"{checks() - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0
