"""ERR, nDCG with exponential gain, RBP and its residual, infAP and Judged (structrank.metrics.tool_measures)
against ir_measures, query by query, on runs with unjudged documents, negative labels and tied scores.

Each measure is compared with the tool ir_measures computes it with (tool_measures.REFERENCES): gdeval for
ERR@k and nDCG(dcg='exp-log2')@k, cwl_eval for RBP(p,rel), trec_eval (pytrec_eval) for infAP, its judged
provider for Judged@k, and its trectools provider for the graded RBP(p) (no provider of its default
pipeline computes that one). gdeval prints five decimals, so its values through ir_measures are checked
to that rounding, and the same gdeval script, printing every digit, to 1e-9. RBP's residual, which
ir_measures does not report, is compared with trectools' ``get_rbp``.
"""

from __future__ import annotations

import pkgutil
import shutil
import subprocess

import ir_measures
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from structrank.data import letor_folds, letor_root, read_letor
from structrank.errors import DataValidationError
from structrank.metrics import canonical_name, evaluate, evaluate_run, parse_metric

TOL = 1e-9
#: gdeval prints "%.5f": ir_measures' ERR and nDCG(dcg='exp-log2') are ours rounded to five decimals
GDEVAL_PRINTED = 5e-6 + 1e-12

#: ir_measures' name -> structrank's canonical name, and which provider ir_measures computes it with
MEASURES = {
    "ERR@20": ("err@20", ir_measures),
    "ERR@3": ("err@3", ir_measures),
    "nDCG(dcg='exp-log2')@10": ("ndcg(dcg='exp-log2')@10", ir_measures),
    "nDCG(dcg='exp-log2')@3": ("ndcg(dcg='exp-log2')@3", ir_measures),
    "RBP(p=0.8)": ("rbp(p=0.8)", ir_measures.trectools),
    "RBP(p=0.5)@3": ("rbp(p=0.5)@3", ir_measures.trectools),
    "RBP(p=0.8,rel=1)": ("rbp(p=0.8,rel=1)", ir_measures),
    "RBP(p=0.95,rel=2)": ("rbp(p=0.95,rel=2)", ir_measures),
    "infAP": ("infap", ir_measures),
    "Judged@10": ("judged@10", ir_measures),
    "Judged@3": ("judged@3", ir_measures),
}
GDEVAL = {"err", "ndcg_exp"}

needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval (ERR, nDCG exp) needs perl")


def need_providers():
    """trectools and cwl_eval, ir_measures' providers of RBP: test references (the test extra), as ranx is."""
    pytest.importorskip("cwl", reason="cwl-eval (ir_measures' RBP(rel=)) is a test reference: pip install "
                                      "'structrank[test]'")
    return pytest.importorskip("trectools", reason="trectools (ir_measures' RBP) is a test reference: pip install "
                                                   "'structrank[test]'")


def reference_values(qrels, run, names, relevant_from=1) -> dict:
    """{name: {qid: value}} of ir_measures' measures ``names``, each by its provider in MEASURES, one call
    a provider (queries a provider leaves out score the measure's default, 0)."""
    calls = {}
    for name in names:
        measure = ir_measures.parse_measure(f"infAP(rel={relevant_from})" if name == "infAP" else name)
        provider = MEASURES[name][1]
        # trectools' provider binds every measure of a call to the last one's p and cut-off: one call each
        calls.setdefault(name if provider is ir_measures.trectools else provider, (provider, {}))[1][measure] = name
    out = {name: {} for name in names}
    for provider, measures in calls.values():
        for m in provider.iter_calc(list(measures), qrels, run):
            out[measures[m.measure]][m.query_id] = float(m.value)
    return out


def gdeval_digits(qrels, run, k, tmp_path) -> dict:
    """{qid: (nDCG@k, ERR@k)} of ir_measures' own gdeval.pl, made to print every digit of its doubles."""
    script = pkgutil.get_data("ir_measures", "bin/gdeval.pl").decode()
    printed = '"$runid,$topicCurrent,%.5f,%.5f\\n"'
    assert printed in script, "gdeval.pl no longer prints as this test expects"
    (tmp_path / "gdeval.pl").write_text(script.replace(printed, '"$runid,$topicCurrent,%.17g,%.17g\\n"'))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 0 {s!r} run\n" for q, docs in run.items()
                                          for d, s in docs.items()))
    out = subprocess.run(["perl", str(tmp_path / "gdeval.pl"), str(tmp_path / "qrels"), str(tmp_path / "run"), str(k)],
                         capture_output=True, text=True, check=True).stdout
    return {line.split(",")[1]: tuple(map(float, line.split(",")[2:])) for line in out.splitlines()[1:] if line}


def assert_like_ir_measures(qrels, run, relevant_from=1, tmp_path=None) -> float:
    """Every measure of MEASURES equal to ir_measures' per query (gdeval's to its printing); the largest
    difference outside gdeval's rounding."""
    if relevant_from == 1:  # the RBP measures
        need_providers()
    ours = evaluate_run(qrels, run, [name for name, _ in MEASURES.values()], relevant_from=relevant_from,
                        complete=True)
    assert list(ours.qids) == sorted(qrels, key=int)
    worst = 0.0
    names = [name for name in MEASURES if relevant_from == 1 or name == "infAP"]  # only infAP takes the level
    references = reference_values(qrels, run, names, relevant_from)
    for name in names:
        structrank_name, expected = MEASURES[name][0], references[name]
        tolerance = GDEVAL_PRINTED if parse_metric(structrank_name)[0] in GDEVAL else TOL
        for i, q in enumerate(ours.qids):
            got, want = ours.per_query[structrank_name][i], expected.get(q, 0.0)
            assert abs(got - want) <= tolerance, f"query {q}, {name}: structrank {got!r}, ir_measures {want!r}"
            if tolerance == TOL:
                worst = max(worst, abs(got - want))
    if tmp_path is not None and relevant_from == 1:
        for k in (20, 10, 3):
            exact = gdeval_digits(qrels, run, k, tmp_path)
            for name in (f"err@{k}", f"ndcg(dcg='exp-log2')@{k}"):
                if name not in ours.per_query:
                    continue
                for i, q in enumerate(ours.qids):
                    want = exact.get(q, (0.0, 0.0))[0 if name.startswith("ndcg") else 1]
                    assert abs(ours.per_query[name][i] - want) <= TOL, f"query {q}, {name}: {want!r} from gdeval"
                    worst = max(worst, abs(ours.per_query[name][i] - want))
    return worst


DOCNOS = ["a", "b", "ab", "B", "d1", "d10", "d2", "z"]  # upper and lower case, prefixes: docno order is not the input's
#: ties, and two that tie in single precision only (trec_eval's float; the other tools compare doubles)
SCORES = [0.0, 0.5, 1.0, 1.0 + 2.0**-30, 2.0, -1.5]


@st.composite
def judged_runs(draw):
    """(qrels, run): up to 3 queries, labels -1 (pooled, not judged) to 4, retrieved documents the qrels may
    not name, scores with ties; a query of the qrels may have no run. Each query's scores lie in a range
    of its own, since trectools' tie groups run across queries (ir_measures' reason to leave it out)."""
    qrels, run = {}, {}
    for q in range(1, draw(st.integers(1, 3)) + 1):
        judged = draw(st.lists(st.sampled_from(DOCNOS), unique=True, min_size=1, max_size=6))
        labels = draw(st.lists(st.integers(-1, 4), min_size=len(judged), max_size=len(judged)))
        # pytrec_eval 0.5 crashes on a query whose judgements are all negative (tests/library/test_trec_run.py)
        assume(max(labels) >= 0)
        qrels[str(q)] = dict(zip(judged, labels))
        retrieved = draw(st.lists(st.sampled_from(DOCNOS), unique=True, min_size=1 if q == 1 else 0, max_size=8))
        scores = draw(st.lists(st.sampled_from(SCORES), min_size=len(retrieved), max_size=len(retrieved)))
        if retrieved:
            run[str(q)] = {d: 10.0 * q + s for d, s in zip(retrieved, scores)}
    return qrels, run


@needs_perl
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(judged_runs())
def test_generated_runs_equal_ir_measures_query_by_query(tmp_path, qrels_and_run):
    assert_like_ir_measures(*qrels_and_run, tmp_path=tmp_path)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(judged_runs())
def test_files_dataframes_and_dicts_give_the_same_bits(tmp_path, qrels_and_run):
    """A dict and a file go through the fast lane of arrays, a DataFrame through the strict line-by-line one
    (tests/library/test_trec_fast.py): the measures, and the rankings their tools make, are the same on both."""
    qrels, run = qrels_and_run
    names = [name for name, _ in MEASURES.values()] + ["rbp_residual(p=0.8)", "rbp_residual(p=0.5)@2", "judged"]
    (tmp_path / "q").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    (tmp_path / "r").write_text("".join(f"{q} Q0 {d} 0 {s!r} x\n" for q, docs in run.items() for d, s in docs.items()))
    frame_q = pd.DataFrame([(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
                           columns=["qid", "docno", "rel"])
    frame_r = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                           columns=["qid", "docno", "score"])
    by_dict = evaluate_run(qrels, run, names, complete=True)
    for other in (evaluate_run(tmp_path / "q", tmp_path / "r", names, complete=True),
                  evaluate_run(frame_q, frame_r, names, complete=True)):
        assert list(other.qids) == list(by_dict.qids)
        for name in by_dict.per_query:
            assert np.array_equal(other.per_query[name], by_dict.per_query[name]), name


@settings(max_examples=40, deadline=None)
@given(judged_runs(), st.integers(2, 3))
def test_infap_at_another_relevance_level_equals_trec_eval(qrels_and_run, relevant_from):
    assert_like_ir_measures(*qrels_and_run, relevant_from=relevant_from)


def mq2008_run(data_root, seed=0):
    """MQ2008 Fold1 test as TREC qrels and a run scored by one feature (with ties), made partial as a
    pooled collection is: a third of the judgements dropped, a sixth of the rest pooled but not judged
    (label -1), three unjudged documents added to each query. Each query's scores are moved to a range of
    their own (trectools' tie groups run across queries, above)."""
    test = read_letor(letor_folds(letor_root("MQ2008"))[0].test)
    rng = np.random.default_rng(seed)
    scores = np.round(np.asarray(test.X)[:, 24], 2)  # a BM25 column, rounded so that documents tie
    qrels, run = {}, {}
    for q, d, label, s in zip(test.qid, test.docids, test.y, scores):
        run.setdefault(str(q), {})[str(d)] = 2.0 * len(run) + float(s)  # a BM25 column holds [0, 1]
        draw = rng.random()
        if draw > 1 / 3:
            qrels.setdefault(str(q), {})[str(d)] = -1 if draw > 1 - 1 / 9 else int(label)
    for q in run:
        low = min(run[q].values()) // 2 * 2
        run[q].update({f"extra-{q}-{i}": low + float(np.round(rng.random(), 2)) for i in range(3)})
    qrels = {q: docs for q, docs in qrels.items() if max(docs.values()) >= 0}  # pytrec_eval's crash, above
    return qrels, {q: docs for q, docs in run.items() if q in qrels}


@needs_perl
def test_a_real_partly_judged_run_equals_ir_measures(data_root, tmp_path):
    qrels, run = mq2008_run(data_root)
    assert sum(-1 in docs.values() for docs in qrels.values()) > 10  # labels -1 in many queries
    worst = assert_like_ir_measures(qrels, run, tmp_path=tmp_path)
    assert worst <= TOL


def test_the_acceptance_measures_by_their_ir_measures_names(data_root, tmp_path):
    """Issue 41's acceptance: ERR@20, RBP(p=0.8), infAP, Judged@10 and nDCG@10 with exponential gain, asked
    by ir_measures' names, equal ir_measures per query within 1e-6 (ERR and nDCG: gdeval's every digit)."""
    if shutil.which("perl") is None:
        pytest.skip("gdeval (ERR, nDCG exp) needs perl")
    need_providers()
    qrels, run = mq2008_run(data_root, seed=1)
    names = ["ERR@20", "RBP(p=0.8)", "infAP", "Judged@10", "nDCG(dcg='exp-log2')@10"]
    ours = evaluate_run(qrels, run, names)
    exact = gdeval_digits(qrels, run, 20, tmp_path)
    exact10 = gdeval_digits(qrels, run, 10, tmp_path)
    references = reference_values(qrels, run, names)
    for name in names:
        expected = references[name]
        for i, q in enumerate(ours.qids):
            if name == "ERR@20":
                want = exact.get(q, (0.0, 0.0))[1]
            elif name.startswith("nDCG"):
                want = exact10.get(q, (0.0, 0.0))[0]
            else:
                want = expected[q]
            assert abs(ours.per_query[canonical_name(name)][i] - want) <= 1e-6, (name, q)
            assert abs(ours.per_query[canonical_name(name)][i] - expected[q]) <= GDEVAL_PRINTED, (name, q)


def test_rbp_residual_equals_trectools_and_bounds_the_unjudged(tmp_path):
    """The residual (Moffat & Zobel): the weight of the unjudged documents in the list and of the ranks past
    it, ties sharing their mean weight, as trectools' get_rbp computes it. trectools counts a negative label
    as judged, structrank as pooled but not judged (trec_eval's reading): its qrels here leave those out."""
    trectools = need_providers()
    rng = np.random.default_rng(3)
    for trial in range(20):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 12)))]
        run = {d: float(rng.integers(0, 4)) for d in docs}
        qrels = {d: int(rng.integers(-1, 3)) for d in docs if rng.random() < 0.6}
        run["sentinel"], qrels["sentinel"] = -1.0, 1  # trectools reports only a query with a relevant document
        for p in (0.5, 0.8, 0.95):
            ours = evaluate_run({"1": qrels}, {"1": run}, [f"rbp_residual(p={p})"])
            trec_run = trectools.TrecRun()
            trec_run.run_data = pd.DataFrame({"query": "1", "q0": "Q0", "docid": list(run), "rank": 0,
                                              "score": list(run.values()), "system": "x"}).sort_values(
                "score", ascending=False, kind="stable")
            trec_qrels = trectools.TrecQrel()
            trec_qrels.qrels_data = pd.DataFrame([("1", 0, d, r) for d, r in qrels.items() if r >= 0],
                                                 columns=["query", "q0", "docid", "rel"])
            _, residual = trectools.TrecEval(trec_run, trec_qrels).get_rbp(
                p=p, depth=len(run), per_query=True, binary_topical_relevance=True, average_ties=True)
            want = float(residual.iloc[0, 0])
            got = ours.per_query[f"rbp_residual(p={p})"][0]
            assert abs(got - want) <= TOL, (trial, p, got, want)
            # what the unknown could add: with every judged document relevant, RBP and its residual make 1
            every = evaluate_run({"1": {d: 1 if r >= 0 else r for d, r in qrels.items()}}, {"1": run}, [f"rbp(p={p})"])
            assert every.per_query[f"rbp(p={p})"][0] + got == pytest.approx(1.0, abs=TOL)


def test_evaluate_on_arrays_equals_a_complete_run_and_refuses_run_measures():
    """evaluate() ranks by the convention and judges every row: without ties its ERR, nDCG exp and RBP are
    the run's; infAP and Judged, which measure unjudged documents, are refused."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 60)
    qid = np.repeat(np.arange(6), 10)
    scores = rng.permutation(60).astype(float)  # no ties
    docids = [f"d{i}" for i in range(60)]
    names = ["err@20", "ndcg_burges@5", "RBP(p=0.8)", "RBP(p=0.5,rel=2)", "rbp_residual(p=0.8)@4"]
    arrays = evaluate(y, scores, qid, names, "trec", docids=docids)
    qrels = {str(q): {d: int(label) for d, label, qq in zip(docids, y, qid) if qq == q} for q in range(6)}
    run = {str(q): {d: s for d, s, qq in zip(docids, scores, qid) if qq == q} for q in range(6)}
    as_run = evaluate_run(qrels, run, names)
    for name in arrays.per_query:
        np.testing.assert_allclose(arrays.per_query[name], as_run.per_query[name], rtol=0, atol=TOL, err_msg=name)
    assert arrays.per_query["rbp_residual(p=0.8)@4"] == pytest.approx([0.8**4] * 6)
    for name in ("infAP", "Judged@10"):
        with pytest.raises(ValueError, match="unjudged documents.*evaluate_run"):
            evaluate(y, scores, qid, [name], "trec", docids=docids)


def test_err_refuses_grades_above_gdevals_scale():
    with pytest.raises(DataValidationError, match=r"err@20 takes grades 0-4.*query 2 has a label of 5"):
        evaluate_run({"1": {"a": 1}, "2": {"b": 5}}, {"1": {"a": 1.0}, "2": {"b": 1.0}}, ["ERR@20"])
    with pytest.raises(DataValidationError, match="err@10 takes grades 0-4.*query 7 has a label of 5"):
        evaluate([0, 1, 5, 0], [1.0, 0.0, 1.0, 0.0], [3, 3, 7, 7], ["err@10"])
    with pytest.raises(DataValidationError, match=r"takes grades 0-512 \(above, 2\^g - 1 overflows"):
        evaluate([600, 0], [1.0, 0.0], [1, 1], ["ndcg_burges@10"])
    assert evaluate_run({"1": {"a": 5}}, {"1": {"a": 1.0}}, ["ndcg_burges@10"]).metrics == {
        "ndcg(dcg='exp-log2')@10": 1.0}  # exponential gain takes any grade


@pytest.mark.parametrize("name, canonical", [
    ("ERR@20", "err@20"), ("err", "err"), ("nDCG(dcg='exp-log2')@10", "ndcg(dcg='exp-log2')@10"),
    ('nDCG(dcg="exp-log2")@10', "ndcg(dcg='exp-log2')@10"), ("ndcg_burges@10", "ndcg(dcg='exp-log2')@10"),
    ("nDCG(dcg='log2')@10", "ndcg@10"), ("RBP", "rbp(p=0.8)"), ("RBP(p=0.80)", "rbp(p=0.8)"),
    ("RBP(rel=1,p=.5)@10", "rbp(p=0.5,rel=1)@10"), ("rbp_residual(p=0.8)", "rbp_residual(p=0.8)"),
    ("infAP", "infap"), ("Judged@10", "judged@10"), ("judged", "judged"),
])
def test_ir_measures_names_read_to_canonical_ones(name, canonical):
    assert canonical_name(name) == canonical
    assert canonical_name(canonical) == canonical


@pytest.mark.parametrize("name, error", [
    ("RBP(p=1)", r"persistence p must be a number in \(0, 1\)"), ("RBP(p=x)", "persistence"),
    ("RBP(rel=0)", "rel must be an integer >= 1"), ("RBP(q=1)", "rbp takes p, rel"),
    ("ERR(p=1)@10", "err takes no parameter"), ("infAP@10", "infap takes no cut-off"),
    ("ERR@0", "cut-off"), ("nDCG(dcg='exp')@10", "dcg is 'log2'"), ("rbp_residual(rel=1)", "takes p"),
])
def test_bad_names_are_refused_with_what_they_take(name, error):
    with pytest.raises(ValueError, match=error):
        canonical_name(name)
