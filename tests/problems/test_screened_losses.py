"""Clipped logistic loss sums from float32 margins (dpbench.problems.screened_losses): within their stated
bound of the float64 sums the exact computation returns."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpbench.problems import make_problem


def _dense(n=2000, d=8, seed=0, dtype=np.float64, loss="logistic"):
    rng = np.random.default_rng(seed)
    X = np.hstack([np.ones((n, 1)), rng.normal(size=(n, d - 1)) * 3.0]).astype(dtype)
    y = np.where(rng.random(n) < 0.4, -1.0, 1.0)
    return make_problem(X, y, loss=loss, reg=0.001)


def _sparse(n=3000, d=60, seed=1):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, random_state=seed, format="csr", data_rvs=rng.random)
    y = np.where(rng.random(n) < 0.4, -1.0, 1.0)
    return make_problem(X, y, loss="logistic", reg=0.01)


@pytest.mark.parametrize("make", [_dense, _sparse], ids=["dense", "sparse"])
def test_the_approximate_sums_along_a_line_are_within_their_bound(make):
    """300 random lines (‖w‖ up to 30, ‖d‖ up to 10, so margins pass the clip both ways), on all rows and on
    random batches, at the 20 step sizes 2·0.8^i of NoisyBTLS: every approximate sum is within its bound of
    the exact one (the floats of clipped_loss_sum at v = w − η·d), about a hundred times over; so is every Taylor
    bound of the line on the drop S(w) − S(v) (anchor η = 0, steps up to 2), asked for alone or all at once."""
    problem, rng = make(), np.random.default_rng(2)
    worst = 0.0
    for case in range(300):
        w = rng.normal(size=problem.dim) * rng.uniform(0, 30) / np.sqrt(problem.dim)
        direction = rng.normal(size=problem.dim) * rng.uniform(0, 10) / np.sqrt(problem.dim)
        batch = None if case % 3 == 0 else np.flatnonzero(rng.random(problem.n) < rng.uniform(0.01, 0.5))
        clip = float(rng.choice([0.5, 1.0, 3.0]))
        line = problem.clipped_loss_line(w, direction, batch, clip, max_step=2.0)
        at_w = line.exact_at_w()
        assert at_w == problem.clipped_loss_sum(w, batch, clip)
        steps = [0.0, *(2.0 * 0.8**i for i in range(20))]
        if case % 2:
            line.expect_steps(steps)
        for eta in steps:
            v = w - eta * direction
            exact = line.exact(v)
            assert exact == problem.clipped_loss_sum(v, batch, clip)
            approx, error = line.approximate(eta)
            assert abs(approx - exact) <= error
            worst = max(worst, abs(approx - exact) / error)
            drop, drop_error = line.bounded_drop(eta)
            assert abs(drop - (at_w - exact)) <= drop_error
        assert line.bounded_drop(2.5) is None  # beyond the line's largest step
    assert 0.0 < worst < 0.01


def test_lines_not_approximated_return_none():
    """The hinge loss (cheap in float64) and float32 data (whose products round at 2⁻²⁴) are computed exactly."""
    w, direction = np.full(8, 0.1), np.full(8, 0.2)
    assert _dense(loss="hinge").clipped_loss_line(w, direction, None, 1.0).approximate(0.5) is None
    assert _dense(dtype=np.float32).clipped_loss_line(w, direction, None, 1.0).approximate(0.5) is None
    assert _dense().clipped_loss_line(w, direction, None, 1.0).approximate(0.5) is not None
    assert _dense(loss="hinge").clipped_loss_line(w, direction, None, 1.0, max_step=1.0).bounded_drop(0.5) is None
    assert _dense().clipped_loss_line(w, direction, None, 1.0).bounded_drop(0.5) is None  # no max_step given
    assert _dense().clipped_loss_line(w, direction, None, 1.0, max_step=1.0).bounded_drop(0.5) is not None


def test_taylor_bounds_hold_the_float64_clipped_sums():
    """500 random lines (margins a up to ±20, slopes b up to ±10, so rows cross the clip both ways; clips 0.5 to 3):
    with anchors 0; 0 and η_max/2; 0, η_max/2 and η_max; and any three random anchors, every step's bound holds the
    clipped loss sum computed in float64 from the margins a − η·b, the bounds are exact at an anchor but for their
    rounding terms, and they tighten as anchors are added; the bounds on the drops S(0) − S(η) hold the differences
    of those sums (from a fresh line, and after the anchor 0 was computed)."""
    from dpbench.problems.losses import LogisticLoss
    from dpbench.problems.screened_losses import LogisticLineBounds

    rng, clipped_cases = np.random.default_rng(4), 0
    for _ in range(500):
        n = int(rng.integers(1, 3000))
        a = rng.normal(size=n) * rng.uniform(0, 20)
        b = rng.normal(size=n) * rng.uniform(0, 10)
        clip, eta_max = float(rng.choice([0.5, 1.0, 3.0])), float(rng.uniform(0.01, 4.0))
        steps = np.linspace(0.0, eta_max, 21)
        exact = np.array([np.minimum(LogisticLoss().value(a - eta * b), clip).sum() for eta in steps])
        drops, drop_error = LogisticLineBounds(a, b, clip, eta_max).drops(steps)
        assert np.all(np.abs(drops - (exact[0] - exact)) <= drop_error)
        assert drop_error[0] <= 1e-9 * (1.0 + n + abs(exact[0]))
        bounds = LogisticLineBounds(a, b, clip, eta_max)
        clipped_cases += 0 < bounds.clipped_rows < n
        widths = []
        for anchors in [(0.0,), (0.0, eta_max / 2), (0.0, eta_max / 2, eta_max), tuple(rng.uniform(0, eta_max, 3))]:
            middle, error = bounds.clipped_sums(steps, anchors)
            assert np.all(np.abs(middle - exact) <= error)
            widths.append(error)
        assert np.all(widths[1] <= widths[0] + 1e-6) and np.all(widths[2] <= widths[1] + 1e-6)
        assert widths[0][0] <= 1e-9 * (1.0 + n + abs(exact[0]))
        drops, drop_error = bounds.drops(steps)
        assert np.all(np.abs(drops - (exact[0] - exact)) <= drop_error)
    assert clipped_cases > 300  # most lines had rows on both sides of the clip


def test_taylor_bounds_refuse_steps_or_anchors_outside_their_interval():
    from dpbench.problems.screened_losses import LogisticLineBounds

    bounds = LogisticLineBounds(np.zeros(3), np.ones(3), 1.0, 2.0)
    with pytest.raises(ValueError, match=r"steps must lie in \[0, 2.0\]"):
        bounds.clipped_sums(np.array([0.0, 2.5]), (0.0,))
    with pytest.raises(ValueError, match=r"anchors must lie in \[0, 2.0\]"):
        bounds.clipped_sums(np.array([0.0, 1.5]), (0.0, 3.0))
    with pytest.raises(ValueError, match=r"anchors must lie in \[0, 2.0\]"):
        bounds.clipped_sums(np.array([0.0, 1.5]), (-1.0,))
