"""The Claims section: verdicts are checked, counted and laid out from what each experiment states."""

import pytest

from structrank_lab.experiments import claims as claims_module
from structrank_lab.experiments.claims import (FAILS, HOLDS, INCONCLUSIVE, UNTESTABLE, Claim, claims_section, hypothesis,
                                           not_run, ordered)
from structrank_lab.experiments.report import write_results_markdown
from structrank_lab.experiments.store import ResultStore, RunKey


def test_a_claim_refuses_an_unknown_verdict():
    with pytest.raises(ValueError, match="verdict must be one of"):
        Claim("P", "Fig. 1", "a beats b", "0.5 > 0.4", "0.3 < 0.4", "mostly")


def test_ordered_names_each_broken_pair_and_honours_the_tolerance():
    assert ordered({"a": 0.5, "b": 0.4, "c": 0.3}, ["a", "b", "c"]) == (True, [])
    assert ordered({"a": 0.39, "b": 0.4}, ["a", "b"]) == (False, [("a", "b")])
    assert ordered({"a": 0.39, "b": 0.4}, ["a", "b"], tol=0.02) == (True, [])


def test_the_section_counts_every_verdict_and_escapes_cells():
    claims = [Claim("P", "T1", "a | b", "1", "2", HOLDS),
              Claim("P", "T2", "c", "1", "0", FAILS, hypothesis("noise")),
              not_run("P", "T3", "d", "1", "the T3 runs")]
    text = claims_section(claims)
    assert text.splitlines()[0] == ("3 replications: 1 holds, 1 does not hold, 0 inconclusive, 1 cannot be tested "
                                    "here. 0 checks: 0 holds, 0 does not hold, 0 inconclusive, 0 cannot be tested here.")
    assert "a \\| b" in text
    assert "Hypothesis: noise" in text
    assert f"**{UNTESTABLE}** | — | — | — | not in the result store: the T3 runs |" in text


def test_the_results_page_carries_the_claims_of_each_experiment_run(tmp_path, monkeypatch):
    from structrank_lab.experiments import registry

    seen = []

    def fake_claims(rows):
        seen.append(len(rows))
        value = rows[0]["value"]
        return [Claim("P", "T1", "m is above 0.4", "0.45", f"{value:.2f}", HOLDS if value > 0.4 else FAILS)]

    monkeypatch.setitem(registry.REPORTS, "exp-claims", lambda rows, folder, link_prefix="": [("t", "body")])
    monkeypatch.setitem(registry.CLAIMS, "exp-claims", fake_claims)
    monkeypatch.setitem(registry.CLAIMS, "not-run", lambda rows: pytest.fail("an experiment not in the stores"))
    store = ResultStore(str(tmp_path / "runs.sqlite"))
    store.record(RunKey("exp-claims", "d", model="m"), [("map", "trec", 0.3)], seconds=1)
    page = write_results_markdown(store, tmp_path / "RESULTS.md", "Results", "cmd").read_text()
    store.close()
    assert seen == [1]
    assert "## Claims" in page
    assert "1 replications: 0 holds, 1 does not hold, 0 inconclusive, 0 cannot be tested here." in page
    assert "| P | T1 | replication | m is above 0.4 | 0.45 | 0.30 | **does not hold** |" in page
    assert page.index("## Claims") < page.index("## exp-claims — t")
    assert claims_module.VERDICTS == (HOLDS, FAILS, INCONCLUSIVE, UNTESTABLE)
