"""Property tests of the command line's edges over generated inputs: every numeric option of fuse and compare,
``--set`` values, qrels relevance, export's feature names, a measure's direction and ``--queries with-both``.

Each command either succeeds with finite output or ends as every bad input does: exit 2, one line on standard
error naming the file, line and field (or the option), nothing written. Never exit 1 ("internal error").
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structrank.cli import main
from structrank.data import make_ranking_dataset, write_letor
from structrank.metrics import CONVENTIONS
from structrank.metrics.tool_measures import higher_is_better

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**40, 10**40),
                    st.sampled_from([0, -0.0, 1e-320, 1e308, -1e308, 0.5, 1, 2, 60]))


def number_text(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def one_line_refusal(code, capsys, *written):
    """Exit 0, or exit 2 with one line that starts with the command's name and no file of ``written`` made."""
    err = capsys.readouterr().err.strip().splitlines()
    assert code in (0, 2), err
    if code == 2:
        assert len(err) == 1 and err[0].startswith("structrank ") and "internal error" not in err[0], err
        assert not any(p.exists() for p in written)
    return code


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("edges")
    qrels, run_files = folder / "qrels.txt", []
    qrels.write_text("".join(f"{q} 0 d{q}-{d} {int((q + d) % 3 == 0)}\n" for q in range(1, 6) for d in range(6)))
    rng = np.random.default_rng(0)
    for r in range(3):
        path = folder / f"run{r}.txt"
        path.write_text("".join(f"{q} Q0 d{q}-{d} {d + 1} {s:.6f} r{r}\n" for q in range(1, 6)
                                for d, s in enumerate(sorted(rng.random(6), reverse=True))))
        run_files.append(path)
    return folder, qrels, run_files


def fused_scores(path):
    return [float(line.split()[4]) for line in path.read_text().splitlines()]


@SETTINGS
@given(option=st.sampled_from([("rrf", "--k"), ("combgmnz", "--gamma"), ("logn_isr", "--sigma"), ("rbc", "--phi")]),
       value=NUMBERS)
def test_fuse_numeric_options_give_finite_scores_or_one_line(runs, option, value, capsys):
    folder, _, run_files = runs
    out = folder / "fused.txt"
    out.unlink(missing_ok=True)
    method, flag = option
    code = main(["fuse", "--method", method, f"{flag}={number_text(value)}", *map(str, run_files), "--out", str(out),
                 "--quiet"])
    if one_line_refusal(code, capsys, out) == 0:
        assert all(math.isfinite(s) for s in fused_scores(out))
        assert len(set(fused_scores(out))) > 1, "every score the same: the fusion says nothing"


@SETTINGS
@given(weights=st.lists(NUMBERS, min_size=1, max_size=4))
def test_fuse_weights_give_finite_scores_or_one_line(runs, weights, capsys):
    folder, _, run_files = runs
    out = folder / "weighted.txt"
    out.unlink(missing_ok=True)
    # --weights=...: argparse reads a value such as "-1e+16,1" after a space as an option
    code = main(["fuse", "--method", "wsum", "--weights=" + ",".join(map(number_text, weights)), *map(str, run_files),
                 "--out", str(out), "--quiet"])
    if one_line_refusal(code, capsys, out) == 0:
        assert len(weights) == len(run_files) and all(math.isfinite(s) for s in fused_scores(out))


@SETTINGS
@given(step=NUMBERS)
def test_fuse_optimisation_step_is_bounded_or_refused(runs, step, capsys):
    folder, qrels, run_files = runs
    out = folder / "optimised.txt"
    out.unlink(missing_ok=True)
    code = main(["fuse", "--method", "wsum", "--optimize-on", str(qrels), f"--step={number_text(step)}",
                 *map(str, run_files[:2]), "--out", str(out), "--quiet"])
    if one_line_refusal(code, capsys, out) == 0:
        assert isinstance(step, (int, float)) and step > 0 and all(math.isfinite(s) for s in fused_scores(out))


@SETTINGS
@given(permutations=st.one_of(st.integers(-10, 10**9), st.sampled_from([9_999, 10_000, 1_000_000, 1_000_001])))
def test_compare_permutations_in_range_or_one_line(runs, permutations, capsys):
    _, qrels, run_files = runs
    code = main(["compare", "--qrels", str(qrels), "--permutations", str(permutations), "--format", "json", "--quiet",
                 *map(str, run_files[:2])])
    assert one_line_refusal(code, capsys) == (0 if 10_000 <= permutations <= 1_000_000 else 2)


@SETTINGS
@given(relevance=st.one_of(st.integers(-10**30, 10**30), st.sampled_from([2**63 - 1, 2**63, -2**63, -2**63 - 1])))
def test_qrels_relevance_is_read_or_its_line_and_field_named(runs, relevance, capsys):
    folder, _, run_files = runs
    qrels = folder / "odd-qrels.txt"
    qrels.write_text(f"1 0 d1-0 1\n1 0 d1-1 {relevance}\n")
    code = main(["evaluate", "--qrels", str(qrels), "--run", str(run_files[0]), "--json", "--quiet"])
    out = capsys.readouterr()
    assert code == (0 if -2**63 <= relevance < 2**63 else 2), out.err
    if code == 2:
        assert out.err.strip().count("\n") == 0 and f"{qrels}, line 2, rel:" in out.err


JSON_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(), st.text(max_size=4)),
                           lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.sampled_from(["k", "gain", "feature_map", "x"]),
                                                                   inner, max_size=3)), max_leaves=6)


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("set") / "train.txt"
    write_letor(path, make_ranking_dataset(n_queries=6, docs_per_query=5, n_features=3, random_state=0))
    return path


@SETTINGS
@given(value=st.one_of(JSON_VALUES.map(lambda v: json.dumps(v, allow_nan=True)), st.text(max_size=12)))
def test_set_loss_params_trains_or_refuses_in_one_line(train_file, value, capsys, tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "m.npz"
    code = main(["train", "svm-ndcg-ideal", "--train", str(train_file), "--set", f"loss_params={value}", "--set",
                 "max_iter=5", "--out", str(out), "--quiet"])
    if one_line_refusal(code, capsys, out) == 0:
        assert out.exists()


NAMES = st.lists(st.text(alphabet="abcxyz_0123", min_size=1, max_size=5), min_size=3, max_size=3, unique=True)


@SETTINGS
@given(recorded=NAMES, given_names=st.one_of(st.none(), NAMES))
def test_export_names_are_the_recorded_ones_unless_the_users_agree(recorded, given_names, capsys, tmp_path_factory):
    import pandas as pd

    from structrank import StructSVMRanker
    from structrank.model_io import save_model

    ds = make_ranking_dataset(n_queries=8, docs_per_query=5, n_features=3, random_state=1)
    folder = tmp_path_factory.mktemp("export")
    model = StructSVMRanker(loss="map", max_iter=5).fit(pd.DataFrame(np.asarray(ds.X), columns=recorded), ds.y,
                                                       qid=ds.qid)
    save_model(model, folder / "m.npz")
    out = folder / "m.json"
    extra = []
    if given_names is not None:
        (folder / "names.txt").write_text("".join(f"{name}\n" for name in given_names))
        extra = ["--feature-names", str(folder / "names.txt")]
    code = main(["export", str(folder / "m.npz"), "--format", "json", "--out", str(out), "--quiet", *extra])
    assert one_line_refusal(code, capsys, out) == (0 if given_names in (None, recorded) else 2)
    if code == 0:
        assert list(json.loads(out.read_text())["weights"]) == recorded


MEASURES = ["map", "ndcg@10", "p@5", "err@10", "rbp(p=0.8)", "rbp_residual(p=0.8)", "judged@5", "mrr"]


@SETTINGS
@given(measure=st.sampled_from(MEASURES), shift=st.sampled_from([-0.1, 0.1]),
       noise=st.lists(st.floats(0, 0.02), min_size=12, max_size=12))
def test_compare_calls_better_the_system_on_the_measures_good_side(measure, shift, noise):
    """A system ``shift`` from the baseline on every query: where the paired tests are significant, the one called
    better has the higher mean, or the lower where the measure declares that lower is better."""
    from structrank.metrics.compare import compare_values

    base = {q: 0.4 + 0.03 * (q % 5) for q in range(12)}
    other = {q: v + shift + noise[q] for q, v in base.items()}
    row = compare_values({"base": {measure: base}, "other": {measure: other}}).rows[0]
    assert row.higher_is_better == higher_is_better(measure)
    assert row.significant(0.05)  # 12 queries all on one side: both tests agree
    ahead = (row.mean > row.baseline_mean) == higher_is_better(measure)
    assert row.verdict("base") == ("other better" if ahead else "base better")
    assert higher_is_better(measure) == (measure.split("(")[0] != "rbp_residual")


@SETTINGS
@given(labels=st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=5), min_size=1, max_size=6),
       convention=st.sampled_from(sorted(set(CONVENTIONS) - {"auto"})))
def test_with_both_keeps_the_queries_the_convention_calls_mixed(labels, convention, capsys, tmp_path_factory):
    from structrank.metrics.conventions import resolve_convention

    folder = tmp_path_factory.mktemp("both")
    y = np.concatenate([np.asarray(q) for q in labels])
    qid = np.repeat(np.arange(1, len(labels) + 1), [len(q) for q in labels])
    rows = "".join(f"{label} qid:{q} 1:{i}.0 #docid = d{i}\n" for i, (label, q) in enumerate(zip(y, qid)))
    (folder / "d.txt").write_text(rows)
    (folder / "s.txt").write_text("".join(f"{-i}\n" for i in range(y.size)))
    code = main(["evaluate", "--data", str(folder / "d.txt"), "--scores", str(folder / "s.txt"), "--convention",
                 convention, "--queries", "with-both", "--per-query", "--json", "--quiet"])
    out = capsys.readouterr()
    try:
        conv, _ = resolve_convention(convention, y)
    except ValueError:
        assert code == 2
        return
    # relevant as the convention reads a label (from relevant_from, and up to label_max where it has one)
    mixed = {str(q + 1) for q, ls in enumerate(labels) if len(set(conv.relevant(ls).tolist())) == 2}
    if not mixed:
        assert code == 2 and out.err.count("\n") == 1
        return
    assert code == 0, out.err
    assert set(json.loads(out.out)["per_query"]) == mixed
