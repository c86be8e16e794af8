"""What haponchyk2018 runs: the table rows (model, fixed parameters, grid), the feature sets, and the bounds
of the grid study."""

from structrank_lab.experiments.haponchyk2018.published import PAPER_C_GRID

EXPERIMENT = "haponchyk2018"
SPLITS = ("train", "dev", "test")
METRICS = ("map", "mrr", "p@1")
SELECT_CONVENTION = "letor4"  # selection on dev (ties in input order); the reported values use trec_eval's rules
REPORT_CONVENTION = "trec"
N_FOLDS = 5

# Table rows: label -> (CLI model name, fixed parameters, grid override)
LATENT_GRID = {"C": PAPER_C_GRID}
SUM_ROW = "LSSVM-AP sum"
ROWS = {
    "SVM": ("svc-poly", {}, {"C": [0.01, 0.1, 1.0, 10.0]}),
    "LSP": ("lsp", {"max_epochs": 100}, None),
    "SVM-map": ("svm-map", {}, {"C": [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]}),
    "LSP-AP": ("lsp-ap", {"max_epochs": 100}, LATENT_GRID),
    "LSSVM-AP": ("lssvm-ap", {}, LATENT_GRID),
    "LSP-AP*": ("lsp-ap-exact", {"max_epochs": 100}, LATENT_GRID),
    "LSSVM-AP*": ("lssvm-ap-exact", {}, LATENT_GRID),
    # Eq. 4 as printed, C on the sum of the slacks (ours weighs their mean): the grid study only
    SUM_ROW: ("lssvm-ap", {"slack": "sum"}, LATENT_GRID),
}
TABLE_ROWS = tuple(row for row in ROWS if row != SUM_ROW)
CV_ROWS = ("SVM", "LSP", "SVM-map", "LSP-AP", "LSSVM-AP")
CURVE_ROWS = ("LSP", "LSP-AP", "LSP-AP*")
QUICK = {"SVM": {"C": [1.0]}, "SVM-map": {"C": [1.0]}, "LSP-AP": {"C": [10.0]}, "LSSVM-AP": {"C": [10.0]},
         "LSP-AP*": {"C": [10.0]}, "LSSVM-AP*": {"C": [10.0]}}

# feature sets: name -> (similarity features: "all" (ours), "paper" (the paper's list, rebuilt) or None,
# embedding kind or None)
FEATURE_SETS = {
    "sim": ("all", None),
    "paper": ("paper", None),
    "emb-concat": (None, "concat"),
    "emb-interaction": (None, "interaction"),
    "sim+emb-interaction": ("all", "interaction"),
}
EMBEDDING_SETS = ("emb-concat", "emb-interaction", "sim+emb-interaction")
#: The feature sets of Tables 1, 3 and 4 and Fig. 1: ours, and the paper's list as far as it can be rebuilt
TEXT_SETS = ("sim", "paper")
FEATURE_TITLES = {"sim": "similarity features",
                  "paper": "the paper's feature list (rebuilt: its similarities and PTK, no ESA)"}
#: The feature sets that stand for the paper's own (its list, its CNN embeddings): SVM-map is tuned there on the
#: paper's C grid too (run parameter ``c_grid="paper"``), elsewhere on ours (``ROWS``)
PAPER_GRID_SETS = ("paper", "emb-concat")
#: The claims' setups: the paper's (judged first) and ours (the second column)
PAPER_SETUP, OUR_SETUP = "paper", "sim"
SETUP_TITLES = {PAPER_SETUP: "the paper's feature list (rebuilt, no ESA) and its C grid {1, ..., 5000} for SVM-map",
                OUR_SETUP: "our similarity features, SVM-map's C from {0.01, ..., 1000}"}

#: Fig. 1 over seeds: the perceptrons run again with the training questions visited in another order (seed s
#: permutes them once; seed 0 is the file's order, Alg. 1 as printed), ``N_SEEDS`` orders in all
N_SEEDS = 10
#: per-question values: ``q:<qid>:<metric>`` on test (``report.QUERY_PREFIX``), ``dq:<qid>:<metric>`` on dev
DEV_QUERY_PREFIX = "dq:"


#: Each model's base grid in the grid study: Table 1's, with the paper's {1, ..., 5000} added where the
#: paper chose that model's C from it (LSP-AP, LSSVM-AP, SVM-map; the * variants alike).
GRID_STUDY = {row: sorted(set(ROWS[row][2]["C"]) | (set() if row == "SVM" else set(PAPER_C_GRID)))
              for row in ROWS if ROWS[row][2]}
MAX_EXTENSION = 4  # grid points added past each end of a base grid, at most
SLOW_C = 1e5  # study points whose effective C is larger are fitted one at a time, after all cheaper ones
MAX_EFFECTIVE_C = 5e6  # no extension upwards past this effective C (the cutting-plane QP's time grows with C)
QUADRATIC_C_MODELS = ("svm-map", "lssvm-ap", "lssvm-ap-exact")  # the fits whose time grows with C
