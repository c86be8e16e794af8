"""The published values of Croce, Filice & Basili (2016), printed beside ours and quoted by the claims."""

# Table 1 of the paper (KeLP, the full official training data): landmarks -> (MAP, F1, saving %).
PAPER_TABLE1 = {
    100: (76.0, 58.6, 99.1), 200: (77.0, 60.8, 98.2), 300: (77.5, 62.2, 97.4),  # published
    400: (77.7, 62.4, 96.5), 500: (77.9, 63.1, 95.6), 600: (78.0, 63.6, 94.7),  # published
    700: (78.1, 63.7, 93.8), 800: (78.0, 63.8, 92.9), 900: (78.1, 64.2, 92.1),  # published
    1000: (78.2, 64.4, 91.2),  # published
}
PAPER_FULL = (79.2, 64.4, 11322)  # published: standard SVM MAP, F1, support vectors
PAPER_OTHERS = {"ConvKN": (77.7, 66.2), "SemanticZ": (77.6, 61.8)}  # published: the task's 2nd and 3rd systems
PAPER_TRAIN, PAPER_TEST = 20340, 3270  # published: examples (question, comment pairs), Sec. 3
OFFICIAL_IR_MAP = 59.53  # the task's IR baseline on the 2016 test set (Nakov et al. 2016)
