"""The projection of what more seeds per row could settle: its interval at today's seeds is the paired test's, it
falls with the seeds towards the questions' own spread, and it says when no seed count settles a target."""

import numpy as np
import pytest

from structrank.metrics.significance import paired_test
from structrank_lab.experiments.neural_qa.projection import MAX_SEEDS, half_width, project, sentence


def _rows(rng, seeds, questions, seed_sd, shift=0.0):
    base = rng.uniform(0.3, 0.9, questions)
    return base + shift + rng.normal(0, seed_sd, (seeds, questions))


def test_at_today_s_seeds_the_half_width_is_the_paired_test_s():
    rng = np.random.default_rng(0)
    a, b = _rows(rng, 3, 80, 0.1), _rows(rng, 3, 80, 0.1)
    p = project(a, b, margin=0.01)
    t = paired_test(a.mean(axis=0), b.mean(axis=0))
    assert p.seeds_now == 3 and p.mean == pytest.approx(t.mean_diff, abs=1e-12)
    assert half_width(p, 3) == pytest.approx((t.ci_high - t.ci_low) / 2, rel=1e-9)
    assert half_width(p, 3) > half_width(p, 5) > half_width(p, 10) > half_width(p)


def test_seeds_settle_a_target_the_seeds_noise_hides():
    # the same questions, one row half a point lower, each question's value moving a lot from seed to seed
    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 0.9, 1000)
    a = base + rng.normal(0, 0.15, (3, 1000))
    b = base + rng.normal(0, 0.15, (3, 1000))
    a += -0.004 - (a.mean() - b.mean())  # the measured difference exactly 0.4 points
    p = project(a, b, margin=0.01)
    assert p.settles_at is not None and p.settles_as == "holds"
    # the first count whose interval lies above -margin: the one before it does not
    assert p.mean - half_width(p, p.settles_at) >= -0.01 > p.mean - half_width(p, p.settles_at - 1)
    assert p.mean - half_width(p, 3) < -0.01  # inconclusive today
    text = sentence(p, "-1 point")
    assert text.startswith(" Projection, a hypothesis") and f"from {p.settles_at} seeds per row" in text


def test_no_seed_count_settles_what_the_questions_spread_decides():
    rng = np.random.default_rng(2)
    a = rng.uniform(0, 1, 40)[None, :] + rng.normal(0, 0.01, (3, 40))
    p = project(a, None, margin=0.0, target=float(a.mean()) + 0.01)  # a constant target just above the mean
    assert p.settles_at is None and half_width(p) > 0.05
    assert f"no number of seeds up to {MAX_SEEDS} would settle it against 0.80" in sentence(p, "0.80")


def test_a_row_of_one_seed_gives_no_projection():
    rng = np.random.default_rng(3)
    assert project(_rows(rng, 1, 20, 0.1), _rows(rng, 3, 20, 0.1), 0.01) is None
    assert project(_rows(rng, 3, 20, 0.1), _rows(rng, 1, 20, 0.1), 0.01) is None
    assert sentence(None, "-1 point") == ""
