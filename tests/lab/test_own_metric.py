"""`structrank reproduce own-metric`'s report: the paired comparison and the note on the chosen fits."""

from structrank_lab.experiments import own_metric


def _rows(ndcg_shift, slack):
    rows = []
    for model, shift, model_slack in (("SVM-auc", 0.0, 0.8), ("SVM-ndcg", ndcg_shift, slack)):
        for q in range(30):
            value = 0.3 + 0.01 * (q % 7) + shift
            rows.append({"dataset": "OHSUMED", "model": model, "fold": "Fold1", "metric": f"q:{q}:ndcg@10",
                         "value": value})
        rows += [{"dataset": "OHSUMED", "model": model, "fold": f, "metric": "train:slack", "value": model_slack}
                 for f in ("Fold1", "Fold2")]
        rows += [{"dataset": "OHSUMED", "model": model, "fold": f, "metric": "train:w_norm2", "value": 2.0}
                 for f in ("Fold1", "Fold2")]
    return rows


def test_a_miss_is_explained_by_the_recorded_fit_and_a_win_is_not():
    missed = own_metric.comparison_table(_rows(-0.05, 1.0001), "OHSUMED")
    assert "SVM-ndcg on ndcg@10: -5.00 points against SVM-auc (misses the one-point bar" in missed
    assert "average training slack is 1.0001 with |w|^2 2 (SVM-auc: 0.8000, |w|^2 2)" in missed
    assert "close to its value at w = 0" in missed
    learning = own_metric.comparison_table(_rows(-0.05, 0.7), "OHSUMED")
    assert "average training slack is 0.7000" in learning and "close to its value at w = 0" not in learning
    met = own_metric.comparison_table(_rows(0.0, 1.0001), "OHSUMED")
    assert "meets the one-point bar" in met and "training slack" not in met


def test_fit_means_average_the_folds_and_are_empty_without_records():
    rows = _rows(0.0, 0.9)
    rows.append({"dataset": "OHSUMED", "model": "SVM-ndcg", "fold": "Fold3", "metric": "train:slack", "value": 0.6})
    assert own_metric.fit_means(rows, "OHSUMED", "SVM-ndcg")["slack"] == (0.9 + 0.9 + 0.6) / 3
    assert own_metric.fit_means(rows, "MQ2008", "SVM-ndcg") == {}
    assert own_metric.fit_note(rows, "MQ2008", "SVM-ndcg") == ""


def _default_rows(shifts, latent_folds):
    """Per-query NDCG@10 of SVM-ndcg default and its two formulations (each shifted from a common base), and the
    default's recorded target on two folds."""
    rows = []
    for model, shift in shifts.items():
        for q in range(40):
            rows.append({"dataset": "D", "model": model, "fold": "Fold1", "metric": f"q:{q}:ndcg@10",
                         "value": 0.4 + 0.013 * (q % 11) + shift + 0.002 * ((q * 7 + len(model)) % 5)})
    rows += [{"dataset": "D", "model": "SVM-ndcg default", "fold": f, "metric": "train:latent", "value": float(on)}
             for f, on in zip(("Fold1", "Fold2"), latent_folds)]
    return rows


def test_a_default_is_set_against_the_better_of_its_formulations():
    near = own_metric.defaults_table(_default_rows({"SVM-ndcg default": 0.0, "SVM-ndcg": 0.003,
                                                    "SVM-ndcg latent": -0.08}, (0, 1)), "D")
    row = next(line for line in near.splitlines() if line.startswith("| SVM-ndcg default"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[5] == "SVM-ndcg" and cells[8] == "yes" and cells[9] == "1 of 2"
    assert -0.5 < float(cells[6]) < 0.0  # about -0.3 points: the ideal row is the better one
    low, high = (float(x) for x in cells[7].strip("[]").split(","))
    assert low <= float(cells[6]) <= high
    far = own_metric.defaults_table(_default_rows({"SVM-ndcg default": -0.05, "SVM-ndcg": -0.09,
                                                   "SVM-ndcg latent": 0.0}, (1, 1)), "D")
    row = next(line for line in far.splitlines() if line.startswith("| SVM-ndcg default"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[5] == "SVM-ndcg latent" and cells[8] == "no" and float(cells[6]) < -1.0
    # a default with no formulation recorded beside it gets no row
    assert "SVM-mrr default" not in far
