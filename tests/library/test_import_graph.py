"""The import graph: `import structrank`, `structrank.metrics`, `structrank.oracles` and the loss registry
pull in no heavy library (a fresh interpreter each, so that nothing else has imported them first).

numba itself imports the top of SciPy (``scipy``, for its version check), so SciPy's submodules are
what is checked: ``scipy.sparse``, ``scipy.stats``, ``scipy.optimize`` and ``scipy.linalg``.
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("sklearn", "pandas", "joblib", "lightgbm", "torch", "matplotlib", "dask", "scipy.sparse", "scipy.stats",
         "scipy.optimize", "scipy.linalg")


def imported_after(code, heavy=HEAVY):
    probe = (f"import sys\n{code}\nimport json\n"
             f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({heavy!r}))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", [
    "import structrank",
    "import structrank.metrics",
    "from structrank.metrics import evaluate, evaluate_run, parse_metric",
    "import structrank.oracles",
    "from structrank.losses import loss_names; loss_names()",
])
def test_no_heavy_module_is_imported(code):
    assert imported_after(code) == []


def test_metrics_load_numba_only_when_they_evaluate():
    assert imported_after("import structrank.metrics\nassert 'numba' not in sys.modules") == []


def test_evaluating_a_trec_run_imports_no_heavy_library(tmp_path):
    """Evaluating runs numba's kernels, which load parts of SciPy (its LAPACK bindings); no other library."""
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r.txt").write_text("1 Q0 a 1 0.9 x\n1 Q0 b 2 0.1 x\n")
    code = (f"from structrank.metrics import evaluate_run\n"
            f"assert evaluate_run({str(tmp_path / 'q.txt')!r}, {str(tmp_path / 'r.txt')!r}, ['map']).metrics == {{'map': 1.0}}")
    assert imported_after(code, tuple(h for h in HEAVY if not h.startswith("scipy"))) == []


def test_reading_a_letor_file_imports_no_scikit_learn(tmp_path):
    """read_letor parses with structrank's own numba parser (scikit-learn's import costs about a second),
    and a dense file (every LETOR file) becomes an ndarray without scipy.sparse."""
    (tmp_path / "f.txt").write_text("1 qid:1 1:0.5 2:0.1 #docid = a\n0 qid:1 1:0.2 2:0.3 #docid = b\n")
    code = f"from structrank.data import read_letor\nassert read_letor({str(tmp_path / 'f.txt')!r}).n_rows == 2"
    heavy = ("sklearn", "pandas", "joblib", "lightgbm", "torch", "scipy.stats", "scipy.optimize", "scipy.sparse")
    assert imported_after(code, heavy) == []
    sparse = f"from structrank.data import read_letor\nread_letor({str(tmp_path / 'f.txt')!r}, sparse=True)"
    assert imported_after(sparse, ("scipy.sparse",)) != []  # the probe sees scipy.sparse when it is imported


@pytest.mark.parametrize("details", [False, True, ["train", "svm-mrr", "--help"]])
def test_the_train_command_line_imports_no_learner_until_it_trains(details):
    """`structrank train MODEL` parses its arguments from the model registry alone, and `train --help`
    (``details``) reads every model's parameters from the classes' sources: the learners load on use
    (structrank.learners is lazy)."""
    code = f"from structrank.cli import build_parser\nbuild_parser(only='train', details={details})"
    learners = [m for m in imported_after(code, HEAVY + ("structrank.learners.",)) if m != "structrank.learners.registry"]
    assert learners == []


def test_the_evaluate_command_starts_numba_without_scipys_linear_algebra(tmp_path):
    """numba's BLAS probe imports scipy.linalg (a tenth of a second of every evaluate); the command's process
    skips it (``numba_cache.without_blas_probe``), and numba's linear algebra still works after it."""
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r.txt").write_text("1 Q0 a 1 0.9 x\n1 Q0 b 2 0.1 x\n")
    command = (f"from structrank.cli import main\n"
               f"assert main(['evaluate', '--qrels', {str(tmp_path / 'q.txt')!r}, '--run', "
               f"{str(tmp_path / 'r.txt')!r}, '--json']) == 0")
    assert imported_after(command, ("scipy.linalg",)) == []
    dot = command + ("\nimport numpy as np\nfrom numba import njit\n"
                     "assert njit(lambda a: np.dot(a, a))(np.ones(3)) == 3.0\n"
                     "assert list(njit(lambda a: np.convolve(a, a))(np.ones(2))) == [1.0, 2.0, 1.0]")
    assert imported_after(dot, ("scipy.linalg",)) != []  # np.dot imports it when it compiles
    library = (f"from structrank.metrics import evaluate_run\n"
               f"evaluate_run({str(tmp_path / 'q.txt')!r}, {str(tmp_path / 'r.txt')!r})")
    assert imported_after(library, ("scipy.linalg",)) != []  # a library user's process keeps numba's own start


def test_evaluate_and_predict_on_a_letor_file_do_not_load_scikit_learn(tmp_path):
    """Reading a labelled file (structrank.labelled) tells LETOR from question-candidate text through the QA readers;
    their package must not load the QA features' scikit-learn, seconds of start-up for every evaluate."""
    (tmp_path / "d.txt").write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n")
    (tmp_path / "s.txt").write_text("0.9\n0.1\n")
    command = (f"from structrank.cli import main\n"
               f"assert main(['evaluate', '--data', {str(tmp_path / 'd.txt')!r}, '--scores', "
               f"{str(tmp_path / 's.txt')!r}, '--metric', 'map']) == 0")
    assert imported_after(command, ("sklearn", "scipy.stats")) == []
    assert imported_after("import structrank.qa as qa\nqa.tokenize('a b')", ("sklearn",)) != []  # loaded when used
