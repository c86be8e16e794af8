"""The calling conventions of the ranking ecosystem, turned into structrank's.

LightGBM, XGBoost and PyTerrier's ``pt.ltr.apply_learned_model(..., form='ltr')`` call a ranker as
``fit(X, y, group=sizes, eval_set=[(Xv, yv)], eval_group=[sizes_v])``: ``group`` lists the number
of rows of each query in row order (LightGBM's meaning), an eval set is a list of ``(X, y)`` pairs
whose grouping comes apart (``eval_group``, or XGBoost's ``eval_qid``), and ``sample_weight`` weighs
the queries. structrank's own call is ``fit(X, y, qid=qid, eval_set=(Xv, yv, qidv))``. Every ranker's
``fit`` takes both; these pure functions translate the first into the second, so that a ``group=``
call runs the very fit a ``qid=`` call runs (the same rows, offsets and bits).

- ``qid_from_group``: query sizes as one query id per row (0, 0, 0, 1, 1, ...);
- ``fit_qid``: the qid of a fit from ``qid=`` or ``group=`` (not both);
- ``one_eval_set``: the eval set from any of the accepted forms, as structrank's ``(X, y, qid)`` or a
  RankingDataset, or None (one eval set: the learners choose their epoch or round on one);
- ``row_weights``: ``sample_weight`` (one weight per row, equal within each query, or one per query
  in the order the queries first appear) as one weight per row, normalised to mean 1 over the
  queries, or None when every weight is equal (then the fit is the unweighted one, bit for bit).
"""

from __future__ import annotations

import numpy as np

from structrank.data.dataset import RankingDataset
from structrank.errors import DataValidationError


def qid_from_group(group, n_rows, where="fit") -> np.ndarray:
    """One query id per row (0 for the first ``group[0]`` rows, 1 for the next ``group[1]``, ...) from
    LightGBM's ``group``: the number of rows of each query, in row order, summing to ``n_rows``."""
    sizes = np.asarray(group)
    if sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iuf":
        raise DataValidationError(f"{where}: group must be a 1-d list of query sizes (rows per query, in row order), "
                                  f"got {_shape_of(group)}")
    if sizes.dtype.kind == "f" and not np.all(np.isfinite(sizes) & (sizes == np.round(sizes))):
        raise DataValidationError(f"{where}: group holds a size that is not a whole number: "
                                  f"{sizes[~(np.isfinite(sizes) & (sizes == np.round(sizes)))][0]!r}")
    sizes = sizes.astype(np.int64)
    if np.any(sizes < 1):
        bad = int(np.flatnonzero(sizes < 1)[0])
        raise DataValidationError(f"{where}: group[{bad}] is {sizes[bad]}: every query has at least one row")
    if int(sizes.sum()) != n_rows:
        raise DataValidationError(f"{where}: group's sizes sum to {int(sizes.sum())} rows, X has {n_rows}")
    return np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)


def _shape_of(value) -> str:
    array = np.asarray(value, dtype=object) if not hasattr(value, "shape") else value
    return f"an array of shape {np.shape(array)}"


def _n_rows(X) -> int:
    return X.n_rows if isinstance(X, RankingDataset) else np.shape(X)[0]


def fit_qid(X, qid, group, where="fit"):
    """The qid of a fit called with ``qid=`` (structrank's, XGBoost's) or ``group=`` (LightGBM's); None
    when neither is given (X is a RankingDataset, or a DataFrame with a qid column, or the fit fails
    asking for one)."""
    if group is None:
        return qid
    if qid is not None:
        raise DataValidationError(f"{where}: pass either qid (one query id per row) or group (rows per query), not both")
    if isinstance(X, RankingDataset) or (hasattr(X, "columns") and "qid" in X.columns):
        raise DataValidationError(f"{where}: X already gives the queries (a RankingDataset, or a qid column); "
                                  "group must be None")
    return qid_from_group(group, _n_rows(X), where)


def one_eval_set(eval_set, eval_group=None, eval_qid=None, where="fit"):
    """structrank's eval set (a RankingDataset or a tuple (X, y, qid)), or None, from any accepted form:

    - structrank's: a RankingDataset, or a tuple (X, y, qid);
    - LightGBM's and XGBoost's: a list of one (X, y) pair with ``eval_group=[sizes]`` or
      ``eval_qid=[qid]``, or a list of one RankingDataset or (X, y, qid) tuple.

    One eval set only: the learners choose their epoch or round on one set."""
    if eval_group is not None and eval_qid is not None:
        raise DataValidationError(f"{where}: pass either eval_group or eval_qid, not both")
    grouping = eval_group if eval_group is not None else eval_qid
    if eval_set is None:
        if grouping is not None:
            raise DataValidationError(f"{where}: {'eval_group' if eval_group is not None else 'eval_qid'} is given "
                                      "without an eval_set")
        return None
    if isinstance(eval_set, list):
        if len(eval_set) != 1:
            raise DataValidationError(f"{where}: eval_set lists {len(eval_set)} sets; structrank chooses on one "
                                      "eval set, so pass a list of one (or the set itself)")
        eval_set = eval_set[0]
        if grouping is not None:
            if not isinstance(grouping, (list, tuple)) or len(grouping) != 1:
                name = "eval_group" if eval_group is not None else "eval_qid"
                raise DataValidationError(f"{where}: {name} must be a list with one entry for the one eval set")
            grouping = grouping[0]
    if grouping is None:
        return eval_set
    if isinstance(eval_set, RankingDataset) or not isinstance(eval_set, (tuple, list)) or len(eval_set) != 2:
        raise DataValidationError(f"{where}: with eval_group or eval_qid, the eval set must be an (X, y) pair")
    X, y = eval_set
    if eval_group is not None:
        return X, y, qid_from_group(grouping, _n_rows(X), f"{where}: eval_group")
    return X, y, np.asarray(grouping)


def row_weights(sample_weight, qid, where="fit"):
    """``sample_weight`` as one weight per row, normalised to mean 1 over the queries; None when it is None
    or every weight is equal (the unweighted fit).

    A ranking loss is a sum over queries, so a weight belongs to a query: ``sample_weight`` gives one per row,
    equal within each query (LightGBM's layout), or one per query in the order the queries first appear in
    ``qid`` (XGBoost's). Weights must be finite and non-negative, and some positive."""
    if sample_weight is None:
        return None
    qid = np.asarray(qid)
    weights = np.asarray(sample_weight, dtype=np.float64) if np.ndim(sample_weight) else None
    if weights is None or weights.ndim != 1:
        raise DataValidationError(f"{where}: sample_weight must be a 1-d array (one weight per row or per query), "
                                  f"got {_shape_of(sample_weight)}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        bad = int(np.flatnonzero(~np.isfinite(weights) | (weights < 0))[0])
        raise DataValidationError(f"{where}: sample_weight[{bad}] is {weights[bad]}: weights are finite and >= 0")
    _, first, codes = np.unique(qid, return_index=True, return_inverse=True)
    codes = codes.ravel()
    n_queries = first.size
    if weights.size == qid.size:
        per_query = np.zeros(n_queries)
        per_query[codes] = weights
        varies = per_query[codes] != weights
        if varies.any():
            row = int(np.flatnonzero(varies)[0])
            raise DataValidationError(
                f"{where}: sample_weight differs within query {qid[row]!r} (row {row}): structrank's losses weigh "
                "whole queries, so give every row of a query the same weight, or one weight per query")
    elif weights.size == n_queries:
        # the queries in the order they first appear: the order of group= and of LightGBM's and XGBoost's weights
        per_query = np.empty(n_queries)
        per_query[np.argsort(first, kind="stable")] = weights
    else:
        raise DataValidationError(f"{where}: sample_weight has {weights.size} entries; give one per row "
                                  f"({qid.size}) or one per query ({n_queries})")
    if not np.any(per_query > 0):
        raise DataValidationError(f"{where}: every sample_weight is 0: nothing to learn from")
    if np.all(per_query == per_query[0]):
        return None
    return (per_query / per_query.mean())[codes]


def refuse_weights(estimator, sample_weight, qid, why) -> None:
    """DataValidationError naming the class and ``why`` when ``sample_weight`` weighs the queries unequally
    (equal weights are the unweighted fit, which every ranker runs); ``qid`` None (the rows are in a file
    cache): when any two weights differ."""
    where = f"{type(estimator).__name__}.fit"
    if sample_weight is None:
        return
    if qid is None:
        weights = np.ravel(np.asarray(sample_weight, dtype=np.float64))
        unequal = weights.size > 0 and np.any(weights != weights[0])
    else:
        unequal = row_weights(sample_weight, qid, where) is not None
    if unequal:
        raise DataValidationError(f"{type(estimator).__name__}.fit does not take unequal sample_weight: {why}")
