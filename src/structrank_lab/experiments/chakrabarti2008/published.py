"""The published values of Chakrabarti et al. (2008), printed beside ours and quoted by the claims."""

PAPER = "Chakrabarti et al. 2008"

# Published Fig. 9 values (MRR@10, NDCG@10, MAP) for OHSUMED, LETOR's older release after the
# paper's own preparation; printed beside ours, never used in a computation of ours.
PAPER_FIG9 = {
    "OHSUMED": {
        "AUC": (0.799, 0.635, 0.582), "MAP": (0.808, 0.642, 0.586), "NDCG": (0.790, 0.636, 0.581),
        "NDCG-NC": (0.818, 0.640, 0.582), "MRR": (0.795, 0.623, 0.570), "COMBO": (0.813, 0.635, 0.578),
        "DORM": (0.807, 0.637, 0.583), "McRank": (0.701, 0.565, 0.527),
    }
}
