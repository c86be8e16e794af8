"""Independent test oracle: the official LETOR evaluation scripts and the SemEval-2016 Task 3
scorer, re-expressed in plain Python (loops, standard library only).

This module must never import structrank: it is the yardstick structrank's metrics are held to.
It was written from the scripts' text, before reading structrank's metrics code.

Sources read
============
Public copies of the scripts (their logic is transcribed below; no code was pasted):

* ``Eval-Score-4.0.pl`` ("author: Jun Xu and Tie-Yan Liu / modified by Jun Xu, March 3, 2009
  (for Letor 4.0)"). Three independent copies agree line for line on the logic: the string
  ``perl_eval_script`` in Hugo Larochelle's mlpython ``datasets/letor_mq2007.py`` (introduced
  there as "Official evaluation script for LETOR 4.0"), ``diogofreitasribeiro/PG-Rank`` and
  ``ramon349/IRHW2`` (``Eval-Score-4.0.pl``); they differ only in the trailing anchor of the
  input regular expression.
* ``Eval-Score-3.0.pl`` ("author: Jun Xu and Tie-Yan Liu"): ``JuniorZilles/tcc_learning_to_rank``
  (``my $iMaxPosition = 16;``) and ``gcmgomes/L2R-Framework`` (same logic, ``#my $iMaxPosition =
  16;`` commented out and 10 put in its place). The 4.0 script's own comment "for Letor 4.0.
  only output top 10 precision and ndcg / # my $iMaxPosition = 16;" confirms 16 for 3.0.
* the MSLR-WEB variant ("modified by Jun Xu, June 12, 2010 (for Microsoft Learning to Rank
  Datasets)"): ``gcmgomes/L2R-Framework/eval-score-mslr.pl`` and
  ``ramon349/IRHW2/mslr-eval-score-mslr.pl`` (same logic). A third public copy rewrites the
  discount to ``log($iPos + 2.0)`` with the comment "line 309 - 316 is wrong": that is a user's
  edit, not the distributed script, and is not followed here.
* SemEval-2016 Task 3 scorer: ``scorer/ev.py``, ``scorer/metrics.py``, ``res_file_reader.py``
  (the 2017 distribution, e.g. ``TimSteenbeke/ExamenProjectPython/scorer``, keeps the 2016
  ``read_res_pred_files``, ``metrics.map`` and ``metrics.mrr`` and only adds subtask E).

What the LETOR scripts do (names are the scripts' subroutines)
==============================================================
ReadInputFiles
    Reads the feature file and the prediction file in lockstep: line i of the prediction file is
    the score of line i of the feature file (a prediction file with fewer lines aborts, exit -2).
    Every feature line must match the script's regular expression or the script aborts (exit
    -2); ``^(\\d+)`` means a negative label aborts too. Rows are stored in a hash
    ``$h{$qid}{$did}{label|pred|lineNum}``, hence:

    * the rows of one query need not be contiguous: they are grouped by qid;
    * Eval-Score-4.0 and -3.0 take ``$did`` from ``#docid = ...``: a second line with the same
      (qid, docid) overwrites the first one's label, score and line number, so the document
      counts once, at the later line's place in the tie order. The MSLR script sets
      ``my $did = $lineNum;`` and nothing collapses.

EvalQuery (tie rule)
    For each qid (``sort{$a <=> $b}``: numeric order) the documents are first ordered by line
    number, then sorted with ``sort{$$pHash{$qid}{$b}{"pred"} <=> $$pHash{$qid}{$a}{"pred"}}``:
    descending score by a comparison sort. Perl's sort (5.8 and later) is a mergesort and stable,
    so **tied scores keep file order** (the earlier line ranks higher). ``@rates`` is the list
    of labels in that order.

MAP (one query's average precision)
    Walks the whole list; at each document with ``$hsPrecisionRel{$label} == 1`` adds
    (relevant so far) / (position). Returns that sum divided by the number of relevant documents
    in the list; ``return 0.0 if ($numRelevant == 0);``. A label missing from the table is
    undefined, hence not relevant.

DCG
    ``$dcg[0] = $hsNdcgRelScore{$rates[0]};`` then for position index iPos >= 1:
    ``if ($iPos < 2)`` the gain is added undiscounted, else
    ``$hsNdcgRelScore{$r} * log(2.0) / log($iPos + 1.0)``. With rank p = iPos + 1 the discount
    is 1 at ranks 1 and 2 and 1/log2(p) at rank p >= 3 (not 1/log2(p + 1)). A label missing from
    the gain table gains 0 (undef in numeric context).

NDCG
    The ideal list is ``sort {$hsNdcgRelScore{$b} <=> $hsNdcgRelScore{$a}} @rates``: IDCG comes
    from the query's own documents in the file only. NDCG@k = DCG@k / IDCG@k and 0 when
    IDCG@k == 0 (``if ($bestDcg[$iPos] != 0)``), i.e. a query with no positive-gain document
    scores 0 at every k.

OuputResults (mean)
    Each mean is (sum over all queries) / ``($#qids + 1)``: every query counts, including those
    without relevant documents (AP, P@k, NDCG@k all 0). A position a query does not have is an
    undefined array element: it prints as 0.0000 (``sprintf``) and adds 0 to the sum.

Eval-Score-4.0.pl  (LETOR 4.0: MQ2007, MQ2008)  ->  ``LETOR4``
    * gains ``%hsNdcgRelScore = ("2", 3, "1", 1, "0", 0)``: 2^l - 1 for l in {0, 1, 2}, any
      other label 0.
    * relevance ``%hsPrecisionRel = ("2", 1, "1", 1, "0", 0)``: labels 1 and 2 only (a label 3
      or more is *not* relevant).
    * regex ``m/^(\\d+) qid\\:([^\\s]+).*?\\#docid = ([^\\s]+) inc = ([^\\s]+) prob = ([^\\s]+)/``:
      the 4.0 comment ``#docid = X inc = Y prob = Z`` is mandatory.
    * ``$iMaxPosition = 10``: prints P@1..10, MAP, NDCG@1..10 and MeanNDCG.
    * short list, P@k: ``for (my $iPos = 0; $iPos < $topN; $iPos ++)`` with a missing position
      read as label 0 ("if # retrieved doc < $topN, the P@N will consider the hole as
      irrelevant"): P@k = (relevant in the top min(k, n)) / k.
    * short list, NDCG@k: EvalQuery calls ``NDCG($#rates + 1, @rates)`` (topN = n) and NDCG's
      loop runs ``$iPos < $topN && $iPos < $#rates + 1``: NDCG@k only exists for k <= n; for
      k > n it is undefined -> 0 (even when the documents the query has are perfectly ordered).
      The hole-padding added to DCG on 2009-4-24 therefore never acts.
    * MeanNDCG of a query = mean of its NDCG@1..n over all n positions.

Eval-Score-3.0.pl  (LETOR 3.0: OHSUMED, TD2003, TD2004)  ->  ``LETOR3``
    * same gain and relevance tables, same MAP, DCG, NDCG.
    * regex ``m/^(\\d+) qid\\:([^\\s]+).*?\\#docid = ([^\\s]+)$/``: the docid must end the line
      (a CRLF line fails: Perl's ``$`` does not match before ``\\r``).
    * ``$iMaxPosition = 16``: P@1..16 and NDCG@1..16 (``NDCG($iMaxPosition, @rates)``).
    * short list: PrecisionAtN loops ``$iPos < $topN && $iPos < $#rates + 1``: no padding; P@k
      for k > n does not exist and adds 0 to the mean. A query with n < k contributes 0 to
      P@k (not relevant/k as in 4.0). NDCG@k for k > n likewise 0.
    * per-query output lists only the positions that exist; here the missing ones are 0.0,
      their contribution to the mean.

MSLR-WEB variant  ->  ``MSLR``
    * gains ``("4", 15, "3", 7, "2", 3, "1", 1, "0", 0)``;
      relevance ``("4", 1, "3", 1, "2", 1, "1", 0, "0", 0)``: labels >= 2 (up to 4) relevant
      for P@k and MAP; a label > 4 neither gains nor counts.
    * regex ``m/^(\\d+) qid\\:([^\\s]+).*?$/`` and ``my $did = $lineNum;`` (no docid needed).
    * everything else as Eval-Score-4.0 (padded P@k, ``NDCG($#rates + 1, ...)``, discount
      1, 1, 1/log2(p)).

Reciprocal rank
    None of the scripts prints MRR. ``reciprocal_rank`` here is 1 / (rank of the first document
    the script counts as relevant) after the script's own sort (same tie rule), 0 without one;
    mean over all queries.

What the SemEval-2016 Task 3 scorer does  ->  ``semeval_*``
==========================================================
* ``read_res_pred_files`` reads the gold and the prediction file in lockstep (each line
  ``qid aid rank score label``; ``ir_score = float(tokens[3])``; labels must be "true"/"false").
* per question ``sorted(svm_sorted, key=itemgetter(1), reverse=True)``: Python's sort is stable
  and ``reverse=True`` keeps equal keys in their original order, so ties keep file order. It
  re-sorts only ``if max_score >= reranking_th``; the command line passes ``reranking_th=None``
  (option default) and under Python 2 every float is >= None, so by default every list is
  sorted. (With ``-r T`` a list whose best score is below T is scored in file order:
  parameter ``reranking_th``.)
* ``metrics.map(out, th)`` with th = 10: for i in range(min(th, n)), at each "true":
  num_correct += 1 and precisions.append(num_correct / (i + 1)) (true division,
  ``from __future__ import division``); ``avg_prec = sum(precisions) / len(precisions)`` if any
  else 0. The denominator is the number of relevant answers found in the top 10, not the number
  of relevant answers. MAP = sum / ``len(out)``: every question counts, a question without a
  "true" answer in its top 10 scores 0 (with ``--ignore_noanswer`` questions without any "true"
  answer are deleted before scoring: parameter ``ignore_noanswer``).
* ``metrics.mrr(out, th)``: 1 / (i + 1) at the first "true" within the top min(th, n), else 0,
  mean over all questions, printed * 100 (here as a fraction).
* Mapping of integer labels: "true" iff label >= ``min_relevant`` (1 by default: in subtask A
  Good is "true", PotentiallyUseful and Bad are "false").
"""

from __future__ import annotations

import gzip
import math
import re
from dataclasses import dataclass

__all__ = [
    "LETOR3",
    "LETOR4",
    "MSLR",
    "SCRIPTS",
    "LetorScript",
    "average_precision",
    "evaluate",
    "evaluate_query",
    "group_like_script",
    "mean_ndcg",
    "ndcg_at",
    "precision_at",
    "rank_labels",
    "read_letor_file",
    "reciprocal_rank",
    "semeval_average_precision",
    "semeval_evaluate",
    "semeval_reciprocal_rank",
    "stable_descending_order",
]


@dataclass(frozen=True)
class LetorScript:
    """The parts in which the three LETOR scripts differ."""

    name: str
    gain: dict  # %hsNdcgRelScore: label -> gain; a missing label gains 0
    relevant: frozenset  # labels with %hsPrecisionRel == 1 (used by P@k, MAP and here RR)
    pad_precision: bool  # 4.0/MSLR: P@k divides by k even when n < k; 3.0: P@k absent (0)
    max_position: int  # $iMaxPosition: how many P@k / NDCG@k the script prints
    keyed_by_docid: bool  # rows stored under (qid, docid): duplicates collapse, last wins
    line_pattern: str  # ReadInputFiles' regular expression


LETOR4 = LetorScript(
    name="letor4",
    gain={0: 0, 1: 1, 2: 3},
    relevant=frozenset({1, 2}),
    pad_precision=True,
    max_position=10,
    keyed_by_docid=True,
    line_pattern=(
        r"^(\d+) qid\:([^\s]+).*?\#docid = ([^\s]+) inc = ([^\s]+) prob = ([^\s]+)"
    ),
)

LETOR3 = LetorScript(
    name="letor3",
    gain={0: 0, 1: 1, 2: 3},
    relevant=frozenset({1, 2}),
    pad_precision=False,
    max_position=16,
    keyed_by_docid=True,
    line_pattern=r"^(\d+) qid\:([^\s]+).*?\#docid = ([^\s]+)$",
)

MSLR = LetorScript(
    name="mslr",
    gain={0: 0, 1: 1, 2: 3, 3: 7, 4: 15},
    relevant=frozenset({2, 3, 4}),
    pad_precision=True,
    max_position=10,
    keyed_by_docid=False,
    line_pattern=r"^(\d+) qid\:([^\s]+).*?$",
)

SCRIPTS = {s.name: s for s in (LETOR4, LETOR3, MSLR)}


def _script(script):
    if isinstance(script, LetorScript):
        return script
    return SCRIPTS[script]


# ---------------------------------------------------------------------------------------------
# Sorting: a plain stable mergesort with the scripts' comparator (descending score).
# ---------------------------------------------------------------------------------------------


def _merge_sort(items, before):
    """Stable mergesort; ``before(a, b)`` is True when a must precede b (strictly)."""
    if len(items) <= 1:
        return list(items)
    mid = len(items) // 2
    left = _merge_sort(items[:mid], before)
    right = _merge_sort(items[mid:], before)
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        # take from the right only when it strictly precedes: equal elements keep their order
        if before(right[j], left[i]):
            out.append(right[j])
            j += 1
        else:
            out.append(left[i])
            i += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


def stable_descending_order(scores):
    """Positions of ``scores`` by descending score, ties in input order (Perl's
    ``sort { $b <=> $a }`` mergesort, Python's ``sorted(..., reverse=True)``)."""
    scores = [float(s) for s in scores]
    return _merge_sort(list(range(len(scores))), lambda a, b: scores[a] > scores[b])


def rank_labels(labels, scores):
    """``@rates``: the labels in the order the scripts rank them."""
    labels = [int(v) for v in labels]
    return [labels[i] for i in stable_descending_order(scores)]


# ---------------------------------------------------------------------------------------------
# Per-query measures of the LETOR scripts; ``ranked`` is @rates (labels in ranked order).
# ---------------------------------------------------------------------------------------------


def average_precision(ranked, script=LETOR4):
    """Sub MAP: AP over the whole list, denominator = relevant documents in the list; 0 if none."""
    script = _script(script)
    num_relevant = 0
    total = 0.0
    for pos in range(len(ranked)):
        if ranked[pos] in script.relevant:
            num_relevant += 1
            total += num_relevant / (pos + 1)
    if num_relevant == 0:
        return 0.0
    return total / num_relevant


def precision_at(ranked, k, script=LETOR4):
    """Sub PrecisionAtN, position k (1-based).

    4.0/MSLR: relevant in the top min(k, n) divided by k. 3.0: 0.0 when k > n (the script
    leaves the value undefined, which adds 0 to the mean).
    """
    script = _script(script)
    n = len(ranked)
    if k > n and not script.pad_precision:
        return 0.0
    num_relevant = 0
    for pos in range(k):
        label = ranked[pos] if pos < n else 0  # 4.0: "consider the hole as irrelevant"
        if label in script.relevant:
            num_relevant += 1
    return num_relevant / k


def _dcg_prefix(ranked, top_n, script):
    """Sub DCG: cumulative DCG at positions 1..top_n (holes beyond the list gain 0)."""
    gain = script.gain
    n = len(ranked)
    dcg = [float(gain.get(ranked[0], 0))]
    for pos in range(1, top_n):
        label = ranked[pos] if pos < n else 0
        g = gain.get(label, 0)
        if pos < 2:
            dcg.append(dcg[pos - 1] + g)
        else:
            dcg.append(dcg[pos - 1] + (g * math.log(2.0) / math.log(pos + 1.0)))
    return dcg


def _ndcg_list(ranked, script):
    """Sub NDCG as the scripts call it: NDCG@1..n (4.0/MSLR: topN = n; 3.0: topN = 16 but the
    loop also stops at n, so positions <= n agree)."""
    script = _script(script)
    n = len(ranked)
    if n == 0:
        return []
    dcg = _dcg_prefix(ranked, n, script)
    ideal = _merge_sort(list(ranked), lambda a, b: script.gain.get(a, 0) > script.gain.get(b, 0))
    best = _dcg_prefix(ideal, n, script)
    out = []
    for pos in range(n):
        out.append(dcg[pos] / best[pos] if best[pos] != 0 else 0.0)
    return out


def ndcg_at(ranked, k, script=LETOR4):
    """NDCG@k as the script reports it: 0 when k > n or when IDCG@k = 0."""
    values = _ndcg_list(ranked, script)
    if k > len(values):
        return 0.0
    return values[k - 1]


def mean_ndcg(ranked, script=LETOR4):
    """Eval-Score-4.0's MeanNDCG: mean of NDCG@1..n of the query."""
    values = _ndcg_list(ranked, script)
    return sum(values) / len(values)


def reciprocal_rank(ranked, script=LETOR4, cutoff=None):
    """1 / rank of the first document the script counts as relevant; 0 if none (in the cutoff)."""
    script = _script(script)
    limit = len(ranked) if cutoff is None else min(cutoff, len(ranked))
    for pos in range(limit):
        if ranked[pos] in script.relevant:
            return 1.0 / (pos + 1)
    return 0.0


def _parse_metric(name):
    name = name.strip().lower()
    if "@" in name:
        base, k = name.split("@", 1)
        return base, int(k)
    return name, None


def evaluate_query(labels, scores, metrics, script=LETOR4):
    """One query: labels and scores in input (file) order -> {metric name: value}.

    Names: "map", "mrr", "mrr@k", "ndcg@k", "ndcg" (NDCG@n, the whole list), "p@k",
    "meanndcg".
    """
    script = _script(script)
    ranked = rank_labels(labels, scores)
    out = {}
    for name in metrics:
        base, k = _parse_metric(name)
        if base == "map" and k is None:
            out[name] = average_precision(ranked, script)
        elif base == "mrr":
            out[name] = reciprocal_rank(ranked, script, cutoff=k)
        elif base == "ndcg":
            out[name] = ndcg_at(ranked, len(ranked) if k is None else k, script)
        elif base == "p" and k is not None:
            out[name] = precision_at(ranked, k, script)
        elif base == "meanndcg":
            out[name] = mean_ndcg(ranked, script)
        else:
            raise ValueError(f"the {script.name} script defines no metric {name!r}")
    return out


def group_like_script(labels, scores, qids, docids=None, script=LETOR4):
    """ReadInputFiles: group rows by qid (not necessarily contiguous); with a docid-keyed
    script and docids given, a repeated (qid, docid) overwrites the earlier row (last wins,
    taking the later line's place).

    Returns (qids in order of first appearance, {qid: (labels, scores) in line order}).
    """
    script = _script(script)
    order = []
    table = {}
    for line in range(len(labels)):
        q = qids[line]
        if q not in table:
            table[q] = {}
            order.append(q)
        if script.keyed_by_docid and docids is not None:
            key = docids[line]
        else:
            key = ("line", line)
        table[q][key] = (line, int(labels[line]), float(scores[line]))
    grouped = {}
    for q in order:
        rows = _merge_sort(list(table[q].values()), lambda a, b: a[0] < b[0])
        grouped[q] = ([r[1] for r in rows], [r[2] for r in rows])
    return order, grouped


def _script_query_order(order):
    """``sort{$a <=> $b} keys`` when every qid is numeric; otherwise first appearance."""
    try:
        keys = [float(q) for q in order]
    except (TypeError, ValueError):
        return list(order)
    positions = _merge_sort(list(range(len(order))), lambda a, b: keys[a] < keys[b])
    return [order[i] for i in positions]


def evaluate(labels, scores, qids, metrics, script=LETOR4, docids=None):
    """Whole file, as the script computes it.

    Returns (qids in order of first appearance, {metric: [per-query values aligned with qids]},
    {metric: mean}). The mean sums in the script's (numeric qid) order and divides by the
    number of queries.
    """
    script = _script(script)
    order, grouped = group_like_script(labels, scores, qids, docids, script)
    per_query = {m: [] for m in metrics}
    by_qid = {}
    for q in order:
        lab, sc = grouped[q]
        values = evaluate_query(lab, sc, metrics, script)
        by_qid[q] = values
        for m in metrics:
            per_query[m].append(values[m])
    means = {}
    summing_order = _script_query_order(order)
    for m in metrics:
        total = 0.0
        for q in summing_order:
            total += by_qid[q][m]
        means[m] = total / len(order)
    return order, per_query, means


# ---------------------------------------------------------------------------------------------
# SemEval-2016 Task 3 scorer
# ---------------------------------------------------------------------------------------------


def _semeval_ranked_truth(labels, scores, min_relevant, reranking_th):
    truth = [int(v) >= min_relevant for v in labels]
    scores = [float(s) for s in scores]
    if reranking_th is not None and max(scores) < reranking_th:
        return truth  # the scorer leaves such a list in file order
    return [truth[i] for i in stable_descending_order(scores)]


def semeval_average_precision(labels, scores, th=10, min_relevant=1, reranking_th=None):
    """metrics.map for one question: AP over the top min(th, n), denominator = relevant found
    there; 0 when none is found there."""
    ranked = _semeval_ranked_truth(labels, scores, min_relevant, reranking_th)
    precisions = []
    num_correct = 0
    for i in range(min(th, len(ranked))):
        if ranked[i]:
            num_correct += 1
            precisions.append(num_correct / (i + 1))
    if not precisions:
        return 0.0
    return sum(precisions) / len(precisions)


def semeval_reciprocal_rank(labels, scores, th=10, min_relevant=1, reranking_th=None):
    """metrics.mrr for one question (as a fraction, not * 100)."""
    ranked = _semeval_ranked_truth(labels, scores, min_relevant, reranking_th)
    for i in range(min(th, len(ranked))):
        if ranked[i]:
            return 1.0 / (i + 1)
    return 0.0


def semeval_evaluate(labels, scores, qids, th=10, min_relevant=1, reranking_th=None,
                     ignore_noanswer=False):
    """Whole file: (qids in order of first appearance, {"map": [...], "mrr": [...]},
    {"map": mean, "mrr": mean}); "map" is the scorer's MAP (MAP@th), "mrr" its MRR@th."""
    order = []
    rows = {}
    for i in range(len(labels)):
        q = qids[i]
        if q not in rows:
            rows[q] = ([], [])
            order.append(q)
        rows[q][0].append(labels[i])
        rows[q][1].append(scores[i])
    if ignore_noanswer:
        order = [q for q in order if any(int(v) >= min_relevant for v in rows[q][0])]
    per_query = {"map": [], "mrr": []}
    for q in order:
        lab, sc = rows[q]
        per_query["map"].append(
            semeval_average_precision(lab, sc, th, min_relevant, reranking_th))
        per_query["mrr"].append(
            semeval_reciprocal_rank(lab, sc, th, min_relevant, reranking_th))
    means = {}
    for m, values in per_query.items():
        total = 0.0
        for v in values:
            total += v
        means[m] = total / len(values) if values else 0.0
    return order, per_query, means


# ---------------------------------------------------------------------------------------------
# Reading a feature file the way ReadInputFiles does (independent of structrank's reader).
# ---------------------------------------------------------------------------------------------


def read_letor_file(path, script=LETOR4):
    """(labels, qids, docids) of a LETOR file (plain or .gz), parsed with the script's regex.

    Raises ValueError where the script would stop with ``exit -2``. ``docids`` holds the line
    number (1-based) for the MSLR script, as it does.
    """
    script = _script(script)
    pattern = re.compile(script.line_pattern, re.ASCII)
    opener = gzip.open if str(path).endswith(".gz") else open
    labels, qids, docids = [], [], []
    with opener(path, "rt", encoding="utf-8", newline="") as handle:
        line_num = 0
        for line in handle:
            line_num += 1
            if line.endswith("\n"):  # chomp removes the newline only (a \r stays)
                line = line[:-1]
            match = pattern.match(line)
            if match is None:
                raise ValueError(f"{path}: line {line_num} does not parse for {script.name}")
            labels.append(int(match.group(1)))
            qids.append(match.group(2))
            docids.append(match.group(3) if script.keyed_by_docid else line_num)
    return labels, qids, docids
