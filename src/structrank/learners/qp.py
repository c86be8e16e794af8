"""The small QP of a cutting-plane structural SVM, solved to machine precision and warm-started.

Over the working set of constraints (vectors g_j with losses b_j, each in a slack group) the
dual of ``min 1/2 |w|^2 + C sum_l xi_l  s.t.  w . g_j >= b_j - xi_l(j)`` is

    max  b . a - 1/2 a^T H a    s.t.  a >= 0,  sum_{j in group l} a_j <= C  for every l,

with ``H = G G^T`` and ``w = G^T a``. One group is the 1-slack SVM; one group per loss gives
SVM-combo's separate slacks.

The solver is SMO over pairs inside one group (Platt 1998; the working-set rule of Keerthi et al.
2001): each group gets a slack variable ``a_0 = C - sum a`` with zero gradient, turning its
inequality into an equality, and every step moves weight between the two variables of one group
that violate the optimality conditions most, by the exact minimiser along that line. It stops
when the largest violation is below ``tol``. The working set is small (tens to hundreds of
constraints) and its previous solution stays feasible when a constraint is added, so each
solve starts from the last one and takes few steps.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def solve_dual(H, b, group, n_groups, C, alpha, tol, max_steps):
    """Maximise ``b . a - 1/2 a^T H a`` over ``a >= 0``, ``sum_{group l} a <= C``; ``alpha`` is updated in place.

    ``alpha`` must be feasible on entry. Returns ``(steps, violation)``: the SMO steps taken and
    the final largest violation of the optimality conditions.
    """
    m = b.shape[0]
    grad = H @ alpha - b  # gradient of the minimised objective 1/2 a'Ha - b'a
    slack = np.full(n_groups, C)
    for j in range(m):
        slack[group[j]] -= alpha[j]
    for l in range(n_groups):
        slack[l] = max(slack[l], 0.0)
    violation = 0.0
    best_group = 0
    for step in range(max_steps):
        # Per group, the variable to raise is the one of least gradient (the group's slack
        # variable, index -1, has gradient 0); the one to lower is chosen among those above zero
        # by the second-order rule of Fan, Chen & Lin (2005): the largest decrease of the
        # objective along the pair's line. The largest first-order gap is the stopping measure.
        violation = 0.0
        best_gain = 0.0
        up = -1
        down = -1
        for l in range(n_groups):
            lo = 0.0
            lo_j = -1
            hi = 0.0 if slack[l] > 0.0 else -np.inf
            for j in range(m):
                if group[j] == l:
                    if grad[j] < lo:
                        lo = grad[j]
                        lo_j = j
                    if alpha[j] > 0.0 and grad[j] > hi:
                        hi = grad[j]
            violation = max(violation, hi - lo)
            if hi - lo <= tol:
                continue
            h_uu = H[lo_j, lo_j] if lo_j >= 0 else 0.0
            for j in range(-1, m):
                if j >= 0 and (group[j] != l or alpha[j] <= 0.0):
                    continue
                if j < 0 and slack[l] <= 0.0:
                    continue
                g_j = grad[j] if j >= 0 else 0.0
                gap = g_j - lo
                if gap <= 0.0 or j == lo_j:
                    continue
                curv = h_uu
                if j >= 0:
                    curv += H[j, j]
                    if lo_j >= 0:
                        curv -= 2.0 * H[lo_j, j]
                gain = gap * gap / max(curv, 1e-12)
                if gain > best_gain:
                    best_gain = gain
                    up = lo_j
                    down = j
                    best_group = l
        best_gap = (grad[down] if down >= 0 else 0.0) - (grad[up] if up >= 0 else 0.0)
        if violation <= tol or best_gain <= 0.0:
            # confirm with a gradient computed afresh (the running one accumulates rounding)
            fresh = H @ alpha - b
            drift = 0.0
            for j in range(m):
                drift = max(drift, abs(fresh[j] - grad[j]))
            if drift <= 0.1 * tol:
                return step, violation
            grad[:] = fresh
            continue
        # move t from `down` to `up` (either may be the group's slack variable, index -1)
        curvature = 0.0
        if up >= 0:
            curvature += H[up, up]
        if down >= 0:
            curvature += H[down, down]
        if up >= 0 and down >= 0:
            curvature -= 2.0 * H[up, down]
        limit = slack[best_group] if down < 0 else alpha[down]
        t = limit if curvature <= 1e-300 else min(limit, best_gap / curvature)
        if up >= 0:
            alpha[up] += t
        else:
            slack[best_group] += t
        if down >= 0:
            alpha[down] -= t
            if alpha[down] < 1e-300:
                alpha[down] = 0.0
        else:
            slack[best_group] -= t
            if slack[best_group] < 1e-300:
                slack[best_group] = 0.0
        for i in range(m):
            change = 0.0
            if up >= 0:
                change += H[i, up]
            if down >= 0:
                change -= H[i, down]
            grad[i] += t * change
    return max_steps, violation


def dual_objective(H, b, alpha) -> float:
    return float(b @ alpha - 0.5 * alpha @ H @ alpha)
