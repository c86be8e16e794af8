"""Benchmark: the greedy MAP inference of the positional map for N = 10 ... 1,000,000 candidates.

Run: python benchmarks/bench_latent.py (or: structrank bench --only latent).
"""

from structrank.bench_latent import bench_greedy, format_latent

if __name__ == "__main__":
    print("\n".join(format_latent(bench_greedy())))
