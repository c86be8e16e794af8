"""What a loss's options may hold: the constraint of every option name the registered losses share.

A loss declares its options once, as the parameters (with defaults) of the factory it registers
(``structrank.losses.registry``); this table says what values an option of a given name takes, so
that a learner's ``loss_params`` are checked in the words of the learners' own parameters
(``k must be an int in the range [1, 2147483647], got 0``) before any data is read. A loss with an
option of a new name states its constraint where it registers (``register(..., constraints=...)``);
without one, its factory checks the value and its ValueError is the message.
"""

from __future__ import annotations

from structrank.constraints import COUNT, NON_NEGATIVE, POSITIVE, Items, StrOptions
from structrank.feature_maps import POSITIONAL_WEIGHTS

#: option name -> its constraints (scikit-learn's vocabulary, ``structrank.constraints``)
SHARED = {
    "k": COUNT,
    "feature_map": [str, None],
    "components": [Items(str)],
    "discount": [StrOptions({"letor", "log2"})],
    "dorm_cut": [*COUNT, None],
    # "auto" is settled on the training labels by the learner (``registry.build_for_labels``)
    "gain": [StrOptions({"auto", "binary", "exp2"})],
    "relevant_from": COUNT,
    "crf_param": POSITIVE,
    "inference": [StrOptions({"greedy", "exact", "none"})],
    "weights": [StrOptions(set(POSITIONAL_WEIGHTS))],
    "scale": NON_NEGATIVE,
    "positions": [StrOptions({"all", "positives"})],
    "random_state": [None, int],
}
