"""voxlabel batch over the whole of ../shared/test-data/dicom, plus a phantom series with a file cut short: every CT series
labelled (its outputs there, N equal to 'voxlabel label' on it alone), the non-CT objects skipped with their
reasons, the broken series recorded as failed with its error line, exit 3, nothing crashes; cohort.csv parses
with pandas and has exactly the columns docs/cohorts.md documents.
usage: cohort_shared_data.py VOXLABEL SHARED_DATA WORKDIR DOCS_COHORTS_MD"""
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cohort_common import run  # noqa: E402
from test_check import check, finish  # noqa: E402


def documented_columns(docs):
    """The column names of the table under '## cohort.csv columns' in docs/cohorts.md."""
    text = open(docs, encoding="utf-8").read()
    section = text.split("## cohort.csv columns", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z0-9_]+)` \|", section, re.M)


def main():
    voxlabel, shared, work, docs = sys.argv[1:5]
    dicom = os.path.join(shared, "dicom")
    if not os.path.isdir(dicom):
        print("skipped: %s is absent (the shared CT series are not in the repository)" % dicom)
        return 77
    try:
        import pandas
    except ImportError:
        print("skipped: pandas is not installed (Debian python3-pandas)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    root = os.path.join(work, "root")
    os.makedirs(root)
    os.symlink(os.path.abspath(dicom), os.path.join(root, "shared"))
    # A broken series: a small phantom with one file cut short (discovery reads its header, decoding must fail).
    broken = os.path.join(root, "broken")
    made = run(voxlabel, "phantom", "-o", broken, "--size", "32x32x4", "--quiet")
    check(made.returncode == 0, "phantom: " + made.stderr)
    cut = os.path.join(broken, sorted(os.listdir(broken))[1])
    with open(cut, "r+b") as handle:
        handle.truncate(os.path.getsize(cut) - 700)
    with open(os.path.join(root, "notes.txt"), "w") as handle:
        handle.write("not DICOM\n")
    source = os.path.join(dicom, "dcmqi_ct_3slice")
    out = os.path.join(work, "out")
    result = run(voxlabel, "batch", root, "--preset", "bone", "-o", out, "--on-irregular", "warn")
    print(result.stdout)
    print(result.stderr[-4000:])
    check(result.returncode == 3, "exit %d, want 3 (a series failed)" % result.returncode)
    check("Traceback" not in result.stderr and "Segmentation" not in result.stderr, "no crash")
    table_path = os.path.join(out, "cohort.csv")
    if not check(os.path.isfile(table_path), "cohort.csv written"):
        return finish()
    table = pandas.read_csv(table_path, dtype={"series_uid": str, "patient_id": str, "study_uid": str})
    for column in ("reason", "patient_id", "description", "warnings", "device"):
        table[column] = table[column].fillna("")
    check(list(table.columns) == documented_columns(docs),
          "columns %s equal docs/cohorts.md's %s" % (list(table.columns), documented_columns(docs)))
    check(set(table["status"]) <= {"done", "failed", "skipped"}, "status values")
    check((table["reason"][table["status"] != "done"] != "").all(), "every skipped or failed row has a reason")
    check(table["folder"].is_unique, "one folder per series")

    done = table[table["status"] == "done"]
    skipped = table[table["status"] == "skipped"]
    failed = table[table["status"] == "failed"]
    check(len(done) >= 4, "at least 4 CT series labelled (%d)" % len(done))
    for _, row in done.iterrows():
        folder = os.path.join(out, row["folder"])
        for name in ("labels.nii.gz", "components.csv", "summary.json", "series.csv", "timings.json"):
            check(os.path.isfile(os.path.join(folder, name)), "%s/%s exists" % (row["folder"], name))
        check(row["modality"] == "CT", "%s labelled is CT" % row["folder"])
        summary = json.load(open(os.path.join(folder, "summary.json")))
        check(summary["components"] == row["components"], "%s: N in summary.json and cohort.csv" % row["folder"])
        check(summary.get("options_hash") == row["options_hash"], "%s: options hash in summary.json" % row["folder"])
        check("timings_s" not in summary, "%s: summary.json holds no timings" % row["folder"])
        check(abs(row["foreground_ml"] - summary["foreground_voxels"] * summary["geometry"]["voxel_volume_mm3"] / 1000)
              <= 1e-6 * max(1.0, row["foreground_ml"]), "%s: foreground_ml" % row["folder"])
        check(row["components"] == 0 or row["largest_1_ml"] <= row["foreground_ml"] + 1e-9,
              "%s: largest component within the foreground" % row["folder"])
    reasons = " | ".join(skipped["reason"])
    for word in ("colour", "localizer", "not CT"):
        check(word in reasons, "a series skipped as %s" % word)
    # Colour and secondary-capture objects are never labelled.
    check(not (done["description"].str.contains("rgb", case=False)).any(), "no colour object labelled")
    cut_name = os.path.basename(cut)
    check(len(failed) == 1 and failed.iloc[0]["patient_id"] == "VOXLABEL0001" and cut_name in failed.iloc[0]["reason"],
          "the phantom with the cut file is the one failure, with its error line: %s" % list(failed["reason"]))

    # The same N as 'voxlabel label' on one labelled series alone (the 3-slice CT).
    three = done[done["series_uid"].isin(
        [r["series_uid"] for _, r in done.iterrows() if r["nz"] == 3])]
    if check(len(three) >= 1, "the 3-slice CT labelled"):
        alone = os.path.join(work, "alone")
        single = run(voxlabel, "label", source, "--preset", "bone", "-o", alone, "--quiet")
        check(single.returncode == 0, "label alone: " + single.stderr)
        if single.returncode == 0:
            summary = json.load(open(os.path.join(alone, "summary.json")))
            row = three.iloc[0]
            check(summary["components"] == row["components"], "N as voxlabel label gives")
            with open(os.path.join(alone, "labels.nii.gz"), "rb") as a, \
                    open(os.path.join(out, row["folder"], "labels.nii.gz"), "rb") as b:
                check(a.read() == b.read(), "labels.nii.gz identical to voxlabel label's")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
