"""numba's on-disk cache lives in a folder per state of structrank's sources: a change to any module
(an edit, an upgrade) cannot leave a cached caller running a callee's old machine code."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import structrank

PROBE = "import os, structrank; print(os.environ.get('NUMBA_CACHE_DIR', ''))"


def cache_dir(env, pythonpath=None):
    env = {**env, **({"PYTHONPATH": str(pythonpath)} if pythonpath else {})}
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_folder_changes_when_a_module_changes(tmp_path):
    package = tmp_path / "src" / "structrank"
    shutil.copytree(Path(structrank.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    first = cache_dir(env, tmp_path / "src")
    assert first.startswith(str(tmp_path / "cache" / "structrank" / "numba" / structrank.__version__))
    assert cache_dir(env, tmp_path / "src") == first  # nothing changed: the same folder
    module = package / "oracles" / "po.py"
    stamp = module.stat().st_mtime_ns - 10**9  # older than before: a time stamp that differs is enough
    os.utime(module, ns=(stamp, stamp))  # an edited callee
    second = cache_dir(env, tmp_path / "src")
    assert second != first and Path(second).is_dir()


def test_a_folder_the_user_chose_is_kept(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "mine")}
    assert cache_dir(env) == str(tmp_path / "mine")


def test_only_the_recent_folders_are_kept(tmp_path):
    from structrank import _prune

    for i in range(12):
        folder = tmp_path / f"v-{i}"
        folder.mkdir()
        os.utime(folder, (1_000_000 + i, 1_000_000 + i))
    _prune(tmp_path, keep=8)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"v-{i}" for i in range(4, 12))
