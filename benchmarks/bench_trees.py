"""Boosted trees on the NDCG@10 hinge against LightGBM lambdarank: ``structrank bench --only trees``
with other rounds or trees (the code is structrank_lab.bench.trees).

    python benchmarks/bench_trees.py [--rounds 5] [--trees 100]
"""

from structrank_lab.bench.trees import main

if __name__ == "__main__":
    main()
