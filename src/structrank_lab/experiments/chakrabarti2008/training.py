"""Each training query's slack at termination: the units of Figs. 4-5's claims.

Fig. 4 plots the average slack ``(1/|Q|) sum_q xi_q`` of problem (1) and Fig. 5 ``obj / obj(w = 0)`` with
``obj = 1/2 |w|^2 + C/|Q| sum_q xi_q``; both are means over the training queries, so the queries are the units
over which two criteria's training behaviour is compared, paired (the same queries under every criterion).
At the optimum ``xi_q`` is the query's hinge ``max_y [Delta(y*, y) + w . (phi(y) - phi(y*))]``, which the loss's
oracle gives at the fitted w (with the target imputed at w for a latent loss, as CCCP's objective does).
"""

from __future__ import annotations

import numpy as np

from structrank.data.filters import queries_with_both
from structrank.data.dataset import rows_of_queries
from structrank.losses.base import hinge_values
from structrank.losses.latent import ImputedTarget
from structrank.parallel.rows import matvec


def query_slacks(model, data, w=None) -> tuple[np.ndarray, np.ndarray]:
    """(query ids, slacks): the hinge of each training query a structural SVM learns from, at its weights.

    Parameters
    ----------
    model : StructSVMRanker
        Fitted, with one loss (not SVM-combo's separate slacks); the target it trained (``fitted_target()``)
        decides the hinge.
    data : RankingDataset
        The training data it was fitted on.
    w : ndarray, optional
        Weights other than the model's (zeros: each query's slack at w = 0, the denominator of Fig. 5).

    Returns
    -------
    qids, slacks : ndarray
        The queries with a good and a bad document (the only ones a structural SVM counts), in the data's
        order, and their slacks; the slacks' mean is the model's ``slack_``.
    """
    loss = model.loss_
    w = model.coef_ if w is None else np.asarray(w, dtype=np.float64)
    keep = queries_with_both(data.y, data.offsets, loss.relevant_from)
    rows = rows_of_queries(data.offsets, keep)
    y = np.asarray(data.y)[rows]
    offsets = np.concatenate([[0], np.cumsum(np.diff(data.offsets)[keep])]).astype(np.int64)
    scores = np.ascontiguousarray(matvec(data.X, w)[rows])
    if model.fitted_target() == "latent":
        target = ImputedTarget.impute(loss, w, scores, y, offsets)
        star = target.star(scores, y, offsets)
    else:  # the cutting plane's y*: fixed at w = 0 unless the loss re-imputes it (star_varies)
        target = loss
        star = loss.star(scores if loss.star_varies else np.zeros_like(scores), y, offsets)
    c_hat, delta = target.batch(scores, y, offsets)
    return np.asarray(data.qid)[np.asarray(data.offsets)[keep]], hinge_values(delta, scores, c_hat - star, offsets)
