"""The Recall@k loss (structrank.losses.recall) against brute force over every ranking of small lists."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_loss_precision import check_batch, check_oracle
from test_oracles import scores_st

from structrank.learners.registry import MODELS
from structrank.losses import get_loss


@settings(max_examples=200, deadline=None)
@given(scores_st, st.integers(1, 9))
def test_recall_oracle_is_the_best_ranking_of_all(case, k):
    check_oracle("recall", f"recall@{k}", case, k)


@settings(max_examples=50, deadline=None)
@given(st.lists(scores_st, min_size=1, max_size=5), st.integers(1, 6))
def test_recall_batch_is_each_query_s_oracle(cases, k):
    check_batch("recall", cases, k)


def test_recall_is_a_loss_of_every_learner_and_the_cli():
    loss = get_loss("recall", k=5)
    assert loss.metrics == ("recall@5",) and loss.kind == "hinge"
    assert {"svm-recall", "lsp-recall", "gbrt-recall", "mlp-recall"} <= set(MODELS)
    # a regret over n+: one of two good documents missing from the top 1 costs 1/2
    v = get_loss("recall", k=1).oracle(np.array([0.0, 0.0, 0.0]), np.array([1, 1, 0]))
    assert v.loss == 0.5
