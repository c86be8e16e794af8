"""Shallow syntactic trees: chunks from PTB tags, trees the tree kernels read, the UD-trained parser."""

import pytest

from structrank.kernels.trees import PartialTreeKernel, parse_tree
from structrank_lab.nlp.shallow import CHUNK_OF_TAG, ShallowParser, chunks, shallow_tree


def test_chunks_cover_the_sentence_in_maximal_runs():
    tags = ["IN", "DT", "JJ", "NN", "MD", "VB", "RP", ",", "PRP", "VBZ", "RB", "."]
    spans = chunks(tags)
    assert spans == [("PP", 0, 1), ("NP", 1, 4), ("VP", 4, 7), (None, 7, 8), ("NP", 8, 9), ("VP", 9, 10),
                     ("ADVP", 10, 11), (None, 11, 12)]
    # the spans tile the sentence
    assert [s for _, s, _ in spans][1:] == [e for _, _, e in spans][:-1] and spans[-1][2] == len(tags)
    assert chunks([]) == []


def test_shallow_tree_round_trips_through_the_tree_parser():
    tree = shallow_tree(["How", "much", "is", "a", "visa", "?"], ["WRB", "JJ", "VBZ", "DT", "NN", "."])
    text = str(tree)
    assert text == "(ROOT (ADVP (WRB how)) (NP (JJ much)) (VP (VBZ is)) (NP (DT a) (NN visa)) (. ?))"
    assert parse_tree(text) == tree
    assert str(shallow_tree([], [])) == "ROOT"  # a lone node
    with pytest.raises(ValueError, match="2 words but 1 tags"):
        shallow_tree(["a", "b"], ["DT"])


def test_every_chunk_type_is_a_known_label():
    assert set(CHUNK_OF_TAG.values()) == {"NP", "VP", "PP", "ADVP"}


def test_similar_sentences_have_similar_trees():
    k = PartialTreeKernel()
    a = shallow_tree(["the", "visa", "costs", "money"], ["DT", "NN", "VBZ", "NN"])
    b = shallow_tree(["the", "visa", "costs", "nothing"], ["DT", "NN", "VBZ", "NN"])
    c = shallow_tree(["go", "home", "!"], ["VB", "NN", "."])
    gram = k([a, b, c])
    assert gram[0, 1] > gram[0, 2] and gram[0, 1] < 1.0


@pytest.mark.data
def test_parser_trained_on_ud_english_tags_plain_text(data_root):
    parser = ShallowParser(data_dir=data_root, max_words=6)
    trees = parser.parse([["Where", "can", "I", "buy", "a", "car", "in", "Doha", "?"], []])
    text = str(trees[0])
    assert text.startswith("(ROOT") and "(NN car)" in text and "(MD can)" in text
    assert "doha" not in text  # cut at 6 words
    assert str(trees[1]) == "ROOT"


def test_mark_related_marks_shared_content_words_and_their_chunks():
    from structrank_lab.nlp.shallow import mark_related, shallow_tree

    tree = shallow_tree(["The", "Visa", "costs", "a", "lot", "in", "Doha"], ["DT", "NN", "VBZ", "DT", "NN", "IN", "NNP"])
    marked = mark_related(tree, ["visa", "DOHA", "the", "in"])  # "the" and "in" are stop words
    assert str(marked) == ("(ROOT (REL-NP (DT the) (REL-NN visa)) (VP (VBZ costs)) (NP (DT a) (NN lot)) "
                           "(PP (IN in)) (REL-NP (REL-NNP doha)))")
    assert str(tree).count("REL") == 0  # the input tree is left as it was
    assert str(mark_related(tree, [])) == str(tree)
