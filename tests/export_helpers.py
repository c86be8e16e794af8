"""What the export tests share: models trained through the command line, and LightGBM's own routing (the leaf
each row reaches), the reference the exported trees are compared with."""

from __future__ import annotations

import numpy as np

from structrank.cli import main


def train_models(folder, train, specs) -> dict:
    """``{name: model file}``: ``structrank train NAME --train TRAIN --set S ...`` for each (name, settings) of
    ``specs``, the model files written in ``folder``."""
    models = {}
    for name, settings in specs:
        models[name] = folder / f"{name}.npz"
        args = ["train", name, "--train", str(train), "--out", str(models[name]), "--quiet"]
        for setting in settings:
            args += ["--set", setting]
        assert main(args) == 0
    return models


def leaf_values(booster, X):
    """The value of the leaf LightGBM's predictor reaches for every row of X in every tree: (rows, trees)."""
    tables = []
    for info in booster.dump_model()["tree_info"]:
        table, stack = {}, [info["tree_structure"]]
        while stack:
            node = stack.pop()
            if "leaf_value" in node:
                table[node.get("leaf_index", 0)] = node["leaf_value"]
            else:
                stack += [node["left_child"], node["right_child"]]
        tables.append(table)
    index = booster.predict(X, pred_leaf=True).reshape(X.shape[0], -1)
    return np.array([[tables[t][i] for t, i in enumerate(row)] for row in index])
