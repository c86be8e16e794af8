"""The published values of Haponchyk & Moschitti (2018), printed beside ours and quoted by the claims."""

PAPER_C_GRID = [1.0, 10.0, 100.0, 1000.0, 2000.0, 5000.0]  # Sec. 5.1, for LSP-AP, LSSVM-AP and SVM-map

# The paper's published values (MAP, MRR, P@1): printed beside ours and the paper's side of the claims.
# Table 1 test LSP-AP* and Table 2 test LSP-AP, LSSVM-AP, LSP-AP* are read from the extracted text's
# broken table layout, in the dev table's row order, and agree with the paper's prose (Sec. 5.2).
PAPER = {
    ("wikiqa", "sim", "dev"): {"SVM": (63.37, 64.37, 50.00), "LSP": (68.98, 69.93, 55.74),
                               "SVM-map": (66.15, 67.17, 51.64), "LSP-AP": (69.41, 69.95, 54.92),
                               "LSSVM-AP": (68.67, 69.29, 54.92), "LSP-AP*": (69.51, 70.14, 54.10),
                               "LSSVM-AP*": (67.48, 68.47, 51.64)},
    ("wikiqa", "sim", "test"): {"SVM": (54.67, 55.90, 39.66), "LSP": (64.35, 65.98, 48.95),
                                "SVM-map": (61.50, 63.10, 46.84), "LSP-AP": (64.50, 66.25, 49.37),  # published
                                "LSSVM-AP": (62.39, 63.78, 46.84), "LSP-AP*": (63.65, 65.48, 48.52)},
    ("wikiqa", "cnn", "dev"): {"SVM": (70.66, 70.89, 58.20), "LSP": (67.65, 67.70, 52.46),
                               "SVM-map": (72.77, 73.55, 63.11), "LSP-AP": (70.67, 70.50, 56.56),
                               "LSSVM-AP": (71.27, 71.85, 59.84), "LSP-AP*": (73.67, 74.55, 64.75),
                               "LSSVM-AP*": (71.88, 72.18, 60.66)},
    ("wikiqa", "cnn", "test"): {"SVM": (65.00, 66.70, 53.16), "LSP": (65.28, 66.76, 52.32),
                                "SVM-map": (66.91, 68.63, 54.85), "CNN": (68.73, 70.34, 56.12),
                                "LSP-AP": (64.23, 65.56, 50.21), "LSSVM-AP": (67.62, 69.24, 55.70),
                                "LSP-AP*": (65.74, 67.51, 52.32)},
    ("wikiqa", "cv"): {"SVM": (55.20, 56.68, 39.69), "LSP": (64.27, 65.63, 48.10), "SVM-map": (60.88, 62.27, 45.18),
                       "LSP-AP": (64.47, 65.88, 48.95), "LSSVM-AP": (62.00, 63.39, 44.79)},
    ("trec13", "cv"): {"SVM": (71.68, 82.41, 70.83), "LSP": (71.67, 82.54, 72.08), "SVM-map": (71.85, 81.97, 69.17),
                       "LSP-AP": (72.53, 82.85, 71.01), "LSSVM-AP": (70.96, 80.97, 69.17)},
}
#: The published standard deviations over the five folds of Tables 3 and 4 (MAP, MRR, P@1).
PAPER_STD = {
    ("wikiqa", "cv"): {"SVM": (3.60, 3.33, 5.27), "LSP": (2.52, 2.62, 4.32), "SVM-map": (2.57, 2.78, 4.19),
                       "LSP-AP": (2.48, 2.17, 4.19), "LSSVM-AP": (4.97, 4.59, 8.06)},
    ("trec13", "cv"): {"SVM": (4.19, 3.40, 5.73), "LSP": (2.54, 1.94, 4.28), "SVM-map": (3.69, 2.91, 5.49),
                       "LSP-AP": (5.29, 3.84, 8.57), "LSSVM-AP": (4.74, 2.70, 5.49)},
}
