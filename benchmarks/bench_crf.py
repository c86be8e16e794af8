"""Benchmark: permutation CRF training (Volkovs et al. 2011).

Run: python benchmarks/bench_crf.py [--repeat N] [--reproduction [--jobs 2]]
(or: structrank bench --only crf for the epoch times). It prints the time of one SGD epoch of
each objective on MQ2008 Fold1, single-threaded; with --reproduction it also runs the whole
`structrank reproduce volkovs2011` into a fresh temporary folder and prints its wall time
(target: under 20 minutes on 2 cores).
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

from structrank.bench_crf import bench_epochs, format_crf  # noqa: E402
from structrank.bench import reproduction_parser, timed_reproduction  # noqa: E402

if __name__ == "__main__":
    parser = reproduction_parser(__doc__)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    print("\n".join(format_crf(bench_epochs(args.repeat))))
    if args.reproduction:
        rows, minutes = timed_reproduction("volkovs2011", args.jobs)
        runs = len({(r["dataset"], r["fold"], r["seed"], r["model"], str(r["params"])) for r in rows})
        print(f"\nstructrank reproduce volkovs2011 --jobs {args.jobs}: {runs} CRFs trained in {minutes:.1f} minutes "
              "of wall time (target: under 20)")
