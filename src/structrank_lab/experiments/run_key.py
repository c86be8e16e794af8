"""The key of one experiment run and what it measured: ``RunKey`` (experiment, dataset, split, fold, seed,
model, params) with its canonical parameter text (``canonical_params``), and the measurements a run
records, ``(metric, convention, value)`` (``_measurement``). The result store (``store.py``) keys its
runs by them.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

KEY_FIELDS = ("experiment", "dataset", "split", "fold", "seed", "model", "params")


def _jsonable(obj):
    # numpy scalars and arrays show up in parameter grids; JSON knows neither.
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"parameter value {obj!r} of type {type(obj).__name__} is not JSON-serialisable")


def params_of(row: Mapping) -> dict:
    """The parameters of a recorded row (``ResultStore.rows`` gives their canonical JSON text; a row built by hand
    may hold the dict). A new dict each call (a shallow copy): the caller may change its items."""
    return row["params"] if isinstance(row["params"], Mapping) else dict(_parsed_params(row["params"]))


@functools.lru_cache(maxsize=4096)
def _parsed_params(text: str) -> dict:
    # A store holds a row per measurement, many per run with the same text: reports ask for it row by row.
    return json.loads(text)


def canonical_params(params: Mapping[str, Any] | str | None) -> str:
    """The canonical JSON text of a parameter dict: sorted keys, no spaces.

    Two dicts with the same items give the same text whatever their insertion order, so the text
    can be part of a run's identity. Note that ``1`` and ``1.0`` stay different.

    >>> canonical_params({"b": 2, "a": 1.0})
    '{"a":1.0,"b":2}'
    """
    if params is None:
        params = {}
    if isinstance(params, str):
        params = json.loads(params)
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    return json.dumps(dict(params), sort_keys=True, separators=(",", ":"), default=_jsonable,
                      allow_nan=True)


@dataclass(frozen=True, eq=False)
class RunKey:
    """The identity of one run: what was trained, on what, and how.

    Parameters
    ----------
    experiment : str
        Experiment name (``"chakrabarti2008"``).
    dataset : str
        Dataset name (``"MQ2008"``).
    split : str, default "test"
        Which part of the data the values were measured on.
    fold : int or str, default 0
        Cross-validation fold (an index or a name such as ``"Fold1"``).
    seed : int, default 0
        Random seed of the run.
    model : str
        Model short name (``"svm-map"``).
    params : dict
        Model and run parameters; compared through their canonical JSON text.

    Examples
    --------
    >>> RunKey("e", "d", model="m", params={"a": 1, "b": 2}) == RunKey(
    ...     "e", "d", model="m", params={"b": 2, "a": 1})
    True
    """

    experiment: str
    dataset: str
    split: str = "test"
    fold: int | str = 0
    seed: int = 0
    model: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("experiment", "dataset", "split", "model"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"RunKey.{name} must be a non-empty string, got {value!r}")
        fold = self.fold
        if hasattr(fold, "item"):  # numpy integer
            fold = fold.item()
        if isinstance(fold, bool) or not isinstance(fold, (int, str)):
            raise ValueError(f"RunKey.fold must be an int or a str, got {self.fold!r}")
        object.__setattr__(self, "fold", fold)
        object.__setattr__(self, "seed", int(self.seed))
        params = json.loads(self.params) if isinstance(self.params, str) else dict(self.params)
        object.__setattr__(self, "params", params)
        # Computing it now also rejects parameters that cannot be stored.
        object.__setattr__(self, "_params_json", canonical_params(params))

    @property
    def params_json(self) -> str:
        """The canonical JSON text of ``params``."""
        return self._params_json

    def as_tuple(self) -> tuple:
        """The key as stored: the seven key fields, params as canonical JSON."""
        return (self.experiment, self.dataset, self.split, self.fold, self.seed, self.model,
                self._params_json)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "RunKey":
        """The key of a long-form record (a dict with the key columns)."""
        return cls(**{name: record[name] for name in KEY_FIELDS})

    def label(self) -> str:
        """A short human-readable name, for logs and progress bars."""
        return (f"{self.experiment}/{self.dataset}/{self.split}/fold={self.fold}/"
                f"seed={self.seed}/{self.model}{self._params_json}")

    # Equality and hashing go through the canonical tuple: params is a dict (unhashable), and
    # {"C": 1} must equal itself however it was built.
    def __eq__(self, other):
        if not isinstance(other, RunKey):
            return NotImplemented
        return self.as_tuple() == other.as_tuple()

    def __hash__(self):
        return hash(self.as_tuple())


def _as_key(key) -> RunKey:
    if isinstance(key, RunKey):
        return key
    if isinstance(key, Mapping):
        return RunKey.from_record(key)
    raise TypeError(f"expected a RunKey, got {type(key).__name__}")


def _measurement(row) -> tuple[str, str, float | None]:
    """(metric, convention, value) from a tuple, a mapping or an object with those attributes."""
    if isinstance(row, Mapping):
        metric, convention, value = row["metric"], row["convention"], row["value"]
    elif hasattr(row, "metric"):
        metric, convention, value = row.metric, row.convention, row.value
    else:
        metric, convention, value = row
    if not isinstance(metric, str) or not metric or not isinstance(convention, str):
        raise ValueError(f"a measurement needs a metric name and a convention, got {row!r}")
    value = float(value)
    return metric, convention, (None if math.isnan(value) else value)
