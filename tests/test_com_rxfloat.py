"""Floating RX FFE taps of the 802.3dj COM (serdes/com/mmse_float.py, kernel
serdes/kernels/com_mmse_search.py::_float_solve): the NumPy placement equals a literal
slow reference of the IEEE code's rule (tests/naive.py), the numba search equals the
NumPy placement at every sampling time, and on an ideal thru with one late echo the
floating group lands on it, holds its tap limit and leaves the residual the closed form
says."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import optimize, stats

from naive import com_rxffe_float_place
from serdes.com import mmse_float, mmse_grid
from serdes.com.core import compute_com
from serdes.com.params import apply_overrides, preset
from serdes.com.pulse import ComGrid, h_r
from serdes.errors import ConfigError
from tests.test_com import SYNTHETIC_GAIN, _ideal, _write_s2p


pytestmark = SYNTHETIC_GAIN   # channels with gain by construction (tests/test_com.py)

DJ = preset("802.3dj-kr")
ECHO_UI = 30          # beyond the 8 fixed post-cursor taps, inside the 87-tap span


def _p(**kw):
    return dataclasses.replace(DJ, **{"rx_ffe_n_wg": 2, "mlsd": False, "n_qb": 0, **kw})


def _sizes(p):
    """The kernels' sizes and limits of a parameter set: span n, fixed taps, DFE taps,
    pre-cursors, the FFE limits, the symbols' variance, the DFE limits."""
    n, nfix, nb, dw = mmse_float.span(p), len(p.rx_ffe_max), len(p.dfe_max), p.rx_ffe_pre
    wmin, wmax = mmse_float.limits(p)
    L = float(p.levels)
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    bmin, bmax = np.asarray(p.dfe_min, float), np.asarray(p.dfe_max, float)
    return n, nfix, nb, dw, wmin, wmax, var_x, bmin, bmax


def _scratch(n, nb):
    """The floating-tap kernels' scratch arrays for a span of ``n`` taps and ``nb`` DFE
    taps: R, lo, Y, G, y, z, w, b (the solves' argument order), lv, gram (the relaxed
    bound's), hist, pb (the prefix bounds') and chosen, valid (the placement's); shared
    with benchmarks/com_float_bound.py."""
    return (np.empty((n, n)), np.empty((n, n)), np.empty((nb, n)), np.empty((nb, nb + 1)),
            np.empty(n), np.empty(n), np.empty(n), np.empty(nb),
            np.empty((3, n + nb + 1)), np.empty((nb + 1, nb + 1)),
            np.empty((n, nb + 1, nb + 1)), np.empty(n),
            np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64))


def _problem(rng, p, c0=12, n=160):
    """UI samples with a cursor, a decaying tail and echoes (some beyond the floating
    limit), colored noise; the search's av, rn and cursor / DFE rows over the span."""
    nmax, dw, nb = mmse_float.span(p), p.rx_ffe_pre, len(p.dfe_max)
    h = np.zeros(n)
    h[c0] = 1.0
    h[c0 + 1:c0 + 20] = rng.normal(size=19) * 0.3 * np.exp(-np.arange(19) / 3)
    h[c0 - 3:c0] = rng.normal(size=3) * 0.05
    for _ in range(rng.integers(1, 4)):
        h[c0 + rng.integers(9, nmax - dw)] += rng.normal() * 0.08
    av = np.array([h[:n - k] @ h[k:] for k in range(nmax)])
    rn = np.zeros(nmax)
    rn[:3] = np.array([1.0, 0.3, 0.1]) * rng.uniform(1e-3, 3e-2)
    rows = (c0 + dw + np.arange(nb + 1))[:, None] - np.arange(nmax)[None, :]
    hr = np.where((rows >= 0) & (rows < n), h[np.clip(rows, 0, n - 1)], 0.0)
    return av, rn, hr


@pytest.mark.parametrize("kw", [dict(), dict(rx_ffe_n_max=40, rx_ffe_n_wf=3, rx_ffe_n_wg=3,
                                             dfe_max=(0.2,))])
def test_numpy_placement_equals_the_literal_reference(kw):
    p = _p(**kw)
    wmin, wmax = mmse_float.limits(p)
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    rng = np.random.default_rng(7)
    for _ in range(4):
        av, rn, hr = _problem(rng, p)
        cols, fom, w, b = mmse_float.place(av, rn, hr, p)
        rc, rf = com_rxffe_float_place(
            av, rn, hr, len(p.rx_ffe_max), mmse_float.span(p), p.rx_ffe_n_wg, p.rx_ffe_n_wf,
            p.rx_ffe_pre, wmin, wmax, np.asarray(p.dfe_min), np.asarray(p.dfe_max), var_x,
            p.rlm, L)
        assert list(cols) == rc
        assert fom == pytest.approx(rf, abs=1e-9)
        assert len(cols) == len(p.rx_ffe_max) + p.rx_ffe_n_wg * p.rx_ffe_n_wf
        # the limits hold (cursor tap w[dw]), every position off the groups is 0
        c = w[p.rx_ffe_pre]
        assert np.all(w <= wmax * c + 1e-12) and np.all(w >= wmin * c - 1e-12)
        assert np.all(np.delete(w, cols) == 0.0)


def test_kernel_equals_the_numpy_placement_at_every_sampling_time(tmp_path, monkeypatch):
    """Every TX setting's FOM from the numba search equals the best over its 33 sampling
    times of the NumPy placement (1e-8 dB), and at the same sampling time."""
    fb = DJ.fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    s21 = (1.0 + 0.08 * np.exp(-2j * np.pi * f * 12 / fb) + 0.03 * np.exp(-2j * np.pi * f * 40 / fb)) \
        * np.exp(-(f / 60.0) ** 2)
    path = _write_s2p(tmp_path / "two_echoes.s2p", f, s21)
    p = _ideal(_p(), eta0=2e-8, tx_min=(0.0, 0.0, -0.08, -0.08, 0.0, 0.0),
               tx_max=(0.0,) * 6, tx_step=(0.0, 0.0, 0.04, 0.08, 0.0, 0.0), dfe_max=(0.85,),
               dfe_min=(0.0,), r0=50.0, r_d=50.0)
    seen = []
    real = mmse_grid.mmse_block

    def spy(*a, **kw):
        out = real(*a, **kw)
        seen.append((a, kw, out))
        return out

    monkeypatch.setattr(mmse_grid, "mmse_block", spy)
    compute_com(path, preset=p)
    (a, kw, (fom, ts, _)), = seen
    C = a[0]
    assert len(C) == 6
    t = type("T", (), dict(gv=a[2], gj=a[3], gf=a[4], r_base=a[5], acf_next=a[6], t0=a[7],
                           var_x=kw["var_x"]))()
    S, idx0, offs, m = a[8], a[9], a[10], kw["m"]
    for r in range(len(C)):
        pk = idx0 + int(np.argmax(C[r] @ S))
        got = [mmse_grid._taps_at(p, t, C[r], offs, pk + d, with_fom=True)[2]
               for d in range(-(m // 2), m // 2 + 1)]
        k = int(np.argmax(got))
        assert fom[r] == pytest.approx(got[k], abs=1e-8)
        assert ts[r] == pk - m // 2 + k


def _noise_sigma(p, w):
    """RX noise at the detector: eta_0 |H_r|^2 |H_FFE|^2 integrated directly on a fine
    frequency axis (H_FFE from the taps w, 1 UI apart)."""
    grid = ComGrid.of(p)
    f = np.linspace(0.0, grid.f[-1], 100001)
    hr2 = np.abs(h_r(p, f)) ** 2
    nz = np.flatnonzero(np.asarray(w))
    hf = np.exp(-2j * np.pi * np.outer(f / (p.fb_gbd * 1e9), nz - p.rx_ffe_pre)) @ np.asarray(w)[nz]
    return float(np.sqrt(p.eta0 * np.trapezoid(hr2 * np.abs(hf) ** 2, f / 1e9)))


@pytest.mark.parametrize("a", [0.03, 0.1])
def test_late_echo_is_taken_by_a_floating_group(tmp_path, a):
    """An ideal thru with one echo a at 30 UI and white RX noise. The MMSE FFE inverts
    1 + a D^30 (taps -a at 30, a^2 at 60); a floating group sits on the echo, its tap
    clipped to -min(a, 0.05) (the limit, no re-solve), the second group on 60 keeps a^2,
    so the residuals are r1 = a - min(a, 0.05) at 30 and r2 = a r1 at 60, and DER_0 =
    1/16 sum_{v1, v2} Phi((-A_ni - (v1 r1 + v2 r2) h0) / sigma), v in {+-1, +-1/3}; with
    the 15 fixed taps alone r1 = a, r2 = 0. sigma from eta_0 through the Butterworth and
    the chosen FFE, integrated directly; bound: every other UI sample left at the
    detector, the two residuals' differences from r1 h0, r2 h0 and two grid steps."""
    fb = DJ.fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    path = _write_s2p(tmp_path / "echo.s2p", f, 1.0 + a * np.exp(-2j * np.pi * f * ECHO_UI / fb))
    base = dict(eta0=2e-9, tx_min=(0.0,) * 6, tx_max=(0.0,) * 6, tx_step=(0.0,) * 6,
                dfe_max=(0.85,), dfe_min=(0.0,), r0=50.0, r_d=50.0)
    coms = {}
    for n_wg in (2, 0):
        p = _ideal(_p(), **base, rx_ffe_n_wg=n_wg)
        (case,) = compute_com(path, preset=p).cases
        w = np.zeros(mmse_float.span(p))
        w[:len(case.rx_ffe_taps)] = case.rx_ffe_taps
        lim = p.rx_ffe_float_max
        if n_wg:
            fl = case.as_dict()["rx_ffe_float"]
            assert ECHO_UI in fl["ui_after_cursor"]
            w[fl["positions"]] = fl["taps"]
            assert max(abs(x) for x in fl["taps"]) <= lim + 1e-12
            t30 = w[p.rx_ffe_pre + ECHO_UI]
            if a > lim:
                assert t30 == pytest.approx(-lim, abs=1e-12)
            r1 = a - min(a, lim)
            r2 = a * r1
            assert 2 * ECHO_UI in fl["ui_after_cursor"] or r2 == 0.0
        else:
            assert case.as_dict().get("rx_ffe_float") is None
            r1, r2 = a, 0.0
        sigma = _noise_sigma(p, w)
        h0 = case.a_s_v * (p.levels - 1) / p.rlm
        m, ix = ComGrid.of(p).m, case.cursor_ix
        s = case.pulse_eq[ix % m::m]
        n0 = ix // m
        v = np.array([-1, -1 / 3, 1 / 3, 1])
        vals = h0 * (r1 * v[:, None] + r2 * v[None, :]).ravel()
        a_ni = optimize.brentq(lambda x: np.mean(stats.norm.cdf((-x - vals) / sigma)) - p.der0,
                               0, 1)
        res = s.copy()
        res[n0] = 0.0
        res[n0 + 1] -= case.dfe_taps[0] * s[n0]
        e1, e2 = abs(res[n0 + ECHO_UI]), abs(res[n0 + 2 * ECHO_UI])
        bound = (np.abs(res).sum() - e1 - e2 + abs(e1 - r1 * h0) + abs(e2 - r2 * h0)
                 + 2 * min(case.a_s_v / 1000, 1e-5))
        assert abs(case.a_ni_v - a_ni) <= bound + 1e-3 * a_ni
        tol_db = 20 * np.log10(1 + (bound + 1e-3 * a_ni) / a_ni)
        assert tol_db < 0.3
        assert case.com_db == pytest.approx(20 * np.log10(case.a_s_v / a_ni), abs=tol_db)
        coms[n_wg] = case.com_db
    assert coms[2] > coms[0] + 3.0


def test_floating_keys_checked():
    with pytest.raises(ConfigError, match="rx_ffe_n_max"):
        apply_overrides(DJ, {"rx_ffe_n_wg": "2", "rx_ffe_n_max": "16"})
    with pytest.raises(ConfigError, match="rx_ffe_n_wg"):
        apply_overrides(preset("802.3ck-kr"), {"rx_ffe_n_wg": "1", "rx_ffe_n_max": "40"})
    with pytest.raises(ConfigError, match="rx_ffe_float_max"):
        apply_overrides(DJ, {"rx_ffe_n_wg": "2", "rx_ffe_float_max": "-0.1"})
    # with the floating taps off too, and NaN as well as out of range
    for key, val in (("rx_ffe_n_wf", "-3"), ("rx_ffe_n_wf", "0"), ("rx_ffe_n_max", "7"),
                     ("rx_ffe_n_max", "-1"), ("rx_ffe_float_max", "nan"),
                     ("rx_ffe_float_max", "2")):
        with pytest.raises(ConfigError, match=key):
            apply_overrides(DJ, {"rx_ffe_n_wg": "0", key: val})
    # what the presets ship stays valid with the taps off: N_max 0 (802.3ck) or 87 (dj)
    apply_overrides(DJ, {"rx_ffe_n_wg": "0"})
    apply_overrides(preset("802.3ck-kr"), {"rx_ffe_n_wf": "4"})


@pytest.mark.parametrize("quant", [False, True])
def test_floating_taps_against_pychopmarg(channels_dir, quant):
    """The 802.3dj floating RX FFE taps (2 groups of 4 up to N_max 87, +-0.05) placed and
    solved by PyChOpMarg 3.4 and by us on the 4-inch backplane thru, one candidate (g_DC
    -12, g_DC2 -2, TX FFE off: PyChOpMarg adds TX FFE off to any grid, so a candidate
    with other TX taps would not be the one it reports), package case 1: the same
    positions, taps within 1e-3, FOM within 1e-3 dB and COM within 0.01 dB (measured:
    the same positions, taps within 1.3e-5, FOM within 1.7e-5 dB; docs/com.md). An
    earlier comparison with c(-1) = c(1) = -0.1 read 0.12 dB: PyChOpMarg had chosen TX
    FFE off there. With the quantization noise too (N_qb 6) the FOM within 0.01 dB and
    COM within 0.02 dB, taps within 3e-3 (measured on 54 candidates of three sets: every
    choice the same, FOM within 0.004 dB, COM within 0.005 dB, taps within 1.1e-3; the
    difference is the search's V_qc, whose Gaussian part PyChOpMarg forms from its folded
    PSDs)."""
    pytest.importorskip("pychopmarg")
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from com_pychopmarg_d3p3 import ONE, compare

    assert ONE["tx_min"] == ONE["tx_max"] == [0.0] * 6
    (r,) = compare("dpo4", grid=ONE, tests=(1,), floating=True, quant=quant)
    o, ref = r["ours"], r["pychopmarg"]
    assert r["float_positions"]["ours"] == r["float_positions"]["pychopmarg"]
    assert len(r["float_positions"]["ours"]) == 8
    assert np.allclose(o["tx_taps"], ref["tx_taps"])
    assert abs(r["delta_fom_db"]) < (0.01 if quant else 1e-3)
    assert abs(r["delta_com_db"]) < (0.02 if quant else 0.01)
    assert r["max_rx_tap_diff"] < (3e-3 if quant else 1e-3)
    assert bool(r["sigma_quant_v"]) == quant      # None or 0 without the noise


def test_quantization_noise_with_floating_taps(tmp_path, monkeypatch):
    """With the quantization noise (n_qb 6) the branch and bound, whose bound lets every
    position of the span float, picks the candidate of evaluating every one exactly;
    every bound is above its FOM; the chosen FOM equals the NumPy placement's."""
    from serdes.com import quant
    from test_com_quant import _exhaustive

    fb = DJ.fb_gbd
    f = np.arange(0, 32 * fb / 2 + 0.05, 0.1)
    s21 = (1.0 + 0.08 * np.exp(-2j * np.pi * f * 12 / fb) + 0.06 * np.exp(-2j * np.pi * f * 40 / fb)) \
        * np.exp(-(f / 60.0) ** 2)
    path = _write_s2p(tmp_path / "two_echoes.s2p", f, s21)
    p = _ideal(_p(), eta0=2e-8, n_qb=6, tx_min=(0.0, 0.0, -0.08, -0.08, 0.0, 0.0),
               tx_max=(0.0,) * 6, tx_step=(0.0, 0.0, 0.04, 0.08, 0.0, 0.0), dfe_max=(0.85,),
               dfe_min=(0.0,), r0=50.0, r_d=50.0)
    foms = []
    real = mmse_grid._taps_at

    def spy(*a, **kw):
        foms.append(real(*a, **{**kw, "with_fom": True})[2])
        return real(*a, **kw)

    monkeypatch.setattr(mmse_grid, "_taps_at", spy)
    pruned = compute_com(path, preset=p).cases[0]
    monkeypatch.setattr(quant, "search_quant", _exhaustive)
    full = compute_com(path, preset=p).cases[0]
    ub, ex = _exhaustive.seen
    assert np.all(ub >= ex)
    assert (pruned.fom_db, pruned.tx_taps, pruned.cursor_ix) == (full.fom_db, full.tx_taps,
                                                                 full.cursor_ix)
    assert pruned.com_db == full.com_db
    assert foms[0] == pytest.approx(pruned.fom_db, abs=1e-8)


@pytest.mark.parametrize("kw, n_prob", [(dict(), 800), (dict(rx_ffe_n_max=40, rx_ffe_n_wf=3,
                                                                rx_ffe_n_wg=3, dfe_max=(0.2,)), 1200)])
def test_span_bound_is_above_every_placement(kw, n_prob):
    """The branch and bound's bound on the floating-tap FOM (kernel _relaxed_span: every
    position of the span free, no tap limits, by Schur's recursion) equals the relaxed
    Cholesky solve over the whole span (_solve_one, relaxed) and is never below the FOM of
    the IEEE placement (_float_solve) on 2000 random problems (D3.3 sizes, and 3 groups
    of 3 in a 40-tap span with a DFE limit that binds) (with extra white noise at
    the FFE input, as the quantization noise adds)."""
    from serdes.kernels import com_mmse_search as K

    p = _p(**kw)
    n, nfix, nb, dw, wmin, wmax, var_x, bmin, bmax = _sizes(p)
    L = p.levels
    R, lo, Y, G, y, z, w, b, lv, gram, _, _, chosen, valid = _scratch(n, nb)
    rng = np.random.default_rng(11)
    gaps, diffs, clipped = [], [], 0
    for _ in range(n_prob):
        av, rn, hr = _problem(rng, p)
        rn[0] += rng.choice([0.0, rng.uniform(0, 1e-2)])
        hr = np.ascontiguousarray(hr)
        cols = np.arange(n)
        fr = K._solve_one(av, rn, hr, cols, n, dw, nb, wmin, wmax, bmin, bmax, var_x, p.rlm,
                          float(L), R, lo, Y, G, y, z, w, b, True)
        fb = K._relaxed_span(av, rn, hr, n, nb, bmin, bmax, var_x, p.rlm, float(L), lv, gram,
                             G, b)
        clipped += bool(b[0] == bmax[0])
        fe = K._float_solve(av, rn, hr, nfix, n, p.rx_ffe_n_wg, p.rx_ffe_n_wf, dw, nb, wmin,
                            wmax, bmin, bmax, var_x, p.rlm, float(L), R, lo, Y, G, y, z, w, b,
                            cols, chosen, valid, -np.inf, np.empty(0))
        diffs.append(fb - fr)
        gaps.append(fb - fe)
    assert np.max(np.abs(diffs)) < 1e-9
    assert np.min(gaps) > 0.0
    if kw:
        assert clipped > 0          # the DFE limit binds in some problems


def test_pruned_float_search_is_the_exhaustive_one(monkeypatch, channels_dir):
    """DPO_12in with 1 FEXT and 1 NEXT, floating taps on, quantization noise on, 2 CTLE x
    9 TX settings, exact evaluations in batches of 4 (so that the bound prunes on so few
    candidates): the branch and bound (bound: the whole span free) gives the candidate,
    sampling time and FOM of evaluating every candidate exactly; every bound is above its
    candidate's exact FOM."""
    from serdes.com import quant
    from test_com_dj import _dpo12_vtfs
    from test_com_quant import _exhaustive

    p = apply_overrides(preset("802.3dj-kr"), {
        "f_step_ghz": "0.05", "g_dc": "-12,-4", "g_dc2": "-3", "rx_ffe_n_wg": "2",
        "mlsd": "false", "tx_step": "0,0,0.17,0.1,0,0"})
    monkeypatch.setattr(quant, "BATCH", 4)
    g, v, kinds = _dpo12_vtfs(p, channels_dir, n_fext=1, n_next=1)
    pruned = mmse_grid.search_grid_numba(p, g, v, kinds)
    monkeypatch.setattr(quant, "search_quant", _exhaustive)
    full = mmse_grid.search_grid_numba(p, g, v, kinds)
    ub, ex = _exhaustive.seen
    assert (pruned.g_dc, pruned.g_dc2, pruned.sol.ts) == (full.g_dc, full.g_dc2, full.sol.ts)
    assert np.array_equal(pruned.tx_taps, full.tx_taps)
    assert pruned.fom_db == pytest.approx(full.fom_db, abs=1e-9)
    assert np.all(ub >= ex) and pruned.n_exact < ex.size


@pytest.mark.parametrize("kw, n_prob", [(dict(), 150), (dict(rx_ffe_n_max=40, rx_ffe_n_wf=3,
                                                                rx_ffe_n_wg=3, dfe_max=(0.2,)), 300)])
def test_prefix_bounds_prune_placements_exactly(kw, n_prob):
    """The exact pass's pruning inside one floating placement (docs/com.md, "Pruning the
    exact pass"): every prefix bound of _prefix_bounds equals the relaxed Cholesky solve
    over that prefix (_solve_one, relaxed; 1e-9 dB) and the whole span's equals
    _relaxed_span; the pruned _float_solve returns the FOM and positions of the
    exhaustive one (the same solves: to the bit) with no threshold and with a threshold
    just below the FOM, and a value below a threshold just above it, on random problems
    (D3.3 sizes, and 3 groups of 3 in a 40-tap span with a binding DFE limit)."""
    from serdes.kernels import com_mmse_search as K

    p = _p(**kw)
    n, nfix, nb, dw, wmin, wmax, var_x, bmin, bmax = _sizes(p)
    L = float(p.levels)
    R, lo, Y, G, y, z, w, b, lv, gram, hist, pb, chosen, valid = _scratch(n, nb)
    sk = (n - 1, nfix + 3, (n + nfix) // 2)
    ng = p.rx_ffe_n_wg * p.rx_ffe_n_wf
    rng = np.random.default_rng(5)
    d_pre = []
    for i in range(n_prob):
        av, rn, hr = _problem(rng, p)
        rn[0] += rng.choice([0.0, rng.uniform(0, 1e-2)])
        hr = np.ascontiguousarray(hr)
        args = (av, rn, hr, nfix, n, p.rx_ffe_n_wg, p.rx_ffe_n_wf, dw, nb, wmin, wmax, bmin,
                bmax, var_x, p.rlm, L, R, lo, Y, G, y, z, w, b)
        K._prefix_bounds(av, rn, hr, n, nb, bmin, bmax, var_x, p.rlm, L, lv, gram, G, b, hist,
                         pb)
        pb = pb.copy()
        for k in sk[:1] if i % 10 else sk:
            cols = np.arange(n)
            d_pre.append(pb[k] - K._solve_one(av, rn, hr, cols, k + 1, dw, nb, wmin, wmax, bmin,
                                               bmax, var_x, p.rlm, L, R, lo, Y, G, y, z, w, b,
                                               True))
        assert pb[-1] == pytest.approx(K._relaxed_span(av, rn, hr, n, nb, bmin, bmax, var_x,
                                                       p.rlm, L, lv, gram, G, b), abs=1e-9)
        assert np.all(np.diff(pb[nfix:]) >= -1e-9)       # a longer prefix: more taps free
        cf = np.arange(n)
        fe = K._float_solve(*args, cf, chosen, valid, -np.inf, np.empty(0))
        ce = cf[:nfix + ng].copy()
        for thr in (-np.inf, fe - 1e-6):
            cp = np.arange(n)
            assert K._float_solve(*args, cp, chosen, valid, thr, pb) == fe
            assert np.array_equal(cp[:nfix + ng], ce)
        assert K._float_solve(*args, np.arange(n), chosen, valid, fe + 1e-6, pb) < fe + 1e-6
    assert np.max(np.abs(d_pre)) < 1e-9


def test_pruned_exact_pass_equals_the_exhaustive_one(channels_dir):
    """The exact pass (kernel qmode 2) with its pruning (sampling times in descending
    order of their bound against the row's best, placements against prefix bounds) gives
    every row's FOM and sampling time of the exhaustive pass when the row reaches the
    threshold, and a value below it otherwise: DPO_12in with 1 FEXT and 1 NEXT, floating
    taps and quantization noise on, one CTLE setting x 8 TX settings, thresholds -inf and
    the median of the exact FOMs; and the same numbers on 1 to 5 threads."""
    from serdes.com import quant
    from serdes.com.fom import ctle_weights
    from serdes.kernels.com_mmse import mmse_block
    from test_com_dj import _dpo12_vtfs

    p = apply_overrides(preset("802.3dj-kr"), {
        "f_step_ghz": "0.05", "g_dc": "-12", "g_dc2": "-3", "rx_ffe_n_wg": "2",
        "mlsd": "false", "tx_step": "0,0,0.17,0.1,0,0"})
    g, v, kinds = _dpo12_vtfs(p, channels_dir, n_fext=1, n_next=1)
    seen = {}

    def spy(p_, parts, ctles, C, CC, offs, kw, stage=None):
        seen.update(parts=parts, ctles=ctles, C=C, CC=CC, offs=offs, kw=kw)
        return real(p_, parts, ctles, C, CC, offs, kw)

    real = quant.search_quant
    quant.search_quant = spy
    try:
        mmse_grid.search_grid_numba(p, g, v, kinds)
    finally:
        quant.search_quant = real
    kw = dict(seen["kw"], n_qb=p.n_qb, p_qc=p.p_qc, k_rj=seen["kw"]["var_x"] * p.sigma_rj ** 2)
    t = seen["parts"].at(ctle_weights(*seen["ctles"][0][2:4]))
    args = (seen["C"], seen["CC"], t.gv, t.gj, t.gf, t.r_base, t.acf_next, t.t0, t.S, t.idx0,
            seen["offs"])
    assert len(seen["C"]) == 8
    f0, t0_, _ = mmse_block(*args, qmode=2, prune=False, **kw)
    # the bound pass's per-sampling-time bounds, kept for the exact pass (as search_quant
    # does): the row's bound is their maximum, and the exact pass given them (all rows,
    # or a subset in another order) returns what it returns computing them itself
    fb = np.empty((len(f0), 2 * (kw["m"] // 2) + 1))
    ub, _, _ = mmse_block(*args, qmode=1, fbs=fb, **kw)
    assert np.array_equal(ub, fb.max(axis=1))
    rows = np.array([6, 1, 3])
    for thr in (-np.inf, float(np.median(f0))):
        th = np.full(len(f0), thr)
        f1, t1, _ = mmse_block(*args, qmode=2, thr=th, prune=True, **kw)
        hit = f0 >= thr
        assert np.array_equal(f1[hit], f0[hit]) and np.array_equal(t1[hit], t0_[hit])
        assert np.all(f1[~hit] < thr)
        assert hit.sum() >= (len(f0) + 1) // 2
        f2, t2, _ = mmse_block(*args, qmode=2, thr=th, prune=True, fbs=fb.copy(), **kw)
        assert np.array_equal(f2, f1) and np.array_equal(t2, t1)
        f3, t3, _ = mmse_block(seen["C"][rows], seen["CC"][rows], *args[2:], qmode=2,
                               thr=th[rows], prune=True, fbs=fb[rows], **kw)
        assert np.array_equal(f3, f1[rows]) and np.array_equal(t3, t1[rows])
    # the kept bounds are what the exact pass goes by: bounds far below the threshold
    # prune every row that reaches it with its own
    f4, _, _ = mmse_block(*args, qmode=2, thr=th, prune=True, fbs=np.full_like(fb, -1e9),
                          **kw)
    assert np.any(f1 >= thr) and np.all(f4 < thr)
    with pytest.raises(ConfigError, match="fbs"):
        mmse_block(*args, qmode=2, fbs=fb[:, :-1].copy(), **kw)
    # the same rows, bounds and solve counts on any number of threads and chunk size
    # (each chunk writes its own rows; a chunk a thread skipped would leave np.empty's
    # values, one taken twice would count its solves twice)
    kw.pop("chunk", None)
    _, _, n1 = mmse_block(*args, qmode=1, chunk=1, threads=1, **kw)
    _, _, n2 = mmse_block(*args, qmode=2, thr=th, prune=True, chunk=1, threads=1, **kw)
    for threads, chunk in ((2, 1), (3, 1), (2, 3), (5, 2), (4, 8)):
        fbt = np.empty_like(fb)
        ubt, _, m1 = mmse_block(*args, qmode=1, fbs=fbt, chunk=chunk, threads=threads, **kw)
        assert np.array_equal(ubt, ub) and np.array_equal(fbt, fb) and m1 == n1
        ft, tt, m2 = mmse_block(*args, qmode=2, thr=th, prune=True, chunk=chunk,
                                threads=threads, **kw)
        assert np.array_equal(ft, f1) and np.array_equal(tt, t1) and m2 == n2
    with pytest.raises(ConfigError, match="threads"):
        mmse_block(*args, qmode=1, threads=0, **kw)


def test_toeplitz_bordered_inverse_equals_numpy():
    """_box_inverse (Trench's O(n^2) inverse of the Toeplitz R, bordered by the DFE rows)
    equals numpy.linalg.inv of M = [[R, -H^T], [-H, I]] for spans of 1 .. 87 taps and
    0 .. 2 DFE taps (1e-12 relative: a wrong Trench update or fill is O(1) off)."""
    from serdes.kernels import com_mmse_search as K

    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 4, 5, 8, 15, 86, 87):
        for nb in (0, 1, 2):
            h = rng.normal(size=200) * np.exp(-np.arange(200) / 5)
            a = np.array([h[:200 - k] @ h[k:] for k in range(n)])
            a[0] += 0.5
            M = np.zeros((n + nb, n + nb))
            M[:n, :n] = a[np.abs(np.subtract.outer(np.arange(n), np.arange(n)))]
            H = rng.normal(size=(nb, n)) * 0.1
            M[:n, n:], M[n:, :n], M[n:, n:] = -H.T, -H, np.eye(nb)
            Mi = np.zeros_like(M)
            assert K._box_inverse(M, n, nb, Mi)
            ref = np.linalg.inv(M)
            assert np.abs(Mi - ref).max() <= 1e-12 * np.abs(ref).max()


@pytest.mark.parametrize("kw, n_prob", [(dict(), 400), (dict(rx_ffe_n_max=40, rx_ffe_n_wf=3,
                                                                rx_ffe_n_wg=3, dfe_max=(0.2,)), 600)])
def test_box_bound_is_above_every_placement(kw, n_prob):
    """The bound that keeps the tap limits (kernel _box_bound: the Lagrangian dual of the
    MSE over every unit-cursor FFE of the span within its limits relative to the cursor
    tap and the DFE tap within its limits, docs/com.md) is never below the FOM of the IEEE
    placement (_float_solve, exhaustive) nor of the 15 fixed taps alone (_solve_one) on
    random problems
    (D3.3 sizes, and 3 groups of 3 in a 40-tap span with a binding DFE limit, extra white
    noise as the quantization noise adds); it is below the relaxed bound (_relaxed_span)
    by more than 0.01 dB on many (the kernel prunes when either is below the threshold:
    its few active-set steps need not reach the relaxed one's clipped DFE tap).
    The same check with the limits halved (a bound of a smaller set: not a bound) fails on
    some problems, so the check can catch an invalid bound."""
    from serdes.kernels import com_mmse_search as K

    p = _p(**kw)
    n, nfix, nb, dw, wmin, wmax, var_x, bmin, bmax = _sizes(p)
    L = float(p.levels)
    R, lo, Y, G, y, z, w, b, lv, gram, _, _, chosen, valid = _scratch(n, nb)
    rng = np.random.default_rng(13)
    gaps, fixed_gaps, over, half_gaps = [], [], [], []
    for i in range(n_prob):
        av, rn, hr = _problem(rng, p)
        rn[0] += rng.choice([0.0, rng.uniform(0, 1e-2)])
        hr = np.ascontiguousarray(hr)
        fr = K._relaxed_span(av, rn, hr, n, nb, bmin, bmax, var_x, p.rlm, L, lv, gram, G, b)
        fx = K._box_bound(av, rn, hr, n, dw, nb, wmin, wmax, bmin, bmax, var_x, p.rlm, L,
                          1 + i % 4)
        fe = K._float_solve(av, rn, hr, nfix, n, p.rx_ffe_n_wg, p.rx_ffe_n_wf, dw, nb, wmin,
                            wmax, bmin, bmax, var_x, p.rlm, L, R, lo, Y, G, y, z, w, b,
                            np.arange(n), chosen, valid, -np.inf, np.empty(0))
        ff = K._solve_one(av, rn, hr, np.arange(n), nfix, dw, nb, wmin, wmax, bmin, bmax,
                          var_x, p.rlm, L, R, lo, Y, G, y, z, w, b)
        gaps.append(fx - fe)
        fixed_gaps.append(fx - ff)
        over.append(fx - fr)
        if i < 150:
            fh = K._box_bound(av, rn, hr, n, dw, nb, wmin / 2, wmax / 2, bmin, bmax / 2,
                              var_x, p.rlm, L, 4)
            half_gaps.append(fh - fe)
    assert np.min(gaps) >= 0.0 and np.min(fixed_gaps) >= 0.0
    assert np.mean(np.array(over) < -0.01) > 0.3       # tighter than the relaxed bound
    assert np.min(half_gaps) < 0.0                      # the check has teeth


@pytest.mark.parametrize("kw, n_prob, n_brute", [(dict(), 120, 12),
                                                 (dict(rx_ffe_n_max=40, rx_ffe_n_wf=3,
                                                       dfe_max=(0.2,)), 300, 40),
                                                 (dict(rx_ffe_n_max=40, rx_ffe_n_wf=3,
                                                       dfe_max=(0.3, 0.2),
                                                       dfe_min=(0.0, 0.0)), 100, 12)])
def test_pair_bound_is_above_every_placement(kw, n_prob, n_brute):
    """The bound over the placements' sets of floating taps (kernel _pair_bound: the
    largest relaxed FOM over the fixed taps plus at most 2 disjoint windows, pruned with
    the prefix / suffix intervals against the threshold, docs/com.md "A bound over the
    placements"): for thresholds around the exhaustive IEEE placement's FOM (_float_solve)
    it either reaches the threshold or is not below that FOM (+1e-9 dB, the kernel's
    slack), on random problems (D3.3 sizes, and 2 groups of 3 in a 40-tap span with a
    binding DFE limit, with one DFE tap (the pairs' FOMs as a normalised MSE against the
    threshold's) and with two (the general Gram FOM per pair)); on the first n_brute problems its value without pruning equals
    the largest relaxed Cholesky solve over every such set (a threshold 1e-6 dB above
    it: not below it by more than 1e-9 dB, nor above the threshold) and reaches a
    threshold just below it. The same bound over single windows only (nwg 1: a bound of a
    smaller family of sets, not a bound) falls below the FOM on some problems, so the
    check can catch an invalid bound; and it is tighter than the whole span's relaxed
    bound (_relaxed_span) by more than 0.05 dB on most problems."""
    from serdes.kernels import com_mmse_search as K

    p = _p(**kw)
    n, nfix, nb, dw, wmin, wmax, var_x, bmin, bmax = _sizes(p)
    L = float(p.levels)
    R, lo, Y, G, y, z, w, b, lv, gram, _, _, chosen, valid = _scratch(n, nb)
    nwf, sl = p.rx_ffe_n_wf, K._SLACK_DB
    hist = np.empty((n, nb + 1, nb + 1))
    rng = np.random.default_rng(17)

    def bound(av, rn, hr, thr, nwg=2):
        return K._pair_bound(av, rn, hr, nfix, n, nwg, nwf, nb, bmin, bmax, var_x, p.rlm, L,
                             thr - sl, lv, gram, G, b, hist) + sl

    bad, single_below, tighter, d_brute = 0, 0, [], []
    for i in range(n_prob):
        av, rn, hr = _problem(rng, p)
        rn[0] += rng.choice([0.0, rng.uniform(0, 1e-2)])
        hr = np.ascontiguousarray(hr)
        fe = K._float_solve(av, rn, hr, nfix, n, p.rx_ffe_n_wg, nwf, dw, nb, wmin, wmax, bmin,
                            bmax, var_x, p.rlm, L, R, lo, Y, G, y, z, w, b, np.arange(n),
                            chosen, valid, -np.inf, np.empty(0))
        for d in (-1e-6, 0.0, 1e-9, 1e-6, 1e-3, 0.02, 0.1, 0.3, 1.0):
            v = bound(av, rn, hr, fe + d)
            bad += not (v >= fe + d or v >= fe)
        single_below += bound(av, rn, hr, fe + 1e-6, nwg=1) < fe
        fr = K._relaxed_span(av, rn, hr, n, nb, bmin, bmax, var_x, p.rlm, L, lv, gram, G, b)
        if i < n_brute:
            fp = -np.inf
            for a in range(nfix, n - nwf + 1):
                for c in range(a + nwf, n - nwf + 1):
                    cols = np.concatenate((np.arange(nfix), np.arange(a, a + nwf),
                                           np.arange(c, c + nwf), np.zeros(n, np.int64)))
                    fp = max(fp, K._solve_one(av, rn, hr, cols, nfix + 2 * nwf, dw, nb, wmin,
                                              wmax, bmin, bmax, var_x, p.rlm, L, R, lo, Y, G,
                                              y, z, w, b, True))
            v = bound(av, rn, hr, fp + 1e-6)
            d_brute.append(v - sl - fp)
            assert bound(av, rn, hr, fp - 1e-6) >= fp - 1e-6
            tighter.append(fr - fp > 0.05)
    assert bad == 0
    assert -1e-9 < np.min(d_brute) and np.max(d_brute) < 1e-6 + 1e-9   # skipped: < thr
    assert single_below > 0                     # the check has teeth
    assert np.mean(tighter) > 0.5


@pytest.mark.parametrize("nr", [1, 2, 3])
def test_toeplitz_gram_equals_a_dense_solve(nr):
    """The bound's Gram rhs^T T^-1 rhs of a symmetric Toeplitz T by Schur's recursion
    (kernel _toeplitz_gram), and that of every leading block (hist), against NumPy's
    dense solve; one DFE tap is its own loop (nr = 2), other counts the general one."""
    from scipy.linalg import toeplitz

    from serdes.kernels import com_mmse_search as K

    rng = np.random.default_rng(nr)
    for n in (1, 2, 5, 87):
        h = rng.standard_normal(120) * np.exp(-np.arange(120) / 8.0)
        r = np.correlate(h, h, "full")[119:119 + n].copy()
        r[0] *= 1.05                                  # white noise on the diagonal
        rhs = rng.standard_normal((nr, n))
        gram, hist = np.empty((nr, nr)), np.empty((n, nr, nr))
        assert K._toeplitz_gram(r[0], r / r[0], n, rhs, nr, gram, hist, np.empty(0))
        T = toeplitz(r)
        for k in range(n):
            want = rhs[:, :k + 1] @ np.linalg.solve(T[:k + 1, :k + 1], rhs[:, :k + 1].T)
            np.testing.assert_allclose(hist[k], want, rtol=0, atol=1e-11 * np.abs(want).max())
        np.testing.assert_allclose(gram, want, rtol=0, atol=1e-11 * np.abs(want).max())
    # not positive definite from the second row on: False, the prefixes NaN from there
    gram, hist = np.empty((nr, nr)), np.empty((3, nr, nr))
    assert not K._toeplitz_gram(1.0, np.array([1.0, 1.5, 0.2]), 3, np.ones((nr, 3)), nr,
                                gram, hist, np.empty(0))
    assert np.isfinite(hist[0]).all() and np.isnan(hist[1:]).all()


def test_inverse_rows_of_a_toeplitz_matrix_equal_a_dense_inverse():
    """The pair bound's suffix Grams come from rows of R^-1 (R symmetric Toeplitz): its
    first column by the Levinson step-up recursion (kernel _toeplitz_first_col) from the
    reflection coefficients of Schur's recursion (_toeplitz_gram) and each later row from
    the one before by the Gohberg-Semencul recurrence (_inverse_row); against NumPy's
    dense inverse, to 1e-11 of its largest entry, on random positive definite
    autocorrelations (D3.3's 87 taps and small sizes); False where R is not positive
    definite."""
    from scipy.linalg import toeplitz

    from serdes.kernels import com_mmse_search as K

    rng = np.random.default_rng(5)
    for n in (1, 2, 5, 40, 87):
        for _ in range(5):
            p = rng.standard_normal(n + 30) * np.exp(-np.arange(n + 30) / rng.uniform(1, 8))
            r = np.correlate(p, p, "full")[len(p) - 1:][:n].copy()
            r[0] += rng.uniform(1e-4, 1e-1) * r[0]
            inv = np.linalg.inv(toeplitz(r))
            gam, kaps = np.empty(n), np.empty(max(n - 1, 0))
            assert K._toeplitz_gram(r[0], r / r[0], n, np.ones((1, n)), 1, np.empty((1, 1)),
                                    np.empty((0, 1, 1)), kaps)
            assert K._toeplitz_first_col(kaps, r[0], n, gam)
            scale = np.abs(inv).max()
            assert np.abs(gam - inv[:, 0]).max() < 1e-11 * scale
            dl = np.zeros(n)
            dl[1:] = gam[::-1][:-1]
            row, out = gam.copy(), np.empty(n)
            for i in range(1, n):
                K._inverse_row(gam, dl, 1.0 / gam[0], i, row, out, n)
                row, out = out, row
                assert np.abs(row - inv[i]).max() < 1e-11 * scale, (n, i)
    # not positive definite: Schur's recursion fails on the first such step, and the
    # step-up recursion on a reflection coefficient of magnitude 1 or more
    assert not K._toeplitz_gram(1.0, np.array([1.0, 1.5, 0.2]), 3, np.ones((1, 3)), 1,
                                np.empty((1, 1)), np.empty((0, 1, 1)), np.empty(2))
    assert not K._toeplitz_first_col(np.array([0.5, -1.5]), 1.0, 3, np.empty(3))
    assert not K._toeplitz_first_col(np.empty(1), 0.0, 2, np.empty(2))



def test_toeplitz_gram_two_steps_per_pass_equal_the_single_steps_to_the_bit():
    """With two right sides (one DFE tap) _toeplitz_gram applies two reflections per pass
    over its arrays; the general loop (any other count) applies one. Their Grams and
    prefix Grams are the same to the bit: the first two rows of three right sides against
    the two alone, for even and odd sizes, and where a step fails midway (NaN from
    there, as the single steps leave it)."""
    from serdes.kernels import com_mmse_search as K

    rng = np.random.default_rng(11)
    for n in (2, 3, 4, 9, 86, 87):
        for fail in (False, True):
            h = rng.standard_normal(120) * np.exp(-np.arange(120) / 8.0)
            r = np.correlate(h, h, "full")[119:119 + n].copy()
            r[0] *= 1.05
            if fail and n > 3:
                r[n // 2] = 3.0 * r[0]                # not positive definite from there
            rhs3 = rng.standard_normal((3, n))
            g2, h2 = np.empty((2, 2)), np.empty((n, 2, 2))
            g3, h3 = np.empty((3, 3)), np.empty((n, 3, 3))
            k2, k3 = np.full(n - 1, np.nan), np.full(n - 1, np.nan)
            ok2 = K._toeplitz_gram(r[0], r / r[0], n, np.ascontiguousarray(rhs3[:2]), 2, g2,
                                   h2, k2)
            ok3 = K._toeplitz_gram(r[0], r / r[0], n, rhs3, 3, g3, h3, k3)
            assert ok2 == ok3
            assert np.array_equal(h2, h3[:, :2, :2], equal_nan=True)
            if ok2:
                assert np.array_equal(g2, g3[:2, :2])
                assert np.array_equal(k2, k3)       # the reflection coefficients too
            if fail and n > 3:
                assert not ok2 and np.isnan(h2[-1]).all()

def _pair_row_numpy(S, band, Ct, La, ila, Ea, ga, a, c0, nc, b_lo, b_hi):
    """The pair bound's general steps (windows of 4, one DFE tap) for every window c of
    window a, written as NumPy array operations over c, each entry by the same
    operations in the same order."""
    nwf, nr = 4, 2
    KB = np.empty((nwf, nwf, nc))
    for j in range(nwf):
        for i in range(nwf):
            o = S[a + i, c0 + j:c0 + j + nc].copy()
            for k in range(i):
                o -= La[i, k] * KB[k, j]
            KB[i, j] = o * ila[i]
    LT = np.zeros((nwf, nwf, nc))
    CB = np.empty((nwf, nr, nc))
    for i in range(nwf):
        for j in range(i + 1):
            o = band[i - j, c0 + j:c0 + j + nc].copy()
            for k in range(nwf):
                o -= KB[k, i] * KB[k, j]
            LT[i, j] = o
        for q in range(nr):
            o = Ct[q, c0 + i:c0 + i + nc].copy()
            for k in range(nwf):
                o -= KB[k, i] * Ea[k, q]
            CB[i, q] = o
    ok = np.ones(nc, dtype=bool)
    IL = np.empty((nwf, nc))
    for j in range(nwf):
        d = LT[j, j].copy()
        for k in range(j):
            d -= LT[j, k] * LT[j, k]
        bad = ~(d > 0.0)
        ok &= ~bad
        d[bad] = 1.0
        IL[j] = 1.0 / np.sqrt(d)
        for i in range(j + 1, nwf):
            o = LT[i, j].copy()
            for k in range(j):
                o -= LT[i, k] * LT[j, k]
            LT[i, j] = o * IL[j]
    for q in range(nr):
        for i in range(nwf):
            o = CB[i, q].copy()
            for k in range(i):
                o -= LT[i, k] * CB[k, q]
            CB[i, q] = o * IL[i]
    GR = np.empty((nr, nr, nc))
    for q in range(nr):
        for u in range(nr):
            o = np.full(nc, ga[q, u])
            for i in range(nwf):
                o += CB[i, q] * CB[i, u]
            GR[q, u] = o
    g00, g01, g10, g11 = GR[0, 0], GR[0, 1], GR[1, 0], GR[1, 1]
    with np.errstate(all="ignore"):
        v = g10 / (1.0 - g11)
        s = g00 + g01 * v
        t = (g10 + g11 * v) / s
        bl = np.minimum(np.maximum(t, b_lo), b_hi)
        qf = 1.0 + 1.0 / s - 2.0 + (v / s) * t - 2.0 * bl * t + bl * bl
        s1 = g00 + g01 * bl
        mu = (1.0 - s1) / g00
        d0 = s1 + mu * g00
        dd = g10 + g11 * bl + mu * g10
        qc = 1.0 + (1.0 + mu) * d0 - 2.0 * d0 + bl * dd - 2.0 * bl * dd + bl * bl
    return np.where(bl != t, qc, qf), s, ok, bl != t


def test_pair_row_of_the_presets_sizes_equals_the_general_steps():
    """_pair_row4 (one vectorized pass over the windows c, windows of 4 taps, one DFE
    tap) gives the general steps' numbers (a NumPy replica of them, the same operations
    in the same order per entry) up to the rounding its fastmath may reorder and fuse:
    the same ok, and where q and s are finite and positive (the caller's bound) q within
    a tenth of _SLACK_DB, the slack the bound is compared through, in dB (s likewise,
    relative). Random problems from well conditioned to ones where T is not positive
    definite for some c (ok False there) and the DFE tap is clipped for some c."""
    from serdes.kernels import com_mmse_search as K

    rng = np.random.default_rng(17)
    m = 72
    n_bad = n_clip = n_free = 0
    for it in range(40):
        A = rng.standard_normal((m + 8, m)) * np.exp(-np.arange(m) / rng.uniform(3, 30))
        Sf = A.T @ A / (m + 8) + np.eye(m) * rng.choice([1e-3, 0.1, 1.0])
        if it % 4 == 3:                       # not positive definite somewhere
            Sf[m // 2:, m // 2:] -= np.eye(m - m // 2) * 2.0
        S = np.triu(Sf)
        band = np.zeros((4, m))
        for d in range(4):
            band[d, :m - d] = np.diagonal(Sf, d)
        Ct = rng.standard_normal((2, m)) * 0.3
        a = int(rng.integers(0, 10))
        La = np.linalg.cholesky(Sf[a:a + 4, a:a + 4] + np.eye(4) * 0.5)
        ila = 1.0 / np.diag(La)
        Ea = rng.standard_normal((4, 2)) * 0.3
        G0 = rng.standard_normal((2, 2)) * 0.2
        ga = G0 @ G0.T + np.eye(2) * 0.5
        c0 = a + 4 + int(rng.integers(0, 6))
        nc = m - 4 + 1 - c0
        b_lo, b_hi = -0.2, 0.2 + rng.uniform(0, 0.5)
        qv, sv, ok = np.empty(nc), np.empty(nc), np.empty(nc, dtype=np.bool_)
        K._pair_row4(S, band, Ct, La, ila, Ea, ga, a, c0, nc, b_lo, b_hi, qv, sv, ok)
        q_ref, s_ref, ok_ref, clip = _pair_row_numpy(S, band, Ct, La, ila, Ea, ga, a, c0, nc,
                                               b_lo, b_hi)
        assert np.array_equal(ok, ok_ref)
        good = (q_ref > 0) & (s_ref > 0) & np.isfinite(q_ref) & np.isfinite(s_ref)
        assert np.array_equal(good, (qv > 0) & (sv > 0) & np.isfinite(qv) & np.isfinite(sv))
        tol_db = K._SLACK_DB / 10.0
        assert np.all(np.abs(10.0 * np.log10(qv[good] / q_ref[good])) <= tol_db)
        assert np.all(np.abs(sv[good] / s_ref[good] - 1.0) <= 10.0 ** (tol_db / 10.0) - 1.0)
        n_bad += int((~ok).sum())
        n_clip += int(clip[ok].sum())
        n_free += int((~clip[ok]).sum())
    # the not positive definite branch ran, and both DFE forms (clipped and free)
    assert n_bad > 0 and n_clip > 0 and n_free > 0


def test_vectorized_bound_steps_equal_their_row_forms_to_the_bit():
    """The bounds' column-oriented steps do each entry's products in the row forms'
    order, so they give the same numbers: _chol_rows is _chol (forward, and on the
    reversed matrix) to the bit and refuses what _chol refuses; _rows_dot and
    _sym_matvec are the plain ascending dot products (the matrix symmetric to the bit)."""
    from serdes.kernels import com_mmse_search as K

    rng = np.random.default_rng(5)
    for m in (1, 2, 3, 5, 8, 72):
        X = rng.standard_normal((m, 2 * m + 1))
        S = X @ X.T / (2 * m + 1) + 0.05 * np.eye(m)
        S = (S + S.T) / 2
        for rev in (0, 1):
            A = np.ascontiguousarray(S[::-1, ::-1]) if rev else S
            lo, ut = np.zeros((m, m)), np.zeros((m, m))
            assert K._chol(A, m, lo)
            assert K._chol_rows(S, m, rev, ut)
            np.testing.assert_array_equal(np.triu(ut), np.tril(lo).T)
        v = rng.standard_normal(m)
        out, mv = np.empty(m), np.zeros(m)
        K._rows_dot(X, m, m, v, out)
        K._sym_matvec(S, m, v, mv)
        for i in range(m):
            t = u = 0.0
            for j in range(m):
                t += X[i, j] * v[j]
                u += S[i, j] * v[j]
            assert out[i] == t and mv[i] == u
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert not K._chol_rows(bad, 2, 0, np.empty((2, 2)))
    assert not K._chol_rows(bad, 2, 1, np.empty((2, 2)))


def test_search_tables_equal_their_entry_by_entry_sums_to_the_bit():
    """The per-sampling-time tables of the search (kernel _ts_tables: the victim's and the
    slope's autocorrelations from the pair forms, the noise row, the cursor and DFE rows
    of the convolution matrix from the reversed phase table; _shift_sum: the TX-filtered
    UI samples V_qc reads, with their wrap-around) are formed pair by pair and tap by tap
    over contiguous runs; each entry equals its plain dot product in pair / tap order,
    with the index taken modulo the table's length, to the bit."""
    from serdes.kernels import com_mmse_search as K

    rng = np.random.default_rng(11)
    m, N, nwt, P = 4, 37, 9, 6
    offs = np.array([-2, -1, 0, 1, 2, 3])
    C = rng.normal(size=(3, len(offs)))
    CC = rng.normal(size=(3, P))
    gv, gj = rng.normal(size=(P, m * nwt)), rng.normal(size=(P, m * nwt))
    r_base, axt = rng.normal(size=(m, nwt)), rng.normal(size=nwt)
    t0 = rng.normal(size=(m, N))
    t0r = np.ascontiguousarray(t0[:, ::-1])
    k_j = 0.37
    for r, ph, dh, dw, nb in ((0, 0, 0, 0, 0), (1, 3, 5, 3, 1), (2, 2, N - 4, 2, 2),
                              (1, 1, 1, 0, 1)):
        av, rn, hr = np.empty(nwt), np.empty(nwt), np.empty((nb + 1, nwt))
        K._ts_tables(C, CC, gv, gj, r_base, axt, t0r, -offs, r, ph, dh, dw, nb, nwt, k_j, av,
                     rn, hr)
        for lag in range(nwt):
            e1 = e2 = 0.0
            for q in range(P):
                e1 += CC[r, q] * gv[q, ph * nwt + lag]
                e2 += CC[r, q] * gj[q, ph * nwt + lag]
            assert av[lag] == e1 and rn[lag] == r_base[ph, lag] + k_j * e2 + axt[lag]
        for rr in range(nb + 1):
            for i in range(nwt):
                e = 0.0
                for k in range(len(offs)):
                    e += C[r, k] * t0[ph, (dh + dw + rr - i - offs[k]) % N]
                assert hr[rr, i] == e
    for start, cnt in ((0, N), (-8, 20), (N - 3, 10), (5, 2 * N + 3)):
        out = np.empty(cnt)
        K._shift_sum(C[0], t0[1], offs, start, cnt, out)
        for j in range(cnt):
            e = 0.0
            for k in range(len(offs)):
                e += C[0, k] * t0[1, (start + j - offs[k]) % N]
            assert out[j] == e


@pytest.mark.parametrize("kw", [dict(), dict(rx_ffe_n_max=40, rx_ffe_n_wf=3, rx_ffe_n_wg=3,
                                             dfe_max=(0.2,))])
def test_placement_solve_from_a_shared_prefix_is_the_full_solve_to_the_bit(kw):
    """_float_solve solves each placement with _solve_from: the leading rows of R, its
    Cholesky factor and the forward solves kept from the placement before (the fixed taps
    and the groups below the new one), the rest formed by _solve_one's operations in its
    order. On sequences of placements as the IEEE rounds try them (a group's starts in
    ascending order beside a group placed before, then the final positions), every FOM,
    FFE and DFE tap equals _solve_one's to the bit, also after a placement whose matrix is
    not positive definite (solved from scratch: no row valid after it)."""
    from serdes.kernels import com_mmse_search as K

    p = _p(**kw)
    n, nfix, nb, dw, wmin, wmax, var_x, bmin, bmax = _sizes(p)
    nwf, L = p.rx_ffe_n_wf, float(p.levels)
    R, lo, Y, G, y, z, w, b = _scratch(n, nb)[:8]
    R2, lo2, Y2, G2, y2, z2, w2, b2 = _scratch(n, nb)[:8]
    fz, fY = np.empty(n), np.empty((max(nb, 1), n))
    rng = np.random.default_rng(5)
    fixed = list(range(nfix))
    tried = fails = 0
    for _ in range(25):
        av, rn, hr = _problem(rng, p)
        hr = np.ascontiguousarray(hr)
        placed = sorted(rng.choice(np.arange(nfix, n - nwf + 1), size=1))
        group = [] if rng.random() < 0.3 else list(range(placed[0], placed[0] + nwf))
        seq = [fixed + sorted(group + list(range(st, st + nwf)))
               for st in range(nfix, n - nwf + 1)
               if not set(range(st, st + nwf)) & set(group)]
        seq.append(fixed + group)
        bad = int(rng.integers(len(seq)))      # one placement made not positive definite
        pcols, kv = np.empty(n, dtype=np.int64), 0
        for i, cl in enumerate(seq):
            cols = np.array(cl + [0] * (n - len(cl)), dtype=np.int64)
            rn_i = rn.copy()
            if i == bad:
                rn_i[0] -= av[0] * 2.0
            k0 = 0
            while k0 < kv and cols[k0] == pcols[k0]:
                k0 += 1
            if i == bad:    # another rn: no row of R is the one before's
                k0 = 0
            m = len(cl)
            f1, kv = K._solve_from(av, rn_i, hr, cols, m, dw, nb, wmin, wmax, bmin, bmax,
                                   var_x, p.rlm, L, R, lo, Y, G, y, z, w, b, k0, fz, fY)
            pcols[:kv] = cols[:kv]
            f2 = K._solve_one(av, rn_i, hr, cols, m, dw, nb, wmin, wmax, bmin, bmax, var_x,
                              p.rlm, L, R2, lo2, Y2, G2, y2, z2, w2, b2)
            assert f1 == f2 or (np.isneginf(f1) and np.isneginf(f2))
            if np.isfinite(f1):
                assert np.array_equal(w[:m], w2[:m]) and np.array_equal(b, b2)
                tried += 1
            else:
                fails += 1
                assert kv == k0 == 0
    assert tried > 400 and fails > 0
