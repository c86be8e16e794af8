"""The targets of issue 40 judged from neural-qa's runs, and haponchyk2018's claims about LSP-AP and the pointwise
SVM asked again of a fine-tuned encoder (its ``neural_claims``, fed with this experiment's readings)."""

from __future__ import annotations

from structrank.experiments.claims import UNTESTABLE, Claim, not_run, verdict_of
from structrank.experiments.haponchyk2018.claims import neural_claims
from structrank.experiments.neural_qa.design import (ALPHA, BCE, DATASETS, EXPERIMENT, FINE_TUNED, MAP_HINGE,
                                                     MAX_RUN_SECONDS, METRICS, ST, STRUCTURED, TARGET_CORES, TARGET_MAP)
from structrank.experiments.neural_qa.recorded import (longest_run, means, paired, seed_count, threads, verdict,
                                                       wall_seconds)

SOURCE = "neural-qa (issue 40)"


def _pts(x: float) -> str:
    return f"{100 * x:+.2f}"


def _seeds(n: int) -> str:
    return f"{n} seed{'s' * (n != 1)}"


def paired_text(row, baseline) -> str:
    """One paired comparison in words: both means, the difference with its interval, the tests, the verdict."""
    return (f"{row.system} {row.mean:.4f} against {baseline} {row.baseline_mean:.4f}: {_pts(row.difference)} points "
            f"(95% CI {_pts(row.ci_low)} to {_pts(row.ci_high)}; t-test p {row.t_p_holm:.3g}, randomisation p "
            f"{row.rand_p_holm:.3g}, Holm; {verdict(row, baseline)})")


def map_target(rows) -> Claim:
    where, wording = "WikiQA test", f"The best structured loss reaches a WikiQA test MAP of at least {TARGET_MAP:.2f}"
    evidence = "issue 40's target"
    found = means(rows, "wikiqa", "test:map")
    present = [row for row in STRUCTURED if row in found]
    if not present:
        return not_run(SOURCE, where, wording, evidence, "the structured losses' WikiQA runs")
    best = max(present, key=found.get)
    ours = f"best: {best} {found[best]:.4f}; " + ", ".join(
        f"{row} {found[row]:.4f} ({_seeds(seed_count(rows, 'wikiqa', row))})" for row in present)
    others = [f"{row} {found[row]:.4f}" for row in (BCE, ST) if row in found]
    return Claim(SOURCE, where, wording, evidence, ours, verdict_of(found[best] >= TARGET_MAP),
                 "Test MAP under trec_eval's rules, the mean over the seeds run"
                 + (f"; beside them {', '.join(others)}." if others else "."))


def at_least(rows, dataset, baseline) -> Claim:
    """Every structured loss at least ``baseline`` on test MAP, the paired test over test questions beside."""
    title, convention, _ = DATASETS[dataset]
    where = f"{title} test"
    wording = f"Each structured loss ranks {title}'s test questions at least as well as {baseline} (MAP)"
    evidence = "issue 40's target" if baseline == BCE else "issue 40: against the tool a user would otherwise pick"
    found = paired(rows, dataset, baseline)
    if not found:
        return not_run(SOURCE, where, wording, evidence, f"the structured losses' and {baseline}'s {title} runs")
    below = [r.system for r in found if r.difference < 0]
    better = [r.system for r in found if verdict(r, baseline) == f"{r.system} better"]
    worse = [r.system for r in found if verdict(r, baseline) == f"{baseline} better"]
    why = (f"Holds when every structured loss's mean paired difference is at least 0. Paired over the "
           f"{found[0].queries} test questions both were measured on, each question's {convention} MAP the mean over "
           f"the seeds; t-test and randomisation test, Holm-adjusted across the {len(found)} losses, at {ALPHA:g}. "
           f"Significantly better than {baseline}: {', '.join(better) or 'none'}; significantly worse: "
           f"{', '.join(worse) or 'none'}." + (f" Below {baseline}: {', '.join(below)}." if below else ""))
    return Claim(SOURCE, where, wording, evidence, "; ".join(paired_text(r, baseline) for r in found),
                 verdict_of(not below), why)


def run_time_target(rows) -> Claim:
    where, wording = "every data set", (f"One fine-tuning run takes at most {MAX_RUN_SECONDS / 60:g} minutes of wall "
                                        f"time on {TARGET_CORES} cores")
    evidence = "issue 40's target"
    longest = longest_run(rows)
    if longest is None:
        return not_run(SOURCE, where, wording, evidence, "the fine-tuning runs")
    seconds, dataset, row, seed = longest
    walls = wall_seconds(rows)
    per_dataset = []
    for name in DATASETS:
        found = [(max(v), r) for (d, r), v in walls.items() if d == name]
        if found:
            top, top_row = max(found)
            per_dataset.append(f"{DATASETS[name][0]} {top / 60:.1f} min ({top_row})")
    ours = (f"longest: {seconds / 60:.1f} min ({DATASETS[dataset][0]}, {row}, seed {seed}); longest per data set: "
            + ", ".join(per_dataset))
    used = threads(rows)
    why = (f"Wall time of the whole run: reading, the fine-tuning with its dev evaluation after each epoch, and the "
           f"test prediction; torch's threads: {', '.join(map(str, used))}.")
    if used != [TARGET_CORES]:
        return Claim(SOURCE, where, wording, evidence, ours, UNTESTABLE,
                     why + f" The runs did not run on {TARGET_CORES} threads, so they do not answer for {TARGET_CORES} "
                     "cores.")
    return Claim(SOURCE, where, wording, evidence, ours, verdict_of(seconds <= MAX_RUN_SECONDS), why)


def targets(rows) -> list:
    """Issue 40's targets: the WikiQA MAP, the structured losses at least BCE (and ST's CrossEncoder) on every data
    set, the run time."""
    out = [map_target(rows)]
    for dataset in DATASETS:
        out += [at_least(rows, dataset, baseline) for baseline in (BCE, ST)]
    return out + [run_time_target(rows)]


def readings(rows) -> dict:
    """What haponchyk2018's neural claims read: per data set, each fine-tuned row's test means and the seeds run, and
    the MAP hinge against BCE paired over the test questions."""
    out = {}
    for dataset in ("wikiqa", "trec13"):
        by_metric = {metric: means(rows, dataset, f"test:{metric}") for metric in METRICS}
        rows_present = [row for row in FINE_TUNED if row in by_metric["map"]]
        found = paired(rows, dataset, BCE, (MAP_HINGE,))
        out[dataset] = {"means": {row: {m: by_metric[m][row] for m in METRICS if row in by_metric[m]}
                                  for row in rows_present},
                        "seeds": {row: seed_count(rows, dataset, row) for row in rows_present},
                        "paired": found[0] if found else None}
    return out


def claims(rows) -> list:
    """Issue 40's targets, then haponchyk2018's claims with a fine-tuned encoder (the "Claims" section)."""
    return targets(rows) + neural_claims(readings(rows), MAP_HINGE, BCE, EXPERIMENT, alpha=ALPHA)
