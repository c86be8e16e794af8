"""Build the documentation site into out/site, with every Sphinx warning an error.

    python tools/build_docs.py              # HTML in out/site (open out/site/index.html)
    python tools/build_docs.py --out DIR    # elsewhere

The sources are in docs/site (conf.py, the tutorial, the API pages); the Markdown pages of docs/
are included from there as they are. Needs the ``docs`` extra: ``pip install -e ".[docs]"``
(``./dev docs`` installs it and runs this script).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build(out: Path, jobs: str = "1") -> int:
    """Run sphinx-build (HTML, ``-W --keep-going``: all the warnings listed, then a failure); return its exit code."""
    from sphinx.cmd.build import build_main

    os.environ.setdefault("MPLBACKEND", "Agg")
    doctrees = out.parent / (out.name + ".doctrees")
    # -E: every page read again, so a warning of an unchanged page is not hidden by the last build
    return build_main(["-W", "--keep-going", "-E", "-q", "-j", jobs, "-b", "html", "-d", str(doctrees),
                       str(ROOT / "docs" / "site"), str(out)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "site", help="output folder (default out/site)")
    parser.add_argument("-j", "--jobs", default="1", help="sphinx-build's -j (default 1)")
    args = parser.parse_args(argv)
    code = build(args.out.resolve(), args.jobs)
    if code == 0:
        print(f"wrote {args.out / 'index.html'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
