"""Run the corpus of bad inputs (tests/bad_inputs.py) and write a markdown fragment for docs/RELIABILITY.md.

    python tests/reliability_corpus.py --out PATH

The files are written into a temporary folder and removed afterwards. The fragment has a
table of reader x cases, loaded correctly, clear errors, crashes and mismatches, then every
case with its outcome. The exit status is 1 when any case crashed or did not match its
expectation (the fragment is written all the same, so the failure can be read in it).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bad_inputs import corpus, run_corpus  # noqa: E402  (needs the path above when run as a script)


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _counts(results) -> dict:
    """Per reader: cases, loaded correctly, clear errors, crashes, other mismatches."""
    table = {}
    for r in results:
        row = table.setdefault(r.reader, {"cases": 0, "loaded": 0, "errors": 0, "crashes": 0, "mismatched": 0})
        row["cases"] += 1
        if r.outcome.startswith("CRASH"):
            row["crashes"] += 1
        elif not r.matched:
            row["mismatched"] += 1
        elif r.outcome == "loaded":
            row["loaded"] += 1
        else:
            row["errors"] += 1
    return table


def summary_table(results) -> list:
    table = _counts(results)
    total = {key: sum(row[key] for row in table.values()) for key in ("cases", "loaded", "errors", "crashes", "mismatched")}
    lines = ["| reader | cases | loaded correctly | clear errors | crashes | mismatched |",
             "|---|---:|---:|---:|---:|---:|"]
    for reader, row in list(table.items()) + [("**total**", total)]:
        lines.append(f"| {reader} | {row['cases']} | {row['loaded']} | {row['errors']} | {row['crashes']} | "
                     f"{row['mismatched']} |")
    return lines


def case_table(results) -> list:
    lines = ["| reader | case | expected | outcome | matches |", "|---|---|---|---|---|"]
    for r in results:
        outcome = r.outcome if r.matched else f"{r.outcome} -- {r.detail}"
        lines.append(f"| {r.reader} | {r.case} | {_cell(r.expected)} | {_cell(outcome)} | "
                     f"{'yes' if r.matched else '**NO**'} |")
    return lines


def fragment(results) -> str:
    """The markdown fragment: a summary table and the per-case list."""
    n_readers = len({r.reader for r in results})
    lines = [
        "### Bad inputs: every reader on a corpus of broken files",
        "",
        f"{len(results)} cases over {n_readers} readers, defined in `tests/bad_inputs.py` (each case says why "
        "its expectation is the right one) and checked by `tests/library/test_bad_inputs.py`; this fragment is "
        "written by `python tests/reliability_corpus.py --out PATH`. A valid though unusual input (CRLF, "
        "byte-order mark, blank lines, duplicated rows, conflicting labels, one or a giant query) must "
        "*load correctly*, checked against what it holds; an invalid one must raise structrank's own "
        "error whose message names the file, the line when there is one, and the problem (*clear error*). "
        "A *crash* is any other exception; *mismatched* is a load of an invalid input, a wrong load, "
        "or an error that misses the file, line or problem.",
        "",
        *summary_table(results),
        "",
        "#### Every case",
        "",
        "Outcomes give the first line of the message, with the corpus folder left out of paths.",
        "",
        *case_table(results),
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="where to write the markdown fragment")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="structrank-bad-inputs-") as folder:
        results = run_corpus(folder)
    args.out.write_text(fragment(results), encoding="utf-8")
    bad = [r for r in results if not r.matched]
    print(f"{len(results)} cases ({len(corpus())} defined), {len(bad)} not matching; wrote {args.out}")
    for r in bad:
        print(f"  {r.reader}/{r.case}: {r.outcome} -- {r.detail}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
