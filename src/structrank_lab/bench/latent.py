"""Speed of the positional map's MAP inference (Haponchyk & Moschitti 2018, Sec. 4.2).

One call of the greedy bottom-up inference kernel on one query of N = 10 ... 1,000,000
candidates (seeded N(0, 1) scores, a ``rate`` of them good; buffers allocated once, as in
training), median of many calls after compilation, with the exact interleaving search beside it
where its (P + 1) x (N- + 1) table stays small, and numpy's argsort of the same scores for
reference. The greedy is a sort plus a linear pass, so it should cost about one sort: O(N log N). The table
prints time / (N log2 N), the ratio to the argsort, and the slope of log time against log N.
The exact search fills P x N- cells: quadratic in N at a fixed rate of good candidates.
"""

from __future__ import annotations

import numpy as np

from structrank_lab.bench.timing import timings
from structrank.oracles.positional import exact_kernel, greedy_kernel
from structrank.feature_maps import positional_weights

SIZES = (10, 100, 1_000, 10_000, 100_000, 1_000_000)
EXACT_MAX_CELLS = 5e7  # the exact search's table (cells; a float and a flag each, 9 bytes)


def bench_greedy(sizes=SIZES, rate=0.1, repeat=200, seed=0, exact_max_cells=EXACT_MAX_CELLS):
    """Rows (dicts) of milliseconds per inference call for each N."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        scores = rng.normal(size=n)
        z = (rng.random(n) < rate).astype(np.int8)
        z[0], z[-1] = 1, 0  # both classes, whatever the draw
        v, order = positional_weights(n), np.empty(n, dtype=np.int64)
        row = dict(n=int(n), n_good=int(z.sum()))
        for key, fn in (("greedy_ms", lambda: greedy_kernel(scores, z, v, 10.0, order)),
                        ("argsort_ms", lambda: np.argsort(scores))):
            row[key] = 1e3 * float(np.median(timings(fn, repeat)))
        if (z.sum() + 1) * (n - z.sum() + 1) <= exact_max_cells:
            row["exact_ms"] = 1e3 * float(np.median(timings(lambda: exact_kernel(scores, z, v, 10.0, order), repeat)))
        rows.append(row)
    return rows


def loglog_slope(rows, key="greedy_ms"):
    """Slope of log time against log N over the rows that have ``key``."""
    pts = [(r["n"], r[key]) for r in rows if key in r]
    x, t = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(x, t, 1)[0])


def format_latent(rows) -> list:
    lines = ["positional MAP inference (Haponchyk & Moschitti 2018): one call on one query, median, 10% good",
             f"  {'N':>9}  {'good':>7}  {'greedy ms':>10}  {'ns/(N log2 N)':>13}  {'/ argsort':>9}  {'exact ms':>10}"]
    for r in rows:
        per = 1e6 * r["greedy_ms"] / (r["n"] * np.log2(r["n"]))
        exact = f"{r['exact_ms']:10.3f}" if "exact_ms" in r else f"{'(skipped)':>10}"
        lines.append(f"  {r['n']:>9}  {r['n_good']:>7}  {r['greedy_ms']:10.4f}  {per:13.2f}  "
                     f"{r['greedy_ms'] / r['argsort_ms']:9.2f}  {exact}")
    big = [r for r in rows if r["n"] >= 1000]
    lines.append(f"  log-log slope for N >= 1000: greedy {loglog_slope(big):.2f}, numpy argsort "
                 f"{loglog_slope(big, 'argsort_ms'):.2f} (1 = linear; N log N a little above)")
    if sum("exact_ms" in r for r in big) >= 2:
        lines.append(f"  log-log slope of the exact search for N >= 1000: {loglog_slope(big, 'exact_ms'):.2f} "
                     "(2 = quadratic)")
    return lines


def markdown_section(rows) -> str:
    return "## Positional MAP inference (greedy and exact)\n\n```\n" + "\n".join(format_latent(rows)) + "\n```\n"
