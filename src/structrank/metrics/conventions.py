"""Named metric conventions: the rules of each official evaluation tool, stated in one place.

The same ranking scores differently under different tools (labels [2, 0, 1, 0, 0] in score
order: NDCG@3 = 0.9502 under "trec", 0.9077 under "letor4"), so every number structrank reports
carries the name of the convention it was computed under. Each convention fixes:

- gain: the NDCG gain of a label;
- discount: the NDCG discount of a rank;
- relevant: the smallest label that counts as relevant for AP, P@k, RR and AUC;
- ties: how documents with equal scores are ordered;
- short lists: NDCG@k and P@k of a query with fewer than k documents;
- empty queries: what a query without relevant documents scores (it always counts in the mean).

``auto`` (the default wherever a user names no convention) is not a tool of its own: it picks, from
the labels being evaluated, the convention that credits all of them (``resolve_convention``), so that
a perfect ranking scores 1 on any label range: ``letor4`` for labels 0-2, ``mslr`` up to 4, and
``trec`` above (the one tool whose gain, the label itself, credits any label).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.discounts import discounts


@dataclass(frozen=True)
class Convention:
    """The rules of one evaluation tool.

    Attributes
    ----------
    name : str
    tool : str
        The official tool this convention transcribes.
    gain : {"exp2", "linear"}
        ``exp2``: 2^l - 1 (up to ``label_max``); ``linear``: l.
    discount : {"letor", "log2_rank_plus_1"}
        ``letor``: 1 at ranks 1 and 2, 1/log2(p) at rank p >= 3; ``log2_rank_plus_1``: 1/log2(p+1).
    relevant_from : int
        Labels >= this are relevant for AP, P@k, RR and AUC.
    label_max : int or None
        The LETOR scripts look labels up in fixed tables (``%hsNdcgRelScore``,
        ``%hsPrecisionRel``): a label above ``label_max`` has gain 0 and is not relevant.
    ties : {"input", "docid_desc"}
        ``input``: stable sort by descending score (equal scores keep the input order);
        ``docid_desc``: equal scores ordered by document id in descending string order (trec_eval).
    ndcg_short_zero : bool
        NDCG@k is 0 for a query with fewer than k documents (else computed over the n there are).
    precision_short : {"pad", "zero"}
        P@k of a query with n < k documents: ``pad`` = relevant in the top n divided by k;
        ``zero`` = 0.
    ap_cutoff : int or None
        AP only looks at the top ``ap_cutoff`` documents ("map" means MAP@10 for SemEval).
    ap_denominator : {"relevant", "relevant_in_cutoff"}
        AP divides by all relevant documents of the query, or by those found within the cutoff.
    empty_value : float
        The value of every metric for a query without a relevant document; it counts in the mean.
    label_max : int or None

    Notes
    -----
    The LETOR scripts key documents by (qid, docid): a docid repeated within a query counts
    once there. structrank keeps every row (as the MSLR script and trec_eval's run do); the LETOR
    data sets have no repeated (qid, docid).

    Examples
    --------
    >>> from structrank.metrics import evaluate, get_convention
    >>> trec = get_convention("trec")
    >>> trec.gain, trec.discount, trec.ties
    ('linear', 'log2_rank_plus_1', 'docid_desc')
    >>> labels, scores = [2, 0, 1, 0, 0], [5.0, 4.0, 3.0, 2.0, 1.0]
    >>> for name in ("trec", "letor4"):
    ...     result = evaluate(labels, scores, qid=[1] * 5, metrics=["ndcg@3"], convention=name,
    ...                       docids=["d1", "d2", "d3", "d4", "d5"])
    ...     print(name, round(result.metrics["ndcg@3"], 4))
    trec 0.9502
    letor4 0.9077
    """

    name: str
    tool: str
    gain: str
    discount: str
    relevant_from: int
    ties: str
    ndcg_short_zero: bool
    precision_short: str
    ap_cutoff: int | None
    ap_denominator: str
    empty_value: float = 0.0
    label_max: int | None = None

    def relevant(self, labels) -> np.ndarray:
        """1 where a label counts as relevant for AP, P@k, RR and AUC, else 0 (int8)."""
        labels = np.asarray(labels)
        relevant = labels >= self.relevant_from
        if self.label_max is not None:
            relevant &= labels <= self.label_max
        return relevant.astype(np.int8)

    def gains(self, labels) -> np.ndarray:
        """NDCG gain of each label."""
        labels = np.asarray(labels, dtype=np.float64)
        if self.gain == "linear":
            return labels
        if self.label_max is not None:  # gain 0 above label_max (and no overflow of 2^label for huge labels)
            return np.where(labels > self.label_max, 0.0, np.exp2(np.minimum(labels, self.label_max)) - 1.0)
        return np.exp2(labels) - 1.0

    def discounts(self, n: int) -> np.ndarray:
        """Discount of ranks 1..n (index 0 is rank 1): ``structrank.discounts``, which the oracles share."""
        return discounts(self.discount, n)

    def describe(self, auto: bool = False) -> str:
        """One paragraph a user can read next to a number (``auto``: say that ``auto`` chose it)."""
        gain = {"exp2": "2^l - 1", "linear": "l (linear)"}[self.gain]
        if self.label_max is not None:
            gain += f" for labels 0-{self.label_max}, 0 above"
        discount = {"letor": "1 at ranks 1-2, 1/log2(p) at rank p >= 3", "log2_rank_plus_1": "1/log2(p + 1)"}[self.discount]
        ties = {"input": "stable by descending score (input order)", "docid_desc": "by document id, descending"}[self.ties]
        ap = "AP" if self.ap_cutoff is None else f"AP@{self.ap_cutoff}"
        denominator = "all relevant documents" if self.ap_denominator == "relevant" else "relevant documents found in the cut-off"
        return (
            f"{self.name} ({self.tool}{', chosen by auto from the range of the labels' if auto else ''}): gain {gain}; discount {discount}; relevant = label "
            f"{f'>= {self.relevant_from}' if self.label_max is None else f'in {self.relevant_from}..{self.label_max}'}; "
            f"ties {ties}; NDCG@k of a query with n < k documents "
            f"{'is 0' if self.ndcg_short_zero else 'uses its n documents'}; P@k with n < k "
            f"{'divides by k' if self.precision_short == 'pad' else 'is 0'}; {ap} divides by {denominator}; "
            f"a query without relevant documents scores {self.empty_value:g} and counts in the mean."
        )


#: every named convention: name -> Convention (``get_convention(name)`` looks one up)
CONVENTIONS: dict[str, Convention] = {
    c.name: c
    for c in (
        Convention("letor4", "LETOR 4.0 Eval-Score-4.0.pl", "exp2", "letor", 1, "input", True, "pad", None, "relevant",
                   label_max=2),
        Convention("letor3", "LETOR 3.0 Eval-Score-3.0.pl", "exp2", "letor", 1, "input", True, "zero", None, "relevant",
                   label_max=2),
        Convention("mslr", "MSLR-WEB evaluation script", "exp2", "letor", 2, "input", True, "pad", None, "relevant",
                   label_max=4),
        Convention("trec", "trec_eval (pytrec_eval)", "linear", "log2_rank_plus_1", 1, "docid_desc", False, "pad", None, "relevant"),
        Convention("semeval", "SemEval-2016 Task 3 scorer", "linear", "log2_rank_plus_1", 1, "input", False, "pad", 10, "relevant_in_cutoff"),
    )
}


#: what ``auto`` resolves to: the first convention whose tables credit every label up to its bound
AUTO = "auto"
_AUTO_RANGES = ((2, "letor4"), (4, "mslr"))
_AUTO_ABOVE = "trec"
#: every name a user may give (``--convention``'s choices): ``auto`` and the named conventions
CONVENTION_NAMES = (AUTO, *CONVENTIONS)


def is_auto(convention) -> bool:
    return isinstance(convention, str) and convention.lower() == AUTO


def auto_convention(labels) -> Convention:
    """The convention ``auto`` picks for these labels: letor4 when every label is 0-2, mslr when the
    largest is 3 or 4, trec above (whose linear gain credits any label).

    >>> auto_convention([0, 1, 2]).name, auto_convention([0, 4]).name, auto_convention([0, 7]).name
    ('letor4', 'mslr', 'trec')
    """
    labels = np.asarray(labels)
    top = int(labels.max()) if labels.size else 0
    for bound, name in _AUTO_RANGES:
        if top <= bound:
            return CONVENTIONS[name]
    return CONVENTIONS[_AUTO_ABOVE]


def resolve_convention(convention, labels) -> tuple[Convention, bool]:
    """``(Convention, whether auto chose it)``: a named convention as it is, ``auto`` from ``labels``."""
    if is_auto(convention):
        return auto_convention(labels), True
    return get_convention(convention), False


def get_convention(convention) -> Convention:
    """A Convention from its name (or itself); ``auto`` needs the labels (``resolve_convention``)."""
    if isinstance(convention, Convention):
        return convention
    if is_auto(convention):
        raise ValueError("convention 'auto' is chosen from the labels: use resolve_convention(name, labels)")
    try:
        return CONVENTIONS[str(convention).lower()]
    except KeyError:
        raise ValueError(f"unknown convention {convention!r}; known: {', '.join(CONVENTION_NAMES)}") from None
