"""`structrank reproduce own-metric`'s report: the paired comparison and the note on the chosen fits."""

from structrank.experiments import own_metric


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
