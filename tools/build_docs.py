"""Build the documentation site into out/site, with every Sphinx warning an error.

    python tools/build_docs.py              # HTML in out/site (open out/site/index.html)
    python tools/build_docs.py --out DIR    # elsewhere

The sources are in docs/site (conf.py, the tutorial, the API pages); the Markdown pages of docs/
are included from there as they are. After the build, every name a public module exports (its
``__all__``) must have its entry in the API reference, else the build fails too. Needs the ``docs`` extra: ``pip install -e ".[docs]"``
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
    try:
        from sphinx.cmd.build import build_main
    except ImportError:
        print('the documentation needs the docs extra: pip install -e ".[docs]" (or run ./dev docs)', file=sys.stderr)
        return 2

    os.environ.setdefault("MPLBACKEND", "Agg")
    doctrees = out.parent / (out.name + ".doctrees")
    # -E: every page read again, so a warning of an unchanged page is not hidden by the last build
    return build_main(["-W", "--keep-going", "-E", "-q", "-j", jobs, "-b", "html", "-d", str(doctrees),
                       str(ROOT / "docs" / "site"), str(out)])


def undocumented(out: Path) -> list:
    """The public names (each API page's module's ``__all__``) that have no entry in the built site.

    A name is documented when its page has an anchor ``id="MODULE.NAME"``; the top-level names of
    ``structrank`` are re-exports, documented on the page of the module that defines them.
    """
    import importlib
    import re

    anchors = {}
    for page in (out / "api").glob("structrank*.html"):
        anchors[page.stem] = set(re.findall(r'id="([\w.]+)"', page.read_text(encoding="utf-8")))
    everywhere = set().union(*anchors.values())
    missing = []
    for page in sorted((ROOT / "docs" / "site" / "api").glob("structrank*.rst")):
        try:
            module = importlib.import_module(page.stem)
        except ImportError:  # structrank.learners.torch_loss without torch: its page was built from a mock
            continue
        for name in module.__all__:
            if page.stem == "structrank":
                if name != "__version__" and not any(a.endswith("." + name) for a in everywhere):
                    missing.append(f"structrank.{name}")
            elif f"{page.stem}.{name}" not in anchors.get(page.stem, ()):
                missing.append(f"{page.stem}.{name}")
    return missing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "site", help="output folder (default out/site)")
    parser.add_argument("-j", "--jobs", default="1", help="sphinx-build's -j (default 1)")
    args = parser.parse_args(argv)
    code = build(args.out.resolve(), args.jobs)
    if code != 0:
        return code
    missing = undocumented(args.out.resolve())
    if missing:
        print(f"not in the API reference: {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"wrote {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
