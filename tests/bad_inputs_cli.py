"""Bad inputs and option values on the command line: ``evaluate --qrels --run``, ``compare``, ``predict
--format trec``, ``export`` and ``train --set``, as a careless user would give them.

Each case writes its files into a folder of its own and runs ``structrank`` (``cli.main``) there. Exit
code 2 must come with one line on standard error, which the corpus judges like a reader's error (it
must name the file or option at fault and the problem); exit code 0 must print output that is JSON
when JSON was asked (no NaN or Infinity), and the case's check says the output is right. Anything else
(a traceback, another exit code, several lines of error) fails the case.

``cli_cases()`` gives the cases (``bad_inputs.Case``) and ``CLI_READERS`` the reader, which
``bad_inputs.corpus()`` adds to the corpus of docs/RELIABILITY.md.
"""

from __future__ import annotations

import contextlib
import io
import json
import warnings
from dataclasses import dataclass
from pathlib import Path

from bad_inputs import error, loads
from structrank.errors import StructRankError

COMMAND = "structrank CLI"


@dataclass
class Output:
    """What a command that ended well left: its standard output and error, and its folder."""

    stdout: str
    stderr: str
    folder: Path

    def json(self):
        return json.loads(self.stdout, parse_constant=_not_json)


def _not_json(name):
    raise AssertionError(f"the output holds {name}, which is not JSON")


def _command(folder, workdir):
    """Run the case's argv (``argv.json``, ``{}`` standing for its folder) in its folder."""
    from structrank.cli import main

    argv = [a.replace("{}", str(folder)) for a in json.loads((folder / "argv.json").read_text())]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        code = main(argv)
    warned = [f"warning: {w.message}" for w in said]  # the command prints each as one line; here they are kept
    if code == 2:
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1, f"not a one-line error: {lines}"
        raise StructRankError(lines[0])
    assert code == 0, f"exit code {code}: {err.getvalue()}"
    return Output(out.getvalue(), "\n".join([err.getvalue(), *warned]), folder)


CLI_READERS = {COMMAND: _command}


def _case(name, files: dict, argv: list):
    """A writer of folder ``name`` holding ``files`` ({name: text or bytes}) and the command's argv."""
    def write(parent: Path) -> Path:
        folder = parent / name
        folder.mkdir(exist_ok=True)
        for file, content in files.items():
            path = folder / file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        (folder / "argv.json").write_text(json.dumps(argv))
        return folder
    return write


def _model(folder, data="d.txt"):
    """Train linreg on the case's data file (the model a predict or export case needs)."""
    from structrank.cli import main

    with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["train", "linreg", "--train", str(folder / data), "--out", str(folder / "m.npz")]) == 0


def _with_model(name, files, argv):
    write = _case(name, files, argv)

    def write_and_train(parent: Path) -> Path:
        folder = write(parent)
        _model(folder)
        model = (folder / "m.npz").read_bytes()
        (folder / "cut.npz").write_bytes(model[: len(model) // 2])  # a download cut short
        return folder
    return write_and_train


QRELS, RUN = "1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 0\n", "1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n2 Q0 d 1 2 t\n2 Q0 c 2 1 t\n"
DATA = "2 qid:1 1:0.9 2:0.1\n0 qid:1 1:0.1 2:0.3\n1 qid:2 1:0.5 2:0.5\n0 qid:2 1:0.2 2:0.8\n"
HUGE = "2 qid:1 1:0.9 2:1e300\n0 qid:1 1:0.1 2:0.3\n1 qid:2 1:0.5 2:0.5\n0 qid:2 1:0.2 2:0.8\n"
EVALUATE = ["evaluate", "--qrels", "{}/q", "--run", "{}/r", "--json"]
COMPARE = ["compare", "--qrels", "{}/q", "{}/r", "{}/r2"]


def _json_metrics(expected):
    def check(output):
        assert output.json()["metrics"] == expected, output.stdout
    return check


def _says(*words):
    def check(output):
        missing = [w for w in words if w not in output.stdout + output.stderr]
        assert not missing, f"the output lacks {missing}: {output.stdout} {output.stderr}"
    return check


def _run_docnos(expected: list):
    def check(output):
        lines = (output.folder / "run.txt").read_bytes().splitlines()
        assert [line.split()[2] for line in lines] == expected, lines
    return check


def _names(expected: list):
    def check(output):
        assert list(json.loads(output.stdout)["weights"]) == expected, output.stdout
    return check


def e(name, files, argv, why, *, words, file=None):
    """A case the command must refuse with one line naming ``file`` (a file or an option) and ``words``."""
    return error(COMMAND, name, _case(name, files, argv), why, words=words, file=file)


def cli_cases() -> list:
    cases = [
        # evaluate --qrels --run: trec_eval's numbers or a one-line error
        loads(COMMAND, "evaluate_c_float_tie", _case("evaluate_c_float_tie", {
            "q": "1 0 a 1\n1 0 b 0\n", "r": "1 Q0 a 1 1.00000001 t\n1 Q0 b 2 1.0 t\n"}, EVALUATE + ["--metric", "map"]),
            _json_metrics({"map": 0.5}), "trec_eval holds scores as C floats: a tie, broken by docno descending."),
        e("evaluate_relevant_from_0", {"q": QRELS, "r": RUN}, EVALUATE + ["--relevant-from", "0"],
          "A level below 1 makes every unjudged document relevant (AP of 2.0).", words=["--relevant-from", ">= 1"],
          file="--relevant-from"),
        e("evaluate_no_query_in_common", {"q": "1 0 a 1\n", "r": "001 Q0 a 1 2 t\n"}, EVALUATE,
          "Nothing to evaluate is an error, never {\"map\": NaN}.", words=["nothing to evaluate", "1 is not 001"],
          file="r"),
        e("evaluate_empty_run", {"q": QRELS, "r": ""}, EVALUATE, "An empty run evaluates nothing.",
          words=["nothing to evaluate"], file="r"),
        e("evaluate_empty_qrels", {"q": "", "r": RUN}, EVALUATE, "Empty qrels judge nothing.",
          words=["nothing to evaluate"], file="q"),
        e("evaluate_stdin_twice", {}, ["evaluate", "--qrels", "-", "--run", "-"],
          "Standard input can be read once.", words=["both read standard input"], file="--qrels"),
        e("evaluate_judged_twice", {"q": "1 0 a 1\n1 0 a 0\n", "r": RUN}, EVALUATE, "trec_eval stops on it too.",
          words=["judged twice", "lines 1 and 2"], file="q"),
        e("evaluate_relevant_from_with_data", {"d.txt": DATA, "s": "1\n2\n3\n4\n"},
          ["evaluate", "--data", "{}/d.txt", "--scores", "{}/s", "--relevant-from", "2"],
          "An option that does not apply is an error, not ignored.", words=["--relevant-from", "--qrels"],
          file="--relevant-from"),
        e("evaluate_trec_without_docids", {"d.txt": DATA, "s": "1\n2\n3\n4\n"},
          ["evaluate", "--data", "{}/d.txt", "--scores", "{}/s", "--convention", "trec"],
          "trec_eval breaks ties by docid: the file without them is named.", words=["docid"], file="d.txt"),
        # compare: options checked naming the option, queries in common, distinct names
        e("compare_alpha_above_1", {"q": QRELS, "r": RUN, "r2": RUN}, COMPARE + ["--alpha", "1.5"],
          "A level of 1.5 marks a difference at p 0.46 as better.", words=["(0, 1)"], file="--alpha"),
        e("compare_alpha_nan", {"q": QRELS, "r": RUN, "r2": RUN}, COMPARE + ["--alpha", "nan"],
          "NaN is no level.", words=["(0, 1)"], file="--alpha"),
        e("compare_negative_seed", {"q": QRELS, "r": RUN, "r2": RUN}, COMPARE + ["--seed", "-1"],
          "A seed is a non-negative integer.", words=["seed"], file="--seed"),
        e("compare_no_permutations", {"q": QRELS, "r": RUN, "r2": RUN}, COMPARE + ["--permutations", "0"],
          "A randomisation test needs samples.", words=["permutations"], file="--permutations"),
        loads(COMMAND, "compare_runs_of_one_name", _case("compare_runs_of_one_name", {
            "q": QRELS, "sys1/run.txt": RUN, "sys2/run.txt": RUN.replace("2 Q0 d 1 2", "2 Q0 d 1 0")},
            ["compare", "--qrels", "{}/q", "{}/sys1/run.txt", "{}/sys2/run.txt"]),
            _says("sys1/run.txt", "sys2/run.txt"), "Systems are named by as many folders as it takes to tell them apart."),
        loads(COMMAND, "compare_different_queries", _case("compare_different_queries", {
            "q": QRELS + "3 0 e 1\n", "r": RUN + "3 Q0 e 1 1 t\n", "r2": RUN},
            COMPARE + ["--format", "json"]), _says("left_out"),
            "Every mean of a row over the queries both runs answer, and how many were left out said."),
        # predict --format trec: every row written, line numbers, bytes kept
        error(COMMAND, "predict_colliding_docids", _with_model("predict_colliding_docids", {
            "d.txt": "1 qid:1 1:0.5 #docid = my doc one\n0 qid:1 1:0.2 #docid = my doc two\n1 qid:2 1:0.5 #docid = x\n"},
            ["predict", "--model", "{}/m.npz", "--data", "{}/d.txt", "--format", "trec", "--out", "{}/run.txt"]),
            "Two rows of a query with one docno cannot both be in a run: refused naming both lines.",
            words=["lines 1 and 2", "same docno"], file="d.txt"),
        loads(COMMAND, "predict_rows_without_docids", _with_model("predict_rows_without_docids", {
            "d.txt": "# by hand\n2 qid:1 1:0.9\n\n0 qid:1 1:0.1\n"},
            ["predict", "--model", "{}/m.npz", "--data", "{}/d.txt", "--format", "trec", "--out", "{}/run.txt"]),
            _run_docnos([b"2", b"4"]), "Rows without a #docid are named by their lines, as the help says."),
        loads(COMMAND, "predict_docids_not_utf8", _with_model("predict_docids_not_utf8", {
            "d.txt": b"1 qid:1 1:0.9 #docid = caf\xe9\n0 qid:1 1:0.1 #docid = caf\xe8\n"},
            ["predict", "--model", "{}/m.npz", "--data", "{}/d.txt", "--format", "trec", "--out", "{}/run.txt"]),
            _run_docnos([b"caf\xe9", b"caf\xe8"]), "A docid's bytes are written back as they were read."),
        # export --feature-names: the data files' grammar
        loads(COMMAND, "export_names_with_bom_and_comments", _with_model("export_names_with_bom_and_comments", {
            "d.txt": DATA, "names": "\ufeff# features\nbm25\r\ntf\n"},
            ["export", "{}/m.npz", "--format", "json", "--feature-names", "{}/names"]), _names(["bm25", "tf"]),
            "A byte-order mark, CRLF and comment lines read as the data files do."),
        error(COMMAND, "export_names_blank_line", _with_model("export_names_blank_line", {
            "d.txt": DATA, "names": "bm25\n\ntf\n"},
            ["export", "{}/m.npz", "--format", "json", "--feature-names", "{}/names"]),
            "A blank line would shift every name after it.", words=["line 2", "blank line"], file="names"),
        error(COMMAND, "export_names_duplicate", _with_model("export_names_duplicate", {
            "d.txt": DATA, "names": "bm25\nbm25\n"},
            ["export", "{}/m.npz", "--format", "json", "--feature-names", "{}/names"]),
            "Two features of one name cannot be told apart.", words=["line 2", "'bm25'", "twice"], file="names"),
        # a feature past what float64 can square, and an output where no file can be made
        error(COMMAND, "train_feature_1e300_lsp", _case("train_feature_1e300_lsp", {"d.txt": HUGE},
              ["train", "lsp", "--train", "{}/d.txt", "--out", "{}/m.npz"]),
              "A score of 1e300 x w overflows: an error at fit, never a model that predicts garbage.",
              words=["feature 2", "overflow"], file="row 1"),
        loads(COMMAND, "train_feature_1e300_linreg", _case("train_feature_1e300_linreg", {"d.txt": HUGE},
              ["train", "linreg", "--train", "{}/d.txt", "--out", "{}/m.npz"]), _says("feature 2"),
              "linreg fits finite weights, so it warns that the feature swamps every other score."),
        error(COMMAND, "predict_out_under_proc", _with_model("predict_out_under_proc", {"d.txt": DATA},
              ["predict", "--model", "{}/m.npz", "--data", "{}/d.txt", "--out", "/proc/scores.txt"]),
              "The error names the --out given, never a temporary file beside it.", words=["cannot create"],
              file="/proc/scores.txt"),
        # parameters: range-checked before any work, nested dicts included, and refused where they do not apply
        e("train_set_k_1e20", {"d.txt": DATA}, ["train", "svm-ndcg", "--train", "{}/d.txt", "--out", "{}/m.npz",
                                                "--set", 'loss_params={"k": 1e20}'],
          "A cut-off past any C int ended inside numba.", words=["loss_params['k'] must be", "2147483647"],
          file="svm-ndcg"),
        e("train_nested_unknown_key", {"d.txt": DATA}, [
            "train", "nystroem-svm-map", "--train", "{}/d.txt", "--out", "{}/m.npz", "--set",
            'ranker_params={"bogus": 1}'], "An unknown key of a nested dict ended in an internal error.",
          words=["ranker_params has no key 'bogus'", "parameters are"], file="nystroem-svm-map"),
        e("train_set_unread_parameter", {"d.txt": DATA}, ["train", "svm-map", "--train", "{}/d.txt", "--out",
                                                          "{}/m.npz", "--set", 'loss_params={"k": 5}'],
          "svm-map reads no cut-off: a k given would be silently ignored.", words=["takes no option 'k'"],
          file="svm-map"),
        error(COMMAND, "predict_run_tag_without_trec", _with_model("predict_run_tag_without_trec", {"d.txt": DATA},
              ["predict", "--model", "{}/m.npz", "--data", "{}/d.txt", "--run-tag", "x", "--out", "{}/s.txt"]),
              "A run tag without a run would be ignored.", words=["--format trec"], file="--run-tag"),
        error(COMMAND, "predict_truncated_model", _with_model("predict_truncated_model", {"d.txt": DATA},
              ["predict", "--model", "{}/cut.npz", "--data", "{}/d.txt", "--out", "{}/s.txt"]),
              "A truncated model is refused in one line (and leaves no file open behind it).", words=["cut.npz"],
              file="cut.npz"),
    ]
    return cases

