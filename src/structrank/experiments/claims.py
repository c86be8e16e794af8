"""The papers' claims, one by one, against our measurements: the "Claims" section of docs/RESULTS.md.

Each experiment module that reproduces a paper has ``claims(rows) -> list[Claim]`` (registered in
``registry.CLAIMS``): from the recorded runs of its store it states every claim of the paper in the
paper's words, the paper's evidence, ours, and a verdict. A claim whose runs are missing from the
experiment's store is "cannot be tested here" with the reason (``not_run``), never dropped, so an
experiment's count of claims does not depend on how much of it was run.

No fixed prose a rerun can contradict: ``ours`` and ``why`` are built from the measured values,
and a sentence that is not (a guess at a cause) starts with "Hypothesis:" (``hypothesis()``).

Also here: the verdicts (holds / does not hold / cannot be tested here), ``ordered`` (whether
measured values follow a claimed order), and ``claims_section`` (the count of verdicts, then one
row per claim).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

HOLDS, FAILS, UNTESTABLE = "holds", "does not hold", "cannot be tested here"
VERDICTS = (HOLDS, FAILS, UNTESTABLE)


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and what our runs say about it."""

    paper: str  #: short citation, e.g. "Chakrabarti et al. 2008"
    where: str  #: the paper's table, figure or section, e.g. "Fig. 7"
    claim: str  #: the claim in the paper's words (quoted or closely paraphrased)
    paper_evidence: str  #: the paper's numbers behind it
    ours: str  #: our numbers, formatted from the runs
    verdict: str  #: one of VERDICTS
    why: str = ""  #: generated from measured values, or labelled "Hypothesis:"; the ablation that was run

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


def hypothesis(text: str) -> str:
    """Label a sentence that no measurement in the store supports."""
    return "Hypothesis: " + text


def not_run(paper: str, where: str, claim: str, paper_evidence: str, what: str) -> Claim:
    """A claim whose runs are missing from the store."""
    return Claim(paper, where, claim, paper_evidence, "—", UNTESTABLE, f"not in the result store: {what}")


def ordered(values: dict, claimed: list, tol: float = 0.0) -> tuple[bool, list]:
    """Does ``values`` keep the order ``claimed`` (best first, each at least the next minus ``tol``)?

    Returns (holds, the pairs (better, worse) that break it).

    >>> ordered({"a": 0.5, "b": 0.4, "c": 0.45}, ["a", "b", "c"])
    (False, [('b', 'c')])
    """
    broken = [(a, b) for a, b in zip(claimed, claimed[1:]) if values[a] < values[b] - tol]
    return not broken, broken


def verdict_of(holds: bool) -> str:
    return HOLDS if holds else FAILS


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def claims_section(claims: list[Claim]) -> str:
    """Markdown: the count of verdicts, then one table row per claim."""
    counts = Counter(c.verdict for c in claims)
    lines = [f"{len(claims)} claims: " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS) + ".",
             "",
             "| paper | where | claim | paper | ours | verdict | why / ablation |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {_cell(c.paper)} | {_cell(c.where)} | {_cell(c.claim)} | {_cell(c.paper_evidence)} | "
              f"{_cell(c.ours)} | **{c.verdict}** | {_cell(c.why)} |" for c in claims]
    return "\n".join(lines)
