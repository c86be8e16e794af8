"""Benchmark: permutation CRF training (Volkovs et al. 2011).

Run: python benchmarks/bench_crf.py [--repeat N] [--reproduction [--jobs 2]]
(or: structrank bench --only crf for the epoch times). It prints the time of one SGD epoch of
each objective on MQ2008 Fold1, single-threaded; with --reproduction it also runs the whole
`structrank reproduce volkovs2011` into a fresh temporary folder and prints its wall time
(target: under 20 minutes on 2 cores). The code is structrank_lab.bench.crf.
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

from structrank_lab.bench.crf import main  # noqa: E402

if __name__ == "__main__":
    main(doc=__doc__)
