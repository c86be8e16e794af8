"""Tree kernels (structrank.kernels.trees): SST and PTK against brute-force fragment enumeration.

The brute force uses the feature-space form of each kernel, ``K = sum_f phi_f(T1) phi_f(T2)``:

- SST: f is a subset tree (a node with all or none of its children, recursively; word leaves never
  expanded), ``phi_f(T) = lam^(p(f) / 2) * #occurrences``, p(f) = number of expanded nodes
  (productions) of f. This is what Collins & Duffy's recursion sums (each matched production
  contributes one lam).
- PTK: f is a partial tree (a node with any ordered subsequence of its children, possibly none,
  recursively); an embedding e of f weighs, per tree, ``prod_v sqrt(mu) * (lam if v is a leaf of
  f else lam^d(J_v))`` with J_v the children kept at v and ``d(J) = J_last - J_1`` (paper) or
  ``J_last - J_1 - (len(J) - 1)`` (gaps only); phi_f(T) sums the embeddings.

A second reference evaluates Moschitti's Delta literally (sum over all pairs of equal-length child
index sequences), which checks the dynamic programme against the formula itself.
"""

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.kernels.trees import (
    EncodedTree, PartialTreeKernel, SubsetTreeKernel, Tree, TreeEncoder, parse_tree, tree_kernel_throughput,
)

# -- references ---------------------------------------------------------------------------------


def sst_fragments(node):
    """All SST fragments rooted at node as (shape, number of productions)."""
    if not node.children:
        return []
    options = []
    for c in node.children:
        opts = [(c.label, 0)] + sst_fragments(c)  # cut at c, or expand c
        options.append(opts)
    out = []
    for combo in itertools.product(*options):
        shape = (node.label, tuple(s for s, _ in combo))
        out.append((shape, 1 + sum(p for _, p in combo)))
    return out


def sst_features(tree, lam):
    phi = defaultdict(float)
    for node in tree.nodes():
        for shape, p in sst_fragments(node):
            phi[shape] += lam ** (p / 2)
    return phi


def d_of(J, gaps_only):
    return (J[-1] - J[0]) - (len(J) - 1 if gaps_only else 0)


def ptk_fragments(node, lam, mu, gaps_only, max_length=None):
    """All PTK fragments rooted at node as (shape, weight of this embedding in one tree).

    ``max_length``: only fragments whose nodes keep at most that many children.
    """
    out = [((node.label, ()), math.sqrt(mu) * lam)]
    child_frags = [ptk_fragments(c, lam, mu, gaps_only, max_length) for c in node.children]
    k = len(node.children)
    for size in range(1, min(k, max_length or k) + 1):
        for J in itertools.combinations(range(k), size):
            for combo in itertools.product(*(child_frags[j] for j in J)):
                w = math.sqrt(mu) * lam ** d_of(J, gaps_only)
                for _, cw in combo:
                    w *= cw
                out.append(((node.label, tuple(s for s, _ in combo)), w))
    return out


def ptk_features(tree, lam, mu, gaps_only=False, max_length=None):
    phi = defaultdict(float)
    for node in tree.nodes():
        for shape, w in ptk_fragments(node, lam, mu, gaps_only, max_length):
            phi[shape] += w
    return phi


def dot(phi1, phi2):
    return sum(v * phi2[f] for f, v in phi1.items() if f in phi2)


def ptk_literal(t1, t2, lam, mu, gaps_only=False, max_length=None):
    """sum_{n1, n2} Delta(n1, n2) with Delta written exactly as Moschitti's Eq. (all J1, J2)."""

    def delta(a, b):
        if a.label != b.label:
            return 0.0
        total = lam ** 2
        n, m = len(a.children), len(b.children)
        for size in range(1, min(n, m, max_length or n) + 1):
            for J1 in itertools.combinations(range(n), size):
                for J2 in itertools.combinations(range(m), size):
                    prod = lam ** (d_of(J1, gaps_only) + d_of(J2, gaps_only))
                    for i, j in zip(J1, J2):
                        prod *= delta(a.children[i], b.children[j])
                        if prod == 0:
                            break
                    total += prod
        return mu * total

    return sum(delta(a, b) for a in t1.nodes() for b in t2.nodes())


def sst_literal(t1, t2, lam):
    def prod_of(n):
        return (n.label,) + tuple(c.label for c in n.children) if n.children else None

    def delta(a, b):
        if prod_of(a) is None or prod_of(a) != prod_of(b):
            return 0.0
        if all(not c.children for c in a.children) and all(not c.children for c in b.children):
            return lam  # both preterminals
        out = lam
        for c1, c2 in zip(a.children, b.children):
            out *= 1 + delta(c1, c2)
        return out

    return sum(delta(a, b) for a in t1.nodes() for b in t2.nodes())


# -- random small trees -------------------------------------------------------------------------

@st.composite
def small_trees(draw, depth=3, max_children=3):
    label = draw(st.sampled_from("AB"))
    if depth <= 1 or draw(st.integers(0, 3)) == 0:
        kids = draw(st.integers(1, max_children))
        return Tree(label, [Tree(draw(st.sampled_from("xy"))) for _ in range(kids)])
    kids = draw(st.integers(1, max_children))
    children = []
    for _ in range(kids):
        if draw(st.booleans()):
            children.append(draw(small_trees(depth=depth - 1, max_children=max_children)))
        else:
            children.append(Tree(draw(st.sampled_from("xy"))))
    return Tree(label, children)


def random_tree(rng, n_nodes, labels=("S", "NP", "VP", "PP", "DT", "NN", "JJ"), words=("a", "b", "c", "d")):
    """A random tree of about n_nodes nodes (internal nodes 1-3 children, words at the leaves)."""
    root = [rng.choice(labels), []]
    frontier, count = [root], 1
    while count < n_nodes and frontier:
        node = frontier.pop(rng.integers(len(frontier)))
        for _ in range(rng.integers(1, 4)):
            child = [rng.choice(labels), []]
            node[1].append(child)
            frontier.append(child)
            count += 1

    def build(spec):
        if not spec[1]:
            return Tree(spec[0], [Tree(rng.choice(words))])
        return Tree(spec[0], [build(c) for c in spec[1]])

    return build(root)


FIXED = [
    "(S (NP (DT the) (NN dog)) (VP (VBZ barks)))",
    "(S (NP (DT a) (NN dog)) (VP (VBZ barks) (ADVP (RB loudly))))",
    "(NP (DT the) (NN cat))",
    "(A (B x y) (A x) (B y x))",
    "(A (A (B x) x) y (B x y x))",
    "(A x y x)",
    "word",
]


# -- parsing ------------------------------------------------------------------------------------

def test_parse_and_build():
    t = parse_tree(FIXED[0])
    built = Tree("S", [Tree("NP", [Tree("DT", [Tree("the")]), Tree("NN", [Tree("dog")])]),
                       Tree("VP", [Tree("VBZ", [Tree("barks")])])])
    assert t == built and str(t) == FIXED[0]
    assert t.leaves() == ["the", "dog", "barks"] and len(t) == 9
    assert [n.label for n in t.nodes()][-1] == "S"  # post-order, root last
    assert parse_tree("  (X\n (Y z) )  ") == Tree("X", [Tree("Y", [Tree("z")])])
    assert parse_tree("dog") == Tree("dog")
    assert parse_tree("( (S (NN x)) )").label == "ROOT"
    for text in FIXED:
        assert str(parse_tree(text)) == text


@pytest.mark.parametrize("text, where", [
    ("(S (NP x)", "position 0"),
    ("(S (NP x)))", "position 10"),
    (")", "position 0"),
    ("(S x) y", "position 6"),
    ("(S x) (T y)", "position 6"),
    ("()", "position 0"),
    ("", "empty"),
    ("   ", "empty"),
    ("a b", "position 2"),
    ("(S (NP x) y", "position 0"),
])
def test_parse_errors(text, where):
    with pytest.raises(ValueError, match=where):
        parse_tree(text)


def test_tree_rejects_bad_input():
    with pytest.raises(ValueError):
        Tree("")
    with pytest.raises(TypeError):
        Tree("A", ["x"])


def test_encoding_arrays():
    enc = TreeEncoder()
    e = enc.encode(parse_tree("(A (B x) (B x))"))
    assert isinstance(e, EncodedTree) and len(e) == 5
    assert e.labels[-1] == enc.labels["A"]
    root_children = e.children[e.child_ptr[4]:e.child_ptr[5]]
    assert list(e.labels[root_children]) == [enc.labels["B"]] * 2
    assert e.productions[0] == -1 and e.productions[1] == e.productions[3] >= 0  # x leaves; (B x) twice
    assert list(e.productions[e.by_production]) == sorted(e.productions)


# -- SST ----------------------------------------------------------------------------------------

def raw_sst(t1, t2, lam):
    return float(SubsetTreeKernel(lam=lam, normalize=False)([t1], [t2])[0, 0])


def test_sst_collins_duffy_example():
    # (NP (DT the) (NN dog)) vs (NP (DT the) (NN cat)) share (NP DT NN), (NP (DT the) NN) and (DT the)
    a, b = parse_tree("(NP (DT the) (NN dog))"), parse_tree("(NP (DT the) (NN cat))")
    assert raw_sst(a, b, 1.0) == pytest.approx(3.0)
    lam = 0.4
    assert raw_sst(a, b, lam) == pytest.approx(lam * (1 + lam) + lam)
    # a with itself: 6 fragments at NP (sizes 1, 2, 2, 3), (DT the), (NN dog)
    assert raw_sst(a, a, 1.0) == pytest.approx(6.0)


@pytest.mark.parametrize("lam", [1.0, 0.4, 0.7])
def test_sst_matches_fragment_enumeration_fixed(lam):
    trees = [parse_tree(t) for t in FIXED]
    phis = [sst_features(t, lam) for t in trees]
    got = SubsetTreeKernel(lam=lam, normalize=False)(trees)
    for i, j in itertools.product(range(len(trees)), repeat=2):
        assert got[i, j] == pytest.approx(dot(phis[i], phis[j]), rel=1e-9, abs=1e-12)
        assert got[i, j] == pytest.approx(sst_literal(trees[i], trees[j], lam), rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(small_trees(), small_trees(), st.sampled_from([0.3, 0.5, 1.0]))
def test_sst_matches_fragment_enumeration_random(t1, t2, lam):
    expected = dot(sst_features(t1, lam), sst_features(t2, lam))
    assert raw_sst(t1, t2, lam) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert raw_sst(t1, t2, lam) == pytest.approx(sst_literal(t1, t2, lam), rel=1e-9, abs=1e-12)


# -- PTK ----------------------------------------------------------------------------------------

def raw_ptk(t1, t2, lam, mu, gaps_only=False, max_length=None):
    kernel = PartialTreeKernel(lam=lam, mu=mu, normalize=False, gaps_only=gaps_only, max_length=max_length)
    return float(kernel([t1], [t2])[0, 0])


def test_ptk_small_hand_values():
    lam, mu = 0.4, 0.3
    leaf = Tree("x")
    assert raw_ptk(leaf, leaf, lam, mu) == pytest.approx(mu * lam ** 2)
    # (A x y) with itself: leaves x, y give mu lam^2 each; the root pair:
    # mu (lam^2 + Dx + Dy + lam^(1+1) Dx Dy) with Dx = Dy = mu lam^2 (paper d(J) = J_last - J_1)
    t = parse_tree("(A x y)")
    dl = mu * lam ** 2
    root = mu * (lam ** 2 + 2 * dl + lam ** 2 * dl * dl)
    assert raw_ptk(t, t, lam, mu) == pytest.approx(2 * dl + root)
    # gaps only: the contiguous pair (x, y) is not penalised
    root_gaps = mu * (lam ** 2 + 2 * dl + dl * dl)
    assert raw_ptk(t, t, lam, mu, gaps_only=True) == pytest.approx(2 * dl + root_gaps)


@pytest.mark.parametrize("gaps_only", [False, True])
@pytest.mark.parametrize("lam, mu", [(1.0, 1.0), (0.4, 0.4), (0.6, 0.9)])
def test_ptk_matches_fragment_enumeration_fixed(lam, mu, gaps_only):
    trees = [parse_tree(t) for t in FIXED]
    phis = [ptk_features(t, lam, mu, gaps_only) for t in trees]
    got = PartialTreeKernel(lam=lam, mu=mu, normalize=False, gaps_only=gaps_only)(trees)
    for i, j in itertools.product(range(len(trees)), repeat=2):
        assert got[i, j] == pytest.approx(dot(phis[i], phis[j]), rel=1e-9, abs=1e-12)
        assert got[i, j] == pytest.approx(ptk_literal(trees[i], trees[j], lam, mu, gaps_only), rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(small_trees(), small_trees(), st.sampled_from([0.4, 1.0]), st.sampled_from([0.4, 1.0]), st.booleans())
def test_ptk_matches_fragment_enumeration_random(t1, t2, lam, mu, gaps_only):
    expected = dot(ptk_features(t1, lam, mu, gaps_only), ptk_features(t2, lam, mu, gaps_only))
    got = raw_ptk(t1, t2, lam, mu, gaps_only)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert got == pytest.approx(ptk_literal(t1, t2, lam, mu, gaps_only), rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(small_trees(max_children=4), small_trees(max_children=4), st.integers(1, 3), st.booleans())
def test_ptk_max_length_matches_capped_enumeration(t1, t2, max_length, gaps_only):
    lam, mu = 0.6, 0.7
    expected = dot(ptk_features(t1, lam, mu, gaps_only, max_length), ptk_features(t2, lam, mu, gaps_only, max_length))
    got = raw_ptk(t1, t2, lam, mu, gaps_only, max_length)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert got == pytest.approx(ptk_literal(t1, t2, lam, mu, gaps_only, max_length), rel=1e-9, abs=1e-12)
    # a cap at or above every node's number of children changes nothing
    assert raw_ptk(t1, t2, lam, mu, gaps_only, 4) == pytest.approx(raw_ptk(t1, t2, lam, mu, gaps_only), rel=1e-12)


def test_ptk_max_length_validation():
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="max_length"):
            PartialTreeKernel(max_length=bad)


# -- kernel properties --------------------------------------------------------------------------

KERNELS = [
    lambda: SubsetTreeKernel(lam=0.4),
    lambda: SubsetTreeKernel(lam=1.0, normalize=False),
    lambda: PartialTreeKernel(lam=0.4, mu=0.4),
    lambda: PartialTreeKernel(lam=0.5, mu=0.8, normalize=False, gaps_only=True),
]


@pytest.fixture(scope="module")
def forest():
    rng = np.random.default_rng(0)
    return [random_tree(rng, int(rng.integers(3, 25))) for _ in range(25)] + [parse_tree(t) for t in FIXED[:-1]]


@pytest.mark.parametrize("make", KERNELS)
def test_symmetry_psd_and_diag(make, forest):
    k = make()
    G = k(forest)
    assert np.allclose(G, G.T, rtol=1e-12, atol=1e-12)
    scale = max(1.0, np.abs(G).max())
    assert np.linalg.eigvalsh(G).min() >= -1e-9 * scale
    assert np.allclose(np.diag(G), k.diag(forest), rtol=1e-12)
    # the symmetric fast path (A is B) equals the general A x B path, in both orders
    A, B = forest[:10], forest[10:]
    assert np.allclose(k(A, list(forest)), G[:10], rtol=1e-12, atol=1e-15)
    assert np.allclose(k(A, B), k(B, A).T, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("make", [KERNELS[0], KERNELS[2]])
def test_normalised_self_kernel_is_one(make, forest):
    k = make()
    assert np.allclose(np.diag(k(forest)), 1.0)
    assert np.allclose(k.diag(forest), 1.0)
    assert np.all(k(forest) <= 1.0 + 1e-12)


def test_normalisation_formula(forest):
    raw = PartialTreeKernel(normalize=False)(forest[:6], forest[6:9])
    d1 = PartialTreeKernel(normalize=False).diag(forest[:6])
    d2 = PartialTreeKernel(normalize=False).diag(forest[6:9])
    assert np.allclose(PartialTreeKernel()(forest[:6], forest[6:9]), raw / np.sqrt(np.outer(d1, d2)))


def test_zero_norm_gives_zero():
    k = SubsetTreeKernel()  # a bare word has no production: SST norm 0
    G = k([Tree("word"), parse_tree("(A x)")])
    assert np.all(np.isfinite(G)) and G[0, 0] == 0 and G[0, 1] == 0 and G[1, 1] == 1
    assert list(k.diag([Tree("word")])) == [0.0]


def test_accepts_strings_and_encoded_trees():
    trees = [parse_tree(t) for t in FIXED[:3]]
    k = PartialTreeKernel()
    G = k(trees)
    assert np.allclose(k([t.encode() for t in trees]), G)
    assert np.allclose(k(FIXED[:3]), G)
    other = TreeEncoder().encode(trees[0])
    with pytest.raises(ValueError, match="TreeEncoder"):
        k([other], trees)
    with pytest.raises(TypeError):
        k([1, 2])
    own = PartialTreeKernel(encoder=TreeEncoder())
    assert np.allclose(own(trees), G)


def test_evaluation_counter(forest):
    k = SubsetTreeKernel()
    k(forest[:4], forest[:3])
    assert k.n_evaluations == 12
    k.diag(forest[:5])
    assert k.n_evaluations == 17
    k(forest[:2])
    assert k.n_evaluations == 21
    k.reset()
    assert k.n_evaluations == 0
    combo = 0.5 * SubsetTreeKernel() + PartialTreeKernel()
    G = combo(forest[:3])
    assert G.shape == (3, 3) and combo.n_evaluations == 9


def test_parameter_checks():
    with pytest.raises(ValueError):
        SubsetTreeKernel(lam=0)
    with pytest.raises(ValueError):
        PartialTreeKernel(mu=1.5)


def test_throughput_helper(forest):
    k = PartialTreeKernel()
    k(forest[:2])
    before = k.n_evaluations
    rate = tree_kernel_throughput(forest[:10], k)
    assert rate > 0 and k.n_evaluations == before


@pytest.mark.parametrize("make", KERNELS)
def test_repeated_objects_are_computed_once_and_spread(make, forest):
    import copy

    shared = [forest[0], forest[1], forest[0], forest[2], forest[1], forest[0]]
    copies = [copy.deepcopy(t) for t in shared]  # equal trees, all distinct objects
    np.testing.assert_allclose(make()(shared), make()(copies), rtol=1e-12, atol=0)
    np.testing.assert_allclose(make()(shared, forest), make()(copies, forest), rtol=1e-12, atol=0)
    np.testing.assert_allclose(make()(forest, shared), make()(forest, copies), rtol=1e-12, atol=0)
    kernel = make()
    kernel(shared, forest)
    assert kernel.n_evaluations == len(shared) * len(forest)  # counted per pair of objects asked for
