"""Products and row reductions (:mod:`dpbench.problems.products`).

Float32 data stay float32: a problem keeps the caller's array, and its products allocate vectors,
never a float64 copy of the matrix (``data.dtype=float32``). Row norms are the floats of the plain
numpy and scipy calls, computed block by block."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from dpbench.problems import make_problem
from dpbench.problems.products import (
    all_finite,
    exact_matvec,
    exact_rmatvec,
    matvec,
    rmatvec,
    row_l1_norms,
    row_norms,
)


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_a_float32_problem_keeps_its_data_and_never_copies_it(layout):
    rng = np.random.default_rng(0)
    n, d = 60_000, 300  # 18M entries: above the size for which a problem makes its own dense copies
    if layout == "dense":
        X = rng.standard_normal((n, d), dtype=np.float32)
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    else:
        X = sp.random(n, d, density=0.3, format="csr", dtype=np.float32, random_state=0)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    problem = make_problem(X, y, loss="logistic", reg=1e-3)
    assert problem.X.dtype == np.float32
    if layout == "dense":
        assert problem.X is X
    w = rng.standard_normal(d)
    matrix_bytes = X.nbytes if layout == "dense" else X.data.nbytes
    tracemalloc.start()
    try:
        value, grad = problem.objective_and_gradient(w)
        clipped = problem.clipped_gradient_sum(w, None, clip=0.01)
        batch = problem.clipped_gradient_sum(w, rng.choice(n, 500, replace=False), clip=0.01)
        problem.evaluate_objective(w + 1.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < matrix_bytes / 4, f"products allocated {peak} bytes, a copy of X is {matrix_bytes}"
    assert grad.dtype == clipped.dtype == batch.dtype == np.float64 and isinstance(value, float)
    reference = make_problem(X.astype(np.float64), y, loss="logistic", reg=1e-3)
    want_value, want_grad = reference.objective_and_gradient(w)
    assert value == pytest.approx(want_value, rel=1e-5)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-3, atol=1e-6 * np.abs(want_grad).max())


def test_products_with_float64_data_are_the_plain_products():
    rng = np.random.default_rng(1)
    X, w, s = rng.standard_normal((50, 7)), rng.standard_normal(7), rng.standard_normal(50)
    assert np.array_equal(matvec(X, w), X @ w) and np.array_equal(rmatvec(X, s), X.T @ s)
    csr = sp.csr_matrix(np.where(X > 0.5, X, 0.0))
    assert np.array_equal(matvec(csr, w), csr @ w) and np.array_equal(rmatvec(csr, s), csr.T @ s)


@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_float32_products_and_norms_are_the_float64_ones_to_float32_rounding(layout):
    rng = np.random.default_rng(2)
    X64 = np.where(rng.random((3000, 700)) < 0.3, rng.standard_normal((3000, 700)), 0.0)  # 2.1M entries: 3 row blocks
    X64 = X64.astype(np.float32).astype(np.float64)  # exactly representable in float32
    X32 = X64.astype(np.float32)
    if layout == "sparse":
        X64, X32 = sp.csr_matrix(X64), sp.csr_matrix(X32)
    w, s = rng.standard_normal(700), rng.standard_normal(3000)
    got, want = matvec(X32, w), matvec(X64, w)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())
    np.testing.assert_allclose(rmatvec(X32, s), rmatvec(X64, s), rtol=0, atol=1e-5 * np.abs(rmatvec(X64, s)).max())
    # the exact products accumulate in float64: the float64 products of the same numbers
    np.testing.assert_allclose(exact_matvec(X32, w), want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(exact_rmatvec(X32, s), rmatvec(X64, s), rtol=1e-12, atol=1e-13)
    # norms are taken in float64 from the float32 entries: equal to rounding of the sums
    np.testing.assert_allclose(row_norms(X32), row_norms(X64), rtol=1e-14)
    np.testing.assert_allclose(row_l1_norms(X32), row_l1_norms(X64), rtol=1e-14)


def test_all_finite_finds_a_nan_in_the_last_row_block():
    X = np.zeros((5000, 500), dtype=np.float32)  # 2.5M entries: 3 row blocks
    assert all_finite(X)
    X[-1, -1] = np.nan
    assert not all_finite(X)
    assert not all_finite(sp.csr_matrix(X))


def test_sparse_row_norms_are_scipys_floats_without_its_copy(monkeypatch):
    from dpbench.problems import products

    monkeypatch.setattr(products, "BLOCK_ENTRIES", 1000)  # many blocks, and rows longer than a block
    rng = np.random.default_rng(3)
    for density in (0.001, 0.05, 0.5):
        X = sp.random(4000, 3000, density=density, format="csr", random_state=4)
        X.data = rng.standard_normal(X.data.size)
        X = sp.csr_matrix(X.toarray() * (np.arange(4000) % 7 != 0)[:, None])  # every 7th row empty
        assert np.array_equal(row_norms(X), np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel()))
        assert np.array_equal(row_l1_norms(X), np.asarray(abs(X).sum(axis=1)).ravel())
    duplicates = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), np.array([0, 3, 3])), shape=(2, 2))
    np.testing.assert_allclose(row_norms(duplicates), [np.sqrt(9.0 + 9.0), 0.0])  # (1 + 2)² + 3²
