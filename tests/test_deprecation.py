"""Old public names (issue 23, point 5: one name per concept) still work, with a FutureWarning naming the new one."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from structrank.data import RankingDataset, drop_queries_without_irrelevant, drop_queries_without_relevant
from structrank.data import keep_queries_with_both, make_ranking_dataset
from structrank.data.filters import queries_with_both
from structrank.data.nbest import NBestData
from structrank.deprecation import renamed_attribute, renamed_keywords
from structrank.learners.nbest_boosting import BoostingReranker
from structrank.learners.lowdim import LowDimReranker


def _same_with_old_name(new_call, old_call, new_name):
    """The old call gives what the new one gives, with one FutureWarning naming the new name."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected = new_call()
    with pytest.warns(FutureWarning, match=f"is renamed {new_name}") as caught:
        got = old_call()
    assert len(caught) == 1 and caught[0].filename == __file__  # it points at the caller's line
    return expected, got


def test_relevant_from_was_min_label():
    ds = RankingDataset(np.arange(9.0)[:, None], [0, 0, 1, 1, 1, 0, 0, 2, 0], [1, 1, 2, 2, 3, 3, 3, 4, 4])
    for f in (drop_queries_without_relevant, drop_queries_without_irrelevant, keep_queries_with_both):
        new, old = _same_with_old_name(lambda: f(ds, relevant_from=2), lambda: f(ds, min_label=2), "relevant_from")
        assert old.query_ids.tolist() == new.query_ids.tolist()
    new, old = _same_with_old_name(lambda: queries_with_both(ds.y, ds.offsets, relevant_from=2),
                                   lambda: queries_with_both(ds.y, ds.offsets, min_label=2), "relevant_from")
    assert old.tolist() == new.tolist() == [3]


def _nbest(n_lists, seed):
    rng = np.random.default_rng(seed)
    n = 4 * n_lists
    X = sp.csr_matrix((rng.random((n, 12)) < 0.3).astype(float))
    return X, NBestData(x=X, y=X, loss=rng.integers(0, 3, n), base_score=-rng.random(n),
                        qid=np.repeat(np.arange(n_lists), 4), size=np.full(n_lists, 3))


def test_boosting_eval_set_was_dev_features_and_dev():
    (X, data), (Xd, dev) = _nbest(40, 0), _nbest(20, 1)
    new, old = _same_with_old_name(lambda: BoostingReranker(n_rounds=30).fit(X, data, eval_set=(Xd, dev)),
                                   lambda: BoostingReranker(n_rounds=30).fit(X, data, dev_features=Xd, dev=dev),
                                   r"eval_set=\(dev_features, dev\)")
    np.testing.assert_array_equal(old.dev_curve_, new.dev_curve_)
    np.testing.assert_array_equal(old.weights_, new.weights_)
    with pytest.raises(TypeError, match="not 'dev' alone"):
        BoostingReranker().fit(X, data, dev=dev)
    with pytest.raises(TypeError, match="pass 'eval_set' only"):
        BoostingReranker().fit(X, data, eval_set=(Xd, dev), dev_features=Xd, dev=dev)


def test_lowdim_eval_set_was_dev():
    from test_lowdim import tagged

    train, dev = tagged(120, seed=90), tagged(60, seed=91)
    new, old = _same_with_old_name(lambda: LowDimReranker(model="generative", k=3).fit(train, eval_set=dev),
                                   lambda: LowDimReranker(model="generative", k=3).fit(train, dev=dev), "eval_set")
    assert old.w_selected_on_ == new.w_selected_on_ == "dev" and old.w_ == new.w_
    np.testing.assert_array_equal(old.dev_curve_, new.dev_curve_)


def test_structured_boosting_dev_curve_was_eval_history():
    from structrank.learners.structured_boosting import StructuredBoostingRanker

    train, dev = make_ranking_dataset(n_queries=30, random_state=0), make_ranking_dataset(n_queries=10, random_state=1)
    model = StructuredBoostingRanker(loss="map", n_estimators=5, min_child_samples=5).fit(train, eval_set=dev)
    assert model.dev_curve_.shape == (5,)
    with pytest.warns(FutureWarning, match="StructuredBoostingRanker: eval_history_ is renamed dev_curve_"):
        assert model.eval_history_ is model.dev_curve_
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not hasattr(StructuredBoostingRanker(), "eval_history_")  # unfitted: absent, and quiet


def test_renamed_keywords_keeps_the_signature_and_refuses_both_names():
    import inspect

    @renamed_keywords({"old": "new"})
    def f(a, new=1):
        """Doc."""
        return a + new

    assert list(inspect.signature(f).parameters) == ["a", "new"] and f.__doc__ == "Doc."
    assert f(1, new=2) == 3
    with pytest.warns(FutureWarning, match="f: old is renamed new"):
        assert f(1, old=5) == 6
    with pytest.raises(TypeError, match="got 'old' and its new name 'new'"):
        f(1, old=5, new=2)

    class Model:
        alias_ = renamed_attribute("alias_", "value_")

    m = Model()
    assert not hasattr(m, "alias_")
    m.value_ = 4
    with pytest.warns(FutureWarning, match="Model: alias_ is renamed value_"):
        assert m.alias_ == 4
