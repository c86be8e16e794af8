"""structrank's own error types.

Every problem with a user's input surfaces as one of these, with the file, the line and the
field named, never as a traceback from deep inside numpy or scipy.

The types:

- ``StructRankError``: the base of every error raised on purpose;
- ``DataFormatError(path, line, problem, field)``: a file that cannot be read as it stands,
  naming the file, the line and the field;
- ``DataValidationError``: arrays that do not fit together (lengths, groups, values);
- ``DegenerateDataWarning``: training data that leave nothing to learn (one relevance level,
  no feature that varies within a query), and predictions that all tie; ``FeatureScaleWarning``: a fit on a feature whose
  square overflows float64 (past 1e154) that ended with finite scores; ``ConventionWarning``: labels a metric convention
  does not credit.
"""

from __future__ import annotations


class StructRankError(Exception):
    """Base class of every error structrank raises on purpose.

    Examples
    --------
    >>> from structrank.metrics import evaluate
    >>> try:
    ...     evaluate([1, 0], [0.5], qid=[1, 1])
    ... except StructRankError as error:
    ...     print(f"{type(error).__name__}: {error}")
    DataValidationError: y, scores and qid must have the same length, got 2, 1, 2
    """


class DataFormatError(StructRankError, ValueError):
    """A data, scores or model file that cannot be read as it stands.

    Parameters
    ----------
    path : str or None
        The file the problem is in.
    line : int or None
        1-based line number of the problem, when it has one.
    problem : str
        What is wrong, in words a user can act on.
    field : str or None
        The field of the line the problem is in (``"label"``, ``"qid"``, ``"feature 7"`` ...).

    Examples
    --------
    >>> error = DataFormatError("train.txt", 3, "'x' is not a number", field="label")
    >>> print(error)
    train.txt, line 3, label: 'x' is not a number
    >>> isinstance(error, ValueError), error.line, error.field
    (True, 3, 'label')
    """

    def __init__(self, path, line, problem, field=None):
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        self.problem = problem
        where = self.path or "<input>"
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", {field}"
        super().__init__(f"{where}: {problem}")


class DataValidationError(StructRankError, ValueError):
    """Arrays handed to structrank that do not fit together (lengths, groups, values).

    Examples
    --------
    >>> import numpy as np
    >>> from structrank.data import RankingDataset
    >>> try:
    ...     RankingDataset(np.zeros((3, 2)), [0, 1], qid=[1, 1, 1])
    ... except DataValidationError as error:
    ...     print(error)
    y must have one entry per row of X (3), got shape (2,)
    """


class DegenerateDataWarning(UserWarning):
    """Training data a ranker can fit but not learn from (nothing varies that a ranking could follow).

    The fit finishes with finite weights, but they carry no information: every training label is
    the same, or no feature varies within any query.

    Examples
    --------
    >>> import warnings
    >>> from structrank.data import make_ranking_dataset
    >>> from structrank.learners import LinearRegressionRanker
    >>> ds = make_ranking_dataset(n_queries=5, random_state=0)
    >>> ds.y[:] = 0
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = LinearRegressionRanker().fit(ds)
    >>> print(caught[0].category.__name__, caught[0].message, sep=": ")
    DegenerateDataWarning: LinearRegressionRanker: every training label is 0: the model predicts that constant for every document and ranks nothing
    """


class FeatureScaleWarning(UserWarning):
    """A fit on a feature too large for float64's arithmetic that ended with finite scores.

    A value past 1e154 has a square past float64's largest number (about 1.8e308), so least squares,
    norms, Gram matrices and standardisation that touch it overflow or see nothing beside it. A fit
    whose model scores the rows holding such a value NaN or infinite is an error; one whose scores stay
    finite warns with this class, naming the feature (tree learners split on thresholds and do not).

    Examples
    --------
    >>> import warnings
    >>> from structrank.data import make_ranking_dataset
    >>> from structrank.learners import LinearRegressionRanker
    >>> ds = make_ranking_dataset(n_queries=5, random_state=0)
    >>> X = ds.X.copy(); X[1, 2] = 1e300
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = LinearRegressionRanker().fit(X, ds.y, qid=ds.qid)
    >>> print(caught[0].category.__name__, str(caught[0].message).split(": ")[1], sep=": ")
    FeatureScaleWarning: feature 3 of row 2 is 1e+300, past 1e+154, where squares overflow float64
    """


class ConventionWarning(UserWarning):
    """Labels a metric convention does not credit: under ``letor4`` (LETOR 4.0's eval script) a label
    above 2 has gain 0 and is not relevant, so graded data of another scale scores as if unjudged.

    Examples
    --------
    >>> import warnings
    >>> from structrank.metrics import evaluate
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     result = evaluate([3, 0], [1.0, 0.0], qid=[1, 1], metrics=["ndcg@2"], convention="letor4")
    >>> caught[0].category.__name__, result.metrics["ndcg@2"]
    ('ConventionWarning', 0.0)
    >>> evaluate([3, 0], [1.0, 0.0], qid=[1, 1], metrics=["ndcg@2"], convention="mslr").metrics["ndcg@2"]
    1.0
    """


__all__ = ["ConventionWarning", "DataFormatError", "DataValidationError", "DegenerateDataWarning", "FeatureScaleWarning",
           "StructRankError"]
