#!/usr/bin/python3
"""A fuzz campaign of the voxlabel CLI over every reader, as an outside tester runs it: seeds from
../shared/reliability/make_reproducers.py and from voxlabel itself (phantom DICOM series, the volumes convert
writes, labels, a SEG, previews, components CSVs, raw, MAT v5 and an hdf5storage-style MAT v7.3, PNG, JPEG),
mutated (bit flips, interesting bytes, truncation, cut or repeated chunks, numbers in text headers replaced),
each run under a memory and a time limit, half of them under the ASan+UBSan build. Every run is classified:

  ok           exit 0 with complete outputs (volumes re-read by voxlabel convert), or compare's verdict
               (exit 1 or 2 with a 'verdict:' line)
  clean error  exit 2..5, and stderr is one 'voxlabel: error: ' line, last, after only warning/note lines
  crash        a signal (other than the limits' kills), or a sanitizer report
  hang         still running at the time limit (killed)
  oom          killed by the memory limit: SIGKILL, std::bad_alloc, or ASan's allocation/RSS limits
  false        exit 0, but an output missing, empty or unreadable
  unclean      any other stderr: more than one error line, lines not in 'voxlabel: <kind>: ' form, or
               text on a successful run that is not a warning or note
Findings are kept under WORK/findings/<class>-<n>/ (input, command, stderr).

Memory limit: RLIMIT_AS for the plain build; the ASan build reserves terabytes of shadow address space, so
it gets ASan's own limits instead (max_allocation_size_mb, allocator_may_return_null, hard_rss_limit_mb).

usage: fuzz/cli_campaign.py --voxlabel build/voxlabel [--asan build-asan/voxlabel] [--runs 5000] [--seed 1]
                            [--jobs 2] [--timeout 30] [--memory-mb 2048] [--work build-fuzz-cli]
Exit status: 0 when every run is ok or a clean error, 1 otherwise."""
import argparse
import collections
import concurrent.futures
import gzip
import hashlib
import json
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared")
CLASSES = ("ok", "clean error", "crash", "hang", "oom", "false", "unclean")


def parse_arguments():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--voxlabel", required=True)
    p.add_argument("--asan", help="the ASan+UBSan voxlabel (fuzz/build_asan.sh); every other run uses it")
    p.add_argument("--runs", type=int, default=5000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--memory-mb", type=int, default=2048)
    p.add_argument("--work", default=os.path.join(ROOT, "build-fuzz-cli"))
    return p.parse_args()


# ---- seeds ------------------------------------------------------------------------------------------------

def run_quiet(arguments, cwd=None):
    return subprocess.run(arguments, cwd=cwd, capture_output=True, text=True, timeout=300)


def hdf5storage_mat(path, array):
    """A v7.3 MAT file laid out as hdf5storage.savemat(format='7.3') writes it (needs h5py)."""
    import h5py
    import numpy as np
    with h5py.File(path, "w", userblock_size=512) as f:
        d = f.create_dataset("V", data=np.asarray(array).T, chunks=True, compression="gzip", compression_opts=7,
                             shuffle=True, fletcher32=True)
        d.attrs["MATLAB_class"] = np.bytes_("double")
        d.attrs["Python.Type"] = np.bytes_("numpy.ndarray")
        d.attrs["Python.Shape"] = np.array(array.shape, np.uint64)
        d.attrs["Python.numpy.UnderlyingType"] = np.bytes_("float64")
        d.attrs["Python.numpy.Container"] = np.bytes_("ndarray")
    header = b"MATLAB 7.3 MAT-file, Platform: CPython, Created on: fuzz HDF5 schema 1.00 .".ljust(116)
    with open(path, "r+b") as f:
        f.write((header + b"\0" * 8 + b"\x00\x02IM").ljust(512, b"\0"))


def make_seeds(voxlabel, seeds):
    """Returns {kind: [paths]}; every kind's commands succeed on its seeds (checked by the caller)."""
    shutil.rmtree(seeds, ignore_errors=True)
    os.makedirs(seeds)
    kinds = collections.defaultdict(list)
    series = os.path.join(seeds, "dicom")
    run_quiet([voxlabel, "phantom", "-o", series, "--size", "24x20x6", "--spacing", "1.5,2", "--quiet"])
    kinds["dicom"].append(series)
    for ext, kind in ((".nii", "nifti"), (".nii.gz", "nifti"), (".nrrd", "nrrd"), (".mha", "mha"), (".mat", "mat5")):
        out = os.path.join(seeds, "ct" + ext)
        run_quiet([voxlabel, "convert", series, out, "--quiet"])
        kinds[kind].append(out)
    labels = os.path.join(seeds, "labels")
    run_quiet([voxlabel, "label", series, "--threshold", "100:3000", "--device", "cpu", "-o", labels, "--quiet"])
    kinds["nifti"].append(os.path.join(labels, "labels.nii.gz"))
    kinds["csv"].append(os.path.join(labels, "components.csv"))
    labels_mat = os.path.join(seeds, "labels_mat")
    run_quiet([voxlabel, "label", series, "--threshold", "100:3000", "--device", "cpu", "--format", "mat", "-o",
               labels_mat, "--quiet"])
    kinds["mat5"].append(os.path.join(labels_mat, "labels.mat"))
    seg = os.path.join(seeds, "seg.dcm")
    run_quiet([voxlabel, "seg", os.path.join(labels, "labels.nii.gz"), series, "-o", seg, "--quiet"])
    kinds["seg"].append(seg)
    png = os.path.join(seeds, "preview.png")
    run_quiet([voxlabel, "preview", series, "--labels", os.path.join(labels, "labels.nii.gz"), "-o", png])
    kinds["png"].append(png)
    raw = os.path.join(seeds, "ct.raw")
    with open(raw, "wb") as f:
        f.write(struct.pack("<%dh" % (24 * 20 * 6), *[(i * 37) % 2000 - 1000 for i in range(24 * 20 * 6)]))
    kinds["raw"].append(raw)
    try:
        import numpy as np
        array = np.zeros((30, 20, 10))
        array[5:10, 5:10, 2:5] = 1
        array[20:25, 12:18, 6:8] = 2
        hdf5storage_mat(os.path.join(seeds, "hdf5storage.mat"), array)
        kinds["mat73"].append(os.path.join(seeds, "hdf5storage.mat"))
    except ImportError:
        print("fuzz: no h5py/numpy: no MAT v7.3 seed", file=sys.stderr)
    # The reliability reproducers (small files claiming much), each under its reader's kind.
    reproducers = os.path.join(SHARED, "reliability", "make_reproducers.py")
    if os.path.isfile(reproducers):
        here = os.path.join(seeds, "reproducers")
        os.makedirs(here)
        if run_quiet(["/usr/bin/python3", reproducers], cwd=here).returncode != 0:
            print("fuzz: make_reproducers.py failed (needs numpy, nibabel, PIL)", file=sys.stderr)
        by_extension = {".mat": "mat5", ".jpg": "jpeg", ".nii": "nifti", ".mha": "mha", ".nrrd": "nrrd", ".raw": "raw"}
        for name in sorted(os.listdir(here)):
            kind = by_extension.get(os.path.splitext(name)[1])
            if kind:
                kinds[kind].append(os.path.join(here, name))
    else:
        print(f"fuzz: {reproducers} is absent: no reproducer seeds", file=sys.stderr)
    try:
        from PIL import Image
        image = Image.open(png).convert("RGB")
        image.save(os.path.join(seeds, "preview.jpg"), quality=90)
        kinds["jpeg"].append(os.path.join(seeds, "preview.jpg"))
        image.convert("L").save(os.path.join(seeds, "grey.png"))
        kinds["png"].append(os.path.join(seeds, "grey.png"))
    except Exception as error:  # PIL absent or the preview missing
        print(f"fuzz: no JPEG seed from the preview ({error})", file=sys.stderr)
    # Small real DICOM files of the shared data (single files: enhanced multi-frame, compressed slices).
    data = os.path.join(SHARED, "test-data", "dicom")
    for relative in ("multiframe/eCT_Supplemental.dcm", "compressed/dcm_qa_ts/1.dcm", "compressed/dcm_qa_ts/4.dcm"):
        if os.path.isfile(os.path.join(data, relative)):
            kinds["dicom_file"].append(os.path.join(data, relative))
    return {kind: [p for p in paths if os.path.exists(p)] for kind, paths in kinds.items()}


# ---- mutation ---------------------------------------------------------------------------------------------

INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, 0xFE, 0x40]
NUMBERS = ["0", "-1", "1", "65535", "2147483647", "4294967296", "9223372036854775807", "-2147483648", "1e308",
           "nan", "3", "40000"]


def mutate(data, rng):
    data = bytearray(data)
    if not data:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    choice = rng.randrange(8)
    if choice == 0:  # bit flips
        for _ in range(rng.randrange(1, 9)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif choice == 1:  # interesting bytes, often in the header
        span = min(len(data), 1024 if rng.random() < 0.7 else len(data))
        for _ in range(rng.randrange(1, 5)):
            data[rng.randrange(span)] = rng.choice(INTERESTING)
    elif choice == 2:  # truncation
        del data[rng.randrange(len(data)):]
    elif choice == 3:  # a chunk cut out
        a = rng.randrange(len(data))
        del data[a:a + rng.randrange(1, 512)]
    elif choice == 4:  # a chunk repeated
        a = rng.randrange(len(data))
        chunk = data[a:a + rng.randrange(1, 256)]
        data[a:a] = chunk * rng.randrange(1, 4)
    elif choice == 5:  # a 16/32-bit field set to an extreme
        if len(data) >= 4:
            i = rng.randrange(min(len(data) - 3, 2048))
            fmt = rng.choice(["<H", "<I", ">H", ">I"])
            value = rng.choice([0, 1, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 65500])
            struct.pack_into(fmt, data, i, value & (0xFFFF if fmt.endswith("H") else 0xFFFFFFFF))
    elif choice == 6:  # a number in a text header replaced
        head = bytes(data[:4096])
        numbers = list(re.finditer(rb"-?\d+(\.\d+)?", head))
        if numbers:
            m = rng.choice(numbers)
            data[m.start():m.end()] = rng.choice(NUMBERS).encode()
        else:
            data[rng.randrange(len(data))] ^= 0xFF
    else:  # random bytes over a region
        a = rng.randrange(len(data))
        for i in range(a, min(len(data), a + rng.randrange(1, 64))):
            data[i] = rng.randrange(256)
    return bytes(data)


# ---- one run ----------------------------------------------------------------------------------------------

def commands_for(kind, path, out, seed_path, rng, first=False):
    """The CLI invocation of a run on the mutated `path` (`first`: the one every valid seed passes); `out` is a
    fresh directory for outputs. (argv tail, expected outputs on success, whether the exit may be a verdict)."""
    pick = (lambda options: options[0]) if first else rng.choice
    o = lambda name: os.path.join(out, name)
    if kind in ("dicom", "dicom_file", "seg"):
        options = [(["info", path, "--quiet"], [], False),
                   (["convert", path, o("v.nrrd"), "--quiet"], [o("v.nrrd")], False),
                   (["label", path, "--threshold", "100:3000", "--device", "cpu", "-o", o("l"), "--quiet"],
                    [o("l/labels.nii.gz"), o("l/components.csv"), o("l/summary.json")], False)]
        if kind == "dicom":
            labels = os.path.join(os.path.dirname(seed_path), "labels", "labels.nii.gz")
            options.append((["seg", labels, path, "-o", o("s.dcm"), "--quiet"], [o("s.dcm")], False))
            options.append((["preview", path, "-o", o("p.png")], [o("p.png")], False))
        return pick(options)
    if kind in ("nifti", "nrrd", "mha", "mat5", "mat73"):
        options = [(["convert", path, o("v.nrrd"), "--quiet"], [o("v.nrrd")], False),
                   (["convert", path, o("v.nii.gz"), "--quiet"], [o("v.nii.gz")], False),
                   (["label", path, "--threshold", "1:3000", "--device", "cpu", "-o", o("l"), "--quiet"],
                    [o("l/labels.nii.gz"), o("l/components.csv"), o("l/summary.json")], False)]
        name = os.path.basename(seed_path)
        if "label" in name or "hdf5storage" in name:  # label maps: the readers of labels too
            options += [(["stats", path, "-o", o("s.csv"), "--device", "cpu", "--quiet"], [o("s.csv")], False),
                        (["compare", path, seed_path, "--quiet"], [], True),
                        (["shapes", path, "-o", o("shapes.csv")], [o("shapes.csv")], False)]
        return pick(options)
    if kind == "raw":
        dims = "24,20,6" if first else rng.choice(["24,20,6", "24,20,6", "12,10,4", "4294967296,4294967296,1", "2000,2000,1000", "0,1,1",
                           "1,1,1440"])
        raw_type = "i16" if first else rng.choice(["i16", "i16", "u8", "u16", "f32", "u32"])
        options = [(["label", path, "--raw-dims", dims, "--raw-type", raw_type, "--threshold", "1:3000", "--device",
                     "cpu", "-o", o("l"), "--quiet"], [o("l/labels.nii.gz"), o("l/components.csv")], False),
                   (["compare", path, path, "--raw-dims", dims, "--raw-type", raw_type, "--quiet"], [], True)]
        return pick(options)
    if kind in ("png", "jpeg"):
        options = [(["color", path, "--hue", "0", "--hue-tol", "20", "-o", o("c")], [], False),
                   (["shapes", path, "-o", o("shapes.csv")], [o("shapes.csv")], False)]
        return pick(options)
    if kind == "csv":
        return (["compare", path, seed_path, "--quiet"], [], True)
    raise ValueError(kind)


def limits(memory_mb):
    def apply():
        os.nice(10)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))
        if memory_mb:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    return apply


SANITIZER_EXIT = {86, 87}
ASAN_ENV = {"ASAN_OPTIONS": "detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb={mb}:"
                            "hard_rss_limit_mb={mb}:exitcode=86:handle_abort=1",
            "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1:exitcode=87"}


def execute(binary, argv, asan, timeout, memory_mb):
    env = dict(os.environ)
    if asan:
        for key, value in ASAN_ENV.items():
            env[key] = value.format(mb=memory_mb)
    started = time.time()
    process = subprocess.Popen([binary, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               preexec_fn=limits(0 if asan else memory_mb), start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        hung = True
    return process.returncode, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"), hung, \
        time.time() - started


def outputs_readable(plain, expected, memory_mb, timeout):
    """Every expected output exists, is not empty, and the volumes and tables among them read back."""
    for path in expected:
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            return f"{path} missing or empty"
        if path.endswith(".json"):
            try:
                json.load(open(path, encoding="utf-8"))
            except ValueError as error:
                return f"{path}: not JSON ({error})"
        elif path.endswith(".gz"):
            try:
                with gzip.open(path) as f:
                    while f.read(1 << 20):
                        pass
            except (OSError, EOFError) as error:
                return f"{path}: not a complete gzip stream ({error})"
        if path.endswith((".nrrd", ".nii.gz", ".mha")):
            again = os.path.join(os.path.dirname(path), "read-back.mha")
            code, _, err, hung, _ = execute(plain, ["convert", path, again, "--force", "--quiet"], False, timeout,
                                            memory_mb)
            if code != 0 or hung:
                return f"{path}: voxlabel cannot read it back (exit {code}): {err.strip()[:200]}"
    return None


def classify(code, stdout, stderr, hung, verdict_exit_ok):
    lines = [line for line in stderr.splitlines() if line.strip()]
    text = stderr
    if hung:
        return "hang"
    if ("allocation-size-too-big" in text or "out-of-memory" in text or "rss limit exhausted" in text or
            "std::bad_alloc" in text or code == -signal.SIGKILL):
        return "oom"
    if code in SANITIZER_EXIT or "ERROR: AddressSanitizer" in text or "runtime error:" in text or (
            code is not None and code < 0):
        return "crash"
    others = [line for line in lines if not line.startswith(("voxlabel: warning: ", "voxlabel: note: "))]
    verdict = verdict_exit_ok and code in (1, 2) and stdout.startswith("verdict:")
    if code == 0 or verdict:
        return "ok" if not others else "unclean"
    if code in (2, 3, 4, 5) and len(others) == 1 and others[0].startswith("voxlabel: error: ") and \
            lines[-1] == others[0]:
        return "clean error"
    return "unclean"


def one_run(index, args, kinds, plain, asan_binary):
    rng = random.Random(args.seed * 1000003 + index)
    kind_list = sorted(kinds)
    kind = kind_list[index % len(kind_list)]
    seed_path = rng.choice(kinds[kind])
    run_dir = os.path.join(args.work, "runs", str(index % (args.jobs * 4)))
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    out = os.path.join(run_dir, "out")
    os.makedirs(out)
    mutated = rng.random() > 0.05
    if os.path.isdir(seed_path):  # a DICOM series: mutate one or two of its files
        target = os.path.join(run_dir, "series")
        shutil.copytree(seed_path, target)
        files = sorted(os.listdir(target))
        for name in rng.sample(files, min(len(files), rng.choice([1, 1, 2]))) if mutated else []:
            path = os.path.join(target, name)
            data = open(path, "rb").read()
            open(path, "wb").write(mutate(data, rng))
    else:
        target = os.path.join(run_dir, "input" + "".join(
            s for s in (".nii.gz",) if seed_path.endswith(s)) + ("" if seed_path.endswith(".nii.gz") else
                                                                 os.path.splitext(seed_path)[1]))
        data = open(seed_path, "rb").read()
        open(target, "wb").write(mutate(data, rng) if mutated else data)
    argv, expected, verdict_ok = commands_for(kind, target, out, seed_path, rng)
    use_asan = bool(asan_binary) and index % 2 == 0
    binary = asan_binary if use_asan else plain
    code, stdout, stderr, hung, seconds = execute(binary, argv, use_asan, args.timeout * (2 if use_asan else 1),
                                                  args.memory_mb)
    verdict = classify(code, stdout, stderr, hung, verdict_ok)
    detail = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    if verdict == "ok" and code == 0 and expected:
        problem = outputs_readable(plain, expected, args.memory_mb, args.timeout)
        if problem:
            verdict, detail = "false", problem
    finding = None
    if verdict not in ("ok", "clean error"):
        finding = os.path.join(args.work, "findings", f"{verdict.replace(' ', '_')}-{index}")
        shutil.rmtree(finding, ignore_errors=True)
        shutil.copytree(run_dir, finding)
        with open(os.path.join(finding, "command.txt"), "w") as f:
            f.write(" ".join([binary, *argv]) + f"\nexit {code}, hung {hung}, {seconds:.1f} s\n")
        with open(os.path.join(finding, "stderr.txt"), "w") as f:
            f.write(stderr)
    shutil.rmtree(run_dir, ignore_errors=True)
    return {"index": index, "kind": kind, "command": argv[0], "asan": use_asan, "exit": code, "verdict": verdict,
            "seconds": seconds, "detail": detail[:300], "finding": finding, "mutated": mutated}


def main():
    args = parse_arguments()
    args.work = os.path.abspath(args.work)
    os.makedirs(os.path.join(args.work, "bin"), exist_ok=True)
    # Copies, so that a rebuild during the campaign changes nothing under it; their digests go in the report.
    plain = os.path.join(args.work, "bin", "voxlabel")
    shutil.copy2(args.voxlabel, plain)
    asan_binary = None
    if args.asan:
        asan_binary = os.path.join(args.work, "bin", "voxlabel-asan")
        shutil.copy2(args.asan, asan_binary)
    for binary in filter(None, (plain, asan_binary)):
        print(f"fuzz: {binary}: sha256 {hashlib.sha256(open(binary, 'rb').read()).hexdigest()[:16]}", flush=True)
    shutil.rmtree(os.path.join(args.work, "findings"), ignore_errors=True)
    kinds = make_seeds(plain, os.path.join(args.work, "seeds"))
    print("fuzz: seeds:", ", ".join(f"{k} {len(v)}" for k, v in sorted(kinds.items())), flush=True)
    kinds = {k: v for k, v in kinds.items() if v}
    # Each seed through its reader once, unmutated: the reproducers are meant to be refused, the rest read.
    accepted = collections.Counter()
    for kind, paths in sorted(kinds.items()):
        for path in paths:
            out = os.path.join(args.work, "seed-check")
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            argv, _, verdict_ok = commands_for(kind, path, out, path, random.Random(0), first=True)
            code, stdout, stderr, hung, _ = execute(plain, argv, False, args.timeout, args.memory_mb)
            read = classify(code, stdout, stderr, hung, verdict_ok) == "ok"
            accepted["read" if read else "refused"] += 1
            if not read and "reproducers" not in path:
                print(f"fuzz: seed {path} refused by '{argv[0]}': {stderr.strip()[-200:]}", flush=True)
    print(f"fuzz: unmutated seeds: {accepted['read']} read, {accepted['refused']} refused (the reproducers)", flush=True)
    results = []
    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(one_run, i, args, kinds, plain, asan_binary) for i in range(args.runs)]
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            results.append(future.result())
            if done % 250 == 0:
                counts = collections.Counter(r["verdict"] for r in results)
                print(f"fuzz: {done}/{args.runs} runs, {time.time() - started:.0f} s: " +
                      ", ".join(f"{c} {counts[c]}" for c in CLASSES if counts[c]), flush=True)
    results.sort(key=lambda r: r["index"])
    with open(os.path.join(args.work, "results.jsonl"), "w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    table = collections.defaultdict(collections.Counter)
    for r in results:
        table["ASan+UBSan" if r["asan"] else "plain"][r["verdict"]] += 1
        table["all"][r["verdict"]] += 1
    print(f"\nfuzz: {len(results)} runs in {time.time() - started:.0f} s (seed {args.seed}); work {args.work}")
    print("| build | runs | " + " | ".join(CLASSES) + " |")
    print("|---" * (len(CLASSES) + 2) + "|")
    for build in ("plain", "ASan+UBSan", "all"):
        if build in table:
            print(f"| {build} | {sum(table[build].values())} | " + " | ".join(str(table[build][c]) for c in CLASSES) + " |")
    by_kind = collections.defaultdict(collections.Counter)
    for r in results:
        by_kind[r["kind"]][r["verdict"]] += 1
    print("\nby reader: " + "; ".join(f"{k} {sum(c.values())} ({', '.join(f'{v} {n}' for v, n in c.items())})"
                                      for k, c in sorted(by_kind.items())))
    bad = [r for r in results if r["verdict"] not in ("ok", "clean error")]
    for r in bad[:40]:
        print(f"  {r['verdict']}: {r['finding']}: {r['detail']}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
