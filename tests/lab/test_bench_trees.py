"""The trees section of `structrank bench`: its ratios and lines come from the measured rounds."""

from structrank_lab.bench.trees import format_trees, ratios


def _figures(ours, theirs):
    return {"fit": {"gbrt-ndcg": ours, "lambdamart": theirs}, "command": {"gbrt-ndcg": [3.0, 3.2], "lambdamart": [3.0, 3.0]},
            "ndcg": {"gbrt-ndcg": 0.2183, "lambdamart": 0.2205}, "rows": 9630, "queries": 471, "trees": 100, "rounds": 2}


def test_ratios_are_medians_over_medians_and_the_verdict_follows_them():
    figures = _figures([1.0, 3.0], [1.0, 1.0])
    assert ratios(figures) == {"fit": 2.0, "command": 3.1 / 3.0}
    assert "fit 2.00x, whole command 1.03x (within the 2x bar)" in format_trees(figures)[-1]
    assert "(beyond the 2x bar)" in format_trees(_figures([3.0, 3.0], [1.0, 1.0]))[-1]
    assert "0.2183" in format_trees(figures)[2]


def test_without_the_data_the_section_says_it_skipped():
    assert "skipped" in format_trees({})[0]
