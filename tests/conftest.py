"""Shared test fixtures. Data tests skip only when the data folder is absent, and never in CI."""

import os
import sys
from pathlib import Path

import pytest

from structrank.paths import data_dir

DATA = data_dir()

# The tests sit by package (library/, lab/) and share the helper modules of this folder; a test module may import
# another's helpers by its name (``from test_pinned import check_pinned``) whichever folder pytest collects first
for folder in (Path(__file__).parent / "library", Path(__file__).parent / "lab"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def pytest_sessionstart(session):
    if os.environ.get("CI") and DATA is None:
        raise pytest.UsageError("CI=true but the benchmark data folder is missing (set STRUCTRANK_DATA)")


needs_data = pytest.mark.skipif(DATA is None, reason="benchmark data folder absent (set STRUCTRANK_DATA)")


@pytest.fixture(scope="session")
def data_root():
    if DATA is None:
        pytest.skip("benchmark data folder absent (set STRUCTRANK_DATA)")
    return DATA
