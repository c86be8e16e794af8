"""TREC qrels and runs (structrank.metrics.trec) against pytrec_eval (trec_eval inside).

Real runs on the LETOR test folds: complete rankings, runs truncated to the top 5 per query (the
relevant documents they miss still count), runs with ties, and runs with unjudged documents (a
third of the judgements dropped, extra documents added); and random small qrels and runs.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
import pytrec_eval
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cli_checks import NO_OPEN_FILES
from structrank.data import letor_folds, letor_root, read_letor
from structrank.errors import DataFormatError, DataValidationError
from structrank.metrics import evaluate
from structrank.metrics.trec import evaluate_run, read_qrels, read_run

pytestmark = NO_OPEN_FILES

TOL = 1e-9
# pytrec_eval measure -> structrank's canonical name
MEASURES = {"map": "map", "recip_rank": "mrr", "ndcg": "ndcg", "Rprec": "rprec", "bpref": "bpref"}
MEASURES.update({f"ndcg_cut_{k}": f"ndcg@{k}" for k in (1, 5, 10)})
MEASURES.update({f"P_{k}": f"p@{k}" for k in (1, 5, 10)})
MEASURES.update({f"recall_{k}": f"recall@{k}" for k in (1, 5, 10, 100)})
MEASURES.update({f"success_{k}": f"success@{k}" for k in (1, 5)})
MEASURES.update({f"map_cut_{k}": f"map@{k}" for k in (5, 10)})
REQUEST = {"map", "recip_rank", "ndcg", "Rprec", "bpref", "ndcg_cut.1,5,10", "P.1,5,10", "recall.1,5,10,100",
           "success.1,5", "map_cut.5,10"}


def assert_like_pytrec(qrels, run, relevant_from=1):
    expected = pytrec_eval.RelevanceEvaluator(qrels, REQUEST, relevance_level=relevant_from).evaluate(run)
    result = evaluate_run(qrels, run, list(MEASURES.values()), relevant_from=relevant_from)
    assert sorted(map(str, result.qids)) == sorted(expected), "not the same queries"
    worst = 0.0
    for i, q in enumerate(result.qids):
        for measure, name in MEASURES.items():
            diff = abs(result.per_query[name][i] - expected[q][measure])
            assert diff <= TOL, f"query {q}, {name}: {result.per_query[name][i]} against {expected[q][measure]}"
            worst = max(worst, diff)
    return worst


def _fold_runs(dataset, fold_index=0, seed=0):
    root = letor_root(dataset)
    test = read_letor(letor_folds(root)[fold_index].test)
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 5, test.n_rows).astype(float)  # many ties
    qrels, run = {}, {}
    for q, d, label, s in zip(test.qid, test.docids, test.y, scores):
        qrels.setdefault(str(q), {})[str(d)] = int(label)
        run.setdefault(str(q), {})[str(d)] = float(s)
    return test, scores, qrels, run


@pytest.mark.parametrize("dataset", ["MQ2008", "OHSUMED"])
def test_real_runs_complete_truncated_tied_and_unjudged_match_pytrec_eval(data_root, dataset):
    test, scores, qrels, run = _fold_runs(dataset)
    assert_like_pytrec(qrels, run)  # complete rankings with ties
    truncated = {q: dict(sorted(docs.items(), key=lambda kv: (-kv[1], kv[0]))[:5]) for q, docs in run.items()}
    assert_like_pytrec(qrels, truncated)
    rng = np.random.default_rng(1)
    partial = {q: {d: r for d, r in docs.items() if rng.random() > 1 / 3} for q, docs in qrels.items()}
    partial = {q: docs for q, docs in partial.items() if docs}
    extra = {q: {**docs, **{f"extra-{q}-{i}": float(rng.integers(0, 5)) for i in range(3)}} for q, docs in run.items()}
    assert_like_pytrec(partial, extra)
    assert_like_pytrec(qrels, run, relevant_from=2)


def test_a_complete_ranking_agrees_with_the_trec_convention_of_evaluate(data_root):
    test, scores, qrels, run = _fold_runs("MQ2008")
    names = ["map", "mrr", "ndcg@10", "p@5", "recall@10", "rprec", "success@1", "bpref"]
    by_run = evaluate_run(qrels, run, names)
    by_file = evaluate(test.y, scores, test.qid, names, "trec", docids=test.docids)
    for name in names:
        assert by_run.metrics[name] == pytest.approx(by_file.metrics[name], abs=TOL), name


#: scores with ties, and pairs that differ in double but not in single precision (trec_eval keeps a float)
SCORES = [0.0, 0.5, 1.0, 1.00000001, 1.0000001, 2.0, 16777216.0, 16777217.0, -3.0e-9, -3.00000001e-9]

queries_st = st.lists(
    st.tuples(st.lists(st.integers(-1, 3), min_size=1, max_size=8),  # qrels labels (-1: judged non-relevant)
              st.lists(st.tuples(st.integers(0, 11), st.sampled_from(SCORES)), min_size=1, max_size=10)),
    min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(queries_st, st.integers(1, 2))
def test_random_qrels_and_runs_match_pytrec_eval(queries, relevant_from):
    qrels, run = {}, {}
    # pytrec_eval 0.5 crashes (segfault or endless loop) on a query whose judgements are all negative
    assume(all(max(labels) >= 0 for labels, _ in queries))
    for q, (labels, retrieved) in enumerate(queries):
        qrels[str(q)] = {f"d{i}": label for i, label in enumerate(labels)}
        run[str(q)] = {f"d{doc}": score for doc, score in retrieved}  # d8..d11 are never judged
    assert_like_pytrec(qrels, run, relevant_from)


def test_complete_counts_missing_queries_as_zero_and_aliases_key_by_canonical_name():
    qrels = {"1": {"a": 1}, "2": {"b": 1}, "10": {"c": 1}}
    run = {"1": {"a": 1.0}, "7": {"z": 1.0}}
    assert evaluate_run(qrels, run, ["AP"]).metrics == {"map": 1.0}
    full = evaluate_run(qrels, run, ["AP", "nDCG@10", "RR", "P@10", "R@100", "Rprec", "Success@1", "ndcg_cut_10",
                                     "recip_rank", "P_10", "recall_100", "map_cut_10", "success_1"], complete=True)
    assert list(full.qids) == ["1", "2", "10"] and full.metrics["map"] == pytest.approx(1 / 3)
    assert set(full.metrics) == {"map", "ndcg@10", "mrr", "p@10", "recall@100", "rprec", "success@1", "map@10"}


def test_files_and_dataframes_read_like_dicts(tmp_path):
    pd = pytest.importorskip("pandas", reason="pandas is an optional input type")
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    with gzip.open(tmp_path / "r.txt.gz", "wt") as fh:
        fh.write("1 Q0 b 1 0.9 x\n1 Q0 a 2 0.5 x\n2 Q0 c 1 3 x\n")
    assert read_qrels(tmp_path / "q.txt") == {"1": {"a": 1, "b": 0}, "2": {"c": 2}}
    assert read_run(tmp_path / "r.txt.gz") == {"1": {"b": 0.9, "a": 0.5}, "2": {"c": 3.0}}
    frame_q = pd.DataFrame({"query_id": [1, 1, 2], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 2]})
    frame_r = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["b", "a", "c"], "score": [0.9, 0.5, 3.0]})
    from_files = evaluate_run(tmp_path / "q.txt", tmp_path / "r.txt.gz", ["map", "ndcg"])
    from_frames = evaluate_run(frame_q, frame_r, ["map", "ndcg"])
    assert from_files.metrics == from_frames.metrics


def test_bad_lines_name_the_file_line_and_field(tmp_path):
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b x\n")
    with pytest.raises(DataFormatError, match=r"q.txt, line 2, rel: .x. is not an integer"):
        read_qrels(tmp_path / "q.txt")
    (tmp_path / "r.txt").write_text("1 Q0 a 1 0.5 x\n1 Q0 b 2\n")
    with pytest.raises(DataFormatError, match=r"r.txt.*line 2.*6 fields"):
        read_run(tmp_path / "r.txt")
    (tmp_path / "r2.txt").write_text("1 Q0 a 1 0.5 x\n1 Q0 a 2 0.4 x\n")
    with pytest.raises(DataFormatError, match="retrieved twice"):
        read_run(tmp_path / "r2.txt")


def test_the_evaluate_command_reads_qrels_and_runs(tmp_path, capsys):
    import json

    from structrank.cli import main

    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 d 1\n")
    (tmp_path / "r.txt").write_text("1 Q0 b 1 0.9 x\n1 Q0 a 2 0.5 x\n1 Q0 x 3 0.1 x\n")
    assert main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"), "--metric", "AP",
                 "--metric", "P_2", "--json", "--per-query"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"] == {"map": 0.25, "p@2": 0.5} and out["convention"] == "trec" and out["queries"] == 1
    assert main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"), "--metric", "map",
                 "--complete", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == {"map": 0.125}
    assert main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"), "--metric", "map",
                 "--relevant-from", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == {"map": 0.0}
    assert main(["evaluate", "--qrels", str(tmp_path / "q.txt")]) == 2
    assert "give --qrels and --run together" in capsys.readouterr().err
    assert main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt"),
                 "--convention", "letor4"]) == 2
    assert "trec_eval's rules" in capsys.readouterr().err


def test_scores_equal_in_single_precision_tie_as_in_trec_eval():
    """trec_eval reads a score into a C float: 1.00000001 and 1.0 tie there, and the tie goes by docno."""
    qrels, run = {"1": {"a": 1, "b": 0}}, {"1": {"a": 1.00000001, "b": 1.0}}
    assert evaluate_run(qrels, run, ["map"]).metrics["map"] == 0.5
    assert_like_pytrec(qrels, run)
    assert evaluate_run(qrels, {"1": {"a": 1.0000001, "b": 1.0}}, ["map"]).metrics["map"] == 1.0  # apart in a float


def test_a_document_judged_twice_is_an_error_naming_both_lines(tmp_path):
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n\n1 0 a 0\n")
    with pytest.raises(DataFormatError, match=r"q.txt, line 4, docno: document 'a' of query 1 is judged twice "
                                              r"\(lines 1 and 4\)"):
        read_qrels(tmp_path / "q.txt")


@pytest.mark.parametrize("level", [0, -1, 1.5, True])
def test_a_relevance_level_below_1_is_refused(level):
    with pytest.raises(ValueError, match="relevant_from .* must be an integer >= 1"):
        evaluate_run({"1": {"a": 0, "b": 1}}, {"1": {"a": 4.0, "x": 3.0}}, ["map"], relevant_from=level)


@pytest.mark.parametrize("qrels, run, message", [
    ({"1": {"a": 1}}, {"001": {"a": 2.0}}, "no query of the run dict is in the qrels dict"),
    ({"1": {"a": 1}}, {}, "no retrieved document in the run dict"),
    ({}, {"1": {"a": 1.0}}, "no judgement in the qrels dict"),
])
def test_nothing_to_evaluate_is_an_error_never_a_nan(qrels, run, message):
    for complete in (False, True):
        with pytest.raises(DataValidationError, match=f"nothing to evaluate: {message}"):
            evaluate_run(qrels, run, ["map"], complete=complete)


def test_nothing_to_evaluate_names_the_files(tmp_path):
    (tmp_path / "q.txt").write_text("1 0 a 1\n")
    (tmp_path / "r.txt").write_text("001 Q0 a 1 2 t\n")
    with pytest.raises(DataValidationError, match=r"no query of .*r.txt is in .*q.txt"):
        evaluate_run(tmp_path / "q.txt", tmp_path / "r.txt", ["map"])


@settings(max_examples=200, deadline=None)
@given(queries_st, st.integers(1, 4), st.booleans())
def test_no_measure_leaves_its_range(queries, relevant_from, complete):
    qrels = {str(q): {f"d{i}": label for i, label in enumerate(labels)} for q, (labels, _) in enumerate(queries)}
    run = {str(q): {f"d{doc}": score for doc, score in retrieved} for q, (_, retrieved) in enumerate(queries)}
    names = list(MEASURES.values())
    result = evaluate_run(qrels, run, names, relevant_from=relevant_from, complete=complete)
    for name in names:
        values = result.per_query[name]
        assert np.all((values >= 0.0) & (values <= 1.0)), (name, values)
        assert 0.0 <= result.metrics[name] <= 1.0, name


def test_a_run_is_not_written_when_two_rows_of_a_query_share_a_docno(tmp_path, capsys):
    from structrank.cli import main
    from structrank.metrics.trec import write_run

    with pytest.raises(DataValidationError, match=r"data.txt: rows 1 and 3 of query 7 have the same docno 'a'"):
        write_run(tmp_path / "run.txt", [7, 7, 7], ["a", "b", "a"], [0.1, 0.2, 0.3], source="data.txt")
    assert not (tmp_path / "run.txt").exists()
    with pytest.raises(DataValidationError, match="docno 'a b' is not one word"):
        write_run(tmp_path / "run.txt", [7], ["a b"], [0.1])
    # the LETOR reader takes a docid's first word: '#docid = my doc one' and '... two' are both 'my'
    (tmp_path / "c.txt").write_text("1 qid:1 1:0.5 #docid = my doc one\n0 qid:1 1:0.2 #docid = my doc two\n"
                                    "1 qid:2 1:0.5 #docid = x\n")
    assert main(["train", "linreg", "--train", str(tmp_path / "c.txt"), "--out", str(tmp_path / "m.npz")]) == 0
    capsys.readouterr()
    assert main(["predict", "--model", str(tmp_path / "m.npz"), "--data", str(tmp_path / "c.txt"), "--format", "trec",
                 "--out", str(tmp_path / "run.txt")]) == 2
    assert "c.txt: lines 1 and 2 of query 1 have the same docno 'my'" in capsys.readouterr().err
    assert not (tmp_path / "run.txt").exists()


def test_rows_without_docids_are_named_by_their_lines_in_the_file(tmp_path, capsys):
    from structrank.cli import main

    # a comment line, a blank line and a query whose rows are apart: row positions and line numbers differ
    (tmp_path / "d.txt").write_text("# made by hand\n2 qid:1 1:0.9\n\n0 qid:2 1:0.1\n1 qid:1 1:0.5\n"
                                    "0 qid:1 1:0.2\n1 qid:2 1:0.7\n")
    with pytest.warns(UserWarning, match="not contiguous"):
        assert main(["train", "linreg", "--train", str(tmp_path / "d.txt"), "--out", str(tmp_path / "m.npz")]) == 0
        assert main(["predict", "--model", str(tmp_path / "m.npz"), "--data", str(tmp_path / "d.txt"), "--format",
                     "trec", "--out", str(tmp_path / "run.txt")]) == 0
    capsys.readouterr()
    run = read_run(tmp_path / "run.txt")
    assert {q: sorted(docs, key=int) for q, docs in run.items()} == {"1": ["2", "5", "6"], "2": ["4", "7"]}
    # the feature is the score's order, and each docno is the line of its row
    assert [line.split()[2] for line in (tmp_path / "run.txt").read_text().splitlines()] == ["2", "5", "6", "7", "4"]


def test_docids_round_trip_byte_for_byte(tmp_path, capsys):
    from structrank.cli import main
    from structrank.data import read_letor, write_letor

    # bytes that are not UTF-8 (Latin-1 e-acute and e-grave) beside the UTF-8 e-acute: three documents
    docids = [b"caf\xe9", b"caf\xe8", "café".encode()]
    data = b"".join(b"%d qid:1 1:%d #docid = %s\n" % (i % 2, 3 - i, d) for i, d in enumerate(docids))
    (tmp_path / "d.txt").write_bytes(data)
    assert main(["train", "linreg", "--train", str(tmp_path / "d.txt"), "--out", str(tmp_path / "m.npz")]) == 0
    assert main(["predict", "--model", str(tmp_path / "m.npz"), "--data", str(tmp_path / "d.txt"), "--format", "trec",
                 "--out", str(tmp_path / "run.txt")]) == 0
    capsys.readouterr()
    written = [line.split()[2] for line in (tmp_path / "run.txt").read_bytes().splitlines()]
    assert sorted(written) == sorted(docids)
    # and the data file writes back as it was read
    write_letor(tmp_path / "back.txt", read_letor(tmp_path / "d.txt"))
    assert (tmp_path / "back.txt").read_bytes() == data


def _evaluate(tmp_path, capsys, qrels, run, *options):
    from structrank.cli import main

    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    code = main(["evaluate", "--qrels", str(tmp_path / "q"), "--run", str(tmp_path / "r"), "--json", *options])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_issue_s_trec_cases_end_right_on_the_command_line(tmp_path, capsys):
    """Issue 38's reproductions: the number trec_eval gives, or a one-line error with exit code 2."""
    code, out, _ = _evaluate(tmp_path, capsys, "1 0 a 1\n1 0 b 0\n", "1 Q0 a 1 1.00000001 t\n1 Q0 b 2 1.0 t\n",
                             "--metric", "map")
    assert code == 0 and json.loads(out)["metrics"] == {"map": 0.5}
    for qrels, run, options, message in (
            ("1 0 a 0\n1 0 b 1\n", "1 Q0 a 1 4 t\n1 Q0 x 2 3 t\n", ["--relevant-from", "0"],
             "--relevant-from must be >= 1"),
            ("1 0 a 1\n", "001 Q0 a 1 2 t\n", [], "nothing to evaluate: no query of"),
            ("1 0 a 1\n", "", [], "nothing to evaluate: no retrieved document in"),
            ("", "1 Q0 a 1 2 t\n", [], "nothing to evaluate: no judgement in"),
            ("1 0 a 1\n1 0 a 0\n", "1 Q0 a 1 2 t\n", [], "judged twice (lines 1 and 2)")):
        code, out, err = _evaluate(tmp_path, capsys, qrels, run, *options)
        assert (code, out) == (2, "") and message in err and len(err.strip().splitlines()) == 1, err


def test_standard_input_is_read_once(tmp_path, capsys):
    from structrank.cli import main

    assert main(["evaluate", "--qrels", "-", "--run", "-"]) == 2
    assert "--qrels and --run both read standard input" in capsys.readouterr().err
    (tmp_path / "q").write_text("1 0 a 1\n")
    assert main(["compare", "--qrels", str(tmp_path / "q"), "-", "-"]) == 2
    assert "system 1 and system 2 both read standard input" in capsys.readouterr().err


#: bad inputs, each as files (qrels text, run text) and as the dicts a user would pass, with the words both give
BAD_INPUTS = [
    ("a NaN score", ("1 0 a 1\n", "1 Q0 a 1 nan t\n"), ({"1": {"a": 1}}, {"1": {"a": float("nan")}}), "score nan is not finite"),
    ("an infinite score", ("1 0 a 1\n", "1 Q0 a 1 inf t\n"), ({"1": {"a": 1}}, {"1": {"a": float("inf")}}),
     "score inf is not finite"),
    ("a fractional label", ("1 0 a 1.5\n", "1 Q0 a 1 2 t\n"), ({"1": {"a": 1.5}}, {"1": {"a": 2.0}}), "is not an integer"),
    ("a score that is no number", ("1 0 a 1\n", "1 Q0 a 1 None t\n"), ({"1": {"a": 1}}, {"1": {"a": None}}),
     "is not a number"),
]


@pytest.mark.parametrize("case, files, dicts, words", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_files_and_dicts_are_held_to_the_same_rules(tmp_path, case, files, dicts, words):
    from structrank.errors import StructRankError

    (tmp_path / "q").write_text(files[0])
    (tmp_path / "r").write_text(files[1])
    for qrels, run in ((tmp_path / "q", tmp_path / "r"), dicts):
        with pytest.raises(StructRankError, match=words):
            evaluate_run(qrels, run, ["map"])


def test_a_document_twice_in_a_file_or_a_dataframe_names_both_places(tmp_path):
    pd = pytest.importorskip("pandas", reason="pandas is an optional input type")
    (tmp_path / "r").write_text("1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n1 Q0 a 3 0 t\n")
    with pytest.raises(DataFormatError, match=r"line 3, docno: document 'a' of query 1 is retrieved twice \(lines 1 and 3\)"):
        read_run(tmp_path / "r")
    run = pd.DataFrame({"qid": [1, 1, 1], "docno": ["a", "b", "a"], "score": [2.0, 1.0, 0.0]})
    with pytest.raises(DataValidationError, match=r"the run DataFrame, row 2: document 'a' of query 1 is retrieved "
                                                  r"twice \(also the run DataFrame, row 0\)"):
        evaluate_run({"1": {"a": 1}}, run, ["map"])


def test_qids_read_alike_from_floats_integers_and_strings():
    pd = pytest.importorskip("pandas", reason="pandas is an optional input type")
    qrels = pd.DataFrame({"query_id": [1.0, 2.0], "doc_id": ["a", "b"], "relevance": [1.0, 1.0]})  # numeric columns
    run = {"1": {"a": 1.0}, 2: {"b": np.float32(3.0)}}
    assert list(evaluate_run(qrels, run, ["map"]).qids) == ["1", "2"]
    for bad, words in (({1.5: {"a": 1}}, "qid 1.5 is neither a string nor an integer"),
                       ({"1": {"a b": 1}}, "docno 'a b' is not one word"),
                       ({"1": [("a", 1)]}, "maps to a list, not a dict")):
        with pytest.raises(DataValidationError, match=words):
            evaluate_run(bad, run, ["map"])


def test_the_trec_convention_on_a_file_without_docids_names_the_file(tmp_path, capsys):
    from structrank.cli import main

    (tmp_path / "d.txt").write_text("1 qid:1 1:1\n0 qid:1 1:0\n")
    (tmp_path / "s.txt").write_text("1\n0\n")
    (tmp_path / "t.txt").write_text("0\n1\n")
    for argv in (["evaluate", "--data", str(tmp_path / "d.txt"), "--scores", str(tmp_path / "s.txt")],
                 ["compare", "--data", str(tmp_path / "d.txt"), str(tmp_path / "s.txt"), str(tmp_path / "t.txt")]):
        assert main(argv + ["--convention", "trec"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"structrank {argv[0]}: error: {tmp_path / 'd.txt'}, docid: --convention trec breaks ties by "
                       "document id (trec_eval's rule), and this file's rows carry no '#docid = ...' comment"]


def test_a_relevance_outside_the_64_bit_integers_is_named_by_line_and_field(tmp_path, capsys):
    """trec_eval reads a relevance into a C long: 10^20 is refused naming the file, the line and ``rel`` (it ended
    as an internal OverflowError), and 2^63 - 1 is read."""
    from structrank.cli import main
    from structrank.errors import DataFormatError
    from structrank.metrics.trec import read_qrels

    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n")
    qrels.write_text(f"1 0 d2 0\n1 0 d1 {10**20}\n")
    with pytest.raises(DataFormatError) as caught:
        read_qrels(qrels)
    assert caught.value.line == 2 and caught.value.field == "rel"
    assert main(["evaluate", "--qrels", str(qrels), "--run", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "line 2, rel: relevance 100000000000000000000 is outside" in err
    qrels.write_text(f"1 0 d2 0\n1 0 d1 {2**63 - 1}\n")
    assert read_qrels(qrels)["1"]["d1"] == 2**63 - 1
