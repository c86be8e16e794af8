"""Run fusion (structrank.fusion, `structrank fuse`) against ranx's fuse and optimize_fusion.

ranx ranks a run by its own sort, which leaves tied documents in no defined order past 15 documents
(numba's quicksort); structrank ranks as trec_eval does (ties by docno descending). So ranx is given
runs whose order it reads as trec_eval's: each query's documents inserted best first, at most 15 of
them (its sort is then an insertion sort, stable) or without ties; where it ranks a real run otherwise,
the test says on how many queries and compares the rest, and ranx is also given the rankings alone.
A fused run is compared score for score (1e-9) and ranking for ranking: the same documents, in an order
that ranx's scores never rise along (ranx leaves the order of tied fused documents to its sort too).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cli_checks import NO_OPEN_FILES, one_line
from structrank.cli import main
from structrank.data import letor_folds, letor_root, read_letor
from structrank.errors import DataValidationError
from structrank.fusion import FUSION_METHODS, NORMALIZATIONS, fuse, normalize, optimize_fusion
from structrank.metrics import evaluate_run, read_run, write_run
from structrank.metrics.trec import _ranked
from test_compare import _runs as noisy_mq2008_runs

ranx = pytest.importorskip("ranx", reason="ranx is the reference of run fusion (the test extra)")
# every comparison with ranx is marked slow: ranx's fusion takes long a call, and longer on a fresh machine, where
# it compiles its numba code first; `./dev test -m slow` and CI run them, the README's `./dev test` does not

pytestmark = NO_OPEN_FILES

TOL = 1e-9
#: structrank's name of each method -> ranx's
RANX_METHODS = {"rrf": "rrf", "combsum": "sum", "combmnz": "mnz", "combmax": "max", "combmin": "min",
                "combmed": "med", "combanz": "anz", "combgmnz": "gmnz", "wsum": "wsum", "wmnz": "wmnz",
                "mixed": "mixed", "isr": "isr", "log_isr": "log_isr", "logn_isr": "logn_isr", "rbc": "rbc",
                "bordafuse": "bordafuse", "w_bordafuse": "w_bordafuse", "condorcet": "condorcet",
                "w_condorcet": "w_condorcet"}
RANX_NORMS = {"minmax": "min-max", "zscore": "zmuv", "sum": "sum", "max": "max", "rank": "rank", "borda": "borda",
              "none": None}
RANK_METHODS = ("rrf", "isr", "log_isr", "logn_isr", "rbc", "bordafuse", "w_bordafuse", "condorcet", "w_condorcet")


def ranx_run(run, qids=()):
    """``run`` as a ranx Run that ranks it as trec_eval does (each query best first; ``qids`` it lacks empty)."""
    return ranx.Run({q: {d: run.get(q, {})[d] for d in _ranked(run.get(q, {}))} for q in dict.fromkeys([*run, *qids])})


def ranx_fused(runs, method, norm, params):
    qids = {q for run in runs for q in run}
    fused = ranx.fuse([ranx_run(r, qids) for r in runs], norm=RANX_NORMS[norm], method=RANX_METHODS[method],
                      params=params)
    return {q: dict(docs) for q, docs in fused.to_dict().items() if docs}


def assert_same_fused(ours, theirs, queries=None):
    """The same queries and documents, scores within TOL, and our ranking one that ranx's scores never
    rise along; returns the largest score difference."""
    queries = list(theirs) if queries is None else queries
    assert set(queries) <= set(ours)
    worst = 0.0
    for q in queries:
        assert set(ours[q]) == set(theirs[q]), q
        ranked = _ranked(ours[q])
        for d in ranked:
            worst = max(worst, abs(ours[q][d] - theirs[q][d]))
            assert ours[q][d] == pytest.approx(theirs[q][d], abs=TOL, rel=0), (q, d)
        along = [theirs[q][d] for d in ranked]
        # ranked as trec_eval ranks a run: scores equal as C floats tie, whatever ranx's doubles say
        tied = [np.float32(ours[q][a]) == np.float32(ours[q][b]) for a, b in zip(ranked, ranked[1:])]
        assert all(b <= a + TOL or tie for a, b, tie in zip(along, along[1:], tied)), (q, ranked, along)
    return worst


def params_for(method, n_runs, draw=None):
    param = FUSION_METHODS[method]
    if param is None:
        return {}
    if param == "weights":
        weights = draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0, 2.0]), min_size=n_runs,
                                max_size=n_runs)) if draw else [0.5, 0.3, 0.2][:n_runs]
        return {"weights": weights if any(weights) else [1.0] * n_runs}
    values = {"k": st.integers(0, 100), "gamma": st.sampled_from([0.0, 0.3, 1.0, 2.5]),
              "sigma": st.sampled_from([0.0, 0.01, 0.5]), "phi": st.sampled_from([0.0, 0.5, 0.8, 1.0])}
    return {param: draw(values[param])}


# -- MQ2008: the acceptance of issue 41 --------------------------------------------------------------


@pytest.fixture(scope="module")
def mq2008_runs(tmp_path_factory, data_root):
    """Three real runs of MQ2008 Fold1's test queries, written as TREC runs: least squares fitted on the
    training file over all 46 features, over the first 23 and over the last 23; and the test qrels."""
    fold = letor_folds(letor_root("MQ2008"))[0]
    train, test = read_letor(fold.train), read_letor(fold.test)
    folder = tmp_path_factory.mktemp("mq2008-runs")
    paths = []
    for name, columns in (("all", slice(0, 46)), ("first", slice(0, 23)), ("last", slice(23, 46))):
        design = np.c_[np.asarray(train.X)[:, columns], np.ones(train.n_rows)]
        w = np.linalg.lstsq(design, train.y, rcond=None)[0]
        scores = np.c_[np.asarray(test.X)[:, columns], np.ones(test.n_rows)] @ w
        paths.append(folder / f"{name}.run")
        write_run(paths[-1], test.qid, test.docids, scores, tag=name)
    qrels = {}
    for q, d, label in zip(test.qid, test.docids, test.y):
        qrels.setdefault(str(q), {})[str(d)] = int(label)
    return paths, qrels


def written(path):
    """{qid: {docno: score}} of a TREC run file, and each query's documents in the file's rank order."""
    run, order = {}, {}
    for line in path.read_text().splitlines():
        q, _, d, rank, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
        order.setdefault(q, []).append((int(rank), d))
    assert all(ranks == sorted(ranks) for ranks in order.values())
    return run, {q: [d for _, d in ranks] for q, ranks in order.items()}


@pytest.mark.slow
def test_rrf_of_three_mq2008_runs_through_the_command_equals_ranx(mq2008_runs, tmp_path, capsys):
    paths, _ = mq2008_runs
    out = tmp_path / "rrf.run"
    assert main(["fuse", *map(str, paths), "--method", "rrf", "--tag", "fused", "--out", str(out), "--quiet"]) == 0
    ours, order = written(out)
    assert all(line.endswith(" fused") for line in out.read_text().splitlines())
    assert all(order[q] == _ranked(docs) for q, docs in ours.items())  # ranked as trec_eval ranks it
    runs = [read_run(p) for p in paths]
    assert len(ours) == 156 and sum(map(len, ours.values())) == sum(map(len, runs[0].values()))
    # 1. ranx on the runs as they are: it ranks the tied documents (duplicate rows) of a few queries its own way
    as_read = [ranx.Run(r) for r in runs]
    agree = [q for q in ours if all(list(run.run[q].keys()) == _ranked(r[q]) for run, r in zip(as_read, runs))]
    assert len(agree) >= 150, len(agree)
    theirs = {q: dict(d) for q, d in ranx.fuse(as_read, method="rrf", norm=None).to_dict().items()}
    assert_same_fused(ours, theirs, agree)
    # 2. ranx on each run's ranking (trec_eval's, strictly decreasing scores): every query
    rankings = [{q: {d: float(len(docs) - i) for i, d in enumerate(_ranked(docs))} for q, docs in r.items()}
                for r in runs]
    theirs = {q: dict(d) for q, d in ranx.fuse([ranx.Run(r) for r in rankings], method="rrf", norm=None,
                                                params={"k": 60}).to_dict().items()}
    assert assert_same_fused(ours, theirs) <= TOL


@pytest.mark.slow
@pytest.mark.parametrize("method", ["combmnz", "wsum", "isr", "bordafuse"])
def test_other_methods_on_the_mq2008_runs_equal_ranx(mq2008_runs, method):
    """Score-based methods on every query; rank-based ones where ranx ranks each input as trec_eval does."""
    paths, _ = mq2008_runs
    runs = [read_run(p) for p in paths]
    params = params_for(method, 3)
    norm = None if method in RANK_METHODS else "zscore"
    ours = fuse(paths, method, norm, **params)
    given = [ranx_run(r) for r in runs]
    agree = [q for q in ours if all(list(g.run[q].keys()) == _ranked(r[q]) for g, r in zip(given, runs))]
    assert len(agree) >= 150, len(agree)
    theirs = ranx.fuse(given, norm=RANX_NORMS[norm or "none"], method=RANX_METHODS[method], params=params).to_dict()
    assert_same_fused(ours, {q: dict(d) for q, d in theirs.items()}, agree if method in RANK_METHODS else None)


# -- every method and normalisation on random runs ----------------------------------------------------

#: scores with ties, the same in double and single precision (so trec_eval's ranking is ranx's)
SCORES = [-2.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 3.0, 7.25]


@st.composite
def small_runs(draw, n_runs=None, every_query=False, same_documents=False, n_docs=10, n_queries=3):
    """2-4 runs over 1-3 queries, up to ``n_docs`` (10) documents each (ranx's sort keeps ties in insertion
    order up to 15), with ties, and documents and (unless ``every_query``) queries some runs lack (none with
    ``same_documents``); every run retrieves documents for the first query, so each shares it."""
    n_runs = n_runs or draw(st.integers(2, 4))
    queries = [f"q{q}" for q in range(draw(st.integers(1, n_queries)))]
    documents = st.lists(st.integers(0, n_docs - 1), max_size=n_docs, unique=True)
    shared = {q: draw(documents.filter(bool)) for q in queries}
    runs = []
    for _ in range(n_runs):
        run = {}
        for i, q in enumerate(queries):
            docs = shared[q] if same_documents else draw(documents if i and not every_query else documents.filter(bool))
            if docs:
                run[q] = {f"d{d}": draw(st.sampled_from(SCORES)) for d in docs}
        runs.append(run)
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("method", [m for m in FUSION_METHODS if m not in ("condorcet", "w_condorcet")])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_method_and_normalisation_equals_ranx_on_random_runs(method, data):
    norm = "none" if method in RANK_METHODS else data.draw(st.sampled_from(NORMALIZATIONS))
    # ranx's zmuv empties every query of a run that has an empty one (the padding of a query the run lacks)
    runs = data.draw(small_runs(every_query=norm == "zscore"))
    params = params_for(method, len(runs), data.draw)
    if method in ("combmax", "combmin"):  # ranx reads a missing document as -1e9 or 1e9: no score beyond them
        assume(all(abs(v) < 1e9 for run in normalize(runs, norm) for docs in run.values() for v in docs.values()))
    ours = fuse(runs, method, None if method in RANK_METHODS else norm, **params)
    assert_same_fused(ours, ranx_fused(runs, method, norm, params))


def majority_order(runs, qid, weights):
    """The documents of ``qid`` in the order of ranx's Condorcet comparison when it is a strict total
    order (every pair decided one way, no cycle), else None."""
    ranks = [{d: i for i, d in enumerate(_ranked(r.get(qid, {})))} for r in runs]
    docs = list(dict.fromkeys(d for r in ranks for d in r))
    missing = len(docs)

    def first(x, y):  # ranx's rule: x first when the runs that rank x above y weigh at least the others
        ahead = sum(w for w, r in zip(weights, ranks) if r.get(x, missing) < r.get(y, missing))
        return ahead >= sum(weights) - ahead

    wins = {x: sum(first(x, y) for y in docs if y != x) for x in docs}
    for x, y in itertools.permutations(docs, 2):
        if first(x, y) == first(y, x):
            return None
    order = sorted(docs, key=lambda d: -wins[d])
    if sorted(wins.values()) != list(range(len(docs))):  # a cycle: no document beats exactly the ones below it
        return None
    return order


@pytest.mark.slow
@pytest.mark.parametrize("method", ["condorcet", "w_condorcet"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_condorcet_equals_ranx_where_the_majorities_are_a_total_order(method, data):
    # every run ranks the same documents, so that the three runs' votes decide every pair one way
    runs = data.draw(small_runs(n_runs=3, same_documents=True, n_docs=5, n_queries=2))
    params = params_for(method, 3, data.draw)
    weights = params.get("weights", [1.0] * 3)
    orders = {q: majority_order(runs, q, weights) for q in {q for r in runs for q in r}}
    assume(all(order is not None for order in orders.values()))
    ours = fuse(runs, method, **params)
    for q, order in orders.items():
        assert list(ours[q]) == order
        assert list(ours[q].values()) == [float(len(order) - i) for i in range(len(order))]
    assert_same_fused(ours, ranx_fused(runs, method, "none", params))


@pytest.mark.slow
def test_condorcet_with_documents_some_runs_lack_equals_ranx():
    """a beats b (two runs to one: the run that lacks b ranks a above it) and c, b beats c (the run that lacks
    c ranks b above it): a total order, with missing documents."""
    runs = [{"1": {"a": 3.0, "b": 2.0, "c": 1.0}}, {"1": {"a": 2.0, "c": 1.0}}, {"1": {"b": 2.0, "a": 1.0}}]
    assert fuse(runs, "condorcet") == {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert_same_fused(fuse(runs, "condorcet"), ranx_fused(runs, "condorcet", "none", {}))
    assert fuse(runs, "w_condorcet", weights=[0.2, 0.2, 1.0]) == {"1": {"b": 3.0, "a": 2.0, "c": 1.0}}


def test_condorcet_in_a_cycle_keeps_the_order_of_first_appearance():
    """Three runs voting in a cycle (a > b, b > c, c > a by two to one): the sort starts from the first
    run's ranking, so the result is the same in every process (ranx starts from a set's order)."""
    runs = [{"1": {"a": 3.0, "b": 2.0, "c": 1.0}}, {"1": {"b": 3.0, "c": 2.0, "a": 1.0}},
            {"1": {"c": 3.0, "a": 2.0, "b": 1.0}}]
    assert fuse(runs, "condorcet") == {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert fuse(runs[1:] + runs[:1], "condorcet") == {"1": {"b": 3.0, "c": 2.0, "a": 1.0}}


@pytest.mark.slow
@pytest.mark.parametrize("norm", NORMALIZATIONS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_normalisation_equals_ranx(norm, data):
    runs = data.draw(small_runs(every_query=norm == "zscore"))  # ranx's zmuv and empty queries: above
    ours = normalize(runs, norm)
    qids = {q for run in runs for q in run}
    if norm == "borda":
        theirs = ranx.normalization.borda_norm([ranx_run(r, qids) for r in runs])
    elif norm == "none":
        theirs = [ranx_run(r) for r in runs]
    else:
        theirs = [ranx.normalization.norm_switch(RANX_NORMS[norm])(ranx_run(r)) for r in runs]
    for run, mine, their in zip(runs, ours, theirs):
        their = {q: dict(docs) for q, docs in their.to_dict().items() if docs}
        assert set(mine) == set(their)
        for q in mine:
            assert list(mine[q])[:len(run.get(q, {}))] == _ranked(run.get(q, {}))  # the run's ranking first
            assert mine[q] == pytest.approx(their[q], abs=TOL, rel=0)


def test_normalisations_by_hand():
    run = {"1": {"a": 4.0, "b": 2.0, "c": 1.0, "d": 1.0}}
    assert normalize([run], "minmax")[0]["1"] == {"a": 1.0, "b": 1 / 3, "c": 0.0, "d": 0.0}
    assert normalize([run], "rank")[0]["1"] == {"a": 1.0, "b": 0.75, "d": 0.5, "c": 0.25}  # ties: docno descending
    z = normalize([run], "zscore")[0]["1"]
    assert z["a"] == pytest.approx((4 - 2) / math.sqrt(1.5)) and sum(z.values()) == pytest.approx(0)
    assert normalize([{"1": {"a": 2.0, "b": 2.0}}], "minmax")[0]["1"] == {"a": 0.0, "b": 0.0}  # ranx's floor


def test_a_query_or_document_a_run_lacks_adds_nothing():
    a = {"1": {"x": 1.0, "y": 0.0}, "2": {"z": 5.0}}
    b = {"1": {"y": 1.0, "w": 0.0}}
    assert fuse([a, b], "combsum") == {"1": {"y": 1.0, "x": 1.0, "w": 0.0}, "2": {"z": 0.0}}
    assert fuse([a, b], "combmnz") == {"1": {"y": 2.0, "x": 1.0, "w": 0.0}, "2": {"z": 0.0}}
    assert fuse([a, b], "rrf", k=0) == {"1": {"y": 1.5, "x": 1.0, "w": 0.5}, "2": {"z": 1.0}}
    assert fuse([a, b], "combmin", norm="none")["1"] == {"x": 1.0, "w": 0.0, "y": 0.0}  # of the runs that have it


# -- weights chosen on qrels ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mq2008_noisy(data_root):
    """qrels of MQ2008 Fold1's test queries and three runs: the labels plus noise, untied (so that ranx's
    metrics, which rank ties their own way, agree with ours), as tests/library/test_compare.py makes them."""
    return noisy_mq2008_runs()


@pytest.mark.slow
def test_weights_chosen_on_qrels_are_ranx_s(mq2008_noisy):
    from ranx.fusion_optimization.optimize_weights import get_possible_weights, get_trial_configs

    qrels, runs = mq2008_noisy
    search = optimize_fusion(qrels, runs, "wsum", metric="map")
    assert len(search.trials) == 66  # every weighting in tenths that sums to 1
    values = dict(search.trials)
    best = max(values.values())
    assert search.score == best and search.value == [w for w, v in search.trials if v == best][-1]
    assert search.fused == fuse(runs, "wsum", weights=search.value)
    assert evaluate_run(qrels, search.fused, ["map"]).metrics["map"] == search.score
    chosen, report = ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in runs], norm="min-max",
                                          method="wsum", metric="map", return_optimization_report=True,
                                          show_progress=False)
    tried = [tuple(float(w) for w in c) for c in get_trial_configs(get_possible_weights(0.1), 3)]
    assert set(tried) < set(values) and len(tried) == len(report.results)
    for weights, value in zip(tried, report.results):  # ranx's map of each of its weightings is ours
        assert values[weights] == pytest.approx(value, abs=TOL, rel=0), weights
    ranx_choice = tuple(float(w) for w in chosen["weights"])
    assert values[ranx_choice] == pytest.approx(best, abs=TOL)
    if search.value in tried:  # then ranx, keeping the last best in the same order, chose it too
        assert ranx_choice == search.value


def test_rrf_k_is_chosen_on_its_grid_by_structrank_s_metric(mq2008_noisy):
    qrels, runs = mq2008_noisy
    search = optimize_fusion(qrels, runs, "rrf", metric="ndcg@10")
    assert [k for k, _ in search.trials] == list(range(10, 101, 10))
    for k, value in search.trials:
        assert value == evaluate_run(qrels, fuse(runs, "rrf", k=k), ["ndcg@10"]).metrics["ndcg@10"]
    assert search.value == [k for k, v in search.trials if v == max(dict(search.trials).values())][-1]


def test_the_command_chooses_weights_on_qrels_and_writes_the_fused_run(mq2008_noisy, tmp_path, capsys):
    qrels, runs = mq2008_noisy
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    paths = []
    for i, run in enumerate(runs):
        paths.append(str(tmp_path / f"r{i}"))
        write_run(paths[-1], *zip(*[(q, d, s) for q, docs in run.items() for d, s in docs.items()]), tag=f"r{i}")
    out = tmp_path / "fused"
    argv = ["fuse", *paths, "--method", "wmnz", "--norm", "sum", "--optimize-on", str(tmp_path / "qrels"),
            "--metric", "ndcg@10", "--step", "0.25", "--out", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    search = optimize_fusion(qrels, runs, "wmnz", "sum", "ndcg@10", step=0.25)
    assert len(search.trials) == 15
    assert f"chose --weights {','.join(map(repr, search.value))}: ndcg@10 {search.score:.6f}" in err
    ours, _ = written(out)
    assert ours == search.fused


# -- bad input -----------------------------------------------------------------------------------------


@pytest.fixture
def two_runs(tmp_path):
    (tmp_path / "a").write_text("1 Q0 x 1 2.0 a\n1 Q0 y 2 1.0 a\n")
    (tmp_path / "b").write_text("1 Q0 y 1 3.0 b\n2 Q0 z 1 1.0 b\n")
    (tmp_path / "elsewhere").write_text("7 Q0 x 1 2.0 c\n")
    return tmp_path


def test_a_missing_run_file_is_named(two_runs, capsys):
    one_line(capsys, ["fuse", two_runs / "a", two_runs / "nope", "--method", "rrf", "--out", two_runs / "f"],
             two_runs / "nope")
    assert not (two_runs / "f").exists()


def test_a_run_with_no_query_in_common_is_named(two_runs, capsys):
    one_line(capsys, ["fuse", two_runs / "a", two_runs / "b", two_runs / "elsewhere", "--method", "combsum", "--out",
                      two_runs / "f"], two_runs / "elsewhere", "no query in common")
    with pytest.raises(DataValidationError, match="run 3: no query in common"):
        fuse([{"1": {"x": 1.0}}, {"1": {"y": 1.0}}, {"01": {"x": 1.0}}])


def test_an_unknown_method_or_normalisation_is_named(two_runs, capsys):
    with pytest.raises(SystemExit) as info:
        main(["fuse", str(two_runs / "a"), str(two_runs / "b"), "--method", "combfoo", "--out", str(two_runs / "f")])
    assert info.value.code == 2 and "combfoo" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown fusion method 'combfoo'; one of: rrf, combsum"):
        fuse([{"1": {"x": 1.0}}] * 2, "combfoo")
    with pytest.raises(ValueError, match="unknown normalisation 'l2'"):
        fuse([{"1": {"x": 1.0}}] * 2, "combsum", norm="l2")


def test_a_bad_run_line_is_named_by_file_and_line(two_runs, capsys):
    (two_runs / "bad").write_text("1 Q0 x 1 2.0 a\n1 Q0 y 2 high a\n")
    one_line(capsys, ["fuse", two_runs / "a", two_runs / "bad", "--method", "rrf", "--out", two_runs / "f"],
             two_runs / "bad", "line 2", "score")
    (two_runs / "empty").write_text("")
    one_line(capsys, ["fuse", two_runs / "a", two_runs / "empty", "--method", "rrf", "--out", two_runs / "f"],
             two_runs / "empty", "no retrieved document")


@pytest.mark.parametrize("extra, words", [
    (["--method", "combsum", "--k", "10"], ["--k", "rrf"]),
    (["--method", "rrf", "--weights", "1,2"], ["--weights", "wsum"]),
    (["--method", "rrf", "--norm", "zscore"], ["rrf", "normalis"]),
    (["--method", "wsum"], ["wsum needs weights"]),
    (["--method", "wsum", "--weights", "1,2,3"], ["one number per run (2)"]),
    (["--method", "wsum", "--weights", "1,x"], ["--weights", "'x'"]),
    (["--method", "wsum", "--weights", "0,0"], ["at least one weight"]),
    (["--method", "rrf", "--k", "-1"], ["k must be a number >= 0"]),
    (["--method", "rbc", "--phi", "1.5"], ["--phi must be a persistence in (0, 1)"]),
    (["--method", "rrf", "--metric", "map"], ["--metric", "--optimize-on"]),
    (["--method", "combsum", "--optimize-on", "{a}"], ["combsum has no parameter to choose"]),
    (["--method", "wsum", "--weights", "1,1", "--optimize-on", "{a}"], ["give --weights or --optimize-on"]),
    (["--method", "rrf", "--optimize-on", "{a}", "--step", "0.5"], ["--step"]),
    (["--method", "rrf", "--tag", "two words"], ["--tag"]),
    (["--method", "rrf", "--out", "{a}"], ["--out", "RUN 1"]),
])
def test_options_that_do_not_fit_are_one_line_errors(two_runs, capsys, extra, words):
    extra = [e.format(a=two_runs / "a") for e in extra]
    out = [] if "--out" in extra else ["--out", two_runs / "f"]
    one_line(capsys, ["fuse", two_runs / "a", two_runs / "b", *extra, *out], *words)


# -- the edges: every numeric option checked before any work, fused scores finite or refused ---------------------


@pytest.mark.parametrize("options, message", [
    (["--method", "rrf", "--k", "nan"], "--k must be a number >= 0, got nan"),
    (["--method", "rrf", "--k", "-1"], "--k must be a number >= 0, got -1.0"),
    (["--method", "rbc", "--phi", "1"], "--phi must be a persistence in (0, 1), got 1.0"),
    (["--method", "logn_isr", "--sigma", "inf"], "--sigma must be a number > 0, got inf"),
    (["--method", "combgmnz", "--gamma", "inf"], "--gamma must be a finite number, got inf"),
    (["--method", "wsum", "--weights", "1,inf"], "--weights must be finite numbers"),
])
def test_a_bad_number_is_refused_in_one_line_before_any_run_is_read(tmp_path, capsys, options, message):
    from structrank.cli import main

    out = tmp_path / "fused.txt"
    assert main(["fuse", str(tmp_path / "absent-a.txt"), str(tmp_path / "absent-b.txt"), *options,
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and not out.exists(), err


def test_a_tiny_step_is_refused_before_the_grid_is_enumerated(tmp_path, capsys):
    from structrank.cli import main

    runs = [tmp_path / f"r{i}.txt" for i in range(3)]
    for run in runs:
        run.write_text("1 Q0 d1 1 1.0 r\n")
    (tmp_path / "q.txt").write_text("1 0 d1 1\n")
    assert main(["fuse", *map(str, runs), "--method", "wsum", "--optimize-on", str(tmp_path / "q.txt"),
                 "--step", "0.001", "--out", str(tmp_path / "f.txt")]) == 2
    assert "grid points for 3 runs" in capsys.readouterr().err


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scores=st.lists(st.lists(st.one_of(st.floats(-1e308, 1e308, allow_nan=False), st.sampled_from(
    [1e308, -1e308, 5e-324, 0.0])), min_size=2, max_size=5), min_size=2, max_size=2),
       method=st.sampled_from(["combsum", "combmnz", "combmax", "wsum"]),
       norm=st.sampled_from(["minmax", "zscore", "sum", "max", "none"]))
def test_fused_scores_are_finite_or_the_command_refuses(tmp_path, capsys, scores, method, norm):
    """Any finite scores, extremes included: fuse writes finite scores only, or refuses in one line, writing nothing."""
    from structrank.cli import main

    paths = []
    for i, run in enumerate(scores):
        path = tmp_path / f"run{i}.txt"
        path.write_text("".join(f"1 Q0 d{j} {j + 1} {s!r} r{i}\n" for j, s in enumerate(run)))
        paths.append(str(path))
    out = tmp_path / "fused.txt"
    out.unlink(missing_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        code = main(["fuse", *paths, "--method", method, "--norm", norm, "--out", str(out),
                     *(["--weights", "1,2"] if method == "wsum" else [])])
    err = capsys.readouterr().err
    if code == 0:
        fused = [float(line.split()[4]) for line in out.read_text().splitlines()]
        assert fused and all(np.isfinite(fused))
    else:
        assert code == 2 and not out.exists() and "nothing written" in err, err
