"""The structural learners' paths do not follow the BLAS kernel (issue 37).

OpenBLAS picks its kernels per processor, and their last bits differ; a cutting-plane or CCCP path
that a last bit steers would then differ between machines. The products of the cutting plane, its
QP and the perceptrons are loops in a fixed order (structrank.parallel.rows, learners.qp), so a fit
under another kernel (``OPENBLAS_CORETYPE``) and thread count has the same bits.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from structrank.learners.qp import symmetric_eigen
from structrank.parallel.rows import dot

#: (estimator, parameters) whose fitted weights must not depend on the BLAS kernel
FITS = {"svm-map": ("StructSVMRanker", {"loss": "map", "C": 10.0}),
        "svm-mrr-latent": ("StructSVMRanker", {"loss": "mrr", "target": "latent", "C": 1.0}),
        "svm-combo": ("StructSVMRanker", {"loss": "combo", "C": 1.0}),
        "lssvm-ap": ("LatentSSVMRanker", {"C": 10.0}),
        "lsp-ap": ("LatentPerceptronRanker", {"C": 10.0, "max_epochs": 3, "random_state": 0}),
        "lsp-ndcg": ("LatentPerceptronRanker", {"loss": "ndcg", "C": 1.0, "max_epochs": 3, "random_state": 0})}

FIT = """
import json, sys
import numpy as np
import structrank.learners as learners
from structrank.data import make_ranking_dataset
ds = make_ranking_dataset(n_queries=30, docs_per_query=12, n_features=8, n_levels=3, random_state=5)
out = {}
for name, (cls, params) in json.loads(sys.argv[1]).items():
    out[name] = getattr(learners, cls)(**params).fit(ds).coef_.tobytes().hex()
print(json.dumps(out))
"""


def _fit_in_process(env):
    run = subprocess.run([sys.executable, "-c", FIT, json.dumps(FITS)], env={**os.environ, **env},
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="OPENBLAS_CORETYPE names x86-64 kernels")
def test_structural_fits_have_the_same_bits_under_another_blas_kernel_and_thread_count():
    one = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    default = _fit_in_process({})
    other = _fit_in_process({"OPENBLAS_CORETYPE": "Sandybridge", **one})
    assert len(set(default.values())) == len(FITS)  # six different models, none degenerate
    assert {n for n in FITS if default[n] != other[n]} == set()


def test_symmetric_eigen_decomposes_kkt_matrices_as_lapack_does():
    rng = np.random.default_rng(0)
    for k, rank in ((1, 1), (5, 5), (12, 3), (30, 8)):
        G = rng.normal(size=(k, rank))
        K = np.zeros((k + 1, k + 1))  # the active set's [H A'; A 0], H = G G' of rank `rank`
        K[:k, :k] = G @ G.T
        K[:k, k] = K[k, :k] = 1.0
        values, V = symmetric_eigen(K)
        scale = np.abs(K).max()
        np.testing.assert_allclose(np.sort(values), np.linalg.eigvalsh(K), atol=1e-12 * scale)
        np.testing.assert_allclose(V.T @ V, np.eye(k + 1), atol=1e-12)
        np.testing.assert_allclose(V @ np.diag(values) @ V.T, K, atol=1e-12 * scale)
        again = symmetric_eigen(K.copy())
        assert values.tobytes() == again[0].tobytes() and V.tobytes() == again[1].tobytes()


def test_dot_sums_left_to_right():
    a = np.array([1e16, 1.0, -1e16, 1.0])
    assert dot(a, np.ones(4)) == ((1e16 + 1.0) - 1e16) + 1.0
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=100), rng.normal(size=100)
    assert abs(dot(x, y) - x @ y) <= 1e-12 * np.abs(x * y).sum()
