"""The start-up/reading and memory sections of ``structrank bench``: they run and print verdicts
computed from what they measured (no timing is asserted)."""

import pytest

from structrank_lab.bench import memory as bench_memory, startup as bench_startup
from structrank.data import letor_root


def test_reading_section_times_both_readers_and_prints_ratios(tmp_path):
    reading = bench_startup.bench_reading(sizes=(2000,), rounds=2, folder=tmp_path)
    assert set(reading[2000]) == {"read_letor", "load_svmlight_file (no qid)"}
    assert all(len(v) == 2 and min(v) > 0 for v in reading[2000].values())
    lines = bench_startup.format_startup({}, reading)
    assert "reading 2,000 synthetic LETOR documents" in lines[0] and lines[-1].strip().endswith("1.00x")


def test_startup_lines_state_the_bars():
    figures = {"startup": {"python -c pass": [0.02, 0.03], "structrank --version": [0.05, 0.06],
                           "structrank --help": [0.07, 0.08]},
               "evaluate": {"python -c pass": [0.02], "import numpy": [0.1], "import numba, one cached kernel": [0.5],
                            "structrank evaluate": [0.7]},
               "train": {"structrank train svm-auc": [1.0]}}
    text = "\n".join(bench_startup.format_startup(figures, {}))
    assert "structrank --version: +0.030 s over python -c pass (bar: 0.3 s)" in text
    assert "0.700 s wall (bar: 1 s), of which 0.500 s is the floor" in text and "svm_rank_learn: not on the PATH" in text
    assert "svm_learn: not on the PATH" in text


def test_svmlight_ranking_mode_is_timed_beside_training_when_on_the_path():
    figures = {"train": {"structrank train svm-auc": [1.0, 1.2], "svm_learn -z p -c 1": [80.0, 90.0]}}
    text = "\n".join(bench_startup.format_startup(figures, {}))
    assert "svm_learn -z p -c 1" in text and "77.27x" in text  # 85 / 1.1, medians
    assert "svm_learn: not on the PATH" not in text and "svm_rank_learn: not on the PATH" in text


@pytest.mark.skipif(letor_root("MQ2008") is None, reason="LETOR MQ2008 not in STRUCTRANK_DATA")
def test_memory_figures_of_one_fit():
    added, seconds, x_mb = bench_memory._fit_child("svm-map", "dense", 2, None)
    assert added >= 0 and seconds > 0 and x_mb > 0


def test_memory_lines_give_verdicts_from_the_figures():
    figures = {"memory": {"svm-map": [70.0], "svm-ndcg": [300.0], "lambdamart": [200.0]},
               "time": {"dense": [1.0], "csr (every column listed)": [1.1], "csr (zeros dropped)": [1.3]},
               "x_mb": 338, "copies": 100, "rounds": 1}
    text = "\n".join(bench_memory.format_memory(figures))
    assert "0.35x  met" in text and "1.50x  MISSED" in text
    assert "1.10x  met" in text and "1.30x  MISSED" in text
