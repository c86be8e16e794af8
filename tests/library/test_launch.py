"""What a launcher's environment tells a process: how many copies run, which one writes, each one's share of a step."""

import pytest

from structrank.constraints import InvalidParameterError
from structrank.launch import is_main_process, world_size
from structrank.learners import CrossEncoderRanker


def test_without_a_launcher_one_process_writes(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("RANK", raising=False)
    assert world_size() == 1 and is_main_process()


@pytest.mark.parametrize("rank, main", [("0", True), ("1", False), ("3", False), ("", True)])
def test_only_rank_zero_is_the_main_process(monkeypatch, rank, main):
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", rank)
    assert world_size() == 4 and is_main_process() is main


@pytest.mark.parametrize("name, value", [("WORLD_SIZE", "two"), ("RANK", "-1"), ("WORLD_SIZE", "1.5")])
def test_a_bad_launcher_variable_is_named(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=f"{name}='{value}'"):
        world_size() if name == "WORLD_SIZE" else is_main_process()


def test_each_process_takes_its_share_of_a_step(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert CrossEncoderRanker(batch_size=4)._per_process(4) == 2
    with pytest.raises(InvalidParameterError, match="batch_size=3 queries per step cannot be shared by the "
                                                    "launcher's 2 processes; give a multiple of 2"):
        CrossEncoderRanker(batch_size=3)._per_process(3)
    # BCE's step is pairs, as many as the queries hold on average: any count is shared, rounded
    assert CrossEncoderRanker(loss="bce")._per_process(37) == 18
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert CrossEncoderRanker(batch_size=3)._per_process(3) == 3
