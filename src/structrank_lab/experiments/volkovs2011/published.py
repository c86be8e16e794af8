"""The published values of Volkovs, Larochelle & Zemel (2011), printed beside ours and quoted by the claims,
and the example of its Fig. 1."""

PAPER = "Volkovs et al. 2011"

# Table 1 of the paper (NDCG@1..5, in %), published values shown beside ours, never computed with.
PAPER_TABLE1 = {
    "MQ2007": {
        "Regression": (38.94, 39.60, 39.86, 40.53, 41.11), "SVM-Struct": (40.96, 40.73, 40.62, 40.84, 41.42),
        "ListNet": (40.02, 40.63, 40.91, 41.44, 41.70), "AdaRank": (38.76, 39.67, 40.44, 40.67, 41.02),
        "KL": (41.06, 40.90, 40.93, 41.33, 41.75),  # published
    },
    "MQ2008": {
        "Regression": (36.67, 40.62, 42.89, 45.60, 47.73), "SVM-Struct": (36.26, 39.84, 42.85, 45.08, 46.95),
        "ListNet": (37.54, 41.12, 43.24, 45.68, 47.47), "AdaRank": (38.26, 42.11, 44.20, 46.53, 48.21),
        "KL": (39.47, 41.80, 43.74, 46.18, 47.84),  # published
    },
}

# Fig. 1's example: five configurations, the middle one the ground truth
FIG1_ENERGIES = (-1.0, -0.5, 0.0, 0.5, 1.0)
FIG1_LOSSES = (5.0, 1.0, 0.0, 1.0, 5.0)
#: Sec. 6.1: (queries, documents) of each data set
PAPER_COUNTS = {"MQ2007": (1692, 69623), "MQ2008": (784, 15211)}
#: Sec. 6.2's learning rates as printed (0.01 twice); we read the second as 0.1
PRINTED_RATES = (0.5, 0.01, 0.001)
