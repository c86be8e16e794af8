"""structrank's rankers in PyTerrier (optional: ``pip install python-terrier``; no Java is needed).

PyTerrier passes results as DataFrames: a result frame has a row per (query, document) with columns
``qid`` and ``docno`` and, after a feature union (``**``), ``features`` (one vector per row); a qrels frame
has ``qid``, ``docno`` and ``label``. ``StructrankTransformer(ranker)`` makes any structrank ranker a
PyTerrier transformer that can be fitted (a ``pt.Estimator``). A ranker of feature vectors reads ``features``;
a text reranker (``CrossEncoderRanker``) reads each row's ``query`` and ``text``, the columns PyTerrier's
neural rerankers read (``pt.text.get_text`` adds ``text``):

- ``fit(res_tr, qrels_tr, res_va=None, qrels_va=None)`` joins each row's label from the qrels, as
  ``pt.ltr`` does (a row the qrels do not judge has label 0), and fits the ranker on the stacked features
  with the rows' qid (``ranker.fit(X, y, qid=...)``; a text reranker's ``X`` is the (query, text) pairs).
  The validation frames are the ranker's ``eval_set``: the learners that pick their epoch or round on it
  do so, the others score it (``eval_score_``); a fit without ``eval_set`` (a ranker from elsewhere) warns
  that they were not used.
- ``transform(res)`` sets ``score`` to ``ranker.predict`` of the features (or pairs), row for row, and
  recomputes ``rank`` with PyTerrier's own ``pt.model.add_ranks`` (the rows keep their order).

Qrels may also come under ir_datasets' names (query_id, doc_id, relevance; ``metrics.trec.FRAME_COLUMNS``);
query and document ids compare as strings, as trec_eval compares them. ``dataset_frames`` turns a
``RankingDataset`` (a LETOR file) into such a result frame and its qrels.

``pt.ltr.apply_learned_model(ranker, form='ltr')`` takes a structrank ranker too: PyTerrier then calls
``fit(X, y, group=sizes, eval_set=[(Xv, yv)], eval_group=[sizes_v])``, LightGBM's convention. With
``form='regression'``, PyTerrier's default, it calls ``fit(X, y)`` without the queries, from which no
ranker can learn: use ``form='ltr'`` or this adapter.

``StructrankTransformer`` is built on ``pt.Estimator`` when it is first asked for (the module's
``__getattr__``), so that importing this module needs no PyTerrier and a missing one is named then.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from structrank.errors import DataValidationError
from structrank.learners.base import model_inputs
from structrank.metrics.trec import frame_columns

# deferred imports: pyterrier and pandas (python-terrier, an optional dependency) load when the adapter is first used

INSTALL_HINT = "pip install python-terrier (or pip install 'structrank[pyterrier]')"

#: the optional extra of this module's examples (conftest.py skips them, naming it, where it is absent)
_requires_extra = "pyterrier"

__all__ = ["StructrankTransformer", "dataset_frames"]


def _pyterrier():
    """The pyterrier module, or an ImportError that says how to install it."""
    try:
        import pyterrier  # deferred: the optional dependency
    except ImportError as exc:
        if exc.name not in ("pyterrier", None):
            raise  # pyterrier is there but something it imports is not: its own message says what
        raise ImportError(f"structrank.pyterrier needs PyTerrier: {INSTALL_HINT}") from exc
    return pyterrier


def dataset_frames(dataset):
    """A PyTerrier result frame (qid, docno, features) and its qrels (qid, docno, label) from a ``RankingDataset``.

    Parameters
    ----------
    dataset : RankingDataset
        Its document ids are the docnos (LETOR 4.0's ``#docid = ...``); without them, each row's
        number in the data set.

    Returns
    -------
    results, qrels : pandas.DataFrame
        ``results`` has one row per row of the data set, in its order; query ids are strings, as in PyTerrier.

    Examples
    --------
    >>> from structrank.data import RankingDataset
    >>> results, qrels = dataset_frames(RankingDataset([[0.5, 1.0], [0.1, 0.0]], [1, 0], [7, 7]))
    >>> results.docno.tolist(), results.features[0].tolist(), qrels.label.tolist()
    (['0', '1'], [0.5, 1.0], [1, 0])
    """
    import pandas as pd  # deferred: installed with pyterrier

    X = dataset.X.toarray() if hasattr(dataset.X, "toarray") else np.asarray(dataset.X)
    qid = _ids(pd.Series(dataset.qid))
    docno = np.arange(X.shape[0]).astype(str) if dataset.docids is None else _ids(pd.Series(dataset.docids))
    results = pd.DataFrame({"qid": qid, "docno": docno, "features": list(X.astype(np.float64))})
    return results, pd.DataFrame({"qid": qid, "docno": docno, "label": np.asarray(dataset.y)})


def _ids(column) -> np.ndarray:
    """Query or document ids as strings, as trec_eval and PyTerrier hold them (a whole float as its integer:
    a numeric DataFrame column holds integers as floats once it has a missing value)."""
    values = column.to_numpy()
    if values.dtype.kind == "f" and np.isfinite(values).all() and (values == np.floor(values)).all():
        values = values.astype(np.int64)
    return values.astype(str).astype(object)


def _features(frame, where: str) -> np.ndarray:
    """The ``features`` column of a result frame as a float matrix, one row per row of the frame."""
    values = list(frame["features"])
    try:
        X = np.stack([np.asarray(v, dtype=np.float64) for v in values])
    except (ValueError, TypeError):
        first = np.shape(values[0])
        for i, v in enumerate(values):
            if np.shape(v) != first:
                raise DataValidationError(f"{where}, row {i}: features of shape {np.shape(v)}, row 0's {first}: every "
                                          "row needs one vector of the same length") from None
        raise DataValidationError(f"{where}: the features column must hold numbers, one vector per row") from None
    if X.ndim != 2:
        raise DataValidationError(f"{where}: each row's features must be one vector, got shape {X.shape[1:]}")
    return X


def _pairs(frame, where: str) -> list:
    """The (query, text) pairs of a result frame, one per row, for a text reranker."""
    pairs = []
    for i, (query, text) in enumerate(zip(frame["query"], frame["text"])):
        for name, value in (("query", query), ("text", text)):
            if not isinstance(value, str):
                missing = value is None or (isinstance(value, float) and np.isnan(value))
                raise DataValidationError(f"{where}, row {i}: {name} is {'missing' if missing else repr(value)}, not "
                                          "text (a text reranker reads each row's query and text; "
                                          "pt.text.get_text adds the text)")
        pairs.append((query, text))
    return pairs


def _inputs_of(pt, context, frame, ranker, where: str):
    """What ``ranker`` scores of each row of ``frame``, checked to be there: its features, or (query, text) pairs
    (None for a frame without rows)."""
    text = model_inputs(ranker) == "text"
    pt.validate.result_frame(frame, extra_columns=["query", "text"] if text else ["features"], context=context)
    if len(frame) == 0:
        return None
    return _pairs(frame, where) if text else _features(frame, where)


def _labels(frame, qrels, where: str) -> np.ndarray:
    """Each row's label, joined from the qrels on (qid, docno) as pt.ltr does: 0 where they judge no such row."""
    import pandas as pd  # deferred: installed with pyterrier

    qid, docno, label = frame_columns(qrels, "qrels")
    judged = pd.DataFrame({"qid": _ids(qid), "docno": _ids(docno), "label": label.to_numpy()})
    if judged["label"].isna().any():
        raise DataValidationError(f"the qrels of {where}, row {int(np.flatnonzero(judged['label'].isna())[0])}: "
                                  "the label is missing")
    again = np.flatnonzero(judged.duplicated(["qid", "docno"]))
    if again.size:
        q, d = judged["qid"].iat[again[0]], judged["docno"].iat[again[0]]
        first = int(np.flatnonzero((judged["qid"] == q) & (judged["docno"] == d))[0])
        raise DataValidationError(f"the qrels of {where} judge document {d!r} of query {q} twice (rows {first} "
                                  f"and {again[0]})")
    keys = pd.DataFrame({"qid": _ids(frame["qid"]), "docno": _ids(frame["docno"])})
    joined = keys.merge(judged, on=["qid", "docno"], how="left")  # a left join keeps the rows' order
    if joined["label"].isna().all():
        raise DataValidationError(f"the qrels judge no row of {where} (query and document ids compare as strings: "
                                  "1 is not 001)")
    return joined["label"].fillna(0).to_numpy()


def _training_arrays(pt, context, frame, qrels, ranker, where: str):
    """(X, y, qid) of a result frame with its labels joined from the qrels; X is what ``ranker`` scores."""
    X = _inputs_of(pt, context, frame, ranker, where)
    if len(frame) == 0:
        raise DataValidationError(f"{where} have no row to fit on")
    return X, _labels(frame, qrels, where), _ids(frame["qid"])


class _Adapter:  # the body of StructrankTransformer, which __getattr__ builds on pt.Estimator
    """StructrankTransformer(ranker): a structrank ranker as a PyTerrier transformer that can be fitted.

    Parameters
    ----------
    ranker : structrank ranker
        Any ranker (``fit(X, y, qid=...)`` and ``predict(X)``) of feature vectors, which it reads from the
        ``features`` column, or of text (``CrossEncoderRanker``), from the ``query`` and ``text`` columns; the
        adapter fits it in place.

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> from structrank.learners import RankSVM
    >>> from structrank.pyterrier import StructrankTransformer, dataset_frames
    >>> results, qrels = dataset_frames(make_ranking_dataset(n_queries=12, random_state=0))
    >>> ranker = RankSVM()
    >>> reranked = StructrankTransformer(ranker).fit(results, qrels).transform(results)
    >>> list(reranked.columns)
    ['qid', 'docno', 'features', 'score', 'rank']
    >>> import numpy as np
    >>> bool((reranked.score.to_numpy() == ranker.predict(np.stack(results.features))).all())
    True
    """

    _requires_extra = "pyterrier"

    def __init__(self, ranker):
        self.ranker = ranker

    def fit(self, topics_or_res_tr, qrels_tr, topics_or_res_va=None, qrels_va=None):
        """Fit the ranker on a result frame with features, its labels joined from the qrels.

        Parameters
        ----------
        topics_or_res_tr : pandas.DataFrame
            The training results: qid, docno, features (one vector per row), or query and text for a text
            reranker.
        qrels_tr : pandas.DataFrame
            Their judgements: qid, docno, label (or ir_datasets' query_id, doc_id, relevance). An unjudged
            row has label 0.
        topics_or_res_va, qrels_va : pandas.DataFrame, optional
            Validation results and qrels, both or neither: the ranker's ``eval_set`` where it has one.

        Returns
        -------
        self
        """
        pt = _pyterrier()
        X, y, qid = _training_arrays(pt, self, topics_or_res_tr, qrels_tr, self.ranker, "the training results")
        options = {}
        if (topics_or_res_va is None) != (qrels_va is None):
            raise DataValidationError("fit takes validation results and validation qrels together: one was given "
                                      "without the other")
        if topics_or_res_va is not None:
            dev = _training_arrays(pt, self, topics_or_res_va, qrels_va, self.ranker, "the validation results")
            if "eval_set" in inspect.signature(self.ranker.fit).parameters:
                options["eval_set"] = dev
            else:
                warnings.warn(f"{type(self.ranker).__name__} takes no validation set: the validation results "
                              "were not used", UserWarning, stacklevel=2)
        self.ranker.fit(X, y, qid=qid, **options)
        return self

    def transform(self, inp):
        """``inp`` with ``score`` set to the ranker's score of each row's features and ``rank`` recomputed.

        Parameters
        ----------
        inp : pandas.DataFrame
            Results with qid, docno and features (a text reranker: query and text); the rows keep their order.

        Returns
        -------
        pandas.DataFrame
        """
        pt = _pyterrier()
        X = _inputs_of(pt, self, inp, self.ranker, "the results")
        out = inp.copy()
        out["score"] = np.zeros(0) if X is None else self.ranker.predict(X)
        return pt.model.add_ranks(out)

    def transform_outputs(self, inp_cols):
        """The columns ``transform`` gives for these input columns (``pt.inspect``)."""
        return list(inp_cols) + [c for c in ("score", "rank") if c not in inp_cols]

    def __repr__(self):
        return f"StructrankTransformer({self.ranker!r})"


def __getattr__(name):
    if name == "StructrankTransformer":
        # built once on PyTerrier's Estimator with _Adapter's members as its own (autodoc documents a class's
        # own), and kept here so that pickle finds it by name
        body = {key: value for key, value in vars(_Adapter).items() if key not in ("__dict__", "__weakref__")}
        cls = type(name, (_pyterrier().Estimator,), body)
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
