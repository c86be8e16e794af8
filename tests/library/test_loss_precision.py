"""The P@k loss (structrank.losses.precision) against brute force over every ranking of small lists.

``check_oracle`` and ``check_batch`` serve every loss that is a regret in the good documents of
the top k (Recall@k's test uses them too).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_oracles import arrays, brute_po, check, metric_of_orders, permutations, scores_st

from structrank.learners.registry import MODELS
from structrank.losses import get_loss


def check_oracle(name, metric, case, k):
    """The oracle's ranking maximises s . phi_po + (metric of the ideal ranking - metric) over all rankings."""
    s, y = arrays(case)
    v = get_loss(name, k=k).oracle(s, y)
    perms = permutations(len(s))
    ideal = metric_of_orders(y, np.argsort(-y, kind="stable")[None, :], metric, "letor4")[0]
    regret = ideal - metric_of_orders(y, perms, metric, "letor4")  # what each ranking gives up
    own = ideal - metric_of_orders(y, v.order[None, :], metric, "letor4")[0]
    check(v, s, brute_po(perms, y), regret, own)
    np.testing.assert_allclose(v.coef, brute_po(v.order[None, :], y)[0], atol=1e-12)  # phi_po of its ranking


def check_batch(name, cases, k):
    """``batch`` over several queries gives each query's ``oracle``."""
    loss = get_loss(name, k=k)
    s = np.concatenate([np.array(c[0], dtype=np.float64) for c in cases])
    y = np.concatenate([np.array(c[1], dtype=np.int64) for c in cases])
    offsets = np.concatenate([[0], np.cumsum([len(c[0]) for c in cases])]).astype(np.int64)
    coef, delta = loss.batch(s, y, offsets)
    for q in range(len(cases)):
        a, b = offsets[q], offsets[q + 1]
        one = loss.oracle(s[a:b], y[a:b])
        np.testing.assert_allclose(coef[a:b], one.coef)
        assert delta[q] == pytest.approx(one.loss)


@settings(max_examples=200, deadline=None)
@given(scores_st, st.integers(1, 9))
def test_precision_oracle_is_the_best_ranking_of_all(case, k):
    check_oracle("precision", f"p@{k}", case, k)


@settings(max_examples=50, deadline=None)
@given(st.lists(scores_st, min_size=1, max_size=5), st.integers(1, 6))
def test_precision_batch_is_each_query_s_oracle(cases, k):
    check_batch("precision", cases, k)


def test_precision_is_a_loss_of_every_learner_and_the_cli():
    loss = get_loss("precision", k=5)
    assert loss.metrics == ("p@5",) and loss.kind == "hinge"
    assert {"svm-precision", "lsp-precision", "gbrt-precision", "mlp-precision"} <= set(MODELS)
    # nothing misordered: the ideal ranking, loss 0
    assert get_loss("precision").oracle(np.array([0.3, 0.1]), np.array([1, 1])).loss == 0.0
