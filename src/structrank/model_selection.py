"""scikit-learn model selection for rankers: query-preserving splits and qid-aware scorers.

A ranker's cross-validation must keep each query's rows together, and its scorer needs the
qids of the held-out rows. Both get them through scikit-learn's metadata routing::

    import sklearn
    sklearn.set_config(enable_metadata_routing=True)
    search = GridSearchCV(RankSVM(), {"C": [0.1, 1]}, cv=QueryKFold(5))
    search.fit(X, y, qid=qid)          # qid reaches fit, score and the splitter

QueryKFold requests ``qid`` for ``split`` and the rankers request it for ``fit`` and ``score``
by default, so no ``set_*_request`` call is needed.
"""

from __future__ import annotations

import numpy as np
import sklearn
from sklearn.metrics import make_scorer
from sklearn.model_selection import GroupKFold

from structrank.errors import DataValidationError
from structrank.metrics import evaluate
from structrank.metrics.evaluate import canonical_name


class QueryKFold(GroupKFold):
    """K-fold over queries: every query's rows land in the same fold.

    It is scikit-learn's GroupKFold with the query ids as groups, taken from ``qid`` (routed
    metadata) or, failing that, from ``groups``.

    Parameters
    ----------
    n_splits : int, default 5
    shuffle : bool, default False
        Shuffle the queries before assigning them to folds.
    random_state : int or None

    Examples
    --------
    >>> import numpy as np
    >>> qid = np.repeat([1, 2, 3, 4], 3)
    >>> [sorted(set(qid[test].tolist())) for _, test in QueryKFold(2).split(np.zeros((12, 1)), qid=qid)]
    [[2, 4], [1, 3]]
    """

    __metadata_request__split = {"qid": True, "groups": True}
    __metadata_request__get_n_splits = {"qid": True, "groups": True}

    def __init__(self, n_splits=5, *, shuffle=False, random_state=None):
        super().__init__(n_splits=n_splits, shuffle=shuffle, random_state=random_state)

    def split(self, X, y=None, groups=None, qid=None):
        groups = qid if qid is not None else groups
        if groups is None:
            raise DataValidationError(
                "QueryKFold needs the query ids: pass qid=... (with metadata routing enabled: "
                "sklearn.set_config(enable_metadata_routing=True)) or groups=qid"
            )
        return super().split(X, y, groups=np.asarray(groups))

    def get_n_splits(self, X=None, y=None, groups=None, qid=None):
        return self.n_splits


def ranking_scorer(metric="ndcg@10", convention="auto", docids=None):
    """A scikit-learn scorer that evaluates a ranker's predictions per query.

    The scorer requests ``qid`` through metadata routing, so it works in GridSearchCV and
    cross_val_score once routing is enabled. ``convention`` "auto" is the one each fold's labels
    allow (``structrank.metrics.evaluate``).

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.model_selection import cross_val_score
    >>> from structrank.data import make_ranking_dataset
    >>> from structrank.learners import RankSVM
    >>> ds = make_ranking_dataset(n_queries=30, random_state=0)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     maps = cross_val_score(RankSVM(C=0.1), ds.X, ds.y, params={"qid": ds.qid}, cv=QueryKFold(3),
    ...                            scoring=ranking_scorer("map", "letor4"))
    >>> maps.shape, bool(maps.min() > 0.5)
    ((3,), True)
    """
    name = canonical_name(metric)

    def ranking_metric(y_true, y_score, qid=None):
        if qid is None:
            raise DataValidationError(
                f"the {name} scorer needs qid; enable metadata routing: sklearn.set_config(enable_metadata_routing=True)"
            )
        return evaluate(y_true, y_score, qid, [name], convention).metrics[name]

    ranking_metric.__name__ = f"{name}_{convention}"
    scorer = make_scorer(ranking_metric, response_method="predict")
    # sklearn only lets a request be set while routing is on; set it now, whatever the global
    # setting, so that a scorer built before routing is enabled still asks for qid.
    with sklearn.config_context(enable_metadata_routing=True):
        return scorer.set_score_request(qid=True)


__all__ = ["QueryKFold", "ranking_scorer"]
