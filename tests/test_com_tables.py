"""The 802.3dj search's tables against slow, obvious sums: the UI-sample
autocorrelations (FFT), the TX FFE pair forms (circular acf minus the wrap terms) and
the RX FFE's frequency response (Horner's rule)."""

import numpy as np
import pytest

from serdes.com import mmse
from serdes.com.core import _ffe_response
from serdes.com.fom import _pairs


def _acf_direct(t, nlag):
    n = t.shape[1]
    return np.array([[float(row[:n - k] @ row[k:]) if k < n else 0.0 for k in range(nlag)]
                     for row in t])


@pytest.mark.parametrize("n, nlag", [(500, 40), (37, 37), (12, 30)])
def test_acf_rows_equal_the_direct_sums(n, nlag):
    t = np.random.default_rng(n).standard_normal((5, n)) * np.exp(-np.arange(n) / 60.0)
    r = mmse.acf_rows(t, nlag)
    assert r.shape == (5, nlag)
    ref = _acf_direct(t, nlag)
    # FFT rounding: a few ulps of the lag-0 energy
    assert np.abs(r - ref).max() <= 1e-13 * np.abs(ref[:, :1]).max()
    assert np.all(r[:, n:] == 0.0)


def test_pair_forms_give_the_linear_acf_of_the_tx_filtered_rows():
    """(c_i c_j)_pairs @ G = the linear acf (at lags 0 .. nlag - 1) of the rows of
    sum_i c_i roll(t, k_i) for any taps c: the TX FFE applied as the search applies it."""
    rng = np.random.default_rng(3)
    m, n, nlag = 4, 300, 25
    t = rng.standard_normal((m, n)) * np.exp(-np.arange(n) / 40.0)
    offs = np.array([-2, -1, 0, 1])
    iu, mult = _pairs(len(offs))
    G = mmse._pair_forms(t, offs, nlag, iu, mult)
    for _ in range(3):
        c = rng.standard_normal(len(offs))
        v = sum(ck * np.roll(t, int(o), axis=1) for ck, o in zip(c, offs))
        got = ((c[iu[0]] * c[iu[1]]) @ G).reshape(m, nlag)
        ref = _acf_direct(v, nlag)
        assert np.abs(got - ref).max() <= 1e-12 * np.abs(ref).max()


def test_ffe_response_equals_the_direct_sum():
    rng = np.random.default_rng(7)
    w = rng.standard_normal(87) * 0.1
    w[rng.random(87) < 0.6] = 0.0
    dw = 5
    fui = np.linspace(0.0, 16.0, 4001)           # up to 16 x the baud rate
    k = np.arange(len(w)) - dw
    # the phases reduced in extended precision: the direct sum's own rounding is then
    # that of the sum, not of exponentials of arguments up to ~8000 rad
    ph = (fui.astype(np.longdouble)[:, None] * k[None, :]) % 1
    ref = (w[None, :] * np.exp(-2j * np.pi * ph.astype(float))).sum(axis=1)
    h = _ffe_response(w, dw, fui)
    assert np.abs(h - ref).max() <= 1e-12 * np.abs(w).sum()
    assert _ffe_response(np.array([0.0, 1.0, 0.0]), 1, fui) == pytest.approx(np.ones(len(fui)))


@pytest.mark.parametrize("length, m", [(0, 32), (31, 32), (32, 32), (4100 * 32 + 7, 32),
                                       (340000, 32), (1001, 1), (999, 4)])
def test_phase_table_is_the_transpose_of_whole_uis(length, m):
    """phase_table's blocked copy (blocks of UIs that stay in L1) is the transpose of
    the whole UIs of x, T[ph, n] = x[ph + n m], contiguous, to the bit."""
    from serdes.com.mmse import phase_table

    x = np.random.default_rng(length).standard_normal(length)
    n = length // m
    got = phase_table(x, m)
    assert got.flags.c_contiguous and got.shape == (m, n)
    assert np.array_equal(got, x[:n * m].reshape(n, m).T)
