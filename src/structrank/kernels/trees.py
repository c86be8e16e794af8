"""Tree kernels for parse trees: the subset tree (SST) and partial tree (PTK) kernels, in numba.

Croce, Filice & Basili (2016) project question-comment pairs into a Nyström space built from
kernels on their parse trees; this module gives those kernels. A :class:`Tree` is a labelled,
ordered tree whose leaves are the words; :func:`parse_tree` reads the bracketed form
``"(S (NP (DT the) (NN dog)) (VP (VBZ barks)))"``. For numba a tree is encoded once
(``EncodedTree``, cached on the Tree) as flat arrays over its nodes in post-order (children
before their parent; the root last): integer labels from a shared :class:`TreeEncoder`, the
children in CSR form (``children[child_ptr[v]:child_ptr[v + 1]]``), production ids (the label
and the children's labels, interned; -1 for a leaf, which has no production) and the node orders
sorted by label and by production. A Gram block packs all trees of A and of B into flat arrays
with offsets and one numba function fills it.

Both kernels are ``K(T1, T2) = sum_{n1 in T1} sum_{n2 in T2} Delta(n1, n2)``.

SST, Collins & Duffy (2002), decay ``lam``::

    Delta(n1, n2) = 0                                   if the productions differ (or a node is a leaf)
                  = lam                                 if both are preterminals (same production)
                  = lam * prod_j (1 + Delta(c1_j, c2_j)) otherwise

(with Delta = 0 on word leaves the preterminal case is the general case: ``lam * prod_j 1``).
Equivalently, summing over the fragments f (a node with either all or none of its children,
recursively, word leaves never expanded), ``K = sum_f phi_f(T1) phi_f(T2)`` with
``phi_f(T) = lam^(p(f) / 2) * (occurrences of f in T)``, ``p(f)`` the number of productions
(expanded nodes) of f. Only pairs of nodes with equal productions are visited: for each node of
T1 (post-order, so child pairs are done first) the block of equal productions in T2 is found by
binary search in its production-sorted node list (Moschitti, EACL 2006, "Making tree kernels
practical").

PTK, Moschitti (ECML 2006, Eq. 3), decays ``mu`` (tree height) and ``lam`` (child sequences)::

    Delta(n1, n2) = 0                                   if the labels differ
                  = mu * (lam^2 + sum_{J1, J2, l(J1) = l(J2)} lam^(d(J1) + d(J2))
                                    * prod_{i=1..l(J1)} Delta(c1_{J1_i}, c2_{J2_i}))

over strictly increasing, non-empty index sequences J1, J2 of the children of n1 and n2 of equal
length, with ``d(J) = J_last - J_1`` (the paper's definition; a leaf pair with equal labels gets
``mu * lam^2``). It is computed with the paper's dynamic programme over child subsequences of
length p = 1..min(|c1|, |c2|)::

    D_p(i, j)   = S_{p-1}(i, j) + lam D_p(i-1, j) + lam D_p(i, j-1) - lam^2 D_p(i-1, j-1)
    S_1(i, j)   = Delta(c1_i, c2_j)
    S_p(i, j)   = step * Delta(c1_i, c2_j) * D_p(i-1, j-1)
    sum_J ...   = sum_p sum_{i, j} S_p(i, j)

``D_p(i, j)`` gives ``lam^(gaps)`` to each earlier match, so the exact ``d(J) = J_last - J_1``
needs ``step = lam^2`` for every further child matched (the paper's printed recursion, with
``lam^(|s1| - i + |s2| - r)``, counts only the skipped children: ``d(J) = J_last - J_1 - (l(J) - 1)``,
which is what SVM-light-TK and KeLP compute). ``PartialTreeKernel(gaps_only=True)`` gives that
variant (``step = 1``); the default follows the formula. Either way, per side a fragment f
embedded as e in T weighs ``phi = mu^(|f| / 2) * lam^(leaves(f)) * lam^(sum_v d(J_v))`` (the
mu per node and the lam^2 of each fragment leaf split evenly between the two trees), so
``K = sum_f phi_f(T1) phi_f(T2)``: the tests enumerate the fragments against this.

Normalised kernels (the default) return ``K(a, b) / sqrt(K(a, a) K(b, b))``, 0 when a norm is 0
(an SST of a tree without productions).

``PartialTreeKernel(max_length=...)`` caps the matched child subsequences (KeLP's
``maxSubseqLeng``). A tree object repeated in a list is computed once (each distinct object, by
identity), and its encoding by a ``TreeEncoder`` is kept on the tree.

>>> t = parse_tree("(S (NP (DT the) (NN dog)) (VP (VBZ barks)))")
>>> t.label, len(t.children), t.leaves()
('S', 2, ['the', 'dog', 'barks'])
>>> k = SubsetTreeKernel(lam=1.0, normalize=False)
>>> float(k([t], [parse_tree("(NP (DT the) (NN cat))")])[0, 0])  # (NP DT NN), (NP (DT the) NN), (DT the)
3.0
"""

from __future__ import annotations

import time

import numpy as np

from structrank.kernels.base import Kernel
from structrank.numba_cache import njit

__all__ = [
    "Tree", "parse_tree", "TreeEncoder", "EncodedTree", "DEFAULT_ENCODER",
    "SubsetTreeKernel", "PartialTreeKernel", "tree_kernel_throughput",
]


# -- trees --------------------------------------------------------------------------------------

class Tree:
    """A labelled ordered tree: ``Tree("NP", [Tree("DT", [Tree("the")]), ...])``; leaves are words.

    Examples
    --------
    >>> t = Tree("NP", [Tree("DT", [Tree("the")]), Tree("NN", [Tree("cat")])])
    >>> print(t)
    (NP (DT the) (NN cat))
    >>> t == parse_tree("(NP (DT the) (NN cat))"), t.label, len(t.children)
    (True, 'NP', 2)
    """

    __slots__ = ("label", "children", "_encoded")

    def __init__(self, label, children=()):
        if not isinstance(label, str) or not label:
            raise ValueError(f"a tree label must be a non-empty string, got {label!r}")
        children = tuple(children)
        for c in children:
            if not isinstance(c, Tree):
                raise TypeError(f"children of a Tree must be Trees, got {type(c).__name__}")
        self.label, self.children, self._encoded = label, children, None

    def __getstate__(self):
        # The cached encoding holds label ids of this process's encoder; a copy sent to a joblib
        # worker must be encoded again by the worker's own encoder, so the cache is not pickled.
        return self.label, self.children

    def __setstate__(self, state):
        self.label, self.children = state
        self._encoded = None

    @property
    def is_leaf(self):
        return not self.children

    def nodes(self):
        """All nodes in post-order (children before their parent, the root last)."""
        out, stack = [], [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded or not node.children:
                out.append(node)
            else:
                stack.append((node, True))
                stack.extend((c, False) for c in reversed(node.children))
        return out

    def __len__(self):
        return len(self.nodes())

    def leaves(self):
        return [n.label for n in self.nodes() if not n.children]

    def encode(self, encoder=None):
        """The ``EncodedTree`` of this tree (cached for the default encoder)."""
        encoder = DEFAULT_ENCODER if encoder is None else encoder
        if encoder is DEFAULT_ENCODER:
            if self._encoded is None:
                self._encoded = encoder.encode(self)
            return self._encoded
        return encoder.encode(self)

    def __str__(self):
        tokens, stack = [], [self]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                tokens.append(item)
            elif not item.children:
                tokens.append(item.label)
            else:
                tokens.append("(" + item.label)
                stack.append(")")
                stack.extend(reversed(item.children))
        return " ".join(tokens).replace(" )", ")")

    def __repr__(self):
        return f"Tree({str(self)!r})"

    def __eq__(self, other):
        return isinstance(other, Tree) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def parse_tree(text):
    """Read a bracketed tree ``(LABEL child ...)``; a bare token is a leaf (a word).

    A node written ``(NN)`` has no children. A PTB-style unlabelled outer bracket ``( (S ...) )``
    gets the label ``ROOT``. Bad brackets raise ValueError naming the character position.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_tree reads a string, got {type(text).__name__}")
    tokens, i, n = [], 0, len(text)
    while i < n:  # (kind, value, position)
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            tokens.append((ch, ch, i))
            i += 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "()":
                j += 1
            tokens.append(("a", text[i:j], i))
            i = j
    if not tokens:
        raise ValueError("empty tree string")
    if tokens[0][0] == "a":
        if len(tokens) > 1:
            raise ValueError(f"unexpected {tokens[1][1]!r} at position {tokens[1][2]} after the leaf tree {tokens[0][1]!r}")
        return Tree(tokens[0][1])
    if tokens[0][0] == ")":
        raise ValueError(f"unmatched ')' at position {tokens[0][2]}")
    stack = []  # [label, children, position of "("]
    root = None
    k = 0
    while k < len(tokens):
        kind, value, pos = tokens[k]
        if root is not None:
            raise ValueError(f"unexpected {value!r} at position {pos} after the end of the tree")
        if kind == "(":
            if k + 1 < len(tokens) and tokens[k + 1][0] == "a":
                stack.append([tokens[k + 1][1], [], pos])
                k += 2
                continue
            if k + 1 < len(tokens) and tokens[k + 1][0] == "(":
                stack.append(["ROOT", [], pos])
                k += 1
                continue
            where = tokens[k + 1][2] if k + 1 < len(tokens) else n
            raise ValueError(f"'(' at position {pos} is not followed by a label (position {where})")
        elif kind == ")":
            if not stack:
                raise ValueError(f"unmatched ')' at position {pos}")
            label, children, _ = stack.pop()
            node = Tree(label, children)
            if stack:
                stack[-1][1].append(node)
            else:
                root = node
        else:
            if not stack:
                raise ValueError(f"unexpected token {value!r} at position {pos} outside brackets")
            stack[-1][1].append(Tree(value))
        k += 1
    if stack:
        raise ValueError(f"unclosed '(' at position {stack[-1][2]} (missing ')' at the end, position {n})")
    return root


# -- encoding -----------------------------------------------------------------------------------

class EncodedTree:
    """Flat arrays of one tree over its nodes in post-order (see the module docstring)."""

    __slots__ = ("labels", "child_ptr", "children", "productions", "by_label", "by_production", "encoder")

    def __init__(self, labels, child_ptr, children, productions, encoder):
        self.labels = labels
        self.child_ptr = child_ptr
        self.children = children
        self.productions = productions
        self.by_label = np.argsort(labels, kind="stable").astype(np.int64)
        self.by_production = np.argsort(productions, kind="stable").astype(np.int64)
        self.encoder = encoder

    def __len__(self):
        return len(self.labels)


class TreeEncoder:
    """Interns node labels and productions as integer ids shared by all trees it encodes."""

    def __init__(self):
        self.labels = {}
        self.productions = {}

    def label_id(self, label):
        return self.labels.setdefault(label, len(self.labels))

    def production_id(self, label_ids):
        return self.productions.setdefault(tuple(label_ids), len(self.productions))

    def encode(self, tree):
        if isinstance(tree, str):
            tree = parse_tree(tree)
        nodes = tree.nodes()
        index = {id(node): i for i, node in enumerate(nodes)}
        n = len(nodes)
        labels = np.empty(n, dtype=np.int64)
        productions = np.full(n, -1, dtype=np.int64)
        child_ptr = np.zeros(n + 1, dtype=np.int64)
        children = []
        for i, node in enumerate(nodes):
            labels[i] = self.label_id(node.label)
            children.extend(index[id(c)] for c in node.children)
            child_ptr[i + 1] = len(children)
            if node.children:
                productions[i] = self.production_id([labels[i]] + [labels[index[id(c)]] for c in node.children])
        return EncodedTree(labels, child_ptr, np.asarray(children, dtype=np.int64), productions, self)


DEFAULT_ENCODER = TreeEncoder()


def _encode_all(objects, encoder):
    out = []
    for obj in objects:
        if isinstance(obj, EncodedTree):
            if obj.encoder is not encoder:
                raise ValueError("an EncodedTree from another TreeEncoder: its label ids do not match")
            out.append(obj)
        elif isinstance(obj, Tree):
            out.append(obj.encode(encoder))
        elif isinstance(obj, str):
            out.append(encoder.encode(parse_tree(obj)))
        else:
            raise TypeError(f"tree kernels take Tree, EncodedTree or bracketed strings, got {type(obj).__name__}")
    return out


def _pack(encoded):
    """Concatenate encoded trees: node offsets, then per-node arrays with global child pointers.

    Child indices and the sorted node orders stay local to their tree.
    """
    sizes = np.array([len(e) for e in encoded], dtype=np.int64)
    node_off = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(sizes, out=node_off[1:])
    if not encoded:
        empty = np.zeros(0, dtype=np.int64)
        return node_off, empty, empty, np.zeros(1, dtype=np.int64), empty, empty, empty
    labels = np.concatenate([e.labels for e in encoded])
    prods = np.concatenate([e.productions for e in encoded])
    children = np.concatenate([e.children for e in encoded])
    child_base = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e.children) for e in encoded], out=child_base[1:])
    child_ptr = np.concatenate([e.child_ptr[:-1] + child_base[t] for t, e in enumerate(encoded)] + [child_base[-1:]])
    by_label = np.concatenate([e.by_label for e in encoded])
    by_prod = np.concatenate([e.by_production for e in encoded])
    return node_off, labels, prods, child_ptr, children, by_label, by_prod


# -- numba kernels ------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _block(values, order, lo, hi, key):
    """The range [a, b) of ``order[lo:hi]`` whose ``values[lo + order[.]]`` equal ``key`` (sorted)."""
    a, b = lo, hi
    while a < b:  # first position with value >= key
        mid = (a + b) // 2
        if values[lo + order[mid]] < key:
            a = mid + 1
        else:
            b = mid
    start = a
    b = hi
    while a < b:  # first position with value > key
        mid = (a + b) // 2
        if values[lo + order[mid]] <= key:
            a = mid + 1
        else:
            b = mid
    return start, a


@njit(cache=True, nogil=True)
def _sst_pair(lo1, hi1, lo2, hi2, prods1, cptr1, ch1, prods2, cptr2, ch2, order2, lam, W):
    """SST kernel of tree 1 (nodes lo1..hi1-1) and tree 2; W is a zeroed workspace, left zeroed."""
    total = 0.0
    for a in range(hi1 - lo1):  # post-order: child pairs are filled before their parents
        p = prods1[lo1 + a]
        if p < 0:
            continue
        s, e = _block(prods2, order2, lo2, hi2, p)
        for q in range(s, e):
            b = order2[q]
            value = lam
            na = cptr1[lo1 + a]
            nb = cptr2[lo2 + b]
            for j in range(cptr1[lo1 + a + 1] - na):
                c1 = ch1[na + j]
                c2 = ch2[nb + j]
                if prods1[lo1 + c1] >= 0 and prods1[lo1 + c1] == prods2[lo2 + c2]:
                    value *= 1.0 + W[c1, c2]
            W[a, b] = value
            total += value
    for a in range(hi1 - lo1):  # reset the touched entries
        p = prods1[lo1 + a]
        if p < 0:
            continue
        s, e = _block(prods2, order2, lo2, hi2, p)
        for q in range(s, e):
            W[a, order2[q]] = 0.0
    return total


@njit(cache=True, nogil=True)
def _ptk_pair(lo1, hi1, lo2, hi2, labels1, cptr1, ch1, labels2, cptr2, ch2, order2, lam, mu, step, max_len, W, S, D):
    """PTK of tree 1 and tree 2 (Moschitti 2006 DP); W, S, D are workspaces, W left zeroed."""
    lam2 = lam * lam
    total = 0.0
    for a in range(hi1 - lo1):
        s, e = _block(labels2, order2, lo2, hi2, labels1[lo1 + a])
        na = cptr1[lo1 + a]
        n = cptr1[lo1 + a + 1] - na
        for q in range(s, e):
            b = order2[q]
            nb = cptr2[lo2 + b]
            m = cptr2[lo2 + b + 1] - nb
            value = lam2
            if n > 0 and m > 0:
                # S holds S_p(i, j) (1-based, row/col 0 zero); start with p = 1
                for i in range(n + 1):
                    for j in range(m + 1):
                        S[i, j] = 0.0
                        D[i, j] = 0.0
                seq = 0.0
                for i in range(1, n + 1):
                    c1 = ch1[na + i - 1]
                    for j in range(1, m + 1):
                        c2 = ch2[nb + j - 1]
                        if labels1[lo1 + c1] == labels2[lo2 + c2]:
                            S[i, j] = W[c1, c2]
                            seq += S[i, j]
                pmax = min(n, m) if max_len <= 0 else min(n, m, max_len)
                for p in range(2, pmax + 1):
                    # D from S_{p-1}, then S_p in place (S_p(i, j) reads D only)
                    for i in range(1, n + 1):
                        for j in range(1, m + 1):
                            D[i, j] = S[i, j] + lam * D[i - 1, j] + lam * D[i, j - 1] - lam2 * D[i - 1, j - 1]
                    found = 0.0
                    for i in range(1, n + 1):
                        c1 = ch1[na + i - 1]
                        for j in range(1, m + 1):
                            c2 = ch2[nb + j - 1]
                            if i >= p and j >= p and labels1[lo1 + c1] == labels2[lo2 + c2]:
                                S[i, j] = step * W[c1, c2] * D[i - 1, j - 1]
                            else:
                                S[i, j] = 0.0
                            found += S[i, j]
                    seq += found
                    if found == 0.0:
                        break
                value += seq
            value *= mu
            W[a, b] = value
            total += value
    for a in range(hi1 - lo1):
        s, e = _block(labels2, order2, lo2, hi2, labels1[lo1 + a])
        for q in range(s, e):
            W[a, order2[q]] = 0.0
    return total


@njit(cache=True, nogil=True)
def _sst_gram(off1, prods1, cptr1, ch1, off2, prods2, cptr2, ch2, order2, lam, symmetric, max1, max2):
    n1, n2 = len(off1) - 1, len(off2) - 1
    out = np.zeros((n1, n2))
    W = np.zeros((max1, max2))
    for t in range(n1):
        for u in range(t if symmetric else 0, n2):
            out[t, u] = _sst_pair(off1[t], off1[t + 1], off2[u], off2[u + 1], prods1, cptr1, ch1,
                                  prods2, cptr2, ch2, order2, lam, W)
            if symmetric:
                out[u, t] = out[t, u]
    return out


@njit(cache=True, nogil=True)
def _ptk_gram(off1, labels1, cptr1, ch1, off2, labels2, cptr2, ch2, order2, lam, mu, step, max_len, symmetric,
              max1, max2, maxc1, maxc2):
    n1, n2 = len(off1) - 1, len(off2) - 1
    out = np.zeros((n1, n2))
    W = np.zeros((max1, max2))
    S = np.zeros((maxc1 + 1, maxc2 + 1))
    D = np.zeros((maxc1 + 1, maxc2 + 1))
    for t in range(n1):
        for u in range(t if symmetric else 0, n2):
            out[t, u] = _ptk_pair(off1[t], off1[t + 1], off2[u], off2[u + 1], labels1, cptr1, ch1,
                                  labels2, cptr2, ch2, order2, lam, mu, step, max_len, W, S, D)
            if symmetric:
                out[u, t] = out[t, u]
    return out


# -- kernel classes -----------------------------------------------------------------------------

def _distinct(objects):
    """(distinct objects by identity, index of each object among them)."""
    position, distinct, index = {}, [], np.empty(len(objects), dtype=np.intp)
    for i, obj in enumerate(objects):
        j = position.setdefault(id(obj), len(distinct))
        if j == len(distinct):
            distinct.append(obj)
        index[i] = j
    return distinct, index


def _normalise(gram, diag_a, diag_b):
    norm = np.sqrt(np.outer(diag_a, diag_b))
    out = np.zeros_like(gram)
    np.divide(gram, norm, out=out, where=norm > 0)
    return out


class _TreeKernel(Kernel):
    """Shared Gram/diag plumbing: encode, pack, one numba call per block, optional normalisation."""

    def __init__(self, normalize=True, encoder=None):
        super().__init__()
        self.normalize = bool(normalize)
        self.encoder = DEFAULT_ENCODER if encoder is None else encoder

    def shippable(self, objects):
        """The trees encoded by this kernel's encoder, to send to joblib workers (``parallel_gram``).

        An EncodedTree travels with its encoder: pickled in one task together with this kernel
        (whose encoder is the same object), the worker's copies are one encoder again, so the
        label ids agree and nothing is encoded twice. A repeated tree stays one object.
        """
        return _encode_all(objects, self.encoder)

    def _raw(self, A, B, symmetric):  # pragma: no cover - abstract
        raise NotImplementedError

    def _raw_diag(self, A):
        return np.array([self._raw([a], [a], False)[0, 0] for a in A], dtype=np.float64)

    def _gram(self, A, B):
        symmetric = A is B
        # The same tree object often stands in many places (the question of every comment of a
        # thread): compute each distinct object once and spread the values.
        A, index_a = _distinct(A)
        B, index_b = (A, index_a) if symmetric else _distinct(B)
        A = _encode_all(A, self.encoder)
        B = A if symmetric else _encode_all(B, self.encoder)
        gram = self._raw(A, B, symmetric)
        if self.normalize:
            da = np.diag(gram).copy() if symmetric else self._raw_diag(A)
            db = da if symmetric else self._raw_diag(B)
            gram = _normalise(gram, da, db)
        if len(index_a) == len(A) and len(index_b) == len(B):
            return gram
        return gram[np.ix_(index_a, index_b)]

    def _diag(self, A):
        A = _encode_all(A, self.encoder)
        d = self._raw_diag(A)
        return (d > 0).astype(np.float64) if self.normalize else d


class SubsetTreeKernel(_TreeKernel):
    """Collins & Duffy (2002) subset tree kernel with decay ``lam`` (module docstring for Delta).

    Examples
    --------
    >>> trees = [parse_tree("(S (NP (DT the) (NN cat)) (VP (VBD sat)))"),
    ...          parse_tree("(S (NP (DT the) (NN dog)) (VP (VBD sat)))")]
    >>> SubsetTreeKernel(lam=0.4)(trees).round(4).tolist()
    [[1.0, 0.7912], [0.7912, 1.0]]
    """

    def __init__(self, lam=0.4, normalize=True, encoder=None):
        super().__init__(normalize, encoder)
        if not 0 < lam <= 1:
            raise ValueError(f"lam must be in (0, 1], got {lam}")
        self.lam = float(lam)

    def _raw(self, A, B, symmetric):
        pa, pb = _pack(A), _pack(B)
        max1 = max([len(e) for e in A], default=1)
        max2 = max([len(e) for e in B], default=1)
        return _sst_gram(pa[0], pa[2], pa[3], pa[4], pb[0], pb[2], pb[3], pb[4], pb[6],
                         self.lam, symmetric, max1, max2)

    def __repr__(self):
        return f"SubsetTreeKernel(lam={self.lam}, normalize={self.normalize})"


class PartialTreeKernel(_TreeKernel):
    """Moschitti (2006) partial tree kernel, decays ``lam`` (child sequences) and ``mu`` (height).

    ``gaps_only=False`` (default) uses the paper's ``d(J) = J_last - J_1``; ``gaps_only=True``
    penalises only skipped children (SVM-light-TK / KeLP). See the module docstring.

    ``max_length`` caps the length of the matched child subsequences (KeLP's
    ``maxSubseqLeng``): the kernel then counts only the partial trees whose nodes keep at most
    ``max_length`` children. None counts them all. The DP over two nodes with n and m children
    costs O(p n m) for subsequences up to length p, so on flat shallow trees (a root with 20-30
    chunk children) the cap is what makes PTK affordable; long subsequences weigh little anyway
    (each matched child adds a factor ``lam**2`` and a child Delta <= ``mu * ...``).

    Examples
    --------
    >>> trees = [parse_tree("(S (NP (DT the) (NN cat)) (VP (VBD sat)))"),
    ...          parse_tree("(S (NP (DT the) (NN dog)) (VP (VBD sat)))")]
    >>> PartialTreeKernel(lam=0.4, mu=0.4)(trees).round(4).tolist()
    [[1.0, 0.8783], [0.8783, 1.0]]
    """

    def __init__(self, lam=0.4, mu=0.4, normalize=True, gaps_only=False, max_length=None, encoder=None):
        super().__init__(normalize, encoder)
        if not 0 < lam <= 1 or not 0 < mu <= 1:
            raise ValueError(f"lam and mu must be in (0, 1], got lam={lam}, mu={mu}")
        if max_length is not None and (int(max_length) != max_length or max_length < 1):
            raise ValueError(f"max_length must be a positive integer or None, got {max_length!r}")
        self.lam, self.mu, self.gaps_only = float(lam), float(mu), bool(gaps_only)
        self.max_length = None if max_length is None else int(max_length)

    def _raw(self, A, B, symmetric):
        pa, pb = _pack(A), _pack(B)
        max1 = max([len(e) for e in A], default=1)
        max2 = max([len(e) for e in B], default=1)
        maxc1 = max([int(np.diff(e.child_ptr).max(initial=0)) for e in A], default=0)
        maxc2 = max([int(np.diff(e.child_ptr).max(initial=0)) for e in B], default=0)
        step = 1.0 if self.gaps_only else self.lam ** 2
        return _ptk_gram(pa[0], pa[1], pa[3], pa[4], pb[0], pb[1], pb[3], pb[4], pb[5],
                         self.lam, self.mu, step, self.max_length or 0, symmetric, max1, max2, maxc1, maxc2)

    def __repr__(self):
        return (f"PartialTreeKernel(lam={self.lam}, mu={self.mu}, normalize={self.normalize}"
                f"{', gaps_only=True' if self.gaps_only else ''}"
                f"{f', max_length={self.max_length}' if self.max_length else ''})")


def tree_kernel_throughput(trees, kernel, repeat=1):
    """Kernel evaluations per second of ``kernel(trees, trees)`` (after a JIT warm-up on 2 trees).

    Trees are encoded before the clock starts; the counter of ``kernel`` is left as it was.
    """
    saved = kernel.n_evaluations
    encoder = getattr(kernel, "encoder", None)
    trees = _encode_all(trees, encoder) if encoder is not None else list(trees)
    kernel(trees[:2], trees[:2])
    kernel(trees[:2], trees[1:3])
    start = time.perf_counter()
    for _ in range(repeat):
        kernel(trees, trees)
    elapsed = time.perf_counter() - start
    kernel.n_evaluations = saved
    return repeat * len(trees) ** 2 / elapsed if elapsed > 0 else float("inf")
