"""Shallow syntactic trees: words under their POS tags, grouped under chunk nodes.

Filice et al. (2016) represent a question and a comment by shallow trees for the tree kernels
of structrank.kernels.trees: the sentence's words (lowercased) under their POS tags, and the
tags grouped under chunk nodes, all under one ROOT::

    (ROOT (NP (DT the) (NN visa)) (VP (VBZ costs)) (NP (CD 500) (NNS riyals)) (. ?))

The tags come from structrank's own trigram HMM tagger trained on UD English-EWT (Penn Treebank
XPOS tags). The chunks come from the tags alone, by a small rule set over PTB tags: each tag
belongs to one chunk type (or to none), and a maximal run of tokens of one type is a chunk:

- NP: determiners, numbers, adjectives, nouns, pronouns, possessives (DT PDT PRP$ POS CD JJ JJR
  JJS NN NNS NNP NNPS PRP WP WP$ WDT EX FW);
- VP: modals, verbs and particles (MD VB VBD VBG VBN VBP VBZ RP);
- PP: prepositions and ``to`` (IN TO);
- ADVP: adverbs (RB RBR RBS WRB);
- anything else (punctuation, symbols, interjections, conjunctions) stands directly under ROOT.

A run of NP tags that contains a possessive (POS) stays one chunk, and a VP is not split at an
adverb between verbs; it is a sketch of a chunker, not a trained one. An empty sentence gives
the lone node ``ROOT``.

``ShallowParser`` trains the tagger on UD English-EWT and builds the trees; ``mark_related`` adds
REL marks to the words two texts share.
"""

from __future__ import annotations

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from structrank.kernels.trees import Tree
from structrank_lab.nlp.conllu import load_tagged
from structrank_lab.nlp.hmm import TrigramHMMTagger

CHUNK_OF_TAG = {
    **dict.fromkeys(("DT", "PDT", "PRP$", "POS", "CD", "JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS", "PRP", "WP",
                     "WP$", "WDT", "EX", "FW"), "NP"),
    **dict.fromkeys(("MD", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "RP"), "VP"),
    **dict.fromkeys(("IN", "TO"), "PP"),
    **dict.fromkeys(("RB", "RBR", "RBS", "WRB"), "ADVP"),
}


def chunks(tags):
    """[(chunk label or None, start, end)] covering the tag sequence: maximal runs of one chunk type.

    >>> chunks(["DT", "NN", "VBZ", "RB", "."])
    [('NP', 0, 2), ('VP', 2, 3), ('ADVP', 3, 4), (None, 4, 5)]
    """
    out = []
    for i, tag in enumerate(tags):
        kind = CHUNK_OF_TAG.get(tag)
        if out and kind is not None and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1], i + 1)
        else:
            out.append((kind, i, i + 1))
    return out


def shallow_tree(words, tags, lowercase=True) -> Tree:
    """The shallow tree of one tagged sentence.

    >>> str(shallow_tree(["The", "dog", "barks", "."], ["DT", "NN", "VBZ", "."]))
    '(ROOT (NP (DT the) (NN dog)) (VP (VBZ barks)) (. .))'
    """
    if len(words) != len(tags):
        raise ValueError(f"{len(words)} words but {len(tags)} tags")
    leaves = [Tree(tag, [Tree(word.lower() if lowercase else word)]) for word, tag in zip(words, tags)]
    children = []
    for kind, start, end in chunks(tags):
        if kind is None:
            children.extend(leaves[start:end])
        else:
            children.append(Tree(kind, leaves[start:end]))
    return Tree("ROOT", children)


def mark_related(tree: Tree, other_words, prefix: str = "REL-") -> Tree:
    """A copy of ``tree`` whose tags (and their chunks) over words of ``other_words`` carry ``prefix``.

    Severyn & Moschitti (2012), used by Filice et al. (2016) for question-comment pairs: a tag
    node whose word (lowercased, not an English stop word) also occurs in the other text of the
    pair becomes ``REL-tag``, and the chunk above it ``REL-chunk``. A tree kernel between two
    pairs then matches fragments that are shared *between question and comment* in both, which
    a kernel on the separate trees cannot see.

    >>> t = shallow_tree(["the", "visa", "costs"], ["DT", "NN", "VBZ"])
    >>> str(mark_related(t, {"visa"}))
    '(ROOT (REL-NP (DT the) (REL-NN visa)) (VP (VBZ costs)))'
    """
    related = {w.lower() for w in other_words} - ENGLISH_STOP_WORDS

    def is_related(tag_node):
        return len(tag_node.children) == 1 and tag_node.children[0].is_leaf \
            and tag_node.children[0].label in related

    def mark(node):
        if node.is_leaf:
            return Tree(node.label)
        children = [mark(c) for c in node.children]
        hit = is_related(node) or (node.label != "ROOT" and any(is_related(c) for c in node.children))
        return Tree(prefix + node.label if hit else node.label, children)

    return mark(tree)


class ShallowParser:
    """Tokenised text -> shallow trees, with a trigram HMM tagger (UD English-EWT XPOS by default).

    ``max_words`` cuts long texts (a tree kernel's cost grows with the product of the trees'
    sizes; the comments of SemEval threads run to hundreds of words).
    """

    def __init__(self, tagger=None, max_words=None, data_dir=None):
        if tagger is None:
            words, tags, _ = load_tagged("en", "train", data_dir=data_dir)
            tagger = TrigramHMMTagger().fit(words, tags)
        self.tagger = tagger
        self.max_words = max_words

    def parse(self, sentences):
        """One shallow tree per token list."""
        if self.max_words is not None:
            sentences = [list(s)[: self.max_words] for s in sentences]
        tags = self.tagger.predict(sentences)
        return [shallow_tree(words, t) for words, t in zip(sentences, tags)]
