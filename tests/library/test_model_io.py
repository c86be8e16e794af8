"""Model files: round trips, the documented format, no pickle, clear errors for tampered files, atomic saves."""

import json
import os
import zipfile

import numpy as np
import pytest

import structrank.atomic
from structrank.data import make_ranking_dataset
from structrank.errors import DataFormatError
from structrank.learners import LinearRegressionRanker, RankSVM
from structrank.model_io import FORMAT_NAME, FORMAT_VERSION, load_model, save_model

N_FEATURES = 7


@pytest.fixture(scope="module")
def data():
    return make_ranking_dataset(n_queries=25, n_features=N_FEATURES, random_state=3)


@pytest.fixture(scope="module")
def models(data):
    return {
        "LinearRegressionRanker": LinearRegressionRanker(alpha=0.5).fit(data),
        "RankSVM": RankSVM(C=0.3, max_pairs_per_query=40, random_state=2).fit(data),
    }


@pytest.fixture
def saved(tmp_path, models):
    """Path of a saved RankSVM model file."""
    path = tmp_path / "model.npz"
    save_model(models["RankSVM"], path)
    return path


def read_archive(path):
    with np.load(path, allow_pickle=False) as archive:
        header = json.loads(bytes(archive["__header__"]).decode("utf-8"))
        arrays = {k: archive[k] for k in archive.files if k != "__header__"}
    return header, arrays


def write_archive(path, header, arrays):
    header_bytes = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, __header__=header_bytes, **arrays)
    return path


def tampered(saved, tmp_path, mutate):
    header, arrays = read_archive(saved)
    mutate(header, arrays)
    return write_archive(tmp_path / "tampered.npz", header, arrays)


# -- round trip and format ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["LinearRegressionRanker", "RankSVM"])
def test_round_trip_gives_identical_predictions(name, models, data, tmp_path):
    model = models[name]
    path = tmp_path / f"{name}.npz"
    save_model(model, path)
    loaded = load_model(path)
    assert type(loaded) is type(model)
    assert loaded.get_params() == model.get_params()
    for attr in model._saved_attributes:
        np.testing.assert_array_equal(getattr(loaded, attr), getattr(model, attr))
    np.testing.assert_array_equal(loaded.predict(data.X), model.predict(data.X))
    other = make_ranking_dataset(n_queries=4, n_features=N_FEATURES, random_state=9)
    np.testing.assert_array_equal(loaded.predict(other.X), model.predict(other.X))
    assert loaded.score(data) == model.score(data)
    # str paths work as well as Path objects
    save_model(model, str(path))
    np.testing.assert_array_equal(load_model(str(path)).predict(data.X), model.predict(data.X))


def test_loaded_model_can_be_refitted(saved, data):
    model = load_model(saved)
    refit = model.fit(data)
    assert refit.coef_.shape == (N_FEATURES,)


def test_file_is_a_zip_with_a_versioned_json_header(saved, models):
    assert zipfile.is_zipfile(saved)
    with zipfile.ZipFile(saved) as zf:
        names = set(zf.namelist())
    model = models["RankSVM"]
    assert names == {"__header__.npy"} | {f"{a}.npy" for a in model._saved_attributes}
    header, arrays = read_archive(saved)
    assert header["format"] == "structrank-model" == FORMAT_NAME
    assert header["version"] == 1 == FORMAT_VERSION
    assert header["class"] == "RankSVM"
    assert header["params"] == model.get_params(deep=False)
    assert set(header["arrays"]) == set(arrays) == set(model._saved_attributes)
    for key, value in arrays.items():
        assert header["arrays"][key] == {"dtype": value.dtype.str, "shape": list(value.shape)}
    assert arrays["coef_"].dtype == np.float64 and arrays["coef_"].shape == (N_FEATURES,)


def test_no_pickle_inside(saved):
    # every member loads with allow_pickle=False, and none is an object array
    with np.load(saved, allow_pickle=False) as archive:
        for key in archive.files:
            assert archive[key].dtype != object
    # the raw members are .npy arrays whose headers declare non-object dtypes
    with zipfile.ZipFile(saved) as zf:
        for name in zf.namelist():
            with zf.open(name) as member:
                version = np.lib.format.read_magic(member)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = read_header(member)
                assert not dtype.hasobject, name
    assert b"pickle" not in saved.read_bytes().lower()


def test_save_refuses_what_is_not_a_structrank_ranker(tmp_path, data):
    from sklearn.linear_model import LinearRegression

    with pytest.raises(TypeError, match="not a structrank ranker"):
        save_model(LinearRegression().fit(data.X, data.y), tmp_path / "x.npz")

    class Sub(RankSVM):
        pass

    with pytest.raises(TypeError, match="not a structrank ranker"):
        save_model(Sub().fit(data), tmp_path / "y.npz")
    assert not any(tmp_path.iterdir())


# -- tampered and damaged files ----------------------------------------------------------------


def drop(key):
    def mutate(header, arrays):
        del arrays[key]
    return mutate


TAMPERINGS = {
    "version 2": (lambda h, a: h.update(version=2), r"version 2.*reads version 1"),
    "version missing": (lambda h, a: h.pop("version"), r"version None"),
    "version as text": (lambda h, a: h.update(version="1"), r"version '1'"),
    "format name": (lambda h, a: h.update(format="pickle"), r"wrong format name"),
    "class os.system": (lambda h, a: h.update({"class": "os.system"}), r"unknown model class 'os.system'"),
    "class Evil": (lambda h, a: h.update({"class": "Evil"}), r"unknown model class 'Evil'"),
    "class BaseRanker": (lambda h, a: h.update({"class": "BaseRanker"}), r"unknown model class 'BaseRanker'"),
    "class missing": (lambda h, a: h.pop("class"), r"unknown model class None"),
    "other class's arrays": (
        lambda h, a: h.update({"class": "LinearRegressionRanker"}), r"(parameters|arrays) do not match"
    ),
    "unknown parameter": (lambda h, a: h["params"].update(evil=1), r"parameters do not match RankSVM"),
    "params not a dict": (lambda h, a: h.update(params=["C"]), r"parameters do not match RankSVM"),
    "extra array": (lambda h, a: a.update(evil=np.zeros(3)), r"its arrays .* are not the header's"),
    "extra array in header too": (
        lambda h, a: (a.update(evil=np.zeros(3)), h["arrays"].update(evil={"dtype": "<f8", "shape": [3]})),
        r"learned arrays do not match RankSVM",
    ),
    "missing array": (drop("n_iter_"), r"its arrays .* are not the header's"),
    "missing array and header entry": (
        lambda h, a: (a.pop("coef_"), h["arrays"].pop("coef_")), r"learned arrays do not match RankSVM"
    ),
    "coef_ float32": (lambda h, a: a.update(coef_=a["coef_"].astype(np.float32)), r"array coef_ has dtype <f4"),
    "coef_ int64": (lambda h, a: a.update(coef_=a["coef_"].astype(np.int64)), r"array coef_ has dtype <i8"),
    "coef_ too short": (lambda h, a: a.update(coef_=a["coef_"][:3]), r"array coef_ .*shape \[3\]"),
    "coef_ too short, header agrees": (
        lambda h, a: (a.update(coef_=a["coef_"][:3]), h["arrays"]["coef_"].update(shape=[3])),
        r"coef_ does not have n_features_in_ entries",
    ),
    "coef_ 2-d, header agrees": (
        lambda h, a: (a.update(coef_=a["coef_"][None, :]), h["arrays"]["coef_"].update(shape=[1, N_FEATURES])),
        r"coef_ does not have n_features_in_ entries",
    ),
    "n_features_in_ changed": (lambda h, a: a.update(n_features_in_=np.array(N_FEATURES + 1)), r"n_features_in_"),
    "NaN in coef_": (lambda h, a: a["coef_"].__setitem__(2, np.nan), r"coef_ holds NaN"),
    "inf in coef_": (lambda h, a: a["coef_"].__setitem__(0, -np.inf), r"coef_ holds NaN or infinite"),
}


@pytest.mark.parametrize("case", list(TAMPERINGS))
def test_tampered_file_gives_data_format_error(case, saved, tmp_path):
    mutate, message = TAMPERINGS[case]
    path = tampered(saved, tmp_path, mutate)
    with pytest.raises(DataFormatError, match=message) as info:
        load_model(path)
    assert info.value.path == str(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("keep", [0.05, 0.3, 0.5, 0.9, 0.99])
def test_truncated_file_gives_data_format_error(keep, saved, tmp_path):
    raw = saved.read_bytes()
    path = tmp_path / "truncated.npz"
    path.write_bytes(raw[: max(1, int(len(raw) * keep))])
    with pytest.raises(DataFormatError, match="not a structrank model file|damaged model file") as info:
        load_model(path)
    assert info.value.path == str(path)


def test_truncated_by_one_byte_gives_data_format_error(saved, tmp_path):
    path = tmp_path / "truncated.npz"
    path.write_bytes(saved.read_bytes()[:-1])
    with pytest.raises(DataFormatError):
        load_model(path)


@pytest.mark.parametrize(
    "content",
    [b"", b"hello, this is not a model\n", b"PK\x03\x04 not really a zip", b"\x93NUMPY garbage"],
    ids=["empty", "text", "zip magic only", "npy magic only"],
)
def test_non_zip_file_gives_data_format_error(content, tmp_path):
    path = tmp_path / "model.npz"
    path.write_bytes(content)
    with pytest.raises(DataFormatError, match="not a structrank model file") as info:
        load_model(path)
    assert info.value.path == str(path)


def test_npy_file_with_an_object_array_is_refused_without_unpickling(tmp_path, monkeypatch):
    path = tmp_path / "evil.npy"
    np.save(path, np.array([{"class": "RankSVM"}, os.getcwd], dtype=object), allow_pickle=True)
    import pickle

    def no_unpickling(*args, **kwargs):
        raise AssertionError("load_model unpickled something")

    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    with pytest.raises(DataFormatError, match="not a structrank model file") as info:
        load_model(path)
    assert "Object arrays" in str(info.value) or "pickle" in str(info.value)


def test_bare_npy_array_is_refused(tmp_path):
    path = tmp_path / "plain.npy"
    np.save(path, np.zeros(N_FEATURES))
    with pytest.raises(DataFormatError, match="bare array"):
        load_model(path)


def test_archive_without_header_is_refused(tmp_path):
    path = tmp_path / "noheader.npz"
    np.savez(path, coef_=np.zeros(3))
    with pytest.raises(DataFormatError, match="no header"):
        load_model(path)


@pytest.mark.parametrize(
    "header",
    [
        np.array([{"format": "structrank-model"}], dtype=object),
        np.frombuffer(b"{not json", dtype=np.uint8),
        np.frombuffer(b"\xff\xfe\x00", dtype=np.uint8),
    ],
    ids=["object array header", "not json", "not utf-8"],
)
def test_unreadable_header_is_refused(header, tmp_path):
    path = tmp_path / "badheader.npz"
    np.savez(path, __header__=header, coef_=np.zeros(3))
    with pytest.raises(DataFormatError, match="damaged model file|not a structrank model file"):
        load_model(path)


@pytest.mark.parametrize("header_json", ["[1, 2]", '"structrank-model"', "null"])
def test_header_that_is_not_an_object_is_refused(header_json, tmp_path):
    path = tmp_path / "badheader.npz"
    np.savez(path, __header__=np.frombuffer(header_json.encode(), dtype=np.uint8))
    with pytest.raises(DataFormatError, match="wrong format name"):
        load_model(path)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(DataFormatError, match="model file not found"):
        load_model(tmp_path / "absent.npz")
    with pytest.raises(DataFormatError, match="not a structrank model folder"):
        load_model(tmp_path)  # a folder is a text model's form: one without structrank's header is named


# Tampered files whose header agrees with the tampered arrays: the header check passes, and the
# loader's value checks must still stop them with a DataFormatError.


def test_text_coef_with_matching_header_gives_data_format_error(saved, tmp_path):
    def mutate(header, arrays):
        arrays["coef_"] = np.array(["1.0"] * N_FEATURES)
        header["arrays"]["coef_"]["dtype"] = arrays["coef_"].dtype.str

    with pytest.raises(DataFormatError, match="coef_"):
        load_model(tampered(saved, tmp_path, mutate))


def test_complex_coef_with_matching_header_gives_data_format_error(saved, tmp_path):
    def mutate(header, arrays):
        arrays["coef_"] = arrays["coef_"].astype(np.complex128) + 1j
        header["arrays"]["coef_"]["dtype"] = arrays["coef_"].dtype.str

    with pytest.raises(DataFormatError, match="coef_"):
        load_model(tampered(saved, tmp_path, mutate))


def test_array_n_features_in_with_matching_header_gives_data_format_error(saved, tmp_path):
    def mutate(header, arrays):
        arrays["n_features_in_"] = np.array([N_FEATURES, N_FEATURES])
        header["arrays"]["n_features_in_"] = {"dtype": arrays["n_features_in_"].dtype.str, "shape": [2]}

    with pytest.raises(DataFormatError, match="n_features_in_"):
        load_model(tampered(saved, tmp_path, mutate))


def test_header_array_entry_that_is_not_an_object_gives_data_format_error(saved, tmp_path):
    def mutate(header, arrays):
        header["arrays"]["coef_"] = 5

    with pytest.raises(DataFormatError, match="coef_"):
        load_model(tampered(saved, tmp_path, mutate))


def test_nan_intercept_gives_data_format_error(tmp_path, models, data):
    path = tmp_path / "linreg.npz"
    save_model(models["LinearRegressionRanker"], path)

    def mutate(header, arrays):
        arrays["intercept_"] = np.array(np.nan)

    with pytest.raises(DataFormatError, match="intercept_"):
        load_model(tampered(path, tmp_path, mutate))


# -- atomic saving ---------------------------------------------------------------------------


def test_failed_save_leaves_the_old_file_intact(tmp_path, models, data, monkeypatch):
    path = tmp_path / "model.npz"
    save_model(models["LinearRegressionRanker"], path)
    before = path.read_bytes()

    def crash(fd):
        raise OSError("disk on fire")

    # the new content is written to a temporary file; the crash comes before it replaces the target
    monkeypatch.setattr(structrank.atomic.os, "fsync", crash)
    with pytest.raises(OSError, match="disk on fire"):
        save_model(models["RankSVM"], path)
    monkeypatch.undo()

    assert path.read_bytes() == before
    loaded = load_model(path)
    assert type(loaded) is LinearRegressionRanker
    np.testing.assert_array_equal(loaded.predict(data.X), models["LinearRegressionRanker"].predict(data.X))
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]  # the temporary file is gone


def test_failed_first_save_leaves_no_file(tmp_path, models, monkeypatch):
    def crash(src, dst):
        raise OSError("rename failed")

    monkeypatch.setattr(structrank.atomic.os, "replace", crash)
    with pytest.raises(OSError, match="rename failed"):
        save_model(models["RankSVM"], tmp_path / "model.npz")
    assert list(tmp_path.iterdir()) == []


def test_successful_save_replaces_the_file_and_leaves_no_temporary_files(tmp_path, models, data):
    path = tmp_path / "sub" / "model.npz"  # the folder is created
    save_model(models["LinearRegressionRanker"], path)
    save_model(models["RankSVM"], path)
    assert type(load_model(path)) is RankSVM
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.npz"]


def test_atomic_writes_keep_ordinary_permissions(tmp_path):
    import os

    from structrank.atomic import write_text_atomic

    new = tmp_path / "new.txt"
    write_text_atomic(new, "a")
    umask = os.umask(0)
    os.umask(umask)
    assert new.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's private 0600
    os.chmod(new, 0o640)
    write_text_atomic(new, "b")
    assert new.stat().st_mode & 0o777 == 0o640 and new.read_text() == "b"  # a replaced file keeps its mode
