"""The experiments ``structrank reproduce`` knows: name -> reproduce(out, data_dir, quick, n_jobs).

``EXPERIMENTS`` is that table; ``REPORTS`` names the experiments that lay out their own report, and
``CLAIMS`` maps an experiment to its ``claims(rows)``.
"""

from structrank.experiments import (any_scorer, chakrabarti2008, croce2016, haponchyk2018, jagarlamudi2012, letor_baselines, own_metric,
                                   volkovs2011)

EXPERIMENTS = {
    letor_baselines.EXPERIMENT: letor_baselines.reproduce,
    chakrabarti2008.EXPERIMENT: chakrabarti2008.reproduce,
    haponchyk2018.EXPERIMENT: haponchyk2018.reproduce,
    volkovs2011.EXPERIMENT: volkovs2011.reproduce,
    jagarlamudi2012.EXPERIMENT: jagarlamudi2012.reproduce,
    croce2016.EXPERIMENT: croce2016.reproduce,
    own_metric.EXPERIMENT: own_metric.reproduce,
    any_scorer.EXPERIMENT: any_scorer.reproduce,
}

#: Experiments whose results page lays out its own tables and figures: name -> report_sections(rows, folder, link_prefix)
REPORTS = {
    chakrabarti2008.EXPERIMENT: chakrabarti2008.report_sections,
    haponchyk2018.EXPERIMENT: haponchyk2018.report_sections,
    volkovs2011.EXPERIMENT: volkovs2011.report_sections,
    jagarlamudi2012.EXPERIMENT: jagarlamudi2012.report_sections,
    croce2016.EXPERIMENT: croce2016.report_sections,
    own_metric.EXPERIMENT: own_metric.report_sections,
    any_scorer.EXPERIMENT: any_scorer.report_sections,
}

#: Experiments that test a paper's claims: name -> claims(rows) -> list[claims.Claim] (the "Claims" section)
CLAIMS = {
    chakrabarti2008.EXPERIMENT: chakrabarti2008.claims,
    jagarlamudi2012.EXPERIMENT: jagarlamudi2012.claims,
    volkovs2011.EXPERIMENT: volkovs2011.claims,
    haponchyk2018.EXPERIMENT: haponchyk2018.claims,
    croce2016.EXPERIMENT: croce2016.claims,
}
