"""structrank's lab: the papers' reproductions and the benchmarks, a package on top of the library.

What a user imports to rank is ``structrank``; this package holds what reproduces and measures it, and
imports structrank's public names only (tests/library/test_layers.py checks both directions: the library never
imports the lab, and the lab imports no private name of the library).

- ``structrank_lab.experiments``: one package per paper (its plan of runs, claims, verdicts and
  report), the resumable runner and its result store, the kept runs that the repository's
  ``results/`` holds, and the pages generated from them;
- ``structrank_lab.bench``: the speed and memory benchmarks, each beside the tool a user would
  otherwise run;
- ``structrank_lab.nlp``: the natural-language substrate only the reproductions use (CoNLL-U, the
  HMM tagger and its n-best lists, shallow trees and their PTK similarity).

Its commands, ``structrank reproduce``, ``results`` and ``bench``, reach the ``structrank`` command
through the entry points of the group ``structrank.commands`` (pyproject.toml), so the library's
dispatcher finds them without importing the lab by name.
"""
