"""The PTK similarity of a question and a candidate (structrank_lab.nlp.syntax) and the paper's feature list."""

import numpy as np
import pytest

from structrank.kernels.trees import PartialTreeKernel
from structrank_lab.nlp.shallow import ShallowParser, shallow_tree
from structrank.qa.features import FEATURES, PAPER_FEATURES, QAFeaturizer, tokenize
from structrank_lab.nlp.syntax import PTK_LAMBDA, PTK_MAX_LENGTH, PTK_MU, ptk_similarity


class CapitalTagger:
    """A stand-in tagger: capitalised words are NNP, 'is'/'was' VBZ, the rest NN (no data needed)."""

    def predict(self, sentences):
        return [["NNP" if w[:1].isupper() else "VBZ" if w in ("is", "was") else "NN" for w in s] for s in sentences]


PARSER = ShallowParser(tagger=CapitalTagger())
QUESTIONS = ["Where is Paris", "Where is Paris", "Who was Gustave Eiffel"]
CANDIDATES = ["Paris is in France", "the tower was built in 1889", "Gustave Eiffel was an engineer"]


def test_ptk_similarity_is_the_normalised_kernel_of_each_pairs_shallow_trees():
    values = ptk_similarity(QUESTIONS, CANDIDATES, parser=PARSER)
    kernel = PartialTreeKernel(lam=PTK_LAMBDA, mu=PTK_MU, max_length=PTK_MAX_LENGTH)
    tagger = CapitalTagger()
    for value, q, c in zip(values, QUESTIONS, CANDIDATES):
        trees = [shallow_tree(tokenize(t), tagger.predict([tokenize(t)])[0]) for t in (q, c)]
        assert value == pytest.approx(kernel([trees[0]], [trees[1]])[0, 0], abs=1e-12)
    assert np.all((values > 0) & (values < 1))
    # a shared NNP-VBZ pattern scores above a pair that shares only the verb's tag
    assert values[0] > values[1]
    assert ptk_similarity(["Paris is big"], ["Paris is big"], parser=PARSER)[0] == pytest.approx(1.0)


def test_ptk_similarity_of_a_pair_does_not_depend_on_the_batch():
    batch = ptk_similarity(QUESTIONS, CANDIDATES, parser=PARSER)
    alone = [ptk_similarity([q], [c], parser=PARSER)[0] for q, c in zip(QUESTIONS, CANDIDATES)]
    assert batch.tolist() == alone
    with pytest.raises(ValueError, match="3 questions but 2 candidates"):
        ptk_similarity(QUESTIONS, CANDIDATES[:2], parser=PARSER)


def test_the_papers_feature_list_names_only_its_similarity_measures():
    """Sec. 5.1: cosine, longest common substring/subsequence, Jaccard, containment, greedy string
    tiling; none of our cues, counts, overlaps of numbers or names, lengths or crosses."""
    assert set(PAPER_FEATURES) < set(FEATURES)
    kinds = {name.split("_")[0] for name in PAPER_FEATURES}
    assert kinds == {"cos", "jaccard", "containment", "lcsubstring", "lcsubsequence", "gst"}


def test_paper_features_are_our_columns_of_the_list_beside_the_ptk(tmp_path):
    from structrank_lab.experiments.haponchyk2018.features import paper_features
    from structrank.qa.readers import QAData

    data = QAData(["Where is Paris"], CANDIDATES, np.array([1, 0, 0]), np.array(["q"] * 3), ["a", "b", "c"])
    featurizer = QAFeaturizer(crosses=False).fit(data)
    X = paper_features(featurizer, PARSER, data)
    assert X.shape == (3, len(PAPER_FEATURES) + 1)
    full = featurizer.transform(data)
    for j, name in enumerate(PAPER_FEATURES):
        assert X[:, j].tolist() == full[:, featurizer.feature_names_.index(name)].tolist()
    assert X[:, -1].tolist() == ptk_similarity(["Where is Paris"] * 3, CANDIDATES, parser=PARSER).tolist()
