"""`structrank reproduce jagarlamudi2012`: the grid, selection on dev, the tables, the per-sentence records and
their paired tests, the claims (holding on the paper's own numbers, failing when ours contradict them, untestable
without runs), the quick run on French."""

import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from structrank_lab.experiments import jagarlamudi2012 as jag
from structrank_lab.experiments.claims import CHECK, FAILS, HOLDS, INCONCLUSIVE, REPLICATION, UNTESTABLE
from structrank_lab.experiments.jagarlamudi2012 import report_sections
from structrank_lab.experiments.jagarlamudi2012.design import (ABLATION, BOOSTING, CENTRE, DEV_SENTENCE, HMM, HMM_FIRST,
                                                           LANGUAGES, NGRAM_BOOSTING, NO_VITERBI_SENTENCE, ON_FIRST,
                                                           RERANKERS, SENTENCE, SUFFIX_BOOSTING, TAGGERS, base_of,
                                                           reranker_grid)
from structrank_lab.experiments.jagarlamudi2012.plan import plan
from structrank_lab.experiments.jagarlamudi2012.published import PAPER_TABLE2, PAPER_TABLE3
from structrank_lab.experiments.jagarlamudi2012.recorded import collect, compare, improvements, sentence_values


def test_the_grid_is_two_lines_through_the_centre_and_k():
    generative = reranker_grid("Generative")
    assert all("lam" not in point for point in generative)
    assert {p["tau"] for p in generative} == {0.5, 0.9, 0.95, 0.99}
    discriminative = reranker_grid("Discriminative")
    assert len(discriminative) == len({json.dumps(p, sort_keys=True) for p in discriminative}) == 8
    assert CENTRE in discriminative
    # every point differs from the centre in at most one parameter (Fig. 1's lines)
    assert all(sum(p[k] != CENTRE[k] for k in CENTRE) <= 1 for p in discriminative)
    specs = plan(["en", "fr"])
    assert {s.dataset for s in specs} == {"en", "fr"}
    assert sum(s.split == "tagger" for s in specs) == 4  # both HMMs per language
    assert {s.model for s in specs} >= {"Collins (n-gm)", "Regularized (n-gm)", HMM_FIRST}


def _row(lang, model, params, metric, value):
    return {"dataset": lang, "model": model, "params": json.dumps(params), "metric": metric, "value": value,
            "split": "rerank", "fold": "", "seed": 0}


def test_settings_are_chosen_on_dev_and_the_tables_show_the_published_rows(tmp_path):
    rows = []
    for lang in ("en", "fr"):
        for split, value in (("dev", 0.92), ("test", 0.93)):
            rows.append(_row(lang, "HMM", {}, f"{split}:accuracy", value))
            rows.append(_row(lang, "HMM", {}, f"{split}:oracle", 0.96))
        for point in reranker_grid("Discriminative"):
            good = point == CENTRE
            rows.append(_row(lang, "Discriminative", point, "dev:accuracy", 0.925 if good else 0.921))
            # a setting that is worse on dev but best on test must not be chosen
            rows.append(_row(lang, "Discriminative", point, "test:accuracy", 0.935 if good else 0.99))
            rows.append(_row(lang, "Discriminative", point, "dev:accuracy_no_viterbi", 0.90))
            rows.append(_row(lang, "Discriminative", point, "test:accuracy_no_viterbi", 0.91))
            rows.append(_row(lang, "Discriminative", point, "train_seconds", 1.0))
    sections = dict(report_sections(rows, tmp_path))
    table = sections["Table 2: token accuracy (%) of the HMM, the 10-best oracle and every reranker"]
    assert "| Discriminative | 92.50 | 92.50 | 93.50 | 93.50 |" in table
    assert "| Baseline | 92.00 | 92.00 | 93.00 | 93.00 |" in table
    assert "| published: Discriminative | 96.85 | 97.03 | 96.30 | 97.53 |" in table
    assert "better on 2 of 2 languages" in table
    runs = {}
    runs = collect(rows)
    assert improvements(runs, ["en"]) == {"en": pytest.approx(0.5)}
    assert (tmp_path / "fig1-tau-lambda-en.png").stat().st_size > 1000


@pytest.mark.data
def test_quick_reproduction_on_french(tmp_path, data_root):
    env = {**os.environ, "STRUCTRANK_DATA": str(data_root)}
    done = subprocess.run([sys.executable, "-m", "structrank", "reproduce", "jagarlamudi2012", "--quick", "--out",
                           str(tmp_path)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "report.md").read_text()
    assert "## Claims" in report and "10 replications:" in report and "8 checks:" in report
    assert "## Table 2: significance over test sentences" in report
    table = report.split("## Table 2")[1].split("##")[0]
    values = {line.split("|")[1].strip(): [float(v) for v in line.split("|")[2:4]] for line in table.splitlines()
              if line.startswith("| ") and not line.startswith("| published") and "—" not in line
              and line.split("|")[1].strip() not in ("model",)}
    # the HMM on French-Sequoia UPOS: about 96% dev; every reranker within a point of it
    baseline = values["Baseline"][0]
    assert 94.0 < baseline < 98.5, values
    assert values["Oracle"][0] > baseline
    for model in ("Generative", "Softened-Disc", "Discriminative"):
        assert abs(values[model][0] - baseline) < 1.0, values
    assert np.isfinite(values["Collins (Sufx)"][0]) and np.isfinite(values["Regularized (n-gm)"][0])


# ------------------------------------------------------------------------------------------------
# synthetic stores: per-sentence records, paired tests and claims


N_SENTENCES, LENGTH = 1000, 10  # 10,000 test tokens: 0.01 points is one token


def _paper_value(model, lang, split):
    return PAPER_TABLE2[model][LANGUAGES.index(lang) + (4 if split == "test" else 0)] / 100


def fake_rows(test=None, dev=None, drop=(), no_viterbi=None):
    """A store of every run of the experiment, with the paper's Table 2 (and 3) as our numbers.

    ``test``/``dev``/``no_viterbi`` override {(lang, model): accuracy} (``no_viterbi``: Table 3's, test). The HMM's
    sentences (test and dev) hold 9 or 10 correct tokens, and each run's recorded sentences are the HMM's moved by one
    token up or down, as many as its accuracy needs. Runs of the models in ``drop`` are left out.
    """
    test, dev, no_viterbi = dict(test or {}), dict(dev or {}), dict(no_viterbi or {})
    rows = []
    tokens = N_SENTENCES * LENGTH

    def add(lang, model, params, metric, value):
        if model not in drop:
            rows.append(_row(lang, model, params, metric, value))

    for lang in LANGUAGES:
        def acc(model, split):
            table = test if split == "test" else dev
            name = "Baseline" if model in TAGGERS else model
            return table.get((lang, model), _paper_value(name, lang, split) - (0.003 if model == HMM_FIRST else 0))

        bases = {}
        for prefix, split in ((SENTENCE, "test"), (DEV_SENTENCE, "dev")):
            base = np.full(N_SENTENCES, LENGTH)
            base[:tokens - round(acc(HMM, split) * tokens)] -= 1  # one error in each of the first sentences
            bases[prefix] = base

        def sentences(model, params, target, prefix=SENTENCE, base_prefix=None):
            """Record the sentences of a run of accuracy ``target`` where they differ from the HMM's; its accuracy."""
            base = bases[base_prefix or prefix]
            delta = round(target * tokens) - int(base.sum())
            values = base.copy()
            if delta > 0:
                values[np.flatnonzero(base < LENGTH)[:delta]] += 1
            else:
                values[np.flatnonzero(base == LENGTH)[:-delta]] -= 1
            for i in np.flatnonzero(values != base):
                add(lang, model, params, f"{prefix}{i}", float(values[i]))
            return values.sum() / tokens

        for prefix, split in ((SENTENCE, "test"), (DEV_SENTENCE, "dev")):
            for i, c in enumerate(bases[prefix]):
                add(lang, HMM, {}, f"{prefix}{i}", float(c))
            add(lang, HMM, {}, f"{split}:sentences", float(N_SENTENCES))
            add(lang, HMM, {}, f"{split}:tokens", float(tokens))
        add(lang, HMM, {}, "train:sentences", 12000.0)
        add(lang, HMM, {}, "train:tokens", 200000.0)
        for model in TAGGERS:
            for prefix, split in ((SENTENCE, "test"), (DEV_SENTENCE, "dev")):
                add(lang, model, {}, f"{split}:accuracy", bases[prefix].sum() / tokens if model == HMM
                    else sentences(model, {}, acc(model, split), prefix))
                add(lang, model, {}, f"{split}:oracle", _paper_value("Oracle", lang, split))
                for name, value in (("unknown_rate", 0.08), ("known_accuracy", 0.97), ("unknown_accuracy", 0.8)):
                    add(lang, model, {}, f"{split}:{name}", value)
        for model in (*RERANKERS, *BOOSTING):
            grid = reranker_grid(model) if model in RERANKERS else [{"n_rounds": 2000}]
            for point in grid:
                centre = point in (CENTRE, {"k": 75, "tau": 0.95}) or model in BOOSTING
                add(lang, model, point, "dev:accuracy",
                    sentences(model, point, acc(model, "dev") - (0 if centre else 0.0002), DEV_SENTENCE))
                add(lang, model, point, "test:accuracy", sentences(model, point, acc(model, "test")))
                if model in RERANKERS:
                    alone = no_viterbi.get((lang, model), PAPER_TABLE3[model][LANGUAGES.index(lang)] / 100)
                    add(lang, model, point, "dev:accuracy_no_viterbi", alone - (0 if centre else 0.001))
                    add(lang, model, point, "test:accuracy_no_viterbi",
                        sentences(model, point, alone, NO_VITERBI_SENTENCE, SENTENCE))
                if model == "Discriminative":
                    add(lang, model, point, "iterations", 5.0)
                    add(lang, model, point, "slack_last_change", 0.001)
    return rows


def _verdicts(claims):
    return {(c.where, c.claim[:40]): c.verdict for c in claims}


def test_per_sentence_records_rebuild_each_accuracy_and_feed_the_paired_tests():
    rows = fake_rows(test={("en", "Discriminative"): 0.9630})
    runs = collect(rows)
    values = sentence_values(runs, "en", "Discriminative")
    assert values.sum() == round(0.9630 * 10000)
    c = compare(runs, "en", "Discriminative", HMM)
    assert c.points == pytest.approx(96.30 - 96.15) and c.differing == 15
    # fifteen sentences one token better, none worse: sign test p = 2 / 2^15
    assert c.sign_p == pytest.approx(2 / 2 ** 15) and c.rand_p < 0.001 and c.significant(0.01)
    assert compare(runs, "en", "Discriminative", "not run") is None
    sections = dict(report_sections(rows, "/tmp/jag-test-report"))
    table = sections["Table 2: significance over test sentences"]
    assert "| Discriminative | en | HMM | +0.15 | 15 |" in table
    assert "| Collins (n-gm) | sv | HMM | +0.22 |" in table
    assert "Regularized (n-gm)" in sections["Table 2: token accuracy (%) of the HMM, the 10-best oracle and every reranker"]


def test_the_ablation_runs_are_paired_through_the_first_order_hmm():
    """HMM: every sentence; first-order HMM: where it differs from the HMM; an ablation run: where it differs
    from the first-order HMM, whose lists it reranks."""
    disc = "Discriminative" + ON_FIRST
    rows = [_row("en", HMM, {}, f"{SENTENCE}{i}", v) for i, v in enumerate([5, 4, 3, 2])]
    rows += [_row("en", HMM, {}, m, v) for m, v in (("test:sentences", 4), ("test:tokens", 20), ("dev:accuracy", .7),
                                                    ("test:accuracy", .7))]
    rows += [_row("en", HMM_FIRST, {}, m, v) for m, v in ((f"{SENTENCE}1", 3), ("dev:accuracy", .65),
                                                          ("test:accuracy", .65))]
    rows += [_row("en", disc, CENTRE, m, v) for m, v in ((f"{SENTENCE}3", 4), ("dev:accuracy", .75),
                                                         ("test:accuracy", .75))]
    runs = collect(rows)
    assert base_of(disc) == HMM_FIRST and base_of("Discriminative") == HMM
    assert sentence_values(runs, "en", HMM_FIRST).tolist() == [5, 3, 3, 2]
    assert sentence_values(runs, "en", disc).tolist() == [5, 3, 3, 4]
    assert compare(runs, "en", disc, HMM_FIRST).points == pytest.approx(10.0)
    assert improvements(runs, ["en"], disc) == {"en": pytest.approx(10.0)}
    assert plan(["en"])[-len(ABLATION):][0].model == disc and not any(
        s.model.endswith(ON_FIRST) for s in plan(["en"], quick=True))


def _claim(claims, start):
    found = [c for c in claims if c.claim.startswith(start)]
    assert len(found) == 1, start
    return found[0]


#: the module of the claims (the package's ``claims`` is its function): one claim is judged alone where a test needs
#: only it, since every claim runs its paired tests
CLAIMS = importlib.import_module("structrank_lab.experiments.jagarlamudi2012.claims")


def _one(judge, **changes):
    """The claim ``judge`` (a function of ``CLAIMS``) on ``fake_rows(**changes)``."""
    return judge(collect(fake_rows(**changes)))


def test_the_paper_numbers_judged_over_sentences():
    """On 10,000 test tokens, a difference of the paper's size is significant when many sentences move (60 for
    Chinese's gain) and inside the noise when few do (3 for French's Regularized (Sufx) against the HMM)."""
    claims = jag.claims(fake_rows())
    assert len(claims) == 18 and len([c for c in claims if c.kind == CHECK]) == 8
    assert all(c.verdict == HOLDS and not c.interval for c in claims if c.kind == CHECK)
    replications = [c for c in claims if c.kind == REPLICATION]
    assert all(c.interval and c.setup for c in replications)
    for start in ("The improvements of the discriminative model", "The discriminative model improves",
                  "Without the Viterbi decoding score", "On English dev"):
        assert _claim(claims, start).verdict == HOLDS, start
    caption = _claim(claims, "The improvements of the discriminative model")
    assert caption.interval.startswith("zh at p < 0.01: +0.60 [") and "n = 1000 sentences" in caption.interval
    # French's suffix rerankers 3 and 6 tokens below the HMM: not settled, so neither is the claim
    suffix = _claim(claims, "On test, the baseline rerankers (suffix features)")
    assert suffix.verdict == INCONCLUSIVE and "HMM − Regularized (Sufx), fr: +0.03 [" in suffix.interval
    hmm_en = claims[0]
    assert hmm_en.ours.startswith("dev 96.74, test 96.15 (first-order emissions: dev 96.44, test 95.85)")
    assert "+0.30 points" in hmm_en.why and "100% of the 0.30-point gap" in hmm_en.why


def test_claims_of_several_comparisons_hold_fail_or_stay_inconclusive():
    hmm = {(l, HMM): _paper_value("Baseline", l, "test") for l in LANGUAGES}
    # every n-gm reranker 0.3 points above its suffix twin: "in most pairs" holds; 0.3 below: it does not
    above = {(l, n): hmm[l, HMM] + 0.005 for l in LANGUAGES for n in NGRAM_BOOSTING}
    above.update({(l, s): hmm[l, HMM] + 0.002 for l in LANGUAGES for s in SUFFIX_BOOSTING})
    assert _one(CLAIMS._ngram_helps_claim, test=above).verdict == HOLDS
    below = {**above, **{(l, n): hmm[l, HMM] - 0.001 for l in LANGUAGES for n in NGRAM_BOOSTING}}
    found = _one(CLAIMS._ngram_helps_claim, test=below)
    assert found.verdict == FAILS and found.interval.count("; ") == 7  # every pair printed
    # four of eight above, four within a token: at least 5 of 8 can still hold, so inconclusive
    mixed = {**above, **{(l, "Collins (n-gm)"): hmm[l, HMM] + 0.0021 for l in LANGUAGES}}
    assert _one(CLAIMS._ngram_helps_claim, test=mixed).verdict == INCONCLUSIVE


def test_the_captions_level_and_the_largest_gain():
    hmm = {l: _paper_value("Baseline", l, "test") for l in LANGUAGES}
    # Chinese 6 sentences one token up: the randomisation test's p is about 2 / 2^6, below 0.05 but not 0.01
    few = collect(fake_rows(test={("zh", "Discriminative"): hmm["zh"] + 0.0006}))
    assert CLAIMS._significance_claim(few).verdict == INCONCLUSIVE
    assert "improves, zh: +0.06 [" in CLAIMS._gains_claim(few).interval
    worse = collect(fake_rows(test={("zh", "Discriminative"): hmm["zh"] - 0.003}))
    assert CLAIMS._significance_claim(worse).verdict == FAILS
    gains = CLAIMS._gains_claim(worse)
    assert gains.verdict == FAILS and "zh -0.30" in gains.ours
    # every language gains, Chinese not clearly the most: its interval overlaps French's
    close = _one(CLAIMS._gains_claim, test={("zh", "Discriminative"): hmm["zh"] + 0.0015,
                                            ("fr", "Discriminative"): hmm["fr"] + 0.0014})
    assert close.verdict == INCONCLUSIVE and "most in Chinese: zh's interval against en's: inconclusive, fr's: " \
        "inconclusive" in close.interval


def test_table3_and_fig1_judged_over_sentences():
    hmm_dev = _paper_value("Baseline", "en", "dev")
    # one setting of Fig. 1 on the HMM's dev accuracy: not above it
    fig1 = _one(CLAIMS._fig1_claim, dev={("en", "Discriminative"): hmm_dev + 0.0002})
    assert fig1.verdict == INCONCLUSIVE and "n = 1000 dev sentences" in fig1.interval
    assert _one(CLAIMS._fig1_claim, dev={("en", "Discriminative"): hmm_dev - 0.004}).verdict == FAILS
    # the generative reranker without the decoder's score above the HMM in English: not "below the baseline"
    table3 = _one(CLAIMS._table3_claim, no_viterbi={("en", "Generative"): 0.97})
    assert table3.verdict == FAILS and "HMM − Generative without it, en: -0.85 [" in table3.interval


def test_a_store_before_the_dev_and_no_viterbi_sentences_leaves_their_claims_untestable():
    rows = [r for r in fake_rows() if not r["metric"].startswith((DEV_SENTENCE, NO_VITERBI_SENTENCE, "dev:sentences",
                                                                  "dev:tokens"))]
    runs = collect(rows)
    table3, fig1 = CLAIMS._table3_claim(runs), CLAIMS._fig1_claim(runs)
    assert table3.verdict == fig1.verdict == UNTESTABLE
    assert "test:q_no_viterbi:<sentence>" in table3.why and "dev:q:<sentence>" in fig1.why
    assert CLAIMS._gains_claim(runs).verdict == HOLDS  # the test sentences still serve


def test_claims_fail_where_ours_contradict_the_paper():
    rows = fake_rows(test={("en", HMM): 0.9300, ("en", HMM_FIRST): 0.9260, ("zh", "Discriminative"): 0.9200},
                     dev={("en", HMM): 0.9265, ("en", HMM_FIRST): 0.9231})
    runs = collect(rows)
    hmm_en = CLAIMS.hmm_claim(runs, "en")
    assert (hmm_en.verdict, hmm_en.kind) == (FAILS, CHECK)
    assert "Dev is -4.09 and test -3.15 points from the paper's" in hmm_en.why
    assert "change test accuracy by +0.40 points" in hmm_en.why and "11% of the 3.55-point gap" in hmm_en.why
    assert "Hypothesis:" in hmm_en.why
    gains = CLAIMS._gains_claim(runs)
    assert gains.verdict == FAILS and "zh -0.31" in gains.ours
    high = CLAIMS.high_accuracy_claim(runs)
    assert (high.verdict, high.kind) == (FAILS, CHECK) and "en 93.00" in high.ours


def test_a_failing_claim_reports_the_ablation_on_the_first_order_lists():
    rows = fake_rows(test={("zh", "Discriminative"): 0.9225})
    for lang in LANGUAGES:
        gain = 0.004 if lang == "zh" else 0.001
        first = _paper_value("Baseline", lang, "test") - 0.003
        for model in ABLATION:
            params = dict(CENTRE) if model in RERANKERS else {"n_rounds": 2000}
            rows += [_row(lang, model + ON_FIRST, params, "dev:accuracy", 0.9),
                     _row(lang, model + ON_FIRST, params, "test:accuracy", first + gain)]
    gains = CLAIMS._gains_claim(collect(rows))
    assert gains.verdict == FAILS  # Chinese's 6 sentences one token down, none up: p about 2 / 2^6
    assert ("Ablation (the rerankers on the first-order HMM's lists): Discriminative minus the HMM: en +0.10, "
            "zh +0.40, fr +0.10, sv +0.10.") in gains.why
    sections = dict(report_sections(rows, "/tmp/jag-test-report"))
    assert "| Discriminative | 90.00 | 90.00 | 90.00 | 90.00 |" in sections[
        "Ablation: the rerankers on the first-order HMM's lists"]


def test_without_runs_every_claim_cannot_be_tested_and_dropping_one_model_is_named():
    assert {c.verdict for c in jag.claims([])} == {UNTESTABLE}
    claims = jag.claims(fake_rows(drop={"Collins (n-gm)"}))
    untestable = [c for c in claims if c.verdict == UNTESTABLE]
    assert len(untestable) == 2 and all("n-gm" in c.why or "boosting" in c.why for c in untestable)


def test_the_claims_are_registered():
    from structrank_lab.experiments.registry import CLAIMS

    assert CLAIMS[jag.EXPERIMENT] is jag.claims
