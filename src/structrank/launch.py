"""The processes a launcher started: torchrun and accelerate run one copy of a command per device and tell each its
place through the environment (``WORLD_SIZE``, ``RANK``), before any process group exists.

A text reranker's fine-tuning shares each step's queries among the copies (``CrossEncoderRanker``); only the first
copy writes what the command makes, so that the copies do not race to replace one model folder.
"""

import os


def _count(name, default) -> int:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"the environment's {name}={text!r} is not a process count or rank (a launcher sets it)")
    return value


def world_size() -> int:
    """How many copies the launcher started (1 without a launcher)."""
    return max(1, _count("WORLD_SIZE", 1))


def is_main_process() -> bool:
    """Whether this is the copy that writes the results: rank 0, or the only process."""
    return _count("RANK", 0) == 0
