"""`structrank reproduce neural-qa` (issues 40 and 61): the plan's order, the claims on hand-made values, and the quick
reproduction on real data with the tiny BERT of tests/tiny_encoder.py (results, report, figure, resumption)."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from structrank_lab.experiments.claims import CHECK, FAILS, HOLDS, INCONCLUSIVE, REPLICATION, UNTESTABLE
from structrank_lab.experiments.neural_qa.design import (BCE, COSINE, CRF_KL, DATASETS, EXPERIMENT, FINE_TUNED,
                                                     LAMBDALOSS, LISTNET, LOSSES, LSP_AP, MAP_HINGE, NDCG_HINGE, PEERS,
                                                     RANKNET, REFERENCE_ROWS, STRUCTURED, TRANSFERRED)
from structrank_lab.experiments.neural_qa.plan import plan

TEXT = pytest.mark.extra("text")


# -- the plan --------------------------------------------------------------------------------------------------------


def test_the_plan_runs_wikiqa_and_trec_qa_seed_by_seed_then_semeval_s_seeds_in_turn():
    specs = plan()
    grid, transfer = specs[:-3 * len(TRANSFERRED)], specs[-3 * len(TRANSFERRED):]
    assert len(grid) == len(DATASETS) * (len(REFERENCE_ROWS) + 3 * len(FINE_TUNED)) == 69
    assert len(set(specs)) == len(specs)
    order = [(s.dataset, s.seed) for s in grid]
    blocks = list(dict.fromkeys(order))
    assert blocks == [("wikiqa", 0), ("trec13", 0), ("wikiqa", 1), ("trec13", 1), ("wikiqa", 2), ("trec13", 2),
                      ("semeval2016", 0), ("semeval2016", 1), ("semeval2016", 2)]
    # the transfer rows last, seed by seed, on WikiQA, each the best of its side (a structured loss, a peer)
    assert [(s.dataset, s.seed, s.model) for s in transfer] == [("wikiqa", seed, row) for seed in (0, 1, 2)
                                                                for row in TRANSFERRED]
    assert sorted(TRANSFERRED.values()) == sorted([CRF_KL, LAMBDALOSS])
    first = [s.model for s in grid if (s.dataset, s.seed) == ("wikiqa", 0)]
    assert first == [COSINE, LSP_AP, *FINE_TUNED] and FINE_TUNED[0] == CRF_KL  # the cheap rows without a seed first
    assert [s.model for s in grid if (s.dataset, s.seed) == ("trec13", 1)] == list(FINE_TUNED)
    assert set(FINE_TUNED) == {*STRUCTURED, *PEERS} and {LOSSES[r] for r in PEERS} == {"bce", "ranknet", "listnet",
                                                                                      "lambdaloss"}
    assert all(s.params["budget"] == "full" and s.experiment == EXPERIMENT for s in specs)
    quick = plan(quick=True)
    assert {s.seed for s in quick} == {0}
    assert len(quick) == len(DATASETS) * (len(REFERENCE_ROWS) + len(FINE_TUNED)) + len(TRANSFERRED)
    assert all(s.params["budget"] == "quick" for s in quick)


def test_each_fine_tuned_row_trains_the_options_of_its_xenc_model(monkeypatch):
    """Each fine-tuned row trains what `structrank train xenc-<loss>` trains; the options are in the run's key, so a
    changed default runs the row again (and the rows whose model sets none keep the key of their recorded runs)."""
    from dataclasses import replace

    from structrank.learners.registry import MODELS

    for spec in plan():
        row = TRANSFERRED.get(spec.model, spec.model)  # a transfer row trains its loss's options
        if row in LOSSES:
            model = MODELS[f"xenc-{LOSSES[row]}"]
            assert spec.params.get("loss_params") == model.defaults.get("loss_params")
        else:
            assert "loss_params" not in spec.params
    positional = {"feature_map": "positional", "inference": "exact", "scale": 3.0}
    monkeypatch.setitem(MODELS, "xenc-map", replace(MODELS["xenc-map"], defaults={"loss": "map",
                                                                                  "loss_params": positional}))
    keyed = {s.model: s.params for s in plan() if s.seed == 0 and s.dataset == "wikiqa"}
    assert keyed[MAP_HINGE] == {"budget": "full", "loss_params": positional}
    assert keyed[BCE] == {"budget": "full"}


# -- claims on hand-made values --------------------------------------------------------------------------------------


def _runs(dataset, model, seeds, per_query, wall=600.0, threads=2.0, metrics=None):
    """The rows a run records (the part the report and the claims read), for ``seeds``. ``metrics`` moves a
    metric's mean ({"test:mrr": 0.8}): each question's value shifts with it."""
    convention = DATASETS[dataset][1]
    mean = float(np.mean(per_query))
    means = {"test:map": mean, "test:mrr": mean, "test:p@1": mean} | (metrics or {})
    rows = []
    for seed in seeds:
        values = {f"q:q{i}:{name[5:]}": v + means[name] - mean for name in means for i, v in enumerate(per_query)}
        values.update(means)
        values.update({"time:wall": wall, "run:threads": threads, "curve:001": mean, "curve:002": mean,
                       "chosen:epoch": 2.0, "dev:map": mean})
        rows += [{"experiment": EXPERIMENT, "dataset": dataset, "split": "test", "fold": 0, "seed": seed,
                  "model": model, "params": '{"budget":"full"}', "metric": metric, "convention": convention,
                  "value": value, "seconds": wall} for metric, value in values.items()]
    return rows


def _store(base=0.70, lifts=(0.12, 0.11, 0.10), wall=1200.0, threads=2.0, wiki_metrics=None, peers=(0.0, 0.02, 0.03,
                                                                                                0.04),
           transfer=(0.13, 0.06)):
    """Every data set: BCE at ``base`` on 30 questions, the other peers (RankNet, ListNet, LambdaLoss) ``peers`` above
    it, the structured losses (the MAP hinge, the NDCG hinge, CRF-KL) ``lifts`` above (a question-wise spread, so that
    the paired tests have a variance), three seeds; on WikiQA the transfer rows (CRF-KL's, LambdaLoss's) ``transfer``
    above (none when None)."""
    spread = np.linspace(-0.1, 0.1, 30)
    rows = []
    for dataset in DATASETS:
        moved = zip(TRANSFERRED, transfer) if transfer is not None and dataset == "wikiqa" else ()
        for model, lift in (*zip((BCE, RANKNET, LISTNET, LAMBDALOSS), peers), *zip(STRUCTURED, lifts), *moved):
            noise = 0.01 * np.sin(np.arange(30) * (1 + lift))
            per_query = base + lift + spread + noise - noise.mean()  # mean base + lift, inside [0, 1]
            metrics = (wiki_metrics or {}).get(model) if dataset == "wikiqa" else None
            rows += _runs(dataset, model, (0, 1, 2), per_query, wall, threads, metrics)
    return rows


def _by_claim(found):
    return {(c.where, c.claim): c for c in found}


def _targets(rows):
    from structrank_lab.experiments.neural_qa import claims

    return [c for c in claims(rows) if c.paper.startswith("neural-qa")]


def test_the_targets_hold_on_values_that_meet_them():
    targets = _targets(_store(base=0.75))
    assert len(targets) == 1 + 2 + 2 + 1 + len(DATASETS) + 1 and all(c.verdict == HOLDS for c in targets), \
        [(c.claim, c.verdict, c.ours) for c in targets if c.verdict != HOLDS]
    assert [c.kind for c in targets] == [REPLICATION] * (1 + 2 + 2 + 1 + len(DATASETS)) + [CHECK]
    wiki, best_wiki, best_trec, transfer_wiki, transfer_best, hinge = targets[:6]
    # with TREC QA first: CRF-KL's transfer row (0.88) against 0.80, and against LambdaLoss's (0.81), each alone
    first = [row for row in TRANSFERRED if TRANSFERRED[row] == CRF_KL][0]
    assert "with TREC QA first" in transfer_wiki.claim and f"best on dev: {first} 0.8800" in transfer_wiki.ours
    assert transfer_wiki.interval.startswith("+8.00 [") and transfer_best.interval.startswith("+7.00 [")
    assert MAP_HINGE not in transfer_wiki.ours + transfer_best.ours  # the rows without transfer are not compared
    assert f"best on dev: {MAP_HINGE} 0.8700" in wiki.ours and "(3 seeds)" in wiki.ours
    assert "n = 30 questions" in wiki.interval and wiki.interval.startswith("+7.00 [")  # 0.87 against 0.80
    # the page that says what was tried on dev to raise CRF-KL is named, and is in the repository
    assert "docs/XENC_CRF_KL_DEV.md" in wiki.why and (Path(__file__).resolve().parents[2] / "docs" /
                                                     "XENC_CRF_KL_DEV.md").is_file()
    assert "TREC QA" in best_trec.where and f"{MAP_HINGE} 0.8700" in best_wiki.ours and LAMBDALOSS in best_wiki.ours
    assert best_wiki.interval.startswith("+8.00 [")  # the best structured loss against the best peer, LambdaLoss
    assert hinge.verdict == HOLDS and f"{NDCG_HINGE} 0.8600" in hinge.ours  # the best other loss on dev
    versus_bce = [c for c in targets if c.claim.endswith(f"at least as well as {BCE} (MAP)")]
    assert len(versus_bce) == 3 and all(c.interval.count("; ") == 2 for c in versus_bce)  # every loss printed
    assert versus_bce[0].interval.startswith(f"{MAP_HINGE} − {BCE}: +12.00 [")
    assert "longest: 20.0 min" in targets[-1].ours and "threads: 2" in targets[-1].why


def test_the_targets_say_plainly_when_they_do_not_hold_or_are_inside_the_noise():
    # WikiQA below the bar, CRF-KL 5 points below BCE, the best peer 8 points above the best structured loss, the runs
    # too long
    targets = _targets(_store(base=0.62, lifts=(0.12, 0.01, -0.05), wall=2400.0, peers=(0.0, 0.02, 0.03, 0.20)))
    assert targets[0].verdict == FAILS and f"best on dev: {MAP_HINGE} 0.7400" in targets[0].ours, targets[0].ours
    assert targets[1].verdict == FAILS and targets[1].interval.startswith("-8.00 [")
    assert targets[5].verdict == FAILS and LAMBDALOSS in targets[5].ours  # the MAP hinge 8 points below the best
    versus_bce = [c for c in targets if c.claim.endswith(f"at least as well as {BCE} (MAP)")]
    assert all(c.verdict == FAILS and f"{CRF_KL} − {BCE}: -5.00 [" in c.interval for c in versus_bce)
    assert targets[-1].verdict == FAILS and "longest: 40.0 min" in targets[-1].ours
    # on more than two threads the run-time target is not answered
    assert _targets(_store(threads=4.0))[-1].verdict == UNTESTABLE
    # on one thread (the grid's runs, two at a time) a run within the budget answers for 2 cores, one over it does not
    assert _targets(_store(threads=1.0))[-1].verdict == HOLDS
    over = _targets(_store(threads=1.0, wall=2400.0))[-1]
    assert over.verdict == UNTESTABLE and "longest: 40.0 min" in over.ours and "min on 1 thread" in over.why, over.why
    # 0.82 against the 0.80 target over 30 questions, the best peer a point above: the intervals allow both
    unsure = _targets(_store(lifts=(0.12, 0.11, -0.01), peers=(0.0, 0.02, 0.03, 0.13)))
    assert unsure[0].verdict == INCONCLUSIVE and f"best on dev: {MAP_HINGE} 0.8200" in unsure[0].ours
    assert unsure[1].verdict == INCONCLUSIVE and unsure[1].interval.startswith("-1.00 [")
    # an inconclusive target says what more seeds could settle (a projection, labelled a hypothesis); a settled one not
    assert "Projection, a hypothesis" in unsure[1].why and "3 seeds per row give ±" in unsure[1].why
    assert not any("Projection" in c.why for c in targets)


def test_the_transfer_targets_wait_for_the_transfer_rows_and_judge_them_alone():
    targets = _targets(_store(base=0.75, transfer=None))
    transfer = [c for c in targets if "with TREC QA first" in c.claim]
    assert len(transfer) == 2 and all(c.verdict == UNTESTABLE for c in transfer)
    # CRF-KL's transfer row 0.82 against 0.80 over 30 questions: inside the noise; LambdaLoss's 3 points below it
    transfer = [c for c in _targets(_store(base=0.70, transfer=(0.12, 0.09))) if "with TREC QA first" in c.claim]
    assert transfer[0].verdict == INCONCLUSIVE and transfer[1].verdict == HOLDS
    assert transfer[1].interval.startswith("+3.00 [")


def test_the_run_time_target_counts_the_structured_losses_runs():
    rows = _store(base=0.75)
    for r in rows:  # a peer takes 40 minutes, every structured loss 20
        if r["model"] == LISTNET and r["metric"] == "time:wall" and r["dataset"] == "semeval2016":
            r["value"] = 2400.0
    target = _targets(rows)[-1]
    assert target.verdict == HOLDS and "longest: 20.0 min" in target.ours and LISTNET not in target.ours, target.ours
    assert "the peers' are in the run-time table" in target.why
    for r in rows:  # one structured run over the budget fails the target
        if r["model"] == MAP_HINGE and r["metric"] == "time:wall" and r["dataset"] == "trec13" and r["seed"] == 1:
            r["value"] = 1860.0
    target = _targets(rows)[-1]
    assert target.verdict == FAILS and f"longest: 31.0 min (TREC QA, {MAP_HINGE}, seed 1, 2 threads)" in target.ours, \
        target.ours
    assert f"Over the budget on 2 threads: TREC QA {MAP_HINGE} (31.0 min, seed 1)." in target.why, target.why


def test_the_run_time_target_judges_each_loss_on_each_data_set_by_its_runs_on_two_threads():
    def timed(rows, dataset, model, seed, wall, threads):
        for r in rows:
            if (r["dataset"], r["model"], r["seed"]) == (dataset, model, seed):
                if r["metric"] == "time:wall":
                    r["value"] = wall
                elif r["metric"] == "run:threads":
                    r["value"] = threads

    rows = _store(base=0.75, wall=1500.0, threads=1.0)  # the grid's runs: one thread each, within 30 minutes
    timed(rows, "semeval2016", NDCG_HINGE, 0, 3000.0, 1.0)  # one over on one thread: it does not answer, ...
    target = _targets(rows)[-1]
    assert target.verdict == HOLDS, target.why  # ... but seeds 1 and 2 of the same loss answer within the budget
    assert "longest: 50.0 min (SemEval-2016 cQA, NDCG hinge, seed 0, 1 thread)" in target.ours, target.ours
    for seed in (1, 2):  # now every run of that loss there is over on one thread: not answered
        timed(rows, "semeval2016", NDCG_HINGE, seed, 2000.0, 1.0)
    target = _targets(rows)[-1]
    assert target.verdict == UNTESTABLE, target.why
    assert "Not answered for 2 cores: SemEval-2016 cQA NDCG hinge (its longest run 50.0 min on 1 thread)." \
        in target.why, target.why
    timed(rows, "semeval2016", NDCG_HINGE, 2, 1700.0, 2.0)  # a run on 2 threads within the budget answers it
    target = _targets(rows)[-1]
    assert target.verdict == HOLDS and "on 2 threads, 1 run, longest 28.3 min (SemEval-2016 cQA, NDCG hinge, seed 2)" \
        in target.ours, target.ours
    timed(rows, "semeval2016", NDCG_HINGE, 2, 1900.0, 2.0)  # over on 2 threads: the target does not hold
    target = _targets(rows)[-1]
    assert target.verdict == FAILS and "Over the budget on 2 threads: SemEval-2016 cQA NDCG hinge (31.7 min, seed 2)" \
        in target.why, target.why
    timed(rows, "wikiqa", CRF_KL, 0, 1000.0, 2.0)  # a loss's run on 2 threads decides it whatever its 1-thread runs
    timed(rows, "semeval2016", NDCG_HINGE, 2, 1600.0, 2.0)
    assert _targets(rows)[-1].verdict == HOLDS


def test_without_runs_every_claim_is_there_and_cannot_be_tested():
    from structrank_lab.experiments.neural_qa import claims
    from structrank_lab.experiments.registry import CLAIMS

    assert CLAIMS[EXPERIMENT] is claims
    empty = claims([])
    assert len(empty) == len(claims(_store())) and {c.verdict for c in empty} == {UNTESTABLE}


def test_haponchyk2018_s_claims_are_asked_again_with_a_fine_tuned_encoder():
    from structrank_lab.experiments.neural_qa import claims

    gaps = {"test:map": 0.82, "test:mrr": 0.84, "test:p@1": 0.75}
    bce = {"test:map": 0.70, "test:mrr": 0.72, "test:p@1": 0.70}  # P@1 only +5 points
    found = [c for c in claims(_store(wiki_metrics={MAP_HINGE: gaps, BCE: bce})) if c.paper.startswith("Haponchyk")]
    assert len(found) == 4 and all("fine-tuned encoder (neural-qa)" in c.where for c in found)
    beats, seven, best, trec = found
    assert beats.verdict == HOLDS and beats.interval.startswith("+12.00 [") and "n = 30 questions" in beats.interval
    assert beats.ours == "MAP 0.8200 - 0.7000 = +12.00 points" and f"({MAP_HINGE} 3, {BCE} 3)" in beats.why
    # P@1 +5 points, the whole interval below the claimed 7: the claim does not hold
    assert seven.verdict == FAILS and "p@1 +5.00" in seven.ours and "map +12.00" in seven.ours
    assert "claimed above +7.00" in seven.interval
    assert best.verdict == HOLDS and best.ours.startswith(f"test MAP, best first: {MAP_HINGE} 0.8200, {NDCG_HINGE} 0.8100")
    assert trec.verdict == HOLDS and "TREC13" in trec.claim and trec.ours == "MAP 0.8200 - 0.7000 = +12.00 points"
    below = [c for c in claims(_store(lifts=(-0.03, 0.1, 0.09))) if c.paper.startswith("Haponchyk")]
    assert [c.verdict for c in below] == [FAILS, FAILS, FAILS, FAILS]
    assert f"best first: {NDCG_HINGE}" in below[2].ours


def test_the_report_lays_out_the_hand_made_runs(tmp_path):
    from structrank_lab.experiments.neural_qa import report_sections

    rows = _store() + _runs("wikiqa", COSINE, (0,), np.full(30, 0.5)) + _runs("wikiqa", LSP_AP, (0,), np.full(30, 0.6))
    sections = dict(report_sections(rows, tmp_path))
    table = sections["WikiQA: test MAP, MRR and P@1 (trec), mean ± sd over the seeds"]
    lines = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert [line.split("|")[1].strip() for line in lines] == [*FINE_TUNED, *TRANSFERRED, COSINE, LSP_AP]
    # the hand-made best on dev is the MAP hinge, not CRF-KL: the page says the transfer rows' losses are not both it
    assert "TANDA" in sections["Setup"]
    assert f"best on WikiQA dev are {MAP_HINGE} and {LAMBDALOSS}: not both the transfer rows'" in sections["Setup"]
    assert f"| {BCE} | 0.7000 ± 0.0000 | 0.7000 ± 0.0000 | 0.7000 ± 0.0000 | 0.7000 ± 0.0000 | 2, 2, 2 | 3 |" in table
    assert "| LSP-AP (features) | 0.6000 | 0.6000 | 0.6000 |" in table and table.endswith("| — | — |")
    paired = sections["SemEval-2016 cQA: the structured losses against sentence-transformers' losses, paired over test "
                      "questions"]
    assert paired.count(f"| {MAP_HINGE} |") == len(PEERS) and f"{MAP_HINGE} better" in paired
    assert f"| WikiQA · {MAP_HINGE} · 2 threads (seeds 0, 1, 2) | 1200.0 ± 0.0 | 20.0 ± 0.0 |" \
        in sections["Run times"]
    assert (tmp_path / "neural-qa-dev-map.png").stat().st_size > 1000
    assert "Judged from the runs above" in sections["Targets"]


def test_the_run_time_table_never_averages_runs_on_different_thread_counts():
    from structrank_lab.experiments.neural_qa.report import times_table

    rows = _store(wall=1200.0, threads=1.0)
    for r in rows:  # seed 2 of the MAP hinge on WikiQA ran on 2 threads, in half the time
        if (r["dataset"], r["model"], int(r["seed"])) == ("wikiqa", MAP_HINGE, 2):
            r["value"] = {"time:wall": 600.0, "run:threads": 2.0}.get(r["metric"], r["value"])
    table = times_table(rows)
    assert f"| WikiQA · {MAP_HINGE} · 1 thread (seeds 0, 1) | 1200.0 ± 0.0 | 20.0 ± 0.0 |" in table, table
    assert f"| WikiQA · {MAP_HINGE} · 2 threads (seed 2) | 600.0 | 10.0 |" in table, table
    lines = [line.split(" | ")[0] for line in table.splitlines() if line.startswith("| WikiQA")]
    assert lines.index(f"| WikiQA · {MAP_HINGE} · 1 thread (seeds 0, 1)") + 1 == \
        lines.index(f"| WikiQA · {MAP_HINGE} · 2 threads (seed 2)"), lines


def test_the_setup_names_the_loss_options_the_rows_ran_with():
    from structrank_lab.experiments.neural_qa.report import setup

    rows = _store()
    assert "Loss options" not in setup(rows)
    options = '{"budget":"full","loss_params":{"feature_map":"positional","inference":"exact","scale":3.0}}'
    rows = [{**r, "params": options} if r["model"] == MAP_HINGE else r for r in rows]
    text = setup(rows)
    assert (f'Loss options: `{MAP_HINGE}` with `loss_params={{"feature_map": "positional", "inference": "exact", '
            '"scale": 3.0}`') in text
    assert "the other rows train their loss as registered." in text


# -- the quick reproduction ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    from tests.extras import need

    need("text")
    from tests.tiny_encoder import write_tiny_encoder

    return str(write_tiny_encoder(tmp_path_factory.mktemp("tiny-bert")))


@pytest.fixture(scope="module")
def quick_run(tiny_encoder, data_root, tmp_path_factory):
    from structrank_lab.experiments.neural_qa import plan as plan_module

    out = tmp_path_factory.mktemp("neural-qa")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STRUCTRANK_NEURAL_QA_ENCODER", tiny_encoder)
        rows = plan_module.reproduce(out, data_dir=data_root, quick=True, keep=out / "kept")
    return out, rows


@TEXT
@pytest.mark.data
def test_quick_reproduction_records_every_row_on_every_data_set(quick_run):
    out, rows = quick_run
    with open(out / "results.csv", newline="") as fh:
        records = list(csv.DictReader(fh))
    assert len(records) == len(rows) and {r["experiment"] for r in records} == {EXPERIMENT}
    runs = {(r["dataset"], r["model"], r["seed"]) for r in records}
    expected = {(d, m, "0") for d in DATASETS for m in (*REFERENCE_ROWS, *FINE_TUNED)}
    assert runs == expected | {("wikiqa", m, "0") for m in TRANSFERRED}
    for model in TRANSFERRED:  # the first fine-tuning, on TREC QA, is recorded beside the WikiQA one
        mine = {r["metric"]: r for r in records if r["model"] == model}
        assert {"transfer:dev:map", "transfer:epoch", "time:transfer", "curve:001", "dev:map"} <= set(mine), model
        assert mine["count:transfer_questions"]["value"] == mine["count:train_questions"]["value"]  # 16 each
    for dataset in DATASETS:
        convention = DATASETS[dataset][1]
        for model in (*REFERENCE_ROWS, *FINE_TUNED):
            mine = {r["metric"]: r for r in records if r["dataset"] == dataset and r["model"] == model}
            assert {"test:map", "test:mrr", "test:p@1", "time:wall", "time:predict", "run:threads",
                    "count:test_questions"} <= set(mine), (dataset, model)
            assert mine["test:map"]["convention"] == convention and 0 <= float(mine["test:map"]["value"]) <= 1
            questions = [m for m in mine if m.startswith("q:") and m.endswith(":map")]
            assert len(questions) == int(float(mine["count:test_questions"]["value"])) == 6
            if model in FINE_TUNED:
                assert {"curve:001", "chosen:epoch", "dev:map", "time:epoch:001", "time:train"} <= set(mine)
        lsp = {r["metric"] for r in records if r["dataset"] == dataset and r["model"] == LSP_AP}
        assert {"chosen:C", "select:map"} <= lsp


@TEXT
@pytest.mark.data
def test_quick_report_has_its_tables_tests_times_figure_and_targets(quick_run):
    out, _ = quick_run
    report = (out / "report.md").read_text()
    for title, _, _ in DATASETS.values():
        assert f"## {title}: test MAP, MRR and P@1" in report
        assert f"## {title}: the structured losses against sentence-transformers' losses, paired over test questions" \
            in report
    assert "**A quick run**" in report and "## Run times" in report and "## Targets" in report
    assert "![dev MAP by epoch per loss](neural-qa-dev-map.png)" in report
    assert (out / "neural-qa-dev-map.png").stat().st_size > 1000


@TEXT
@pytest.mark.data
def test_a_second_quick_run_reuses_the_stored_runs_and_a_new_machine_the_kept_ones(quick_run, tiny_encoder, data_root,
                                                                                   tmp_path):
    """The same --out runs nothing again; a fresh --out with the kept folder (a machine that starts from the
    repository) reads every run from it, runs nothing, and writes the same table."""
    out, _ = quick_run
    before = (out / "results.csv").read_text()
    env = {**os.environ, "STRUCTRANK_DATA": str(data_root), "STRUCTRANK_NEURAL_QA_ENCODER": tiny_encoder}
    done = subprocess.run([sys.executable, "-m", "structrank", "reproduce", EXPERIMENT, "--quick", "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "neural-qa: 0 runs done" in done.stderr
    assert (out / "results.csv").read_text() == before
    kept = sorted((out / "kept").glob("*.tsv"))
    assert len(kept) == len(DATASETS) * (len(REFERENCE_ROWS) + len(FINE_TUNED)) + len(TRANSFERRED)
    fresh = tmp_path / "fresh"
    done = subprocess.run([sys.executable, "-m", "structrank", "reproduce", EXPERIMENT, "--quick", "--out", str(fresh),
                           "--keep", str(out / "kept")], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{len(kept)} runs read from" in done.stderr and "neural-qa: 0 runs done" in done.stderr
    assert (fresh / "results.csv").read_text() == before


@TEXT
@pytest.mark.data
def test_the_results_page_renders_its_section(quick_run, tmp_path):
    from structrank_lab.experiments import ResultStore, write_results_markdown

    out, _ = quick_run
    with ResultStore(out / "results.sqlite") as store:
        page = write_results_markdown(store, tmp_path / "RESULTS.md", "results", "structrank results").read_text()
    assert "## neural-qa — Setup" in page and "## Claims" in page and "Haponchyk & Moschitti 2018" in page
    assert "(figures/neural-qa/neural-qa-dev-map.png)" in page
    assert (tmp_path / "figures" / "neural-qa" / "neural-qa-dev-map.png").is_file()
