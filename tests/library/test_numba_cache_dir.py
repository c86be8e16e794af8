"""numba's on-disk cache of structrank's kernels lives in a folder per state of structrank's sources (a
change to any module, an edit or an upgrade, cannot leave a cached caller running a callee's old machine
code), and importing structrank changes nothing of numba's for the rest of the process."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import structrank
from structrank.numba_cache import prune

SRC = Path(structrank.__file__).parents[1]

# a kernel module imported after structrank (and after numba, when the probe imports it first), the
# process's numba settings before and after, and where a structrank kernel and a foreign one cache
PROBE = """
import json, os, sys
first_numba = sys.argv[1] == "numba-first"
if first_numba:
    import numba
import structrank
from structrank import sorting
import numba
before = os.environ.get("NUMBA_CACHE_DIR"), numba.config.CACHE_DIR
sys.path.insert(0, sys.argv[2])
import foreign
print(json.dumps({"env": os.environ.get("NUMBA_CACHE_DIR"), "config": numba.config.CACHE_DIR,
                  "ours": sorting.order_desc._cache.cache_path,
                  "foreign": foreign.double._cache.cache_path}))
"""
FOREIGN = "from numba import njit\n\n@njit(cache=True)\ndef double(x):\n    return 2 * x\n"


def probe(tmp_path, env, pythonpath=SRC, order="structrank-first"):
    (tmp_path / "lib").mkdir(exist_ok=True)
    (tmp_path / "lib" / "foreign.py").write_text(FOREIGN)
    env = {**env, "PYTHONPATH": str(pythonpath)}
    out = subprocess.run([sys.executable, "-c", PROBE, order, str(tmp_path / "lib")], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def clean_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return env


def test_only_structrank_kernels_cache_in_structrank_folder(tmp_path):
    for order in ("structrank-first", "numba-first"):
        seen = probe(tmp_path, clean_env(tmp_path), order=order)
        assert seen["env"] is None and seen["config"] in ("", None)  # the process's numba settings untouched
        assert seen["ours"].startswith(str(tmp_path / "cache" / "structrank" / "numba" / structrank.__version__))
        assert Path(seen["ours"]).name == "structrank"  # sorting.py sits at the package's top
        assert seen["foreign"] == str(tmp_path / "lib" / "__pycache__")  # numba's own place for another library


def test_the_folder_changes_when_a_module_changes(tmp_path):
    package = tmp_path / "src" / "structrank"
    shutil.copytree(Path(structrank.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    env = clean_env(tmp_path)
    first = probe(tmp_path, env, tmp_path / "src")["ours"]
    assert first.startswith(str(tmp_path / "cache" / "structrank" / "numba" / structrank.__version__))
    assert probe(tmp_path, env, tmp_path / "src")["ours"] == first  # nothing changed: the same folder
    module = package / "oracles" / "po.py"
    stamp = module.stat().st_mtime_ns - 10**9  # older than before: a time stamp that differs is enough
    os.utime(module, ns=(stamp, stamp))  # an edited callee
    second = probe(tmp_path, env, tmp_path / "src")["ours"]
    assert second != first and Path(second).is_dir()


def test_a_folder_the_user_chose_is_kept(tmp_path):
    env = {**clean_env(tmp_path), "NUMBA_CACHE_DIR": str(tmp_path / "mine")}
    seen = probe(tmp_path, env)
    assert seen["env"] == seen["config"] == str(tmp_path / "mine")
    assert seen["ours"].startswith(str(tmp_path / "mine"))
    assert not (tmp_path / "cache" / "structrank").exists()


def test_every_cached_kernel_module_takes_njit_from_numba_cache():
    """The locator must be in place before a module's kernels are decorated: a module imported first that
    took numba's own njit would cache its kernels beside its source (the test below imports them in one
    order only, after the locator is in)."""
    offenders = [str(path.relative_to(SRC)) for path in (SRC / "structrank").rglob("*.py")
                 if "cache=True" in path.read_text(encoding="utf-8")
                 and "from structrank.numba_cache import njit" not in path.read_text(encoding="utf-8")]
    assert offenders == []


def test_every_cached_kernel_of_structrank_caches_in_its_folder(tmp_path):
    """Every module-level kernel compiled with ``cache=True`` caches under structrank's folder."""
    modules = sorted("structrank." + ".".join(path.relative_to(SRC / "structrank").with_suffix("").parts)
                     for path in (SRC / "structrank").rglob("*.py") if "cache=True" in path.read_text(encoding="utf-8")
                     and path.name != "numba_cache.py")
    code = ("import importlib, json, sys\nfrom numba.core.caching import NullCache\nfrom numba.core.dispatcher import "
            "Dispatcher\npaths = {}\nfor name in json.loads(sys.argv[1]):\n    for key, value in "
            "vars(importlib.import_module(name)).items():\n        if isinstance(value, Dispatcher) and not "
            "isinstance(value._cache, NullCache) and value.__module__ == name:\n            paths[name + '.' + key] = "
            "value._cache.cache_path\nprint(json.dumps(paths))")
    env = {**clean_env(tmp_path), "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code, json.dumps(modules)], env=env, capture_output=True, text=True,
                         check=True).stdout
    paths = json.loads(out)
    assert len({name.rsplit(".", 1)[0] for name in paths}) >= 15  # the kernels' modules were seen
    folder = str(tmp_path / "cache" / "structrank" / "numba")
    assert {name: path for name, path in paths.items() if not path.startswith(folder)} == {}


def test_only_the_recent_folders_are_kept(tmp_path):
    for i in range(12):
        folder = tmp_path / f"v-{i}"
        folder.mkdir()
        os.utime(folder, (1_000_000 + i, 1_000_000 + i))
    prune(tmp_path, keep=8)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"v-{i}" for i in range(4, 12))
