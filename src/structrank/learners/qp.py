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

For one group (the 1-slack SVM) ``cutting_plane`` first runs an exact active-set solve
(``active_set_dual``: the equality-constrained minimiser on the free set by a small SVD, a step
along a null direction on singular faces), then SMO, warm-started, to a 1e-12 optimality gap (a
few steps after the active set; all of the work for SVM-combo's separate slacks). Why: at large C
SMO alone crawls on the rank-deficient H (docs/BENCHMARKS.md, "Structured learning", times the QP
against C beside the oracles; `structrank bench --only structured`).

Every product and the small eigendecomposition here are plain loops in a fixed order, not BLAS or
LAPACK: OpenBLAS picks its kernels per processor (and its LAPACK calls them), so their last bits
differ between machines, and the solver's discrete choices (a singular face or not, which
multiplier enters) turned those bits into another cutting-plane path. With these the
same working set gives the same alpha on any x86-64 machine and any thread count.
"""

from __future__ import annotations

import numpy as np

from structrank.numba_cache import njit

from structrank.parallel.rows import dot


@njit(cache=True, nogil=True)
def _gradient(H, x, b):
    """``H @ x - b`` with each row summed left to right."""
    out = np.empty(b.shape[0])
    for i in range(b.shape[0]):
        out[i] = dot(H[i], x) - b[i]
    return out


@njit(cache=True, nogil=True)
def _objective(H, b, x):
    """``1/2 x'Hx - b'x``, the minimised objective, in a fixed order."""
    total = 0.0
    for i in range(b.shape[0]):
        total += x[i] * (0.5 * dot(H[i], x) - b[i])
    return total


@njit(cache=True, nogil=True)
def symmetric_eigen(A, max_sweeps=50):
    """Eigenvalues and eigenvectors (the columns of V) of a symmetric A by cyclic Jacobi rotations.

    A fixed sequence of plane rotations (Press et al., Numerical Recipes, section 11.1, with its
    thresholds): the same bits on every processor, where LAPACK's result follows the BLAS kernel.
    Each rotation zeroes its pair; after the fourth sweep an off-diagonal entry that no longer
    changes either diagonal entry is set to zero, so the sweeps end with an exactly diagonal matrix.
    """
    n = A.shape[0]
    a = A.copy()
    V = np.eye(n)
    for sweep in range(max_sweeps):
        off = 0.0
        for p in range(n - 1):
            for q in range(p + 1, n):
                off += abs(a[p, q])
        if off == 0.0:
            break
        threshold = 0.2 * off / (n * n) if sweep < 3 else 0.0
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = a[p, q]
                g = 100.0 * abs(apq)
                if sweep > 3 and abs(a[p, p]) + g == abs(a[p, p]) and abs(a[q, q]) + g == abs(a[q, q]):
                    a[p, q] = a[q, p] = 0.0
                    continue
                if abs(apq) <= threshold:
                    continue
                h = a[q, q] - a[p, p]
                if abs(h) + g == abs(h):
                    t = apq / h
                else:
                    theta = 0.5 * h / apq
                    t = 1.0 / (abs(theta) + np.sqrt(1.0 + theta * theta))
                    if theta < 0.0:
                        t = -t
                c = 1.0 / np.sqrt(t * t + 1.0)
                s = t * c
                for k in range(n):
                    akp, akq = a[k, p], a[k, q]
                    a[k, p] = c * akp - s * akq
                    a[k, q] = s * akp + c * akq
                for k in range(n):
                    apk, aqk = a[p, k], a[q, k]
                    a[p, k] = c * apk - s * aqk
                    a[q, k] = s * apk + c * aqk
                a[p, q] = a[q, p] = 0.0
                for k in range(n):
                    vkp, vkq = V[k, p], V[k, q]
                    V[k, p] = c * vkp - s * vkq
                    V[k, q] = s * vkp + c * vkq
    values = np.empty(n)
    for i in range(n):
        values[i] = a[i, i]
    return values, V


@njit(cache=True, nogil=True)
def solve_dual(H, b, group, n_groups, C, alpha, tol, max_steps):
    """Maximise ``b . a - 1/2 a^T H a`` over ``a >= 0``, ``sum_{group l} a <= C``; ``alpha`` is updated in place.

    ``alpha`` must be feasible on entry. Returns ``(steps, violation)``: the SMO steps taken and
    the final largest violation of the optimality conditions.
    """
    m = b.shape[0]
    grad = _gradient(H, alpha, b)  # gradient of the minimised objective 1/2 a'Ha - b'a
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
            fresh = _gradient(H, alpha, b)
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
    return -float(_objective(H, b, alpha))


@njit(cache=True, nogil=True)
def active_set_dual(H, b, group, n_groups, C, alpha, tol, max_iter):
    """The dual by a primal active-set method; ``alpha`` updated in place.

    Why: at large C the working set's H (rank at most the feature count) is ill-conditioned and
    SMO's pair steps converge slowly, while the optimum has few non-zero multipliers. Here each
    group's slack becomes a variable ``C - sum_{group} a`` (a zero row in H), the problem a QP over
    a product of simplices ``sum_{group l} a = C``: on the free set S the equality-constrained
    minimiser solves ``[H_SS A_S'; A_S 0] [a_S; nu] = [b_S; C 1]`` (A: group membership) through
    the symmetric matrix's eigendecomposition (``symmetric_eigen``); a step towards it stops at
    the first multiplier that reaches 0 (which leaves S), and at the minimiser the variable
    outside S whose gradient most undercuts its group's ``-nu`` enters. On a singular face (the
    system has a null direction v with ``H_SS v = -A_S' mu``, ``A_S v = 0``) the objective is
    linear along v, so it moves downhill along v until a multiplier reaches 0. Each iteration
    costs a small eigendecomposition. After ``max_iter`` iterations, or when a step does not
    lower the objective, it stops where it is, which is feasible; ``solve_dual`` finishes from
    there.

    Returns the iterations taken (negative when it stopped early).
    """
    m = b.shape[0]
    n = m + n_groups
    x = np.empty(n)
    of = np.empty(n, np.int64)  # each variable's group (the slacks last)
    x[:m] = alpha
    of[:m] = group
    for l in range(n_groups):
        of[m + l] = l
        x[m + l] = C
    for j in range(m):
        x[m + group[j]] -= alpha[j]
    for l in range(n_groups):
        x[m + l] = max(x[m + l], 0.0)
    HE = np.zeros((n, n))
    HE[:m, :m] = H
    bE = np.zeros(n)
    bE[:m] = b
    free = x > 0.0
    value = _objective(HE, bE, x)
    scale = max(C, 1.0)
    for it in range(max_iter):
        S = np.flatnonzero(free)
        k = S.shape[0]
        K = np.zeros((k + n_groups, k + n_groups))
        rhs = np.empty(k + n_groups)
        for i in range(k):
            for j in range(k):
                K[i, j] = HE[S[i], S[j]]
            K[i, k + of[S[i]]] = 1.0
            K[k + of[S[i]], i] = 1.0
            rhs[i] = bE[S[i]]
        rhs[k:] = C
        lam, V = symmetric_eigen(K)
        largest, smallest = 0, 0  # by |eigenvalue|, the first of equals
        for i in range(lam.shape[0]):
            if abs(lam[i]) > abs(lam[largest]):
                largest = i
            if abs(lam[i]) < abs(lam[smallest]):
                smallest = i
        if abs(lam[smallest]) <= 1e-12 * abs(lam[largest]):
            v = V[:k, smallest].copy()
            grad = _gradient(HE, x, bE)
            slope = 0.0
            for i in range(k):
                slope += grad[S[i]] * v[i]
            if slope > 0.0:
                v = -v
            t, leave = np.inf, -1
            for i in range(k):
                if v[i] < 0.0 and -x[S[i]] / v[i] < t:
                    t, leave = -x[S[i]] / v[i], S[i]
            if leave < 0:
                break  # cannot happen: within each group v sums to 0, so it has a negative part
            for i in range(k):
                x[S[i]] = max(x[S[i]] + t * v[i], 0.0)
            x[leave] = 0.0
            free[leave] = False
            value = _objective(HE, bE, x)
            continue
        coef = np.empty(lam.shape[0])  # K^-1 rhs = V diag(1 / lam) V' rhs
        for i in range(lam.shape[0]):
            coef[i] = dot(V[:, i], rhs) / lam[i]
        sol = np.zeros(lam.shape[0])
        for i in range(lam.shape[0]):
            for j in range(lam.shape[0]):
                sol[j] += V[j, i] * coef[i]
        step = sol[:k] - x[S]
        if np.max(np.abs(step)) <= 1e-14 * scale:
            grad = _gradient(HE, x, bE)
            nu = np.zeros(n_groups)
            count = np.zeros(n_groups)
            for i in range(k):
                nu[of[S[i]]] -= grad[S[i]]
                count[of[S[i]]] += 1.0
            nu /= np.maximum(count, 1.0)
            worst, enter = -tol, -1
            for j in range(n):
                if not free[j] and grad[j] + nu[of[j]] < worst:
                    worst, enter = grad[j] + nu[of[j]], j
            if enter < 0:
                break
            free[enter] = True
            continue
        t, leave = 1.0, -1
        for i in range(k):
            if step[i] < 0.0 and -x[S[i]] / step[i] < t:
                t, leave = -x[S[i]] / step[i], S[i]
        trial = x.copy()
        for i in range(k):
            trial[S[i]] += t * step[i]
        if leave >= 0:
            trial[leave] = 0.0
        for j in range(n):
            if trial[j] < 0.0:
                trial[j] = 0.0
        new_value = _objective(HE, bE, trial)
        if new_value > value + 1e-12 * max(abs(value), 1.0):
            alpha[:] = x[:m]
            return -it  # no descent: a singular face; SMO takes over from x
        x, value = trial, new_value
        if leave >= 0:
            free[leave] = False
    else:
        alpha[:] = x[:m]
        return -max_iter
    alpha[:] = x[:m]
    return it
