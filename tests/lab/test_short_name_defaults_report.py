"""The short names' defaults page (structrank_lab.experiments.short_name_defaults): the graded set it makes, and a
section built from given per-query values (the runs themselves are the command's, through the CLI)."""

import numpy as np

from structrank.data import read_letor
from structrank_lab.experiments import short_name_defaults as snd


def test_the_graded_set_is_graded_0_to_4_and_split_by_query(tmp_path):
    train, test = (read_letor(p) for p in snd.graded_set(tmp_path))
    assert train.n_queries == 240 and test.n_queries == 60
    assert set(np.unique(np.concatenate([train.y, test.y]))) == {0, 1, 2, 3, 4}
    assert not set(train.qid.tolist()) & set(test.qid.tolist())


def _results(shift):
    """Per-query values of every model: the ideal formulations ahead of the latent ones; the defaults ``shift``
    from the ideal one; LightGBM at 0.7 on average."""
    rng = np.random.default_rng(0)
    base = {m: {str(q): 0.5 + 0.3 * rng.random() for q in range(30)} for m in snd.METRICS}
    def shifted(d):
        return {m: {q: v + d for q, v in base[m].items()} for m in snd.METRICS}
    out = {snd.REFERENCE: shifted(0.0), snd.LIGHTGBM: {m: {q: 0.7 for q in base[m]} for m in snd.METRICS}}
    for short, (_, (ideal, latent)) in snd.SHORT_NAMES.items():
        out[ideal], out[latent] = shifted(0.02), shifted(-0.05)
        out[short] = {m: {q: v + shift + 0.001 * (int(q) % 3) for q, v in out[ideal][m].items()} for m in snd.METRICS}
    return {m: {"values": v, "seconds": 1.0, "formulation": ""} for m, v in out.items()}


def test_a_section_sets_each_default_against_its_better_formulation_and_lightgbm():
    close = snd.dataset_section("D", _results(0.0))
    for short, (metric, (ideal, _)) in snd.SHORT_NAMES.items():
        row = next(line for line in close.splitlines() if line.startswith(f"| {short} | {metric}"))
        assert f"| {ideal} |" in row and row.endswith("| yes |")
    mean = np.mean([0.5 + 0.02 + 0.3 * v for v in np.random.default_rng(0).random(30)])
    assert f"svm-ndcg's NDCG@10 is {(mean + 0.001) / 0.7:.3f}x" in close
    assert "3 of 3 defaults are within 1 point" in close
    far = snd.dataset_section("D", _results(-0.03))
    assert "0 of 3 defaults are within 1 point" in far and far.count("| no |") == 3
