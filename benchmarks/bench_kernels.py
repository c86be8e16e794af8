"""Benchmark: tree kernels and the Nyström landmark sweep (Croce et al. 2016).

Run: python benchmarks/bench_kernels.py [--trees N] [--reproduction [--jobs 2]]
(or: structrank bench --only kernels for the kernel figures). It prints SST and PTK
evaluations per second on SemEval-2016 shallow trees; with --reproduction it also runs the
whole `structrank reproduce croce2016` into a fresh temporary folder (kernel columns, the
landmark sweep, the full SVMs, MQ2008) and prints its wall time (target for the sweep: under
30 minutes on 2 cores). The code is structrank_lab.bench.kernels.
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

from structrank_lab.bench.kernels import main  # noqa: E402

if __name__ == "__main__":
    main(doc=__doc__)
