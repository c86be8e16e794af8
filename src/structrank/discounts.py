"""Rank discounts of NDCG, shared bit for bit by the metrics (``metrics.conventions``) and the
NDCG losses (``losses.ndcg``): a bottom module, so that neither layer imports the other."""

from __future__ import annotations

import numpy as np

#: the discount kinds: "letor" (LETOR's Eval-Score scripts) and "log2_rank_plus_1" (trec_eval)
KINDS = ("letor", "log2_rank_plus_1")


def discounts(kind: str, n: int) -> np.ndarray:
    """Discount of ranks 1..n (index 0 is rank 1): "letor" is 1 at ranks 1-2 and 1/log2(p) at rank
    p >= 3; "log2_rank_plus_1" is 1/log2(p + 1).

    >>> discounts("letor", 4).round(4).tolist(), discounts("log2_rank_plus_1", 3).round(4).tolist()
    ([1.0, 1.0, 0.6309, 0.5], [1.0, 0.6309, 0.5])
    """
    if kind not in KINDS:
        raise ValueError(f"discount must be one of {KINDS}, got {kind!r}")
    ranks = np.arange(1, n + 1, dtype=np.float64)
    if kind == "letor":
        out = np.ones(n)
        out[2:] = 1.0 / np.log2(ranks[2:])
        return out
    return 1.0 / np.log2(ranks + 1.0)
