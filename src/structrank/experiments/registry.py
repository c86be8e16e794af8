"""The experiments ``structrank reproduce`` knows: name -> reproduce(out, data_dir, quick, n_jobs)."""

from structrank.experiments import chakrabarti2008, letor_baselines

EXPERIMENTS = {
    letor_baselines.EXPERIMENT: letor_baselines.reproduce,
    chakrabarti2008.EXPERIMENT: chakrabarti2008.reproduce,
}
