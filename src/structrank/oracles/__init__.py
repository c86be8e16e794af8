"""Loss-augmented inference oracles: pure numba kernels over flat arrays, nothing else.

Each kernel solves, for one query's scores and relevance, ``max over rankings of s . c(r) + Delta(r)``
and writes the maximiser's feature-map coefficients and its ranking into the caller's arrays; a
``*_batch`` kernel runs one over every query (``offsets`` bound them). The modules: ``po``
(phi_po: AUC, MAP, NDCG@k, NDCG-nc, MRR@k), ``graded`` (NDCG@k with graded gains), ``mrr``
(phi_mrr), ``dorm`` (phi_dorm), ``positional`` (MAP with the positional map), ``latent`` (the
latent targets of the clipped losses) and ``crf`` (the permutation CRF's objectives).

The oracles know no loss object, learner or metric (tests/library/test_layers.py): each loss of
``structrank.losses`` is one class holding its kernels, its target and its metric, built by
``structrank.losses.get_loss``.

>>> import numpy as np
>>> from structrank.oracles.po import map_batch
>>> coef, order = np.empty(3), np.empty(3, dtype=np.int64)
>>> delta = map_batch(np.array([2.0, 1.0, 0.0]), np.array([0, 1, 1], dtype=np.int8), np.array([0, 3]), coef, order)
>>> order.tolist(), round(float(delta[0]), 4)
([0, 1, 2], 0.4167)

"""

__all__: list = []
