"""The NumPy linear algebra of the equalizer design (serdes/dsp/linalg.py) against
scipy.linalg, on random systems and on the designs the default link makes: the MMSE taps
agree to rounding (relative 1e-12), so no designed number moves."""

import numpy as np
import pytest

scipy_linalg = pytest.importorskip("scipy.linalg")

from serdes.build import build_link  # noqa: E402
from serdes.config import Config  # noqa: E402
from serdes.dsp import linalg, mmse  # noqa: E402
from serdes.dsp.whitening import noise_predictor  # noqa: E402


def _scipy_solve_pos(a, b):
    return scipy_linalg.solve(a, b, assume_a="pos")


@pytest.mark.parametrize("n", [1, 5, 24, 96])
def test_toeplitz_and_solves_equal_scipy(n):
    rng = np.random.default_rng(n)
    r = np.exp(-np.arange(n) / 4.0) * np.cos(0.6 * np.arange(n))
    r[0] += 0.1
    assert np.array_equal(linalg.toeplitz(r), scipy_linalg.toeplitz(r))
    g = rng.standard_normal((n, n + 8))
    a = g @ g.T + linalg.toeplitz(r)
    b = rng.standard_normal(n)
    # forward error of a backward-stable solve: a few eps times the condition number
    tol = 50 * np.finfo(float).eps * np.linalg.cond(a)
    x = linalg.solve_pos(a, b)
    ref = _scipy_solve_pos(a, b)
    assert np.max(np.abs(x - ref)) <= tol * np.max(np.abs(ref))
    t = linalg.toeplitz(r)
    tol = 50 * np.finfo(float).eps * np.linalg.cond(t)
    y, ref = linalg.solve_toeplitz(r, b), scipy_linalg.solve_toeplitz(r, b)
    assert np.max(np.abs(y - ref)) <= tol * np.max(np.abs(ref))


def test_solve_pos_refuses_an_indefinite_matrix():
    with pytest.raises(np.linalg.LinAlgError):
        linalg.solve_pos(np.array([[1.0, 2.0], [2.0, 1.0]]), np.ones(2))


@pytest.fixture(scope="module")
def default_link():
    return build_link(Config.default())


@pytest.mark.parametrize("n_taps, n_pre, n_dfe, limit", [(24, 4, 1, 1.0), (48, 8, 4, 1.0),
                                                         (24, 4, 2, 0.2)])
def test_mmse_design_equals_the_scipy_solution(default_link, monkeypatch, n_taps, n_pre,
                                               n_dfe, limit):
    """The default link's FFE/DFE design (and a clipped-DFE design, which takes the
    fixed-lag solve) with NumPy and with scipy's Cholesky solve."""
    link = default_link
    args = (link.pulse.taps, link.pulse.cursor, link.sampled_noise_autocorr(n_taps))
    kw = dict(n_taps=n_taps, n_pre=n_pre, n_dfe=n_dfe, level_power=link.level_power,
              dfe_limit=limit)
    ours = mmse.mmse_ffe_dfe(*args, **kw)
    monkeypatch.setattr(mmse, "solve_pos", _scipy_solve_pos)
    ref = mmse.mmse_ffe_dfe(*args, **kw)
    scale = np.max(np.abs(ref.ffe))
    assert np.max(np.abs(ours.ffe - ref.ffe)) <= 1e-12 * scale
    assert np.max(np.abs(ours.dfe - ref.dfe)) <= 1e-12
    assert ours.predicted_snr_db == pytest.approx(ref.predicted_snr_db, abs=1e-10)


def test_noise_predictor_equals_levinson(default_link):
    r = default_link.sampled_noise_autocorr(16)
    taps, var = noise_predictor(r, 8)
    p = scipy_linalg.solve_toeplitz(r[:8], r[1:9])
    assert np.max(np.abs(taps[1:] + p)) <= 1e-12 * np.max(np.abs(p))
    assert var == pytest.approx(float(r[0] - p @ r[1:9]), rel=1e-12)
