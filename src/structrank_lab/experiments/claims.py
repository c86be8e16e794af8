"""The papers' claims, one by one, against our measurements: the "Claims" section of docs/RESULTS.md.

Each experiment module that reproduces a paper has ``claims(rows) -> list[Claim]`` (registered in
``registry.CLAIMS``): from the recorded runs of its store it states every claim of the paper in the
paper's words, the paper's evidence, ours, and a verdict. A claim whose runs are missing from the
experiment's store is "cannot be tested here" with the reason (``not_run``), never dropped, so an
experiment's count of claims does not depend on how much of it was run.

No fixed prose a rerun can contradict: ``ours`` and ``why`` are built from the measured values,
and a sentence that is not (a guess at a cause) starts with "Hypothesis:" (``hypothesis()``).

Also here: the verdicts (holds / does not hold / inconclusive / cannot be tested here; the rules that
give the first three from paired tests are ``verdict_rules``), the kinds of row (an empirical
replication, or a check: analytic, setup or data), ``ordered`` (whether measured values follow a
claimed order), and ``claims_section`` (the counts of verdicts, the replications' first, then one row
per claim with its interval, and the paper-faithful setup's verdict beside ours where they differ).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from structrank_lab.experiments.verdict_rules import rules_text as paired_rules_text
from structrank_lab.experiments.verdict_sets import rules_text as combined_rules_text
from structrank_lab.experiments.verdicts import (CHECK, FAILS, HOLDS, INCONCLUSIVE, KINDS, REPLICATION,  # noqa: F401
                                             UNTESTABLE, VERDICTS)


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
    kind: str = REPLICATION  #: REPLICATION or CHECK
    interval: str = ""  #: the paired test's interval behind the verdict (``verdict_rules.Judged.interval``)
    setup: str = ""  #: the setup the verdict is judged on (the most paper-faithful the data allow)
    #: the verdict on our own setup where it differs from the paper's: "verdict: interval (setup)", else ""
    ours_setup: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")


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
    """The verdict of a check (an identity, a setup or data fact): no noise to test against."""
    return HOLDS if holds else FAILS


def judged_claim(paper, where, claim, evidence, ours, judged, why="", **fields) -> Claim:
    """A replication judged by a ``verdict_rules`` rule: its verdict and interval from ``judged``."""
    return Claim(paper, where, claim, evidence, ours, judged.verdict, why, interval=judged.interval, **fields)


def check(paper, where, claim, evidence, ours, holds: bool, why="") -> Claim:
    """An analytic, setup or data check (counted apart from the replications)."""
    return Claim(paper, where, claim, evidence, ours, verdict_of(holds), why, kind=CHECK)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def verdict_counts(claims: list[Claim], kind: str) -> str:
    """"31 replications: 12 holds, 5 does not hold, 10 inconclusive, 4 cannot be tested here"."""
    chosen = [c for c in claims if c.kind == kind]
    counts = Counter(c.verdict for c in chosen)
    noun = {REPLICATION: "replications", CHECK: "checks"}[kind]
    return f"{len(chosen)} {noun}: " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS)


def claims_section(claims: list[Claim]) -> str:
    """Markdown: the counts of verdicts (replications, then checks), then one table row per claim,
    replications first."""
    ordered_claims = [c for c in claims if c.kind == REPLICATION] + [c for c in claims if c.kind == CHECK]
    lines = [verdict_counts(claims, REPLICATION) + ". " + verdict_counts(claims, CHECK) + ".", "",
             paired_rules_text(), "", combined_rules_text(), "",
             "| paper | where | kind | claim | paper | ours | verdict | interval (95%) | setup | our setup | why / ablation |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {_cell(c.paper)} | {_cell(c.where)} | {c.kind} | {_cell(c.claim)} | {_cell(c.paper_evidence)} | "
              f"{_cell(c.ours)} | **{c.verdict}** | {_cell(c.interval or '—')} | {_cell(c.setup or '—')} | "
              f"{_cell(c.ours_setup or '—')} | {_cell(c.why)} |" for c in ordered_claims]
    return "\n".join(lines)
