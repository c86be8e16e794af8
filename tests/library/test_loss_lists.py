"""Nothing lists the registered losses by hand (issue 39, point 3): the learners' and the torch module's help
refer to the registry (``structrank.losses.loss_names``), so a loss added as one module is never missing there.

The lists the registry generates (``structrank train --help``, docs/LOSSES.md, the README's table) are
checked by tests/library/test_losses.py and tests/library/test_readme.py; an experiment's own choice of losses (a paper's) is
not a list of every loss and is not checked here.
"""

import re
from pathlib import Path

import pytest

from structrank.losses import loss_names

SRC = Path(__file__).resolve().parents[2] / "src" / "structrank"
#: the modules whose help a user reads to choose a loss; none may enumerate the registered ones
HELP_MODULES = ["learners/ssvm.py", "learners/latent.py", "learners/structured_boosting.py", "learners/mlp.py",
                "learners/score_loss.py", "learners/crf.py", "learners/torch_loss.py", "cli.py",
                *sorted(f"commands/{path.name}" for path in (SRC / "commands").glob("*.py"))]


def enumerations(text):
    """The runs of three or more quoted registered loss names (``"auc", "map", "ndcg"``, ``"ml"|"la"``)."""
    names = sorted(loss_names(), key=len, reverse=True)
    one = r'["`]+(?:%s)["`]+' % "|".join(map(re.escape, names))
    joined = re.sub(r'"\s*\n\s*"', "", text)  # implicit concatenation across lines
    return [m.group(0) for m in re.finditer(r"(?:%s\s*(?:,|\|)\s*){2,}%s" % (one, one), joined)]


@pytest.mark.parametrize("module", HELP_MODULES)
def test_no_help_lists_the_losses_by_hand(module):
    assert enumerations((SRC / module).read_text(encoding="utf-8")) == []


def test_the_check_finds_a_list_by_hand():
    assert enumerations('loss : {"auc", "map", "ndcg"}, default "map"') == ['"auc", "map", "ndcg"']
    assert enumerations('loss="ndcg"|"map"|\n  "crf-kl"') == ['"ndcg"|"map"|\n  "crf-kl"']
    assert enumerations('loss="map" or "ndcg"') == []
