"""The names of a claim's verdicts and kinds, shared by the rules that decide them (``verdict_rules``,
``verdict_sets``) and the claims table that shows them (``claims``)."""

from __future__ import annotations

HOLDS, FAILS, INCONCLUSIVE, UNTESTABLE = "holds", "does not hold", "inconclusive", "cannot be tested here"
VERDICTS = (HOLDS, FAILS, INCONCLUSIVE, UNTESTABLE)
#: a row's kind: an empirical replication of the paper's finding, or a check (an analytic identity of the
#: paper's equations, a setup or grid check, a data set's size, a typo in the paper)
REPLICATION, CHECK = "replication", "check"
KINDS = (REPLICATION, CHECK)
