"""Row clipping, min–max scaling and the bias column."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpbench.data import clip_rows
from dpbench.data.preprocess import add_bias, minmax_scale


def test_clip_rows_dense():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0], [-6.0, 8.0]])
    before = X.copy()
    out = clip_rows(X, 1.0)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), [1.0, 0.5, 0.0, 1.0])
    np.testing.assert_allclose(out[0], [0.6, 0.8])
    np.testing.assert_array_equal(out[1], X[1])
    np.testing.assert_array_equal(X, before)  # a new matrix; the input is untouched
    assert out is not X


def test_clip_rows_sparse_stays_sparse():
    X = sp.csr_matrix(np.array([[3.0, 0.0, 4.0], [0.0, 0.0, 0.0], [0.0, 0.1, 0.0], [0.0, 12.0, 5.0]]))
    before = X.copy()
    out = clip_rows(X, 2.0)
    assert sp.isspmatrix_csr(out) and out.nnz == X.nnz
    np.testing.assert_allclose(sp.linalg.norm(out, axis=1), [2.0, 0.0, 0.1, 2.0])
    np.testing.assert_allclose(out.toarray(), clip_rows(X.toarray(), 2.0))
    np.testing.assert_array_equal(X.toarray(), before.toarray())  # the input is untouched


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, (6, 4), elements=st.floats(-1e3, 1e3)), st.floats(1e-3, 1e3))
def test_clip_rows_bound(X, max_norm):
    out = clip_rows(X, max_norm)
    norms = np.linalg.norm(X, axis=1)
    assert (np.linalg.norm(out, axis=1) <= max_norm * (1 + 1e-12)).all()
    np.testing.assert_array_equal(out[norms <= max_norm], X[norms <= max_norm])


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "1"])
def test_clip_rows_rejects_bad_norm(bad):
    with pytest.raises(ValueError, match="max_norm"):
        clip_rows(np.ones((2, 2)), bad)


def test_minmax_scale_constant_columns_and_reference():
    X = np.array([[1.0, 5.0, 10.0], [3.0, 5.0, 20.0], [2.0, 5.0, 30.0]])
    np.testing.assert_allclose(minmax_scale(X), [[0.0, 0.0, 0.0], [1.0, 0.0, 0.5], [0.5, 0.0, 1.0]])
    test = np.array([[0.0, 7.0, 25.0], [4.0, 5.0, 10.0]])
    np.testing.assert_allclose(minmax_scale(test, reference=X), [[0.0, 0.0, 0.75], [1.0, 0.0, 0.0]])


def test_add_bias_dense_and_sparse():
    X = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(add_bias(X), [[1, 0, 1], [1, 2, 3], [1, 4, 5]])
    S = add_bias(sp.csr_matrix(X))
    assert sp.isspmatrix_csr(S) and S.dtype == np.float64
    np.testing.assert_array_equal(S.toarray(), add_bias(X))


def test_clip_rows_keeps_float32_data_in_float32():
    X = np.random.default_rng(0).standard_normal((200, 30)).astype(np.float32) * 3
    for matrix in (X, sp.csr_matrix(X)):
        clipped = clip_rows(matrix, 1.0)
        assert clipped.dtype == np.float32
        dense = clipped.toarray() if sp.issparse(clipped) else clipped
        assert np.linalg.norm(dense.astype(np.float64), axis=1).max() <= 1.0 + 1e-6
