"""A store knows what it was made from (issue 38, point 8).

Every run of a `reproduce` store records the identity of the files it read (their content, not their names
or paths) and of the experiment; resuming with other data is refused or reruns the runs it changed, and
another experiment's store is refused: results.csv never mixes runs made from something else.
"""

import csv
import gzip
import hashlib
import json
import shutil
import sqlite3

import pytest

from structrank.cli import main
from structrank.data import make_ranking_dataset, write_letor
from structrank.errors import StructRankError
from structrank_lab.experiments import ResultStore, RunSpec
from structrank_lab.experiments import identity as identity_module
from structrank_lab.experiments.runner import claim_folder, run_experiment
from structrank_lab.experiments.store_schema import SCHEMA
from structrank_lab.experiments.identity import inputs_digest, run_identity


def letor_data(root, flip=False, gz=True):
    """A data folder holding a two-fold synthetic MQ2008 (``flip``: every label l becomes 2 - l)."""
    for f in (1, 2):
        fold = root / "letor" / "MQ2008" / f"Fold{f}"
        fold.mkdir(parents=True)
        for i, split in enumerate(("train", "vali", "test")):
            ds = make_ranking_dataset(n_queries=8, docs_per_query=8, n_features=5, random_state=10 * f + i)
            if flip:
                ds = type(ds)(ds.X, 2 - ds.y, ds.qid)
            path = fold / f"{split}.txt"
            write_letor(path, ds)
            if gz:
                path.with_suffix(".txt.gz").write_bytes(gzip.compress(path.read_bytes(), mtime=0))
                path.unlink()
    return root


def reproduce(capsys, out, data, *extra):
    assert main(["reproduce", "letor-baselines", "--quick", "--out", str(out), "--data-dir", str(data), *extra]) == 0
    return capsys.readouterr().err


def refused(capsys, out, data, *names):
    """The one error line of a reproduction into ``out`` from ``data`` that is refused (exit 2), naming ``names``."""
    assert main(["reproduce", "letor-baselines", "--quick", "--out", str(out), "--data-dir", str(data)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("structrank reproduce: error: "), errors
    for name in names:
        assert str(name) in errors[0], (name, errors[0])
    return errors[0]


def maps(out):
    """{(fold, model): test MAP} of out/results.csv."""
    with open(out / "results.csv", newline="") as fh:
        return {(r["fold"], r["model"]): float(r["value"]) for r in csv.DictReader(fh) if r["metric"] == "map"}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("identity")
    return {"a": letor_data(root / "a"), "flipped": letor_data(root / "flipped", flip=True),
            "flipped-plain": letor_data(root / "flipped-plain", flip=True, gz=False)}


@pytest.fixture(scope="module")
def fresh(data, tmp_path_factory):
    """MAP of each data folder reproduced into a folder of its own."""
    out = {}
    for name in ("a", "flipped"):
        folder = tmp_path_factory.mktemp("fresh") / name
        assert main(["reproduce", "letor-baselines", "--quick", "--quiet", "--out", str(folder),
                     "--data-dir", str(data[name])]) == 0
        out[name] = maps(folder)
    assert out["a"] != out["flipped"]
    return out


def test_a_changed_copy_of_the_data_is_refused_and_fresh_gives_the_fresh_results(data, fresh, tmp_path, capsys):
    out = tmp_path / "out"
    reproduce(capsys, out, data["a"])
    assert maps(out) == fresh["a"]
    # the same file names, the labels changed: the runs were made from other data
    refused(capsys, out, data["flipped"], out / "results.sqlite", "its runs were made from other data",
            "MQ2008/Fold1/test.txt.gz", "--fresh")
    # the case: the changed copy decompressed (other file names); the old runs were reused, MAP 0.44 for 0.94
    line = refused(capsys, out, data["flipped-plain"], out / "results.sqlite", "MQ2008/Fold1/test.txt.gz")
    assert "is not in the MQ2008 given now (nor are 5 more of its files)" in line
    assert maps(out) == fresh["a"]  # nothing was written
    reproduce(capsys, out, data["flipped"], "--fresh")
    assert maps(out) == fresh["flipped"]


def test_a_run_whose_files_changed_is_run_again_and_the_table_equals_a_fresh_one(data, fresh, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(data["a"], copy)
    out = tmp_path / "out"
    reproduce(capsys, out, copy)
    # a train.txt beside train.txt.gz: the fold reads it (letor_folds takes .txt first); the claim sees a file added
    flipped = data["flipped"] / "letor" / "MQ2008" / "Fold1"
    for split in ("train", "vali", "test"):
        (copy / "letor" / "MQ2008" / "Fold1" / f"{split}.txt").write_bytes(
            gzip.decompress((flipped / f"{split}.txt.gz").read_bytes()))
    err = reproduce(capsys, out, copy)
    lines = [line for line in err.splitlines() if "made from something else" in line]
    assert lines == ["letor-baselines: 2 recorded runs made from something else, run again (the files it read differ; "
                     "the first: letor-baselines/MQ2008/test/fold=Fold1/seed=0/linreg"
                     '{"grid":"quick","select":"vali-map"})'], err
    assert "letor-baselines: 2 runs done" in err
    got = maps(out)
    assert {k: v for k, v in got.items() if k[0] == "Fold1"} == {k: v for k, v in fresh["flipped"].items()
                                                                 if k[0] == "Fold1"}
    assert {k: v for k, v in got.items() if k[0] == "Fold2"} == {k: v for k, v in fresh["a"].items()
                                                                 if k[0] == "Fold2"}
    assert "made from something else" not in reproduce(capsys, out, copy)  # now current: nothing runs again


def test_every_run_records_the_content_of_the_files_it_read_and_the_experiment(data, tmp_path, capsys):
    out = tmp_path / "out"
    reproduce(capsys, out, data["a"])
    with sqlite3.connect(out / "results.sqlite") as db:
        recorded = dict(db.execute("select fold, identity from runs where model = 'linreg'").fetchall())
        assert db.execute("pragma user_version").fetchone()[0] == 2
    fold1 = data["a"] / "letor" / "MQ2008" / "Fold1"
    items = [[f"{split}.txt.gz", hashlib.sha256((fold1 / f"{split}.txt.gz").read_bytes()).hexdigest()]
             for split in ("test", "train", "vali")]
    identity = json.loads(recorded["Fold1"])
    assert identity["data"] == hashlib.sha256(json.dumps(items, separators=(",", ":")).encode()).hexdigest()
    assert recorded["Fold1"] == run_identity("letor-baselines", [fold1])
    assert recorded["Fold2"] != recorded["Fold1"]
    # content, not names or places: the same files elsewhere are the same data, other bytes are not
    elsewhere = tmp_path / "elsewhere" / "another-name"
    shutil.copytree(fold1, elsewhere)
    assert inputs_digest([fold1]) == inputs_digest([elsewhere])
    assert inputs_digest([fold1]) != inputs_digest([data["flipped"] / "letor" / "MQ2008" / "Fold1"])


# -- the runner's rules, on a toy experiment -------------------------------------------------------------------------


def _specs(experiment="exp2024", folds=(0, 1)):
    return [RunSpec(experiment, "toy", fold=f, model="m") for f in folds]


def _values(calls):
    def run(spec):
        calls.append(spec.fold)
        return [("map", "letor4", 0.5 + spec.fold / 10)]

    return run


@pytest.fixture
def toy(tmp_path):
    folder = tmp_path / "data" / "toy"
    folder.mkdir(parents=True)
    (folder / "train.txt").write_text("1 qid:1 1:0.5\n")
    return folder


def test_runs_of_a_store_older_than_run_identities_are_run_again_once(toy, tmp_path, capsys):
    out = tmp_path / "out"
    claim_folder(out, "exp2024", [toy])
    with ResultStore(out / "results.sqlite") as store:  # as version 1 recorded them: no identity
        for spec in _specs():
            store.record(spec, [("map", "letor4", 0.1)], seconds=1)
    calls = []
    rows = run_experiment(out, _specs(), _values(calls), data=[toy])
    assert calls == [0, 1] and [r["value"] for r in rows] == [0.5, 0.6]
    assert ("exp2024: 2 recorded runs made from something else, run again (recorded without the identity of its "
            "data (a store older than run identities); the first: exp2024/toy/test/fold=0/seed=0/m{})") in \
        capsys.readouterr().err
    run_experiment(out, _specs(), _values(calls), data=[toy])
    assert calls == [0, 1]


def test_a_version_1_store_opens_and_its_runs_have_no_identity(tmp_path):
    path = tmp_path / "results.sqlite"
    with sqlite3.connect(path) as db:  # the schema of version 1
        db.executescript(SCHEMA.replace(
            "    identity    TEXT,                -- run_identity(): what the run read and which experiment made it\n",
            ""))
        db.execute("pragma user_version = 1")
        db.execute("insert into runs (experiment, dataset, split, fold, seed, model, params, seconds, finished_at) "
                   "values ('e', 'd', 'test', 0, 0, 'm', '{}', 1.0, 'x')")
    with ResultStore(path) as store:
        assert store.identities() == {RunSpec("e", "d", model="m"): None}
    with sqlite3.connect(path) as db:
        assert db.execute("pragma user_version").fetchone()[0] == 2


def test_another_configuration_of_the_experiment_runs_again(toy, tmp_path, capsys):
    out, calls = tmp_path / "out", []
    run_experiment(out, _specs(), _values(calls), data=[toy], config={"conventions": {"toy": "letor4"}})
    run_experiment(out, _specs(), _values(calls), data=[toy], config={"conventions": {"toy": "letor4"}})
    assert calls == [0, 1]
    run_experiment(out, _specs(), _values(calls), data=[toy], config={"conventions": {"toy": "trec"}})
    assert calls == [0, 1, 0, 1]
    assert "(the experiment's configuration differs; the first:" in capsys.readouterr().err


def test_results_csv_holds_the_plan_s_runs_only(toy, tmp_path):
    out = tmp_path / "out"
    run_experiment(out, _specs(folds=(0, 1, 2)), _values([]), data=[toy])
    run_experiment(out, _specs(folds=(0,)), _values([]), data=[toy])  # a smaller plan into the same store
    with open(out / "results.csv", newline="") as fh:
        assert [r["fold"] for r in csv.DictReader(fh)] == ["0"]
    with ResultStore(out / "results.sqlite") as store:
        assert len(store) == 3  # the store keeps them; a larger plan finds them done


def test_another_experiment_s_store_is_refused_and_nothing_of_it_reaches_results_csv(toy, tmp_path):
    out = tmp_path / "out"
    run_experiment(out, _specs("first2020"), _values([]), data=[toy])
    before = (out / "results.csv").read_bytes()
    with pytest.raises(StructRankError, match="holds the runs of experiment first2020, not second2021"):
        run_experiment(out, _specs("second2021"), _values([]), data=[toy])
    assert (out / "results.csv").read_bytes() == before
    # a store whose owner is recorded, but that holds another experiment's runs too: refused as well
    mixed = tmp_path / "mixed"
    claim_folder(mixed, "second2021")
    with ResultStore(mixed / "results.sqlite") as store:
        store.record(_specs("first2020")[0], [("map", "letor4", 0.9)], seconds=1)
    with pytest.raises(StructRankError, match="holds the runs of experiment first2020, not second2021"):
        run_experiment(mixed, _specs("second2021"), _values([]), data=[toy])
    assert not (mixed / "results.csv").exists()


def test_resuming_reads_each_file_once_per_process_and_trusts_the_store_across_processes(toy, tmp_path, monkeypatch):
    out = tmp_path / "out"
    run_experiment(out, _specs(), _values([]), data=[toy])
    reads = []
    real = hashlib.file_digest
    monkeypatch.setattr(identity_module.hashlib, "file_digest", lambda fh, name: reads.append(fh.name) or real(fh, name))
    run_experiment(out, _specs(), _values([]), data=[toy])
    assert reads == []  # hashed once in this process already
    monkeypatch.setattr(identity_module, "_DIGESTS", {})  # as a new process: the store's record of the file is trusted
    run_experiment(out, _specs(), _values([]), data=[toy])
    assert reads == []
    (toy / "train.txt").write_text("0 qid:1 1:0.5\n")  # same size, new mtime: read again, and refused
    with pytest.raises(StructRankError, match="its runs were made from other data: toy/train.txt"):
        run_experiment(out, _specs(), _values([]), data=[toy])
    assert reads == [str(toy / "train.txt")]
