"""The IEEE code's C2M-mode search (serdes/com/c2m_search.py, `eye_min_veo_test_mv`) and
its eye-height bound (serdes/kernels/com_eye_bound.py): the bound against the pooled
distributions formed directly on the grid, then, on the C2M thru of ../shared/channels
(skipped without it), the bound against the window's eye, the first test against the
pulse's samples, and the search against a brute force over a reduced grid."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from serdes.com import c2m_search as S
from serdes.com import fom as F
from serdes.com.eye import eye_over_window
from serdes.com.params import preset
from serdes.com.pulse import ComGrid
from serdes.kernels.com_eye_bound import eye_height_bound

CH = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
THRU = CH / "ieee8023ck_C2M_mellitz_3ck_01_0518" / "C2M__Z100_IL14_WC_BOR_H_L_H_THRU.s4p"
needs_thru = pytest.mark.skipif(not THRU.exists(), reason=f"{THRU.name} not found under {CH}")
LV = np.array([-1.0, -1 / 3, 1 / 3, 1.0])


def _pooled_eye(sh_all, ls, var, w, der):
    """The eye height (steps) of the pooled window formed directly: every offset's terms
    convolved with its discretized Gaussian on a wide grid, each level shifted by its mean,
    the offsets summed with their weights, quantiles as eye.py reads them."""
    half = int(np.abs(sh_all).max(axis=2).sum(axis=1).max() + np.abs(ls).max()
               + 20 * math.sqrt(var.max()) + 10)
    y = np.arange(-half, half + 1)
    pooled = np.zeros((4, len(y)))
    for j in range(len(w)):
        d = np.zeros(len(y))
        d[half] = 1.0
        for t in sh_all[j]:
            nd = np.zeros(len(y))
            for v in t:
                nd += np.roll(d, v) / 4
            d = nd
        g = np.exp(-y ** 2 / (2 * var[j]))
        d = np.convolve(d, g / g.sum(), mode="same")
        for li in range(4):
            pooled[li] += w[j] * np.roll(d, ls[j, li])
    pooled /= pooled.sum(axis=1, keepdims=True)
    eh = []
    for n in range(3):
        top = y[np.nonzero(np.cumsum(pooled[n + 1]) >= der)[0][0]]
        bot = y[np.nonzero(np.cumsum(pooled[n][::-1])[::-1] >= der)[0][-1]]
        eh.append(top - bot)
    return min(eh)


@pytest.mark.parametrize("seed", range(6))
def test_bound_is_above_the_pooled_eye_formed_directly(seed):
    """Random windows (3 offsets, 6 terms each, Gaussians of 20-60 steps): the bound with
    every term is above the eye formed directly and close to it (it replaces P(X >= t) by
    1/2 only for t <= 0), with 2 of the 6 terms (the rest in the Gaussian's tail) and on
    a coarser lattice it stays above it."""
    rng = np.random.default_rng(seed)
    J, K = 3, 6
    h = rng.uniform(-60, 60, size=(J, K))
    sh = np.round(h[:, :, None] * LV[None, None, :]).astype(np.int64)
    amp = 900 + rng.uniform(-40, 40, size=J)
    ls = np.round(amp[:, None] * LV[None, :]).astype(np.int64)
    var = rng.uniform(20, 60, size=J) ** 2
    w = np.array([0.25, 0.5, 0.25])
    der = 1e-5
    exact = _pooled_eye(sh, ls, var, w, der)
    full = eye_height_bound(sh[None], np.full((1, J), K), ls[None], var[None], w, der, 4)[0]
    assert exact <= full <= exact + 30
    # the two largest terms of each offset only
    order = np.argsort(-np.abs(h), axis=1)
    sh2 = np.take_along_axis(sh, order[:, :, None], axis=1)
    few = eye_height_bound(sh2[None], np.full((1, J), 2), ls[None], var[None], w, der, 4)[0]
    assert few >= full
    coarse = eye_height_bound(sh[None], np.full((1, J), K), ls[None], var[None], w, der, 4,
                              coarse=8)[0]
    assert coarse >= full


@pytest.fixture(scope="module")
def c2m():
    if not THRU.exists():
        pytest.skip(f"{THRU.name} not found under {CH}")
    from serdes.com.core import _channel
    from serdes.com.pulse import channel_vtf, xsinc

    p = dataclasses.replace(preset("802.3ck-c2m"), eye_min_veo_test_mv=5.0)
    grid = ComGrid.of(p)
    m = grid.m
    vtf = channel_vtf(p, grid, _channel(str(THRU), "thru"), p.cases[0])
    xs = xsinc(grid)
    pk0 = int(np.argmax(np.fft.irfft(xs * vtf)))
    if pk0 < 20 * m or pk0 > grid.n_t // 2:      # as compute_com places the thru
        d = (20 * m - pk0) % grid.n_t
        vtf = vtf * np.exp(-2j * np.pi * grid.f * d * grid.ui / m)
    su = F.setup(p, grid, [vtf], [])
    return p, grid, vtf, su


@needs_thru
def test_bounds_are_above_the_window_eye_on_the_c2m_thru(c2m):
    """Both bounds (few terms on a coarse lattice, more terms on a finer one) are above
    the window's eye height (eye_over_window without crosstalk) at random candidates past
    the first test of three CTLE settings."""
    p, grid, vtf, su = c2m
    rng = np.random.default_rng(3)
    for gdc, gdc2 in [(-7.0, -2.0), (-5.0, -2.5), (-10.0, -1.0)]:
        t = F.cell_tables(su, gdc, gdc2)
        rows, ix, h0, dfe, vtx, eh1 = S._candidates(p, su, t, 0.005)
        sel = rng.choice(len(rows), 4, replace=False)
        args = (rows[sel], ix[sel], h0[sel], dfe[sel], vtx[sel])
        b1 = S._bounds(p, su, t, *args, S.K_FIRST, S.C_FIRST)
        b2 = S._bounds(p, su, t, *args, S.K_SECOND, S.C_SECOND)
        for k, r in enumerate(sel):
            eh = S._eye(p, su, t, rows[r], ix[r], h0[r], dfe[r], vtx[r])["eye_height_v"]
            assert b1[k] >= b2[k] - 1e-4 and b2[k] >= eh, (gdc, gdc2, rows[r])


@needs_thru
def test_first_test_from_the_pulse_samples(c2m):
    """EH_1st of the code's C2M mode (the DFE span and far cursors T_O earlier) from the
    full pulse of each candidate, sample by sample, equals the search's (quadratic forms
    of the tap pairs); with a FEXT (through the TX FFE) and a NEXT aggressor (not), each
    at its phase of largest energy, as the FOM's crosstalk."""
    p, grid, vtf, _ = c2m
    m, L = grid.m, p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    delay = np.exp(-2j * np.pi * grid.f * 7.3 * grid.ui)        # aggressors off the thru
    su = F.setup(p, grid, [vtf, 0.08 * vtf * delay, 0.05 * vtf * delay ** 2], ["fext", "next"])
    t = F.cell_tables(su, -7.0, -2.0)
    wt = F.ctle_weights(-7.0, -2.0)
    fext, nxt = wt @ su.base[1], wt @ su.base[2]
    rows, ix, h0, dfe, vtx, eh1 = S._candidates(p, su, t, -1.0)      # every candidate
    t_o = int(math.floor(p.eye_t_o_mui / 1000 * m))
    nb = len(p.dfe_max)
    for k in np.random.default_rng(0).choice(len(rows), 5, replace=False):
        pv = F.apply_tx(t.p0, su.C[rows[k]], su.offs, m)
        i = ix[k]
        pre = pv[i - m::-m]
        span = pv[i - t_o + m:i - t_o + (nb + 1) * m:m]
        far = pv[i - t_o + (nb + 1) * m::m]
        isi = np.sum(pre ** 2) + np.sum((span - dfe[k] * h0[k]) ** 2) + np.sum(far ** 2)
        ph = i % m
        hj = (np.roll(pv, -1)[ph::m] - np.roll(pv, 1)[ph::m]) * m / 2
        pf = F.apply_tx(fext, su.C[rows[k]], su.offs, m)
        xt = max(np.sum(pf[j::m] ** 2) for j in range(m)) + max(
            np.sum(nxt[j::m] ** 2) for j in range(m))
        sig2 = (var_x * isi + (p.a_dd ** 2 + p.sigma_rj ** 2) * var_x * np.sum(hj ** 2)
                + var_x * xt + t.var_n + vtx[k])
        a_s = p.rlm * pv[i] / (L - 1)
        q = 4.264890793922825                       # Q^-1(1e-5)
        assert eh1[k] == pytest.approx(2 * (a_s - q * math.sqrt(sig2)), rel=1e-9, abs=1e-12)


@needs_thru
def test_search_equals_the_brute_force_on_a_reduced_grid(c2m):
    """Over 2 CTLE settings x 45 TX settings the search picks the candidate a brute force
    picks: every candidate past the first test, its window eye, the largest COM of those
    whose eye exceeds Min_VEO_Test."""
    p, grid, vtf, _ = c2m
    p = dataclasses.replace(p, g_dc=(-7.0, -5.0), g_dc2=(-2.5,),
                            tx_min=(0.0, 0.0, -0.2, 0.0), tx_max=(0.0, 0.08, -0.04, 0.0))
    su = F.setup(p, grid, [vtf], [])
    best = (-np.inf, None)
    for gdc in p.g_dc:
        t = F.cell_tables(su, gdc, -2.5)
        rows, ix, h0, dfe, vtx, eh1 = S._candidates(p, su, t, 0.005)
        for k in range(len(rows)):
            ew = S._eye(p, su, t, rows[k], ix[k], h0[k], dfe[k], vtx[k])
            if ew["eye_height_v"] > 0.005 and ew["com_db"] > best[0]:
                best = (ew["com_db"], (gdc, rows[k]))
    ch = S.search(p, grid, [vtf], [], threads=2)
    one = S.search(p, grid, [vtf], [], threads=1)          # any thread count, one choice
    assert dataclasses.asdict(one).keys() == dataclasses.asdict(ch).keys()
    for k, v in dataclasses.asdict(one).items():
        assert np.array_equal(v, dataclasses.asdict(ch)[k]), k
    assert best[1] is not None and ch is not None
    assert ch.com_db == best[0]
    assert (ch.g_dc, tuple(ch.tx_taps)) == (best[1][0], tuple(su.C[best[1][1]]))
    assert ch.eyes < ch.first_test          # the bounds spared some eyes


@needs_thru
def test_compute_com_with_min_veo_test(c2m, tmp_path):
    """compute_com with the preset's eye_min_veo_test_mv (the sheet's 5 mV) reports the
    C2M-mode choice: its window COM (the case's COM: a thru alone has no crosstalk) is at
    least the FOM choice's (eye_min_veo_test_mv = 0) on the same grid, and the JSON names
    the search."""
    from serdes.com.core import compute_com

    over = ["g_dc=-7,-5", "g_dc2=-2.5", "tx_min=0,0,-0.2,0", "tx_max=0,0.08,-0.04,0"]
    by_fom = compute_com(str(THRU), preset="802.3ck-c2m",
                         overrides=over + ["eye_min_veo_test_mv=0"])
    by_eye = compute_com(str(THRU), preset="802.3ck-c2m", overrides=over)   # the sheet's 5
    for a, b in zip(by_fom.cases, by_eye.cases):
        assert b.com_db >= a.com_db - 1e-12
        cs = b.eye_window["c2m_search"]
        assert cs["com_no_xt_db"] == pytest.approx(b.com_db, abs=1e-9)
        assert cs["min_veo_test_mv"] == 5.0
    d = json.loads(json.dumps(by_eye.as_dict()))
    assert "C2M-mode search" not in d["not_modelled"]
    assert "C2M-mode search" in by_fom.as_dict()["not_modelled"]


@pytest.mark.parametrize("over, msg", [
    (["eye_min_veo_test_mv=-1"], "a number in [0, 1000] mV"),
    (["eye_min_veo_test_mv=5", "eye_t_o_mui=0"], "0 unless eye_t_o_mui > 0"),
])
def test_min_veo_test_checked(over, msg):
    from serdes.com.params import apply_overrides
    from serdes.errors import SerdesError

    with pytest.raises(SerdesError, match=msg.replace("[", r"\[").replace("]", r"\]")):
        apply_overrides(preset("802.3ck-c2m"), over)


@pytest.mark.parametrize("name", ["802.3dj-kr", "802.3ck-kr"])
def test_min_veo_test_refused_with_an_rx_ffe_or_floating_dfe_taps(name):
    """The C2M-mode search models the C2M sheet's receiver (fixed DFE taps): with the RX
    FFE of 802.3dj-kr or the floating DFE taps of 802.3ck-kr it is refused in one line."""
    from serdes.com.params import apply_overrides
    from serdes.errors import SerdesError

    with pytest.raises(SerdesError, match="no RX FFE and no floating DFE taps"):
        apply_overrides(preset(name), ["eye_t_o_mui=50", "eye_min_veo_test_mv=5"])
    apply_overrides(preset("802.3ck-kr"), ["eye_t_o_mui=50", "eye_min_veo_test_mv=5",
                                           "dfe_n_bg=0"])


def test_eye_over_window_stub_matches_the_budget():
    """The search's window eye takes a light stand-in for the noise budget; eye_over_window
    reads only these fields of it (a check that the stand-in stays complete)."""
    import inspect

    src = inspect.getsource(eye_over_window)
    used = set()
    for name in ("h0", "a_s", "sigma_tx", "sigma_n", "dfe_taps", "y", "parts"):
        if f"budget.{name}" in src:
            used.add(name)
    assert used == {"h0", "a_s", "sigma_tx", "sigma_n", "dfe_taps", "y", "parts"}
    assert "budget.parts[\"p_xt\"]" in src or "budget.parts['p_xt']" in src


def test_no_open_eye_falls_back_to_the_fom_and_says_so(tmp_path):
    """A channel whose every window eye is closed (a long lossy line, the loss model of
    `serdes sweep`): the C2M-mode search finds no candidate even with its tests at 0; the
    case keeps the largest FOM's candidate and the JSON and the text say so."""
    from serdes.com.columns import channel_set
    from serdes.com.core import compute_com
    from serdes.commands.com import summary

    fb = preset("802.3ck-c2m").fb_gbd * 1e9
    thru, _, _ = channel_set("loss", "", "12,34", 45.0, 0.24, fb)
    over = ["g_dc=-10", "g_dc2=-2"]
    res = compute_com(thru, preset="802.3ck-c2m", overrides=over)
    ref = compute_com(thru, preset="802.3ck-c2m", overrides=over + ["eye_min_veo_test_mv=0"])
    for c, r in zip(res.cases, ref.cases):
        assert c.eye_window["c2m_search"] == {"min_veo_test_mv": 5.0, "no_candidate": True}
        assert c.tx_taps == r.tx_taps and c.com_db == r.com_db
    assert "found no candidate with an open window eye" in summary(res)
