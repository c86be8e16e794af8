"""Write docs/RELIABILITY.md from the runs that measure structrank's robustness.

    STRUCTRANK_DATA=../shared/data python benchmarks/fuzz_letor.py -max_total_time=600 > fuzz.log 2>&1
    STRUCTRANK_DATA=../shared/data python tools/reliability_report.py --fuzz-log fuzz.log --out docs/RELIABILITY.md

It runs, and writes into the page with their outputs:

1. the corpus of bad inputs (tests/bad_inputs.py, ``tests/reliability_corpus.py``): every reader
   against the bad files the corpus writes, with the counts per reader;
2. the kill-and-resume protocol (tests/kill_resume.py): ``structrank reproduce`` killed with
   SIGKILL at random moments ``--kills`` times, then resumed;
3. the tests of each class of failure (data loss, silent wrong results, tracebacks, hangs, and the
   property-based and degenerate-data tests), run with pytest, with their counts per class;

and quotes the summary of the atheris run of the LETOR reader (benchmarks/fuzz_letor.py) from
the log given, which takes ten minutes and so is run beforehand.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the corpus and the kill protocol live with the tests


def corpus_section() -> str:
    from bad_inputs import run_corpus
    from reliability_corpus import case_table, summary_table

    with tempfile.TemporaryDirectory() as folder:
        results = run_corpus(Path(folder))
    return "\n".join(["Every reader against the bad files that `tests/bad_inputs.py` writes (none copied from the "
                      "data folder). A case passes when a valid though unusual file loads correctly, or an invalid "
                      "one raises structrank's own error naming the file, the line and the problem.", "",
                      *summary_table(results), "", "<details><summary>Every case</summary>", "",
                      *case_table(results), "", "</details>"])


def kill_section(kills, seed) -> str:
    from kill_resume import kill_and_resume, markdown
    from structrank.paths import data_dir

    with tempfile.TemporaryDirectory() as folder:
        result = kill_and_resume(folder, data_dir(required=True), kills, seed)
    return markdown(result, kills, seed)


#: issue 24's classes of failure, each with the test files that hold its cases
CLASSES = (
    ("data loss (an output over an input, a symlink, a special file, a store from other data)",
     ["tests/library/test_outputs_safe.py"]),
    ("silent wrong results (the grammar, counts, parameters and model headers, finite models)",
     ["tests/library/test_grammar.py", "tests/library/test_param_validation.py", "tests/library/test_model_tamper.py"]),
    ("tracebacks instead of one line", ["tests/library/test_one_line_errors.py"]),
    ("hangs and unbounded memory (special files, decompression, feature indices)", ["tests/library/test_bounded_input.py"]),
    ("property-based and degenerate data", ["tests/library/test_fuzz.py", "tests/library/test_degenerate.py", "tests/library/test_bad_inputs.py"]),
)


def pytest_section() -> str:
    lines = ["| class | test file | passed | failed | skipped |", "|---|---|---:|---:|---:|"]
    for label, files in CLASSES:
        for name in files:
            done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name],
                                  cwd=ROOT, capture_output=True, text=True)
            tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
            counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped)", tail)}
            lines.append(f"| {label} | {name} | {counts.get('passed', 0)} | {counts.get('failed', 0)} | "
                         f"{counts.get('skipped', 0)} |")
    return "\n".join(lines)


def fuzz_section(log) -> str:
    if log is None or not Path(log).is_file():
        return "No atheris log was given; run `python benchmarks/fuzz_letor.py -max_total_time=600` first."
    text = Path(log).read_text(errors="replace")
    summary = [line for line in text.splitlines() if line.startswith("fuzz_letor summary:")]
    findings = [line for line in text.splitlines() if line.startswith(("finding ", "  smallest input"))]
    out = [f"From `{Path(log).name}`: `{summary[-1] if summary else 'no summary line (the run did not finish?)'}`"]
    if findings:
        out += ["", "Findings (exceptions other than structrank's own, with the smallest input):", "", "```",
                *findings, "```"]
    else:
        out += ["", "No input made the reader raise anything but structrank's own errors."]
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--fuzz-log", default=None, help="output of benchmarks/fuzz_letor.py")
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    command = (f"python tools/reliability_report.py --fuzz-log {args.fuzz_log} --kills {args.kills} "
               f"--seed {args.seed} --out {args.out}")
    page = "\n\n".join([
        "# Reliability",
        f"<!-- Generated by `{command}`; do not edit by hand. -->",
        f"Generated by `{command}` (after `python benchmarks/fuzz_letor.py -max_total_time=600 > "
        f"{args.fuzz_log} 2>&1`). Everything below is the output of those runs.",
        "## Bad inputs", corpus_section(),
        "## Interrupted reproductions", kill_section(args.kills, args.seed),
        "## Fuzzing the LETOR reader with atheris", fuzz_section(args.fuzz_log),
        "## The tests of each class of failure",
        "Each class of issue 24 with the test files that hold its cases (each file documents them), run with "
        "pytest; the bar is no failure in any row:\n\n" + pytest_section(),
    ]) + "\n"
    sys.path.insert(0, str(ROOT / "src"))
    from structrank.atomic import write_text_atomic

    write_text_atomic(args.out, page)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
