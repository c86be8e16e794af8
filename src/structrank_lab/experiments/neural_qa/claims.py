"""neural-qa's targets judged from neural-qa's runs, and haponchyk2018's claims about LSP-AP and the
pointwise SVM asked again of a fine-tuned encoder (its ``neural_claims``, fed with this experiment's readings).

The WikiQA MAP target, "the best structured loss at least the best of sentence-transformers' losses minus a point",
"the MAP hinge within a point of the best loss" and "each structured loss at least BCE" are judged by
``verdict_rules.not_below`` over the test questions, each question's value the mean over the seeds (the first
against the target as a constant; every "best" chosen on dev); the run-time target is a check (a budget).
"""

from __future__ import annotations

import numpy as np

from structrank_lab.experiments.claims import CHECK, UNTESTABLE, Claim, check, judged_claim, not_run
from structrank_lab.experiments.haponchyk2018.claims import neural_claims
from structrank_lab.experiments.neural_qa.design import (BCE, DATASETS, EXPERIMENT, FINE_TUNED, FIRST, MAP_HINGE,
                                                     MARGIN_POINTS, MAX_RUN_SECONDS, METRICS, PEERS, STRUCTURED,
                                                     TARGET_CORES, TARGET_MAP, TRANSFER_FROM, TRANSFER_TO,
                                                     TRANSFERRED_PEERS, TRANSFERRED_STRUCTURED)
from structrank_lab.experiments.neural_qa.projection import project, sentence
from structrank_lab.experiments.neural_qa.recorded import best_on_dev, by_seed, means, seed_count, timed_runs, verdict
from structrank_lab.experiments.report import per_query
from structrank_lab.experiments.verdict_rules import MARGIN, not_below
from structrank_lab.experiments.verdict_sets import all_of, constant
from structrank_lab.experiments.verdicts import INCONCLUSIVE
from structrank.metrics.significance import per_query_pairs

SOURCE = "neural-qa"


def _pts(x: float) -> str:
    return f"{100 * x:+.2f}"


def _seeds(n: int) -> str:
    return f"{n} seed{'s' * (n != 1)}"


def paired_text(row, baseline) -> str:
    """One paired comparison in words: both means, the difference with its interval, the tests, the verdict."""
    return (f"{row.system} {row.mean:.4f} against {baseline} {row.baseline_mean:.4f}: {_pts(row.difference)} points "
            f"(95% CI {_pts(row.ci_low)} to {_pts(row.ci_high)}; t-test p {row.t_p_holm:.3g}, randomisation p "
            f"{row.rand_p_holm:.3g}, Holm; {verdict(row, baseline)})")


def _questions(rows, dataset, row, metric="map") -> dict:
    """{question: the row's value, the mean over its seeds} on ``dataset``'s test questions."""
    return per_query(rows, dataset, row, metric)


def _projected(judged, rows, dataset, row, other, margin, target=None) -> str:
    """When ``judged`` is inconclusive, what more seeds per row could settle (``projection``: a hypothesis), over the
    test questions every seed of ``row`` and of ``other`` (None: the constant ``target``) was measured on."""
    if judged.verdict != INCONCLUSIVE:
        return ""
    runs = [by_seed(rows, dataset, name) for name in ((row,) if other is None else (row, other))]
    common = sorted(set.intersection(*(set(seed) for found in runs for seed in found.values())))
    matrices = [np.array([[found[seed][q] for q in common] for seed in sorted(found)]) for found in runs]
    against = f"{target:.2f}" if other is None else f"-{100 * margin:g} point"
    return sentence(project(matrices[0], None if other is None else matrices[1], margin, target), against)


def map_target(rows, group=STRUCTURED, peers=PEERS, first="") -> Claim:
    """The best of ``group`` on dev against ``TARGET_MAP`` on WikiQA's test questions; ``first``: the words naming a
    transfer step (the transfer rows' claim)."""
    where = "WikiQA test"
    wording = f"The best structured loss{first} reaches a WikiQA test MAP of at least {TARGET_MAP:.2f}"
    evidence = "neural-qa's target"
    found = means(rows, "wikiqa", "test:map")
    best = best_on_dev(rows, "wikiqa", group)
    if best is None:
        return not_run(SOURCE, where, wording, evidence, "the structured losses' WikiQA runs with their test questions")
    present = [row for row in group if row in found]
    values = np.array(list(_questions(rows, "wikiqa", best).values()))
    judged = not_below(values, constant(TARGET_MAP, values.size), margin=0.0, units="questions")
    ours = f"best on dev: {best} {found[best]:.4f}; " + ", ".join(
        f"{row} {found[row]:.4f} ({_seeds(seed_count(rows, 'wikiqa', row))})" for row in present)
    others = [f"{row} {found[row]:.4f}" for row in peers if row in found]
    return judged_claim(SOURCE, where, wording, evidence, ours, judged,
                        f"The structured loss with the best dev MAP, its test questions' MAP (trec_eval's rules, each "
                        f"the mean over the seeds run) against {TARGET_MAP:.2f}: holds when the whole interval lies at "
                        f"or above it, does not hold when the whole interval lies below it"
                        + (f"; beside them {', '.join(others)}" if others else "")
                        + " (what was tried on dev to raise CRF-KL, the KL target's temperature, its learning rate and "
                        "questions per step: docs/XENC_CRF_KL_DEV.md)."
                        + _projected(judged, rows, "wikiqa", best, None, 0.0, TARGET_MAP))


def at_least(rows, dataset, baseline) -> Claim:
    """Every structured loss at least ``baseline`` on test MAP (``verdict_rules.not_below`` over test questions)."""
    title, convention, _ = DATASETS[dataset]
    where = f"{title} test"
    wording = f"Each structured loss ranks {title}'s test questions at least as well as {baseline} (MAP)"
    evidence = "neural-qa's target"
    reference = _questions(rows, dataset, baseline)
    parts, texts = [], []
    for system in STRUCTURED:
        questions, a, b = per_query_pairs(_questions(rows, dataset, system), reference)
        if len(questions) >= 2:
            parts.append((f"{system} − {baseline}", not_below(a, b, units="questions")))
            texts.append(f"{system} {a.mean():.4f} against {baseline} {b.mean():.4f}")
    if len(parts) < len(STRUCTURED):
        return not_run(SOURCE, where, wording, evidence, f"the structured losses' and {baseline}'s {title} runs")
    return judged_claim(SOURCE, where, wording, evidence, "; ".join(texts), all_of(parts),
                        f"Paired over the test questions both were measured on, each question's {convention} MAP the "
                        f"mean over the seeds: holds when every structured loss's interval lies above -{100 * MARGIN:g} "
                        f"point (at least {baseline}, give or take the page's margin), does not hold when one lies "
                        "wholly below it.")


def best_against_best(rows, dataset, group=STRUCTURED, peers=PEERS, first="") -> Claim:
    """The best structured loss (on dev) at least the best of sentence-transformers' losses (on dev), give or take
    ``MARGIN_POINTS``: paired over the test questions, the interval's lower end above -MARGIN_POINTS. ``group`` and
    ``peers``: the two sides' rows; ``first``: the words naming a transfer step both sides took."""
    title, convention, _ = DATASETS[dataset]
    where = f"{title} test"
    wording = (f"The best structured loss{first} ranks {title}'s test questions at least as well as the best of "
               f"sentence-transformers' own losses{first}, minus {MARGIN_POINTS:g} point (MAP)")
    ours, theirs = best_on_dev(rows, dataset, group), best_on_dev(rows, dataset, peers)
    if ours is None or theirs is None:
        return not_run(SOURCE, where, wording, "neural-qa's target", f"the structured and the peer losses' {title} runs")
    questions, a, b = per_query_pairs(_questions(rows, dataset, ours), _questions(rows, dataset, theirs))
    judged = not_below(a, b, margin=MARGIN_POINTS / 100, units="questions")
    text = (f"best on dev: {ours} {a.mean():.4f} ({_seeds(seed_count(rows, dataset, ours))}) against {theirs} "
            f"{b.mean():.4f} ({_seeds(seed_count(rows, dataset, theirs))})")
    return judged_claim(SOURCE, where, wording, "neural-qa's target", text, judged,
                        f"Each side the row with the best mean dev MAP of its group; paired over the test questions "
                        f"both were measured on, each question's {convention} MAP the mean over the seeds: holds when "
                        f"the whole interval lies above -{MARGIN_POINTS:g} point, does not hold when it lies wholly "
                        "below." + _projected(judged, rows, dataset, ours, theirs, MARGIN_POINTS / 100))


def map_hinge_near_best(rows, dataset="wikiqa") -> Claim:
    """The MAP hinge within ``MARGIN_POINTS`` of the best fine-tuned row (on dev) on ``dataset``'s test questions."""
    title, convention, _ = DATASETS[dataset]
    where = f"{title} test"
    wording = f"The {MAP_HINGE} ranks {title}'s test questions within {MARGIN_POINTS:g} point of the best loss (MAP)"
    best = best_on_dev(rows, dataset, FINE_TUNED)
    if best is None or MAP_HINGE not in means(rows, dataset, "test:map"):
        return not_run(SOURCE, where, wording, "neural-qa's target", f"the {MAP_HINGE}'s and the other {title} runs")
    if best == MAP_HINGE:
        best = best_on_dev(rows, dataset, [row for row in FINE_TUNED if row != MAP_HINGE])
    questions, a, b = per_query_pairs(_questions(rows, dataset, MAP_HINGE), _questions(rows, dataset, best))
    judged = not_below(a, b, margin=MARGIN_POINTS / 100, units="questions")
    return judged_claim(SOURCE, where, wording, "neural-qa's target",
                        f"{MAP_HINGE} {a.mean():.4f} against the best other loss on dev, {best} {b.mean():.4f}",
                        judged, f"Paired over the test questions, each question's {convention} MAP the mean over the "
                        f"seeds: holds when the whole interval lies above -{MARGIN_POINTS:g} point, does not hold when "
                        "it lies wholly below (what was tried on dev to bring the hinge closer, its learning rate, "
                        "questions per step, a small smoothing and a pairwise term beside it: docs/XENC_MAP_DEV.md)."
                        + _projected(judged, rows, dataset, MAP_HINGE, best, MARGIN_POINTS / 100))


def _threads(n) -> str:
    return "threads not recorded" if n is None else f"{n} thread{'s' * (n != 1)}"


def _seconds(run) -> float:
    return run.seconds


def _answer(timed) -> tuple:
    """What the runs of one structured loss on one data set say of the budget on the target's cores: ("over" or
    "within", the run that says it), or (None, the longest run) when none of them answers."""
    on_target = [t for t in timed if t.threads == TARGET_CORES]
    if on_target:
        longest = max(on_target, key=_seconds)
        return ("over" if longest.seconds > MAX_RUN_SECONDS else "within"), longest
    # a run on fewer threads (the grid runs several at a time, one thread each) answers for the target's cores only
    # within the budget: over it, it was measured under a harder condition than the target's
    fewer = [t for t in timed if t.threads is not None and t.threads < TARGET_CORES and t.seconds <= MAX_RUN_SECONDS]
    return ("within", max(fewer, key=_seconds)) if fewer else (None, max(timed, key=_seconds))


def run_time_target(rows) -> Claim:
    where, wording = "every data set", (f"One fine-tuning run of structrank's cross-encoder takes at most "
                                        f"{MAX_RUN_SECONDS / 60:g} minutes of wall time on {TARGET_CORES} cores")
    evidence = "neural-qa's target"
    # the target is a structured loss's run; the peers' runs are in the run-time table
    every = timed_runs(rows, STRUCTURED)
    if not every:
        return _as_check(not_run(SOURCE, where, wording, evidence, "the fine-tuning runs"))
    longest = max(every, key=_seconds)
    per_dataset = []
    for name in DATASETS:
        found = [run for run in every if run.dataset == name]
        if found:
            top = max(found, key=_seconds)
            per_dataset.append(f"{DATASETS[name][0]} {top.seconds / 60:.1f} min ({top.row}, {_threads(top.threads)})")
    ours = (f"longest: {longest.seconds / 60:.1f} min ({DATASETS[longest.dataset][0]}, {longest.row}, seed "
            f"{longest.seed}, {_threads(longest.threads)}); longest per data set: " + ", ".join(per_dataset))
    on_target = [run for run in every if run.threads == TARGET_CORES]
    if on_target:
        top = max(on_target, key=_seconds)
        ours += (f"; on {TARGET_CORES} threads, {len(on_target)} run{'s' * (len(on_target) != 1)}, longest "
                 f"{top.seconds / 60:.1f} min ({DATASETS[top.dataset][0]}, {top.row}, seed {top.seed})")
    used_all = sorted({run.threads for run in every if run.threads is not None})
    why = (f"A setup check (a budget, not a comparison). Wall time of the whole run: reading, the fine-tuning with its "
           f"dev evaluation after each epoch, and the test prediction; torch's threads: {', '.join(map(str, used_all))}. "
           f"The structured losses' runs count ({', '.join(STRUCTURED)}); the peers' are in the run-time table. Each "
           f"structured loss on each data set is answered by its runs on {TARGET_CORES} threads (the longest), else by "
           f"a run on fewer threads within the budget (a harder condition met); runs on more threads, and runs on "
           f"fewer over the budget, do not answer.")
    by_loss: dict = {}
    for run in every:
        by_loss.setdefault((run.dataset, run.row), []).append(run)
    answers = [_answer(timed) for timed in by_loss.values()]
    over = [f"{DATASETS[run.dataset][0]} {run.row} ({run.seconds / 60:.1f} min, seed {run.seed})"
            for said, run in answers if said == "over"]
    if over:
        return check(SOURCE, where, wording, evidence, ours, False,
                     why + f" Over the budget on {TARGET_CORES} threads: " + "; ".join(over) + ".")
    unanswered = [f"{DATASETS[run.dataset][0]} {run.row} (its longest run {run.seconds / 60:.1f} min on "
                  f"{_threads(run.threads)})" for said, run in answers if said is None]
    if unanswered:
        return Claim(SOURCE, where, wording, evidence, ours, UNTESTABLE,
                     why + f" Not answered for {TARGET_CORES} cores: " + "; ".join(unanswered) + ".", kind=CHECK)
    return check(SOURCE, where, wording, evidence, ours, True, why)


def _as_check(claim: Claim) -> Claim:
    return Claim(claim.paper, claim.where, claim.claim, claim.paper_evidence, claim.ours, claim.verdict, claim.why,
                 kind=CHECK)


def targets(rows) -> list:
    """The targets: the WikiQA MAP; on WikiQA and TREC QA the best structured loss against the best peer; both again
    on WikiQA with the transfer step (the transfer rows against each other); the MAP hinge near the best loss on
    WikiQA; the structured losses at least BCE on every data set; the run time."""
    out = [map_target(rows)]
    out += [best_against_best(rows, dataset) for dataset in FIRST]
    first = f" with {DATASETS[TRANSFER_FROM][0]} first"
    out += [map_target(rows, TRANSFERRED_STRUCTURED, TRANSFERRED_PEERS, first),
            best_against_best(rows, TRANSFER_TO, TRANSFERRED_STRUCTURED, TRANSFERRED_PEERS, first)]
    out.append(map_hinge_near_best(rows))
    out += [at_least(rows, dataset, BCE) for dataset in DATASETS]
    return out + [run_time_target(rows)]


def readings(rows) -> dict:
    """What haponchyk2018's neural claims read: per data set, each fine-tuned row's test means and the seeds run,
    and every row's test questions' values by metric ("questions": {metric: {row: {question: value}}})."""
    out = {}
    for dataset in ("wikiqa", "trec13"):
        by_metric = {metric: means(rows, dataset, f"test:{metric}") for metric in METRICS}
        rows_present = [row for row in FINE_TUNED if row in by_metric["map"]]
        out[dataset] = {"means": {row: {m: by_metric[m][row] for m in METRICS if row in by_metric[m]}
                                  for row in rows_present},
                        "seeds": {row: seed_count(rows, dataset, row) for row in rows_present},
                        # each test question's value (the mean over the seeds), for paired tests by verdict_rules
                        "questions": {metric: {row: _questions(rows, dataset, row, metric) for row in rows_present}
                                      for metric in METRICS}}
    return out


def claims(rows) -> list:
    """The targets, then haponchyk2018's claims with a fine-tuned encoder (the "Claims" section)."""
    return targets(rows) + neural_claims(readings(rows), MAP_HINGE, BCE, EXPERIMENT)
