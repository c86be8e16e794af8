"""The trec-run section of ``structrank bench`` on a tiny run: it writes the same files from the same
seed, times what it says, and prints its verdicts from what it measured (no timing is asserted)."""

import pytest

from structrank_lab.bench import trec_run
from structrank.metrics.trec import read_qrels, read_run


def test_the_synthetic_run_is_seeded_and_as_large_as_asked(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = trec_run.write_synthetic_trec(tmp_path / "a", n_queries=4, docs_per_query=30, judged=9, seed=3)
    second = trec_run.write_synthetic_trec(tmp_path / "b", n_queries=4, docs_per_query=30, judged=9, seed=3)
    assert first[2:] == second[2:] == (120, 36)
    for a, b in zip(first[:2], second[:2]):
        assert open(a, "rb").read() == open(b, "rb").read()
    run, qrels = read_run(first[1]), read_qrels(first[0])
    assert list(run) == ["1", "2", "3", "4"] and all(len(docs) == 30 for docs in run.values())
    assert all(len(docs) == 9 for docs in qrels.values())
    judged_retrieved = sum(d in run[q] for q, docs in qrels.items() for d in docs)
    assert judged_retrieved == 4 * 6  # two thirds of the judgements are of retrieved documents


def test_the_section_times_both_tools_and_states_the_bars(tmp_path):
    pytest.importorskip("pytrec_eval", reason="the comparison needs pytrec_eval")
    figures = trec_run.bench_trec_run(rounds=2, n_queries=3, docs_per_query=20, judged=6, folder=tmp_path)
    assert (figures["queries"], figures["run lines"], figures["judgements"], figures["rounds"]) == (3, 60, 18, 2)
    assert set(figures["process"]) == {"structrank evaluate", "pytrec_eval script"}
    assert set(figures["library"]) == {"structrank evaluate_run", "pytrec_eval RelevanceEvaluator + evaluate",
                                       "pytrec_eval evaluate (evaluator built before)"}
    assert all(len(v) == 2 and min(v) > 0 for group in ("process", "library") for v in figures[group].values())
    assert figures["largest difference"] < 1e-9  # both tools give the same means
    lines = trec_run.format_trec_run(figures)
    assert lines[0].startswith("trec-run: a synthetic run of 3 queries, 60 run lines, 18 judgements")
    verdicts = [line for line in lines if "x pytrec_eval (bar: at most 1.0x, " in line]
    assert len(verdicts) == 2 and all(("met)" in v or "MISSED)" in v) for v in verdicts)
    assert verdicts[1].rstrip().endswith("x its evaluate alone")
    assert trec_run.markdown_section(figures).startswith("## A TREC run\n\n```\ntrec-run:")


def test_the_verdicts_follow_the_medians():
    figures = {"queries": 1000, "run lines": 10**6, "judgements": 170000, "rounds": 3, "largest difference": 0.0,
               "process": {"structrank evaluate": [0.8, 0.9, 1.0], "pytrec_eval script": [1.0, 1.1, 1.2]},
               "library": {"structrank evaluate_run": [0.5, 0.6, 0.7], "pytrec_eval RelevanceEvaluator + evaluate":
                           [0.4, 0.5, 0.6], "pytrec_eval evaluate (evaluator built before)": [0.3, 0.4, 0.5]}}
    text = "\n".join(trec_run.format_trec_run(figures))
    assert "0.82x pytrec_eval (bar: at most 1.0x, met)" in text  # 0.9 / 1.1
    assert "1.20x pytrec_eval (bar: at most 1.0x, MISSED); 1.50x its evaluate alone" in text  # 0.6 / 0.5, 0.6 / 0.4
    assert "1,000,000 run lines, 170,000 judgements" in text
