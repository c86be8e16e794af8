"""What jagarlamudi2012 runs: the languages, the two HMM taggers, the rerankers, the boosting baselines and
the grid of settings."""

EXPERIMENT = "jagarlamudi2012"
LANGUAGES = ("en", "zh", "fr", "sv")
LANGUAGE_NAMES = {"en": "English-EWT", "zh": "Chinese-GSD r1.4", "fr": "French-Sequoia", "sv": "Swedish-LinES r2.4"}
N_BEST = 10
N_FOLDS = 10
SPLITS = ("train", "dev", "test")
#: the taggers: model name -> emission order. "HMM" is the paper's baseline and makes Table 2's lists.
HMM, HMM_FIRST = "HMM", "HMM, first-order emissions"
TAGGERS = {HMM: 2, HMM_FIRST: 1}
#: per-sentence values: "test:q:<sentence>" is the number of correct tokens of that test sentence; "dev:q:<sentence>"
#: the same on dev (Fig. 1's claim is on dev); "test:q_no_viterbi:<sentence>" a reranker's without the decoder's score
#: (Table 3). The HMM records every sentence, every other run the sentences where it differs from the tagger below it.
SENTENCE = "test:q:"
DEV_SENTENCE = "dev:q:"
NO_VITERBI_SENTENCE = "test:q_no_viterbi:"

# The paper tunes tau, lambda, k and w by grid search on dev (Sec. 4.2; English optimum of the
# discriminative model tau = 0.95, lambda = 0.3, k = 75). w is chosen inside each fit. The grid
# is a cross around that optimum, not a full product (a discriminative fit on English takes about
# a minute): tau along a line at lambda = 0.3, lambda along a line at tau = 0.95, and k = 150 at
# the centre. The lines are also Fig. 1.
CENTRE = {"k": 75, "tau": 0.95, "lam": 0.3}
TAUS = (0.5, 0.9, 0.95, 0.99)
LAMBDAS = (0.1, 0.3, 0.5, 0.7)
KS = (75, 150)
RERANKERS = {"Generative": "generative", "Softened-Disc": "softened", "Discriminative": "discriminative"}
#: boosting baselines: name -> (regularization, feature blocks). "n-gm" adds the n-gram features to the suffix pairs
#: ("The performance of these baseline rankers improved when we include the n-gram features", Sec. 4.2).
BOOSTING = {"Collins (Sufx)": (None, ("pairs",)), "Regularized (Sufx)": ("l1", ("pairs",)),
            "Collins (n-gm)": (None, ("pairs", "ngrams")), "Regularized (n-gm)": ("l1", ("pairs", "ngrams"))}
SUFFIX_BOOSTING = ("Collins (Sufx)", "Regularized (Sufx)")
#: the ablation on the emission order: these rerankers again, on the first-order HMM's lists (model name + ON_FIRST),
#: the discriminative one at the paper's English optimum
ON_FIRST = ", first-order HMM lists"
ABLATION = ("Discriminative", *BOOSTING)
NGRAM_BOOSTING = ("Collins (n-gm)", "Regularized (n-gm)")
#: Table 2's rows in the paper's order
TABLE2_MODELS = (*SUFFIX_BOOSTING, *RERANKERS, *NGRAM_BOOSTING)


def reranker_grid(model, quick=False):
    """The settings of a low-dimensional reranker: lines through CENTRE along tau, lambda and k.

    The generative model has no lambda.
    """
    if quick:
        return [{"k": 75, "tau": 0.95} if model == "Generative" else dict(CENTRE)]
    points = [{**CENTRE, "tau": t} for t in TAUS] + [{**CENTRE, "k": k} for k in KS]
    if model != "Generative":
        points += [{**CENTRE, "lam": lam} for lam in LAMBDAS]
    unique = []
    for point in points:
        point = {k: v for k, v in point.items() if model != "Generative" or k != "lam"}
        if point not in unique:
            unique.append(point)
    return unique


def base_of(model):
    """The tagger whose lists ``model`` reranks: the first-order HMM for the ablation's runs, else the paper's."""
    return HMM_FIRST if model.endswith(ON_FIRST) else HMM
