"""Boosted trees on the NDCG@10 hinge against LightGBM lambdarank: ``structrank bench --only trees``.

    python benchmarks/bench_trees.py [--rounds 5] [--trees 100]
"""

import argparse
import sys

from structrank.bench_trees import bench_trees, format_trees

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trees", type=int, default=100)
    args = parser.parse_args()
    print("\n".join(format_trees(bench_trees(args.rounds, args.trees))))
    sys.exit(0)
