"""The experiments ``structrank reproduce`` knows: name -> reproduce(out, data_dir, quick, n_jobs)."""

from structrank.experiments import letor_baselines

EXPERIMENTS = {
    letor_baselines.EXPERIMENT: letor_baselines.reproduce,
}
