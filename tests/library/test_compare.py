"""`structrank compare` (structrank.metrics.compare): paired tests against scipy and ranx, Holm, outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from cli_checks import NO_OPEN_FILES
from structrank.cli import main
from structrank.data import letor_folds, letor_root, read_letor
from structrank.metrics import evaluate_run
from structrank.metrics.compare import compare_results, holm

pytestmark = NO_OPEN_FILES

# ranx's Fisher test draws its own 10,000 permutations: its p and ours each have a Monte Carlo
# standard error of at most 0.005, so their difference stays within 0.03 (6 standard errors of
# the difference) unless the tests differ
RANX_TOLERANCE = 0.03


def _runs(seed=0, systems=3):
    """qrels and ``systems`` runs of MQ2008 Fold1's test file: the labels plus noise, untied scores."""
    test = read_letor(letor_folds(letor_root("MQ2008"))[0].test)
    rng = np.random.default_rng(seed)
    qrels, runs = {}, []
    for q, d, label in zip(test.qid, test.docids, test.y):
        qrels.setdefault(str(q), {})[str(d)] = int(label)
    for s in range(systems):
        scores = test.y * (0.3 + 0.3 * s) + rng.normal(size=test.n_rows)
        run = {}
        for q, d, v in zip(test.qid, test.docids, scores):
            run.setdefault(str(q), {})[str(d)] = float(v)
        runs.append(run)
    return qrels, runs


def test_holm_adjusts_step_down_and_never_lowers_a_p_value():
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]).tolist() == [0.5]
    p = np.random.default_rng(0).random(7)
    adjusted = holm(p)
    assert np.all(adjusted >= p) and np.all(np.diff(adjusted[np.argsort(p)]) >= 0) and adjusted.max() <= 1.0


@pytest.mark.slow  # ranx's Fisher test of 10,000 permutations is slow: `./dev test -m slow` and CI run it
def test_t_test_is_scipy_s_and_randomisation_agrees_with_ranx(data_root):
    ranx = pytest.importorskip("ranx", reason="ranx is a test reference")
    qrels, runs = _runs()
    names = ["A", "B", "C"]
    results = {n: evaluate_run(qrels, r, ["map", "ndcg@10"]) for n, r in zip(names, runs)}
    comparison = compare_results(results, n_resamples=10_000, seed=0)
    report = ranx.compare(ranx.Qrels(qrels), [ranx.Run(r, name=n) for n, r in zip(names, runs)], ["map", "ndcg@10"],
                          stat_test="fisher", n_permutations=10_000, random_seed=42)
    for row in comparison.rows:
        a = results[row.system].per_query[row.metric]
        b = results["A"].per_query[row.metric]
        assert row.t_p == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12, abs=1e-15)
        theirs = report.comparisons[frozenset((row.system, "A"))][row.metric]["p_value"]
        assert abs(row.rand_p - theirs) <= RANX_TOLERANCE, (row, theirs)
        # ranx computes the metric itself: the same per-query means on these untied runs
        assert row.mean == pytest.approx(report.results[row.system][row.metric], abs=1e-9)


def test_the_compare_command_writes_text_markdown_json_and_a_plot(tmp_path, capsys, data_root):
    qrels, runs = _runs(systems=2)
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    paths = []
    for i, run in enumerate(runs):
        path = tmp_path / f"run{i}.txt"
        path.write_text("".join(f"{q} Q0 {d} 0 {s!r} sys{i}\n" for q, docs in run.items() for d, s in docs.items()))
        paths.append(str(path))
    base = ["compare", "--qrels", str(tmp_path / "qrels.txt"), *paths, "--metric", "map", "--names", "bm25,neural"]
    assert main(base + ["--format", "json", "--plot", str(tmp_path / "diff.png")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["baseline"] == "bm25" and out["comparisons"][0]["system"] == "neural"
    assert out["comparisons"][0]["difference"] > 0 and (tmp_path / "diff.png").stat().st_size > 1000
    row = out["comparisons"][0]  # the interval is the paired t-test's, around the mean difference
    assert row["ci_low"] < row["difference"] < row["ci_high"]
    assert (row["ci_low"] > 0) == (row["t_p"] < 0.05)
    assert main(base + ["--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("| metric | system | mean | vs bm25 | 95% CI |") and "Holm" in text
    assert f"| {row['ci_low']:+.4f} to {row['ci_high']:+.4f} |" in text and "not adjusted across comparisons" in text
    assert main(base) == 0
    assert "neural" in capsys.readouterr().out
    assert main(["compare", "--qrels", str(tmp_path / "qrels.txt"), paths[0]]) == 2
    assert "at least two systems" in capsys.readouterr().err


def test_compare_over_a_letor_file_and_scores_files(tmp_path, capsys):
    from structrank.data import make_ranking_dataset, write_letor

    ds = make_ranking_dataset(n_queries=20, random_state=0)
    write_letor(tmp_path / "data.txt", ds)
    rng = np.random.default_rng(0)
    for name, scores in (("a", ds.y + rng.normal(size=ds.n_rows)), ("b", rng.normal(size=ds.n_rows))):
        (tmp_path / f"{name}.txt").write_text("".join(f"{float(v)!r}\n" for v in scores))
    assert main(["compare", "--data", str(tmp_path / "data.txt"), str(tmp_path / "a.txt"), str(tmp_path / "b.txt"),
                 "--metric", "ndcg@10", "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)["comparisons"][0]
    assert row["system"] == "b.txt" and row["difference"] < 0 and row["queries"] == 20


def _write_run(path, run, tag="t"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{q} Q0 {d} 0 {s!r} {tag}\n" for q, docs in run.items() for d, s in docs.items()))
    return str(path)


def _small_runs(tmp_path):
    rng = np.random.default_rng(3)
    qrels = {str(q): {f"d{i}": int(rng.integers(0, 2)) for i in range(6)} for q in range(30)}
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    runs = [{q: {d: float(rng.normal() + s * r) for d, r in docs.items()} for q, docs in qrels.items()} for s in (0, 1)]
    return str(tmp_path / "qrels.txt"), qrels, runs


@pytest.mark.parametrize("option, value, message", [
    ("--alpha", "1.5", "--alpha must be a significance level in (0, 1), got 1.5"),
    ("--alpha", "nan", "--alpha must be a significance level in (0, 1), got nan"),
    ("--alpha", "-0.1", "--alpha must be a significance level in (0, 1)"),
    ("--seed", "-1", "--seed must be >= 0, got -1"),
    ("--permutations", "10", "--permutations must be from 10000 (a stable p-value) to 1000000"),
    ("--permutations", "100000000", "--permutations must be from 10000 (a stable p-value) to 1000000"),
    ("--convention", "trec", "--convention applies only with --data"),
    ("--relevant-from", "2", None),  # applies with --qrels: fine
])
def test_compare_options_are_checked_naming_the_option(tmp_path, capsys, option, value, message):
    qrels_path, _, runs = _small_runs(tmp_path)
    paths = [_write_run(tmp_path / f"r{i}.txt", run) for i, run in enumerate(runs)]
    code = main(["compare", "--qrels", qrels_path, *paths, "--metric", "map", option, value])
    err = capsys.readouterr().err
    if message is None:
        assert code == 0, err
    else:
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_an_option_for_the_other_source_is_an_error(tmp_path, capsys):
    from structrank.data import make_ranking_dataset, write_letor

    ds = make_ranking_dataset(n_queries=6, random_state=0)
    write_letor(tmp_path / "data.txt", ds)
    for name in ("a", "b"):
        (tmp_path / f"{name}.txt").write_text("".join(f"{v!r}\n" for v in np.arange(ds.n_rows, dtype=float)))
    for extra, message in ((["--relevant-from", "2"], "--relevant-from applies only with --qrels"),
                           (["--complete"], "--complete applies only with --qrels")):
        assert main(["compare", "--data", str(tmp_path / "data.txt"), str(tmp_path / "a.txt"),
                     str(tmp_path / "b.txt"), *extra]) == 2
        assert message in capsys.readouterr().err


def test_runs_in_folders_of_the_same_file_name_get_distinct_names(tmp_path, capsys):
    qrels_path, _, runs = _small_runs(tmp_path)
    paths = [_write_run(tmp_path / f"sys{i}" / "run.txt", run) for i, run in enumerate(runs)]
    assert main(["compare", "--qrels", qrels_path, *paths, "--metric", "map", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["systems"] == ["sys0/run.txt", "sys1/run.txt"]


def test_runs_answering_different_queries_are_compared_over_the_shared_ones(tmp_path, capsys):
    qrels_path, qrels, runs = _small_runs(tmp_path)
    runs[0] = {q: docs for q, docs in runs[0].items() if int(q) >= 3}    # the baseline misses 3 queries
    runs[1] = {q: docs for q, docs in runs[1].items() if int(q) < 28}    # the other misses 2 others
    paths = [_write_run(tmp_path / f"r{i}.txt", run) for i, run in enumerate(runs)]
    assert main(["compare", "--qrels", qrels_path, *paths, "--metric", "map", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["comparisons"][0]
    assert row["queries"] == 25 and out["left_out"] == {"r0.txt": 2, "r1.txt": 3}
    shared = [str(q) for q in range(3, 28)]
    means = [evaluate_run(qrels_path, {q: run[q] for q in shared}, ["map"]).metrics["map"] for run in runs]
    assert out["means"]["r0.txt"]["map"] == pytest.approx(means[0]) == row["baseline_mean"]
    assert out["means"]["r1.txt"]["map"] == pytest.approx(means[1]) == row["mean"]
    assert main(["compare", "--qrels", qrels_path, *paths, "--metric", "map"]) == 0
    assert "left out as not answered by every system: 2 of r0.txt's, 3 of r1.txt's" in capsys.readouterr().out


def test_the_randomisation_test_draws_in_blocks_with_the_same_p_value(monkeypatch):
    from structrank.metrics import significance

    d = np.random.default_rng(1).normal(0.05, 1.0, size=301)
    whole = significance.sign_flip_p(d, 10_000, seed=4)
    monkeypatch.setattr(significance, "SIGN_BLOCK", 1000)  # 3 rows a block
    assert significance.sign_flip_p(d, 10_000, seed=4) == whole
    signs = np.random.default_rng(4).choice((-1.0, 1.0), size=(10_000, d.size))  # the one-draw definition
    hits = np.count_nonzero(np.abs(signs @ d) >= abs(d.sum()) - 1e-9 * np.abs(d).sum())
    assert whole == (hits + 1) / 10_001


@pytest.mark.parametrize("bad", [dict(alpha=1.5), dict(alpha=float("nan")), dict(alpha=0.0), dict(seed=-1),
                                 dict(n_resamples=0)])
def test_the_library_refuses_impossible_test_options(bad):
    from structrank.metrics.compare import compare_values

    values = {"a": {"map": {1: 0.1, 2: 0.2}}, "b": {"map": {1: 0.3, 2: 0.1}}}
    with pytest.raises(ValueError, match=next(iter(bad))):
        compare_values(values, **bad)


def test_compare_holds_python_values_to_the_file_rules():
    from structrank.errors import DataValidationError
    from structrank.metrics.compare import compare_values

    good = {"1": 0.5, "2": 0.25, "3": 1.0}
    for bad, words in (({"1": float("nan"), "2": 0.1}, r"system 'B', map, query '1': value nan is not finite"),
                       ({"1": None, "2": 0.1}, "value None is not a number"),
                       ({1: 0.5, "1": 0.25, 2: 0.1}, "query 1 is given twice")):
        with pytest.raises(DataValidationError, match=words):
            compare_values({"A": {"map": good}, "B": {"map": bad}})
    # query 1.0 of a float qid array is query 1 of a TREC run
    comparison = compare_values({"A": {"map": good}, "B": {"map": {1.0: 0.5, 2.0: 0.5, 3.0: 0.5}}})
    assert comparison.rows[0].queries == 3


def test_compare_results_pairs_float_and_string_query_ids():
    from structrank.metrics import evaluate

    y, qid = np.array([1, 0, 0, 1, 1, 0]), np.array([1.0, 1.0, 2.0, 2.0, 3.0, 3.0])
    by_arrays = evaluate(y, [1.0, 0.0, 0.0, 1.0, 1.0, 0.0], qid, ["map"])
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 0, "d": 1}, "3": {"e": 1, "f": 0}}
    by_run = evaluate_run(qrels, {"1": {"a": 0.0, "b": 1.0}, "2": {"c": 1.0, "d": 0.0}, "3": {"e": 1.0, "f": 0.0}},
                          ["map"])
    comparison = compare_results({"arrays": by_arrays, "run": by_run})
    assert comparison.rows[0].queries == 3 and comparison.left_out == {"arrays": 0, "run": 0}


def test_a_measure_where_lower_is_better_calls_the_lower_run_better():
    """RBP's residual (the weight left on unjudged documents) is better lower: the direction is declared once beside
    the measure (``tool_measures.higher_is_better``) and every verdict of compare reads it."""
    from structrank.metrics.compare import compare_values
    from structrank.metrics.tool_measures import higher_is_better

    assert not higher_is_better("rbp_residual(p=0.8)") and higher_is_better("map") and higher_is_better("rbp(p=0.8)")
    for name, better in (("rbp_residual(p=0.8)", "low"), ("map", "high")):
        values = {"high": {name: {q: 0.5 + 0.01 * q for q in range(20)}},
                  "low": {name: {q: 0.3 + 0.01 * q + 0.001 * (q % 3) for q in range(20)}}}
        comparison = compare_values(values)
        row = comparison.rows[0]
        assert row.difference < 0 and row.verdict("high") == f"{better} better"
        assert comparison.table()[2][-1] == ("better" if better == "low" else "worse")
