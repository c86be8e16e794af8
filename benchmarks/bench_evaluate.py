"""Benchmark: evaluating the ten LETOR test folds (MQ2008 + OHSUMED), structrank beside pytrec_eval and ranx.

Run: python benchmarks/bench_evaluate.py [--repeat N]   (or: structrank bench)
"""

import argparse

from structrank.bench import run_benchmarks

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    run_benchmarks(parser.parse_args().repeat, only="evaluate")
