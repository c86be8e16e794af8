"""Where structrank finds the benchmark data.

The data folder is read-only and never copied into the repository. It is found through the
environment variable STRUCTRANK_DATA; without it, ``../shared/data`` relative to the repository
root (for a checkout) or to the working directory (for an installed package).
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "STRUCTRANK_DATA"


def _candidates():
    here = Path(__file__).resolve()
    # src/structrank/paths.py -> repository root is three levels up in a checkout.
    repo_root = here.parents[2]
    yield repo_root.parent / "shared" / "data"
    cwd = Path.cwd()
    yield cwd.parent / "shared" / "data"
    yield cwd / "shared" / "data"


def data_dir(required: bool = False) -> Path | None:
    """Return the benchmark data folder, or None when there is none.

    Parameters
    ----------
    required : bool
        Raise FileNotFoundError (naming where it looked) instead of returning None.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        path = Path(env).expanduser()
        if path.is_dir():
            return path
        if required:
            raise FileNotFoundError(f"{ENV_VAR}={env} is not a folder")
        return None
    looked = []
    for path in _candidates():
        looked.append(str(path))
        if path.is_dir():
            return path.resolve()
    if required:
        raise FileNotFoundError(
            f"no benchmark data folder: set {ENV_VAR}, or put it at one of: " + ", ".join(looked)
        )
    return None


def dataset_dir(*parts: str, required: bool = False) -> Path | None:
    """A folder inside the data folder (``dataset_dir("letor", "MQ2008")``), or None."""
    root = data_dir(required=required)
    if root is None:
        return None
    path = root.joinpath(*parts)
    if path.is_dir():
        return path
    if required:
        raise FileNotFoundError(f"{path} does not exist")
    return None
