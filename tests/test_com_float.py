"""Floating DFE taps of the 802.3ck KR / CR COM (serdes/com/floating.py,
serdes/kernels/com_float.py): the numba placement equals the literal reference of the
IEEE code's rule (tests/naive.py), a late echo inside N_f is found and reduced as the
closed form says, and the grid search with its pruning gives the exact best FOM."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from naive import com_float_banks
from serdes.com import fom as comfom
from serdes.com.core import compute_com
from serdes.com.params import PRESETS, preset
from serdes.com.pulse import ComGrid, channel_vtf, read_channel
from serdes.errors import ConfigError
from serdes.kernels.com_float import _banks, float_delta_rows, float_taps
from tests.test_com import SYNTHETIC_GAIN, _ideal, _write_s2p


pytestmark = SYNTHETIC_GAIN   # channels with gain by construction (tests/test_com.py)

ECHO, ECHO_UI = 0.1, 20


def _rows(rng, n, ln):
    out = []
    for t in range(n):
        h = np.zeros(ln)
        kind = t % 4
        if kind == 0:
            h = rng.normal(size=ln) * 0.01
        elif kind == 1:   # clusters (exercise the overlap / adjacent-window branches)
            for _ in range(rng.integers(1, 6)):
                c, w = rng.integers(0, ln), rng.integers(1, 6)
                h[c:c + w] += rng.normal() * 0.05 * np.exp(-np.arange(min(w, ln - c)) / 2)
        elif kind == 2:   # ties
            h = np.round(rng.normal(size=ln) * 3) * 0.01
        else:
            h = rng.normal(size=ln) * 0.01 * np.exp(-np.arange(ln) / 8)
        out.append(h)
    return out


def test_kernel_placement_equals_the_literal_reference():
    rng = np.random.default_rng(7)
    n = 0
    for h in _rows(rng, 4000, 28):
        nbf, nbg = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        bm = float(rng.choice([0.0, 0.01, 0.03, 0.05, 1.0]))
        mask = np.zeros(len(h), dtype=np.uint8)
        _banks(h, 1.0, nbf, nbg, bm, mask)
        assert np.nonzero(mask)[0].tolist() == com_float_banks(h, 1.0, nbf, nbg, bm)
        n += 1
    assert n == 4000
    # the adjacent-window branch: the best window's left overlaps rank high and the window
    # just left of it (not overlapping) is the first outside it -> the next group goes there
    h = np.zeros(28)
    h[6:9] = [0.2, 0.2, 0.2]
    h[3:6] = [0.15, 0.15, 0.15]
    h[20] = 0.01
    got = com_float_banks(h, 1.0, 3, 3, 1.0)
    mask = np.zeros(28, dtype=np.uint8)
    _banks(h, 1.0, 3, 3, 1.0, mask)
    assert np.nonzero(mask)[0].tolist() == got and {3, 4, 5, 6, 7, 8} <= set(got)
    # the first N_bg N_bf taps when the first windows are the strongest
    h = 0.05 * np.exp(-np.arange(28) / 3.0)
    assert com_float_banks(h, 1.0, 3, 3, 0.05) == list(range(9))


def test_tap_values_and_tail_limit():
    """bmaxg clips each floating tap; taps from N_tail_start on are scaled together to an
    RSS of B_float_RSS_MAX; the ISI change is sum (h - t h0)^2 - h^2. (With the large
    value first, [0.08, -0.02, 0.01], the windows overlapping from the left rank before
    any other and the code's rule moves the group left, onto taps 0..2: the placement
    is the IEEE code's, not the best one.)"""
    h = np.zeros(28)
    h[[2, 3, 4]] = [0.01, -0.02, 0.08]       # group 1 (taps 15..17 of the KR span)
    h[[15, 16, 17]] = [0.03, 0.03, -0.03]     # group 2, inside the tail (tap 28 on)
    h0 = 0.5
    t = float_taps(h, h0, 3, 2, 0.05, tail=12, b_rss=0.02)
    assert t[[2, 3, 4]] == pytest.approx([0.02, -0.04, 0.05])
    tail = np.array([0.05, 0.05, -0.05])      # clipped, RSS 0.0866 > 0.02
    assert t[[15, 16, 17]] == pytest.approx(tail * 0.02 / np.linalg.norm(tail))
    assert np.count_nonzero(t) == 6
    h2 = h.copy()
    h2[[2, 3, 4]] = [0.08, -0.02, 0.01]
    assert com_float_banks(h2, h0, 3, 2, 0.05) == [0, 1, 2, 15, 16, 17]
    d = float_delta_rows(h[None, :], np.array([h0]), 3, 2, 0.05, 12, 0.02)
    assert d[0] == pytest.approx(np.sum((h - t * h0) ** 2 - h ** 2), rel=1e-12)
    assert d[0] < 0
    assert float_delta_rows(h[None, :], np.array([-1.0]), 3, 2, 0.05)[0] == 0.0
    with pytest.raises(ConfigError, match="fewer than"):
        float_taps(h[:5], 1.0, 3, 2, 0.05)


@pytest.fixture(scope="module")
def echo_file(tmp_path_factory):
    fb = preset("802.3ck-kr").fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    h = 1.0 + ECHO * np.exp(-2j * np.pi * f * ECHO_UI / fb)
    return _write_s2p(tmp_path_factory.mktemp("comf") / "echo.s2p", f, h)


def test_delta_rows_are_each_rows_taps_on_any_thread_count():
    """float_delta_rows over 1,000 rows (several chunks of ROW_CHUNK) is each row's
    sum((h - t h0)^2 - h^2) with t from float_taps, on 1 to 5 threads, to the bit
    (a chunk a thread skipped would leave np.empty's values)."""
    from serdes.kernels.com_float import ROW_CHUNK

    rng = np.random.default_rng(11)
    post = np.array(_rows(rng, 1000, 28))
    h0 = rng.uniform(0.2, 0.8, len(post))
    h0[::97] = -0.1                                  # no cursor: 0
    assert len(post) > 3 * ROW_CHUNK
    want = np.array([0.0 if c <= 0 else
                     np.sum((h - float_taps(h, c, 3, 2, 0.05, 12, 0.02) * c) ** 2 - h ** 2)
                     for h, c in zip(post, h0)])
    one = float_delta_rows(post, h0, 3, 2, 0.05, 12, 0.02, threads=1)
    assert np.allclose(one, want, rtol=1e-12, atol=1e-15)
    for threads in (2, 3, 5):
        assert np.array_equal(float_delta_rows(post, h0, 3, 2, 0.05, 12, 0.02,
                                               threads=threads), one)
    with pytest.raises(ConfigError, match="threads"):
        float_delta_rows(post, h0, 3, 2, 0.05, threads=0)


@pytest.mark.parametrize("bmaxg", [0.03, 0.05, 0.2])
def test_echo_inside_n_f_is_found_and_reduced(echo_file, bmaxg):
    """An ideal thru with one echo of 0.1 at 20 UI (beyond the 12 fixed taps, inside N_f
    = 40) and white RX noise: a floating group lands on the echo and leaves (0.1 -
    min(0.1, bmaxg)) h0 of it, so DER_0 = 1/4 sum_v Phi((-A_ni - v r h0) / sigma), v in
    {+-1, +-1/3}, r = 0.1 - min(0.1, bmaxg) (r = 0: the Gaussian quantile alone)."""
    p = dataclasses.replace(_ideal(preset("802.3ck-kr"), eta0=2e-9), dfe_n_bg=3,
                            dfe_bmaxg=bmaxg)
    assert p.dfe_n_bg == 3 and p.dfe_n_f == 40
    (case,) = compute_com(echo_file, preset=p).cases
    grid = ComGrid.of(p)
    h0 = case.a_s_v * (p.levels - 1) / p.rlm
    fc = p.f_r * p.fb_gbd
    sigma = math.sqrt(p.eta0 * fc * integrate.quad(lambda x: 1 / (1 + x ** 8), 0,
                                                   grid.f[-1] / 1e9 / fc)[0])
    ix, m = case.cursor_ix, grid.m
    n0 = ix // m
    s = case.pulse_eq[ix % m::m]
    taps = np.array(case.dfe_taps)
    assert len(taps) == 40
    # the echo's tap carries a floating coefficient at the limit (or the echo itself)
    t_echo = taps[ECHO_UI - 1]
    assert t_echo == pytest.approx(min(bmaxg, s[n0 + ECHO_UI] / s[n0]), rel=1e-9)
    r = ECHO - min(ECHO, bmaxg)
    vals = r * h0 * np.array([-1, -1 / 3, 1 / 3, 1])

    def der(a):
        return np.mean(stats.norm.cdf((-a - vals) / sigma)) - p.der0

    a_ni = optimize.brentq(der, 0, 1)
    # bound: every other sample left after the DFE (fixed and floating taps), the echo's
    # own difference from 0.1 h0 (the Butterworth's ripple) and two grid steps
    res = s[n0 + 1:n0 + 41] - taps * s[n0]
    other = np.abs(s[:n0]).sum() + np.abs(s[n0 + 41:]).sum() + np.abs(res).sum() \
        - abs(res[ECHO_UI - 1])
    bound = other + abs(res[ECHO_UI - 1] - r * h0) + 2 * min(case.a_s_v / 1000, 1e-5)
    assert abs(case.a_ni_v - a_ni) <= bound + 1e-3 * a_ni
    tol_db = 20 * np.log10(1 + (bound + 1e-3 * a_ni) / a_ni)
    assert abs(case.com_db - 20 * np.log10(case.a_s_v / a_ni)) <= tol_db
    assert tol_db < 0.3
    # without floating taps the whole echo stays (the fixed-tap closed form)
    p0 = dataclasses.replace(p, dfe_n_bg=0)
    (c0,) = compute_com(echo_file, preset=p0).cases
    assert len(c0.dfe_taps) == 12
    assert case.com_db > c0.com_db
    if bmaxg >= ECHO:
        assert case.com_db > c0.com_db + 1.0


def test_pruned_search_equals_every_setting_evaluated():
    """With floating taps the search skips a setting only when its FOM bound is below the
    best of its CTLE cell: the best FOM, the choice, the landscape and every FOM at the
    best CTLE equal those of placing the taps for every setting (no pruning), in small
    chunks (the running best carried over); KR values on DPO_4in, a small grid."""
    import os
    from pathlib import Path
    ch = Path(os.environ.get("SERDES_CHANNELS", "/work/shared/channels"))
    thru = ch / "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_4in_Meg7_THRU.s4p"
    if not thru.exists():
        pytest.skip(f"IEEE channel file not available: {thru}")
    p = dataclasses.replace(PRESETS["802.3ck-kr"], g_dc=(-6.0, -3.0), g_dc2=(-2.0, 0.0),
                            tx_min=(0.0, 0.0, -0.2, -0.1), tx_max=(0.0, 0.04, 0.0, 0.0),
                            tx_step=(0.0, 0.02, 0.04, 0.05))
    grid = ComGrid.of(p)
    vtfs = [channel_vtf(p, grid, read_channel(thru, "thru"), p.cases[1])]
    best = comfom.search(p, grid, vtfs, [], chunk=7)
    full = comfom.search(p, grid, vtfs, [], chunk=7, prune=False)
    assert best.fom_db == full.fom_db and (best.g_dc, best.g_dc2) == (full.g_dc, full.g_dc2)
    assert best.cursor_offset == full.cursor_offset
    np.testing.assert_array_equal(best.tx_taps, full.tx_taps)
    np.testing.assert_array_equal(best.landscape, full.landscape)
    np.testing.assert_array_equal(best.tx_fom_at_best, full.tx_fom_at_best)
    # and the floating taps do not lower any setting's FOM
    nofl = comfom.search(dataclasses.replace(p, dfe_n_bg=0), grid, vtfs, [], chunk=7)
    assert best.fom_db >= nofl.fom_db
    assert np.all(best.tx_fom_at_best >= comfom.search(
        dataclasses.replace(p, dfe_n_bg=0, g_dc=(best.g_dc,), g_dc2=(best.g_dc2,)),
        grid, vtfs, []).tx_fom_at_best - 1e-12)


def test_floating_keys_checked():
    p = PRESETS["802.3ck-kr"]
    from serdes.com.params import apply_overrides
    assert apply_overrides(p, {"dfe_n_bg": "0"}).dfe_n_bg == 0
    for bad in (["dfe_n_f=20"], ["dfe_n_bg=-1"], ["dfe_bmaxg=2"], ["dfe_tail_start=5"],
                ["dfe_n_bg=x"]):
        with pytest.raises(ConfigError, match="dfe_"):
            apply_overrides(p, bad)
    # the sheets: KR and CR have the groups, C2C (N_bg 0) and C2M do not
    assert (p.dfe_n_bg, p.dfe_n_bf, p.dfe_n_f, p.dfe_bmaxg, p.dfe_tail_start,
            p.dfe_b_rss_max) == (3, 3, 40, 0.05, 25, 0.02)
    assert PRESETS["802.3ck-cr"].dfe_bmaxg == 0.03 and PRESETS["802.3ck-cr"].dfe_n_bg == 3
    for name in ("802.3ck-c2c", "802.3ck-c2m", "802.3dj-kr", "100gbase-kr4"):
        assert PRESETS[name].dfe_n_bg == 0
