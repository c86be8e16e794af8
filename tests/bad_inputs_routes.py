"""Bad inputs given two ways, as files and through the Python API, held to the same rules in the same words.

A user reaches structrank's checks either through a file (``read_letor``, ``read_qrels``/``read_run``,
``structrank evaluate --qrels --run``) or by handing Python objects to the API (arrays to an estimator's
``fit``; dicts or a DataFrame to ``evaluate_run``). Each input here is written once as a file; the
Python routes read that file *loosely* (scikit-learn's SVMlight reader, a split per line and ``float``)
into the objects a user would build, so what the file readers refuse reaches the API unchecked. Every
route must then refuse it with the same words, or load it to the same value.

``route_cases()`` gives the cases (``bad_inputs.Case``) and ``ROUTE_READERS`` the readers, which
``bad_inputs.corpus()`` adds to the corpus of docs/RELIABILITY.md.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np

from bad_inputs import error, loads
from structrank.errors import StructRankError


# -- the routes ------------------------------------------------------------------------------------


def _loose_number(text: str):
    """A field as a user's quick parser would hold it: an int, else a float, else the text itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _loose_rows(path: Path, value_field: int):
    """(qid, docno, value) of every non-blank line, split at white space, the value read loosely."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if fields:
            rows.append((fields[0], fields[2], _loose_number(fields[value_field])))
    return rows


def _as_dict(rows) -> dict:
    out = {}
    for qid, docno, value in rows:
        out.setdefault(qid, {})[docno] = value  # a dict keeps the last of a repeated document
    return out


def _as_frame(rows, value_column):
    import pandas as pd  # deferred: pandas is an optional input type (installed with the test extra's ranx)

    # qids as numbers where they are, as a numeric DataFrame column holds them
    qids = [_loose_number(q) for q, _, _ in rows]
    return pd.DataFrame({"qid": qids, "docno": [d for _, d, _ in rows], value_column: [v for _, _, v in rows]},
                        columns=["qid", "docno", value_column])


def _trec_files(folder, workdir):
    from structrank.metrics import evaluate_run

    return evaluate_run(folder / "qrels", folder / "run", ["map", "p@1"])


def _trec_dicts(folder, workdir):
    from structrank.metrics import evaluate_run

    return evaluate_run(_as_dict(_loose_rows(folder / "qrels", 3)), _as_dict(_loose_rows(folder / "run", 4)),
                        ["map", "p@1"])


def _trec_frames(folder, workdir):
    from structrank.metrics import evaluate_run

    return evaluate_run(_as_frame(_loose_rows(folder / "qrels", 3), "relevance"),
                        _as_frame(_loose_rows(folder / "run", 4), "score"), ["map", "p@1"])


def _no_constant(name):
    raise ValueError(f"the output holds {name}, which is not JSON")


def _trec_command(folder, workdir):
    """``structrank evaluate --qrels --run --json``: exit 2 is an error (its one line), exit 0 the JSON,
    which must be JSON (no NaN or Infinity)."""
    from structrank.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["evaluate", "--qrels", str(folder / "qrels"), "--run", str(folder / "run"), "--metric", "map",
                     "--metric", "p@1", "--json"])
    if code == 2:
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1, f"not a one-line error: {lines}"
        raise StructRankError(lines[0])
    assert code == 0, f"exit code {code}: {err.getvalue()}"
    return json.loads(out.getvalue(), parse_constant=_no_constant)


def _fit_files(path, workdir):
    from structrank.data import read_letor
    from structrank.learners import LinearRegressionRanker

    ds = read_letor(path)
    return LinearRegressionRanker().fit(ds).predict(ds.X)


def _fit_arrays(path, workdir):
    from sklearn.datasets import load_svmlight_file

    from structrank.learners import LinearRegressionRanker

    X, y, qid = load_svmlight_file(str(path), query_id=True)
    return LinearRegressionRanker().fit(X, y, qid=qid).predict(X)


TREC_ROUTES = {"evaluate_run files": _trec_files, "evaluate_run dicts": _trec_dicts,
               "evaluate_run DataFrames": _trec_frames, "evaluate --qrels --run": _trec_command}
LETOR_ROUTES = {"fit a LETOR file": _fit_files, "fit arrays": _fit_arrays}
ROUTE_READERS = {name: route for name, route in {**TREC_ROUTES, **LETOR_ROUTES}.items()}


# -- the inputs ------------------------------------------------------------------------------------


def _pair(name: str, qrels: str, run: str):
    """A writer of a folder ``name`` holding ``qrels`` and ``run``."""
    def write(folder: Path) -> Path:
        target = folder / name
        target.mkdir(exist_ok=True)
        (target / "qrels").write_text(qrels, encoding="utf-8")
        (target / "run").write_text(run, encoding="utf-8")
        return target
    return write


def _letor(name: str, text: str):
    def write(folder: Path) -> Path:
        path = folder / f"{name}.txt"
        path.write_text(text, encoding="utf-8")
        return path
    return write


def _file_name(route, name, kind):
    """What a route's error names: the file, or the Python object it was given."""
    objects = {"evaluate_run dicts": f"the {kind} dict", "evaluate_run DataFrames": f"the {kind} DataFrame"}
    return objects.get(route, f"{name}/{kind}")


def _metrics_are(expected):
    def check(value):
        metrics = value["metrics"] if isinstance(value, dict) else value.metrics
        assert metrics == expected, metrics
    return check


#: (name, qrels, run, words, which file the error names, routes that cannot hold the input, why)
TREC_ERRORS = [
    ("nan_score", "1 0 a 1\n", "1 Q0 a 1 nan t\n", ["score", "not finite"], "run", (),
     "A NaN score has no rank; trec_eval would rank it anywhere."),
    ("infinite_score", "1 0 a 1\n1 0 b 0\n", "1 Q0 a 1 2 t\n1 Q0 b 2 -inf t\n", ["score", "not finite"], "run", (),
     "An infinite score is no score trec_eval prints back."),
    ("fractional_label", "1 0 a 1.5\n", "1 Q0 a 1 2 t\n", ["rel", "not an integer"], "qrels", (),
     "trec_eval reads a judgement as an integer; 1.5 would be truncated to 1."),
    ("word_score", "1 0 a 1\n", "1 Q0 a 1 None t\n", ["score", "not a number"], "run", (),
     "A missing score (None) is not a number."),
    ("document_retrieved_twice", "1 0 a 1\n", "1 Q0 a 1 2 t\n1 Q0 a 2 1 t\n", ["retrieved twice"], "run",
     ("evaluate_run dicts",), "Which score counts would be a guess (a dict cannot even hold both)."),
    ("document_judged_twice", "1 0 a 1\n1 0 a 0\n", "1 Q0 a 1 2 t\n", ["judged twice"], "qrels",
     ("evaluate_run dicts",), "trec_eval stops on a document judged twice."),
    # a numeric DataFrame column holds 001 as 1 (pandas.read_csv would): that route has the query in common
    ("no_query_in_common", "1 0 a 1\n", "001 Q0 a 1 2 t\n", ["nothing to evaluate", "1 is not 001"], "run",
     ("evaluate_run DataFrames",), "Query ids compare as strings, as in trec_eval: nothing to evaluate is an error, "
     "never a NaN."),
    ("empty_run", "1 0 a 1\n", "", ["nothing to evaluate", "no retrieved document"], "run", (),
     "An empty run evaluates nothing."),
]

#: (name, qrels, run, the metrics every route must give, why)
TREC_LOADS = [
    ("c_float_tie", "1 0 a 1\n1 0 b 0\n", "1 Q0 a 1 1.00000001 t\n1 Q0 b 2 1.0 t\n", {"map": 0.5, "p@1": 0.0},
     "trec_eval holds a score as a C float: these tie, and the tie goes to docno b (descending)."),
    ("unjudged_and_negative", "1 0 a 1\n1 0 b -1\n", "1 Q0 b 1 3 t\n1 Q0 x 2 2 t\n1 Q0 a 3 1 t\n",
     {"map": 1 / 3, "p@1": 0.0}, "An unjudged document and a label of -1 (pooled, not judged) are non-relevant."),
]

#: (name, LETOR text, words, why); the file reader's words are the estimator's
LETOR_ERRORS = [
    ("nan_feature", "1 qid:1 1:0.5 2:1\n0 qid:1 1:nan 2:0\n", ["not finite", "feature 1"],
     "A NaN feature poisons every learner."),
    ("infinite_feature", "1 qid:1 1:0.5 2:1\n0 qid:1 1:0.1 2:inf\n", ["not finite", "feature 2"],
     "An infinite feature poisons every learner."),
    ("fractional_label", "1 qid:1 1:0.5\n0.5 qid:1 1:0.1\n", ["label 0.5", "not a non-negative integer"],
     "Relevance grades are integers (gains 2**label - 1 need it)."),
    ("negative_label", "1 qid:1 1:0.5\n-1 qid:1 1:0.1\n", ["label -1", "not a non-negative integer"],
     "Relevance grades are non-negative."),
    ("label_too_large", "3000000000 qid:1 1:0.5\n0 qid:1 1:0.1\n", ["label 3000000000", "too large", "2147483647"],
     "A label beyond int32 would wrap around in the cache; arrays are held to the same bound."),
]


def _same_scores(expected):
    def check(scores):
        assert np.allclose(scores, expected, rtol=1e-9, atol=1e-12), scores
    return check


LETOR_LOADS = [
    ("a_plain_file", "2 qid:1 1:0.9 2:0.1\n0 qid:1 1:0.1 2:0.3\n1 qid:2 1:0.5 2:0.5\n0 qid:2 1:0.2 2:0.8\n",
     "Both routes fit the same model to the same rows."),
]


def route_cases() -> list:
    cases = []
    for route in TREC_ROUTES:
        for name, qrels, run, words, kind, cannot, why in TREC_ERRORS:
            if route not in cannot:
                cases.append(error(route, name, _pair(name, qrels, run), why, words=words,
                                   file=_file_name(route, name, kind)))
        for name, qrels, run, expected, why in TREC_LOADS:
            cases.append(loads(route, name, _pair(name, qrels, run), _metrics_are(expected), why))
    for route in LETOR_ROUTES:
        for name, text, words, why in LETOR_ERRORS:
            cases.append(error(route, name, _letor(name, text), why, words=words,
                               file=None if route == "fit a LETOR file" else "LinearRegressionRanker.fit"))
        for name, text, why in LETOR_LOADS:
            cases.append(loads(route, name, _letor(name, text), _same_scores(_fit_arrays_of(text)), why))
    return cases


def _fit_arrays_of(text):
    """The scores a LETOR file's model gives, fitted from the strict reader's dataset."""
    from structrank.data.dataset import RankingDataset
    from structrank.learners import LinearRegressionRanker

    rows = [line.split() for line in text.splitlines()]
    X = np.array([[float(f.split(":")[1]) for f in r[2:]] for r in rows])
    ds = RankingDataset(X, np.array([int(r[0]) for r in rows]), np.array([int(r[1][4:]) for r in rows]))
    return LinearRegressionRanker().fit(ds).predict(ds.X)
