"""Benchmark: structured learning - oracle calls, single-threaded SVM training, linear growth.

Run: python benchmarks/bench_structured.py [--oracle-repeat N] [--train-repeat N] [--factors 1,2,4,8]
(or: structrank bench --only structured). The measuring code is structrank_lab.bench.structured; this
script sets the thread variables before numpy and numba are imported, so it measures in this process.
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

from structrank_lab.bench.structured import main  # noqa: E402

if __name__ == "__main__":
    main()
