"""Eye height and VEC at DER_0 (serdes/com/eye.py) against the closed form of an ideal
thru with one echo and white noise (the COM closed-form channel of test_com.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from serdes.com.core import compute_com
from serdes.com.eye import eye_at_der0
from serdes.com.params import preset
from serdes.com.pulse import ComGrid
from tests.test_com import ECHO, ECHO_UI, _ideal, _write_s2p


@pytest.fixture(scope="module")
def echo_file(tmp_path_factory):
    fb = preset("802.3ck-kr").fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    h = 1.0 + ECHO * np.exp(-2j * np.pi * f * ECHO_UI / fb)
    return _write_s2p(tmp_path_factory.mktemp("comeye") / "echo.s2p", f, h)


def test_eye_height_and_vec_closed_form(echo_file):
    """Noise + interference around a level is (echo x PAM4 symbol) + Gaussian, symmetric:
    the lower and upper DER_0 quantiles are both a solving DER_0 = 1/4 sum_v
    Phi((-a - v 0.1 h0)/sigma), so EH = 2 (A_s - a) and VEC = 20 log10(A_s / (A_s - a)).
    Tolerance: the bound on the pulse's other samples at the cursor phase (both sides)."""
    p = _ideal(preset("802.3ck-kr"), eta0=2e-9)
    (case,) = compute_com(echo_file, preset=p).cases
    grid = ComGrid.of(p)
    h0 = case.a_s_v * (p.levels - 1) / p.rlm
    fc = p.f_r * p.fb_gbd
    sigma = math.sqrt(p.eta0 * fc * integrate.quad(lambda x: 1 / (1 + x ** 8), 0,
                                                   grid.f[-1] / 1e9 / fc)[0])
    vals = ECHO * h0 * np.array([-1, -1 / 3, 1 / 3, 1])
    a = optimize.brentq(lambda x: np.mean(stats.norm.cdf((-x - vals) / sigma)) - p.der0, 0, 1)
    ix = case.cursor_ix
    s = case.pulse_eq[ix % grid.m::grid.m].copy()
    n0 = ix // grid.m
    s[[n0, n0 + ECHO_UI]] = 0
    s[n0 + 1:n0 + 1 + len(p.dfe_max)] = 0
    bound = np.abs(s).sum() + 2 * min(case.a_s_v / 1000, 1e-5) + 1e-3 * a
    eh_cf = 2 * (case.a_s_v - a)
    assert abs(case.eye_height_v - eh_cf) <= 2 * bound
    vec_cf = 20 * np.log10(case.a_s_v / (case.a_s_v - a))
    tol_db = 20 * np.log10(1 + 2 * bound / eh_cf)
    assert abs(case.vec_db - vec_cf) <= tol_db
    assert tol_db < 0.1
    # the JSON fields carry the same numbers
    d = case.as_dict()
    assert d["eye_height_v"] == case.eye_height_v and d["vec_db"] == case.vec_db


def test_eye_from_known_distribution_and_closed_eye():
    """A Gaussian PMF alone: both quantiles are sigma Q^-1(DER_0) (to the grid step); a
    noise wider than the level spacing closes the eye (VEC undefined)."""
    step, sigma, a_s, der0 = 1e-5, 1e-3, 5e-3, 1e-4
    y = (np.arange(40001) - 20000) * step
    pdf = np.exp(-y ** 2 / (2 * sigma ** 2))
    eh, vec = eye_at_der0(y, pdf, a_s, der0)
    q = -stats.norm.ppf(der0) * sigma
    assert eh == pytest.approx(2 * (a_s - q), abs=2 * step)
    assert vec == pytest.approx(20 * np.log10(a_s / (a_s - q)), abs=0.01)
    eh, vec = eye_at_der0(y, pdf, 3e-3, der0)
    assert eh < 0 and vec is None
