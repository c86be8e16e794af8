"""croce2016's numbers are pinned: a small slice of SemEval-2016 through the experiment's own runs.

The first 20 threads of train, dev and test (200 pairs each, ``prepare(max_threads=20)``), run by
the experiment's run function (``_run``) on its quick plan (``plan(quick=True)``): the kernel columns'
counts, the IR baseline, the linear SVM on the dense features, both full kernel SVMs, Nyström with
100 and 200 landmarks (seed 0) plus 100 landmarks drawn with seed 1, and on MQ2008 Fold1 SVM-map
and SVM-ndcg with and without the Nyström RBF embedding. Every value but the times (wall seconds
are not deterministic) and the per-question ones (the aggregates pin them) against
tests/pinned/croce2016.json (``check_pinned``'s tolerance); F1 in both setups (at threshold 0, and with
C and the threshold chosen by dev F1).
``STRUCTRANK_UPDATE_PINS=all`` rewrites the file when a change is meant to move them.
"""

from __future__ import annotations

import json

from test_pinned import check_pinned

THREADS = 20


def test_croce2016_semeval_slice_is_pinned(data_root, tmp_path):
    from structrank_lab.experiments import croce2016
    from structrank_lab.experiments.croce2016.data import prepare
    from structrank_lab.experiments.croce2016.design import DATASET, LETOR_SETS, NYSTROEM
    from structrank_lab.experiments.croce2016.plan import _run, plan
    from structrank_lab.experiments.runner import RunSpec, SpecRun, letor_roots

    folder, _ = prepare(tmp_path, data_root, n_jobs=1, progress=False, max_threads=THREADS)
    roots = letor_roots(LETOR_SETS, data_root)
    specs = plan(roots, quick=True)
    # another landmark draw than seed 0's leading columns
    specs.append(RunSpec(croce2016.EXPERIMENT, DATASET, "nystroem", "", 1, NYSTROEM,
                         {"landmarks": 100}))
    runner = SpecRun(_run, folder, roots)
    values = {}
    for spec in specs:
        name = "/".join([spec.dataset, spec.fold or "-", spec.model, json.dumps(spec.params, sort_keys=True),
                         f"seed {spec.seed}"])
        # each test question's values (q:<qid>:...) are checked against the pinned aggregates in test_croce2016
        values.update({f"{name}/{m.metric}": float(m.value) for m in runner(spec)
                       if m.convention != "time" and not m.metric.startswith("q:")})
    assert {m for m in values if m.endswith("/components")} and len(values) > 60
    check_pinned("croce2016", values)
