"""Benchmark: permutation CRF training (Volkovs et al. 2011).

Run: python benchmarks/bench_crf.py [--repeat N] [--reproduction [--jobs 2]]
(or: structrank bench --only crf for the epoch times). It prints the time of one SGD epoch of
each objective on MQ2008 Fold1, single-threaded; with --reproduction it also runs the whole
`structrank reproduce volkovs2011` into a fresh temporary folder and prints its wall time
(target: under 20 minutes on 2 cores).
"""

import argparse
import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import tempfile  # noqa: E402
import time  # noqa: E402

from structrank.bench_crf import bench_epochs, format_crf  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--reproduction", action="store_true", help="also time the whole reproduction")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    print("\n".join(format_crf(bench_epochs(args.repeat))))
    if args.reproduction:
        from structrank.experiments.volkovs2011 import reproduce

        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            rows = reproduce(out, n_jobs=args.jobs)
            minutes = (time.perf_counter() - start) / 60
        runs = len({(r["dataset"], r["fold"], r["seed"], r["model"], str(r["params"])) for r in rows})
        print(f"\nstructrank reproduce volkovs2011 --jobs {args.jobs}: {runs} CRFs trained in {minutes:.1f} minutes "
              "of wall time (target: under 20)")
