"""LETOR fold discovery: ``Fold1..FoldK`` folders with train, vali and test files.

``letor_folds(root)`` lists the folds under a folder; ``letor_root(name)`` finds a named data set
(``"MQ2008"``, ``"OHSUMED"``...) in the data folder (``structrank.paths``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from structrank.paths import data_dir

# Where each LETOR data set lives inside the data folder; a user's own copy of MQ2007 or
# TD2003 in the same layout is found the same way.
LETOR_LOCATIONS = {
    "MQ2007": ("letor", "MQ2007"),
    "MQ2008": ("letor", "MQ2008"),
    "OHSUMED": ("letor", "OHSUMED", "QueryLevelNorm"),
    "TD2003": ("letor", "TD2003"),
    "TD2004": ("letor", "TD2004"),
}

_SPLIT_NAMES = {
    "train": ("train", "trainingset"),
    "vali": ("vali", "validationset", "valid"),
    "test": ("test", "testset"),
}


@dataclass(frozen=True)
class LetorFold:
    """One fold: its name and the paths of its train, vali and test files.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from structrank.data import letor_folds, make_ranking_dataset, write_letor
    >>> tmp = tempfile.TemporaryDirectory()
    >>> ds = make_ranking_dataset(n_queries=3, docs_per_query=4, random_state=0)
    >>> for fold in ("Fold1", "Fold2"):
    ...     (Path(tmp.name) / fold).mkdir()
    ...     for split in ("train", "vali", "test"):
    ...         write_letor(Path(tmp.name) / fold / f"{split}.txt", ds)
    >>> [(fold.name, fold.split("vali").name) for fold in letor_folds(tmp.name)]
    [('Fold1', 'vali.txt'), ('Fold2', 'vali.txt')]
    >>> tmp.cleanup()
    """

    name: str
    train: Path
    vali: Path | None
    test: Path

    def split(self, name: str) -> Path | None:
        return {"train": self.train, "vali": self.vali, "test": self.test}[name]


def _find_split(folder: Path, split: str) -> Path | None:
    for stem in _SPLIT_NAMES[split]:
        for suffix in (".txt", ".txt.gz", ".gz", ""):
            path = folder / f"{stem}{suffix}"
            if path.is_file():
                return path
    return None


def letor_folds(root) -> list[LetorFold]:
    """The folds under ``root`` (``root/Fold1/train.txt[.gz]`` ...), in fold order.

    Raises FileNotFoundError when ``root`` has no fold folder or a fold lacks train or test.
    """
    root = Path(root)
    folders = [p for p in root.iterdir() if p.is_dir() and re.fullmatch(r"Fold\d+", p.name)] if root.is_dir() else []
    if not folders:
        raise FileNotFoundError(f"no Fold1..FoldK folders in {root}")
    folds = []
    for folder in sorted(folders, key=lambda p: int(p.name[4:])):
        train, vali, test = (_find_split(folder, s) for s in ("train", "vali", "test"))
        if train is None or test is None:
            raise FileNotFoundError(f"{folder} lacks a train or a test file")
        folds.append(LetorFold(folder.name, train, vali, test))
    return folds


def letor_root(name: str, root=None) -> Path | None:
    """The folder of a named LETOR data set (``"MQ2008"``, ``"OHSUMED"``...), or None if absent."""
    if root is None:
        root = data_dir()
        if root is None:
            return None
    parts = LETOR_LOCATIONS.get(name.upper(), ("letor", name))
    path = Path(root).joinpath(*parts)
    if not path.is_dir():
        return None
    # LETOR 3.0 ships each Gov/OHSUMED set in normalisation variants; QueryLevelNorm is the one
    # its baselines use, so a set unpacked with its variants is read from there.
    if not any(path.glob("Fold[0-9]*")) and (path / "QueryLevelNorm").is_dir():
        return path / "QueryLevelNorm"
    return path
