"""Natural-language substrate: CoNLL-U treebanks, a trigram HMM POS tagger with exact n-best, and
the n-best reranking data built from it (Jagarlamudi & Daumé 2012, Sec. 4).

- ``structrank_lab.nlp.conllu``: reading CoNLL-U, choosing the tag column, the four UD treebanks;
- ``structrank_lab.nlp.hmm``: :class:`TrigramHMMTagger` (TnT-style estimation, numba Viterbi and
  list-Viterbi n-best, pickle-free save/load) -- reusable for tagging any tokenised text;
- ``structrank_lab.nlp.tagging``: jackknifed n-best lists over contiguous folds, the suffix and tag
  views, and their NBestData.
"""

from structrank_lab.nlp.conllu import (
    UD_TAG_KIND,
    UD_TREEBANKS,
    Sentence,
    load_tagged,
    load_treebank,
    read_conllu,
    tag_set,
)
from structrank_lab.nlp.hmm import TrigramHMMTagger, token_accuracy
from structrank_lab.nlp.tagging import (
    ViewVectorizer,
    build_nbest_data,
    contiguous_folds,
    fit_views,
    jackknife_nbest,
    reranking_data,
)

__all__ = [
    "Sentence",
    "TrigramHMMTagger",
    "UD_TAG_KIND",
    "UD_TREEBANKS",
    "ViewVectorizer",
    "build_nbest_data",
    "contiguous_folds",
    "fit_views",
    "jackknife_nbest",
    "load_tagged",
    "load_treebank",
    "read_conllu",
    "reranking_data",
    "tag_set",
    "token_accuracy",
]
