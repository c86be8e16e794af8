"""Benchmark: tree kernels and the Nyström landmark sweep (Croce et al. 2016).

Run: python benchmarks/bench_kernels.py [--trees N] [--reproduction [--jobs 2]]
(or: structrank bench --only kernels for the kernel figures). It prints SST and PTK
evaluations per second on SemEval-2016 shallow trees; with --reproduction it also runs the
whole `structrank reproduce croce2016` into a fresh temporary folder (kernel columns, the
landmark sweep, the full SVMs, MQ2008) and prints its wall time (target for the sweep: under
30 minutes on 2 cores).
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

from structrank.bench_kernels import bench_tree_kernels, format_kernels  # noqa: E402
from structrank.bench import reproduction_parser, timed_reproduction  # noqa: E402

if __name__ == "__main__":
    parser = reproduction_parser(__doc__)
    parser.add_argument("--trees", type=int, default=200)
    args = parser.parse_args()
    print("\n".join(format_kernels(bench_tree_kernels(args.trees))))
    if args.reproduction:
        _, minutes = timed_reproduction("croce2016", args.jobs)
        print(f"\nstructrank reproduce croce2016 --jobs {args.jobs}: {minutes:.1f} minutes of wall time "
              "(kernel columns, landmark sweep, full SVMs and MQ2008; target for the sweep: under 30)")
