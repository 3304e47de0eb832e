"""The Python tests' counterpart of test_check.h: every check is counted, every failure is printed once, and
finish() prints the closing line 'N passed, M failed' and gives the exit code."""
import os
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


def refusal_problem(result, want, output=None):
    """Why the finished run `result` (subprocess.run with text output) is not what a bad-input test wants, or
    None: exit `want`, and for a refusal (want != 0) exactly one 'voxlabel: error: ' line on stderr, a reason
    other than a failed allocation (the header must be caught before allocating), and, when `output` is
    given, nothing written there."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if result.returncode != want:
        return 'exit %d, want %d' % (result.returncode, want)
    if not want:
        return None
    if len(lines) != 1 or not lines[0].startswith('voxlabel: error: '):
        return 'want one error line'
    if 'allocat' in result.stderr:
        return 'refused only because the allocation failed'
    if output is not None and os.path.exists(output):
        return 'refused, yet %s exists' % output
    return None
