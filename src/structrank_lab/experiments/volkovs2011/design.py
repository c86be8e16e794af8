"""What volkovs2011 runs: every objective's row with its grid, the studies beyond the paper, and the pairs
of rows the report compares."""

EXPERIMENT = "volkovs2011"
DATASETS = ("MQ2008", "MQ2007")
CONVENTION = "letor4"
SEEDS = (0, 1, 2)
MAX_EPOCHS = 100
NDCG = tuple(f"ndcg@{k}" for k in range(1, 6))
TEST_METRICS = (*NDCG, "ndcg@10", "map")
SELECT = "vali:ndcg@1-5"  # the measurement settings are chosen on
#: each test query's mean of NDCG@1..5, recorded as "q:<qid>:ndcg@1-5" for the claims' paired tests over queries (one
#: value per query rather than five: the five cutoffs per query of every run would multiply the store by five)
QUERY_METRIC = "ndcg@1-5"
SMALL_T = [0.03, 0.1, 0.3]
# Sec. 6.2: learning rates (printed "[0.5, 0.01, 0.01, 0.001]", a repeated 0.01 we read as 0.1), the loss weight
# alpha of CRF-LA and the temperature T of CRF-KL
CRF_RATE_GRID = [0.5, 0.1, 0.01, 0.001]
CRF_ALPHA_GRID = [1.0, 10.0, 20.0, 50.0]
CRF_T_GRID = [1.0, 10.0, 20.0, 50.0]

# row -> (objective, grid besides the learning rate, skip single-level queries, shuffle the visiting order)
ROWS = {
    "ML": ("ml", {}, True, False),
    "LA": ("la", {"alpha": CRF_ALPHA_GRID}, True, False),
    "LS": ("ls", {}, True, False),
    "EL": ("el", {}, True, False),
    "KL": ("kl", {"T": CRF_T_GRID}, True, False),
    "KL, T < 1": ("kl", {"T": SMALL_T}, True, False),
    "KL, shuffled": ("kl", {"T": CRF_T_GRID}, True, True),
    "ML, single-level kept": ("ml", {}, False, False),
    "LA, single-level kept": ("la", {"alpha": CRF_ALPHA_GRID}, False, False),
    "KL, single-level kept": ("kl", {"T": CRF_T_GRID}, False, False),
    # the paper's ML and LA: Eq. 10's sum over the zero-loss rankings where ours take the mean
    "ML-sum": ("ml-sum", {}, True, False),
    "LA-sum": ("la-sum", {"alpha": CRF_ALPHA_GRID}, True, False),
    "ML-sum, single-level kept": ("ml-sum", {}, False, False),
}
OBJECTIVE_ROWS = ("ML", "LA", "LS", "EL", "KL")
#: our ML and LA -> the paper's (the sum over Y0)
SUM_ROWS = {"ML": "ML-sum", "LA": "LA-sum"}
#: Table 1 and Fig. 2: the five objectives, then the paper's ML and LA beside ours
TABLE1_ROWS = (*OBJECTIVE_ROWS, *SUM_ROWS.values())
#: Fig. 2's paired differences: each objective against our ML and the paper's, the sums against our means
FIG2_PAIRS = ([(m, "ML") for m in OBJECTIVE_ROWS[1:]] + [("LA-sum", "ML-sum")]
              + [(m, "ML-sum") for m in OBJECTIVE_ROWS[2:]] + [("ML-sum", "ML"), ("LA-sum", "LA")]
              + [("KL", "LA"), ("KL", "LA-sum"), ("KL", "EL")])
#: the studies beyond the paper, each against the row it ablates
STUDY_PAIRS = ([("KL, T < 1", "KL"), ("KL, shuffled", "KL")]
               + [(f"{m}, single-level kept", m) for m in ("ML", "LA", "KL", "ML-sum")])
QUICK_ROWS = {"ML": {"learning_rate": [0.1]}, "KL": {"learning_rate": [0.1], "T": [1.0]},
              "ML-sum": {"learning_rate": [0.1]}}
