"""Syntactic similarity of a question and a candidate: the partial tree kernel of their shallow trees.

Haponchyk & Moschitti (2018) take their "simple textual similarity" features from Barrón-Cedeño
et al. (2016), and one of them is "the similarity based on the PTK score": the partial tree
kernel (Moschitti 2006) between the two texts' syntactic trees, normalised to [0, 1]. structrank
has no full parser, so the trees are the shallow trees of ``structrank_lab.nlp.shallow`` (the HMM
tagger's PTB tags on UD English-EWT, chunks by rule), the representation Filice et al. (2016)
use for question-comment pairs, with croce2016's kernel settings (lam = mu = 0.4, child
subsequences of at most 3). It is a rebuilt feature, not the paper's: the parser differs.

Each text is parsed once, and each distinct question's values come from one kernel call against
its candidates.
"""

from __future__ import annotations

import numpy as np

from structrank.qa.features import tokenize

#: PTK's decays and child-subsequence cap, as croce2016's reproduction uses them (KeLP's settings).
PTK_LAMBDA = PTK_MU = 0.4
PTK_MAX_LENGTH = 3


def ptk_similarity(questions, candidates, parser=None, data_dir=None) -> np.ndarray:
    """Normalised PTK of each (question, candidate) pair's shallow trees: one value in [0, 1] per pair.

    ``questions`` and ``candidates`` are aligned lists of texts. Each distinct text is tokenised
    (``structrank.qa.features.tokenize``) and parsed once, and each distinct question's values come
    from one kernel call against its candidates, so a row depends on its pair only. ``parser`` is a
    ``ShallowParser`` (by default one trained on UD English-EWT from ``data_dir``).
    """
    # deferred: the tree kernels and the shallow parser (numba, the HMM) load only to compute PTK similarities
    from structrank.kernels import PartialTreeKernel
    from structrank_lab.nlp.shallow import ShallowParser

    questions, candidates = list(questions), list(candidates)
    if len(questions) != len(candidates):
        raise ValueError(f"{len(questions)} questions but {len(candidates)} candidates")
    parser = parser or ShallowParser(data_dir=data_dir)
    texts = list(dict.fromkeys(questions + candidates))
    tree_of = dict(zip(texts, parser.parse([tokenize(t) for t in texts])))
    kernel = PartialTreeKernel(lam=PTK_LAMBDA, mu=PTK_MU, max_length=PTK_MAX_LENGTH)
    rows_of = {}
    for i, question in enumerate(questions):
        rows_of.setdefault(question, []).append(i)
    out = np.zeros(len(questions))
    for question, rows in rows_of.items():
        out[rows] = kernel([tree_of[question]], [tree_of[candidates[i]] for i in rows])[0]
    return out
