"""802.3dj COM quantization noise (178A.1.7.6): the clipping amplitude V_qc against closed
forms and a slow grid reference, its lower bound, and the branch-and-bound search
against evaluating every candidate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize
from scipy.stats import norm

from naive import v_qc_grid
from serdes.com.params import apply_overrides, preset
from serdes.errors import ConfigError
from serdes.kernels.com_quant import n_lower, v_qc, v_qc_lower


def test_v_qc_of_gaussian_noise_alone_is_its_quantile():
    """No signal: V_qc = sigma Phi^-1(1 - P_qc / 2), to one grid step."""
    sigma, npts = 0.01, 20001
    step = 2 * (10 * sigma + 1e-12) / (npts - 1)
    got = v_qc([1e-12], sigma, 4, 1e-7, npts=npts)
    assert abs(got - sigma * norm.isf(0.5e-7)) <= step


def test_v_qc_of_one_pam4_sample_in_noise_is_the_closed_form():
    """One PAM4 sample h plus Gaussian noise: P(X <= -V) = 1/4 sum_a Phi((-V - h a) / sigma)
    = P_qc / 2; to two grid steps (h's rounding to the grid and the quantile's grid)."""
    h, sigma, npts = 0.3, 0.02, 8001
    exact = optimize.brentq(lambda v: 0.25 * sum(norm.cdf((-v - h * a) / sigma)
                                                 for a in (-1, -1 / 3, 1 / 3, 1)) - 0.5e-7,
                            0.0, 2.0, xtol=1e-12)
    step = 2 * (h + 10 * sigma) / (npts - 1)
    assert abs(v_qc([h], sigma, 4, 1e-7, npts=npts) - exact) <= 2 * step


@pytest.mark.parametrize("seed", range(6))
def test_v_qc_equals_the_slow_grid_reference_and_its_bound_is_below(seed):
    """The numba V_qc equals the shift-and-add PMF with an FFT Gaussian (the same grid
    rule) to a hundredth of a grid step; the cheap lower bound (the m largest samples, L^-m
    >= P_qc) is below it, also from a window of the samples with a bound on the support."""
    rng = np.random.default_rng(seed)
    n = 80
    h = rng.normal(size=n) * np.exp(-np.arange(n) / rng.uniform(3, 15))
    h[5] = rng.uniform(0.5, 2)
    sigma = rng.uniform(0, 0.1) * (seed > 0)
    levels = 4 if seed % 3 else 2
    ref, step = v_qc_grid(h, sigma, levels, 1e-7)
    got = v_qc(h, sigma, levels, 1e-7)
    assert abs(got - ref) < 0.01 * step
    assert v_qc_lower(h, sigma, levels, 1e-7) <= got
    win = h[:30]
    assert v_qc_lower(win, sigma, levels, 1e-7, support_max=1.2 * np.abs(h).sum()) <= got
    assert n_lower(4, 1e-7) == 11 and n_lower(2, 1e-7) == 23 and 4.0 ** -11 >= 1e-7 > 4.0 ** -12


def test_final_step_is_2_v_qc_over_2_to_the_n_qb_minus_1():
    """Delta = 2 V_qc / (2^N_qb - 1) (178A-29); with crosstalk and dual-Dirac samples as
    delta PMFs it equals V_qc of all the samples together (the same grid rule)."""
    from serdes.com.quant import final_step

    p = preset("802.3dj-kr")
    sig = np.array([0.02, 0.3, 0.1, -0.05, 0.02])
    xt, dd = [np.array([0.01, -0.004])], np.array([0.003, -0.002])
    d = final_step(p, sig, dd, xt, 1e-6, npts=8001)
    v = v_qc(np.r_[sig, xt[0], dd], 1e-3, 4, 1e-7, npts=8001)
    assert d == pytest.approx(2 * v / 63, rel=1e-12)
    assert final_step(apply_overrides(p, {"n_qb": "0"}), sig, dd, xt, 1e-6) == 0.0


def _exhaustive(p, parts, ctles, C, CC, offs, kw, stage=None):
    """Every candidate evaluated exactly (and its bound), no pruning."""
    from serdes.com.fom import ctle_weights
    from serdes.kernels.com_mmse import mmse_block

    qkw = dict(kw, n_qb=p.n_qb, p_qc=p.p_qc, k_rj=kw["var_x"] * p.sigma_rj ** 2)
    ub, ex, tss = [], [], []
    for _, _, a, b in ctles:
        t = parts.at(ctle_weights(a, b))
        args = (C, CC, t.gv, t.gj, t.gf, t.r_base, t.acf_next, t.t0, t.S, t.idx0, offs)
        ub.append(mmse_block(*args, qmode=1, **qkw)[0])
        f, ts, _ = mmse_block(*args, qmode=2, prune=False, **qkw)
        ex.append(f)
        tss.append(ts)
    ub, ex = np.array(ub), np.array(ex)
    n, r = np.unravel_index(int(np.argmax(ex)), ex.shape)     # first maximum
    _exhaustive.seen = (ub, ex)
    return float(ex[n, r]), int(n), int(r), int(tss[n][r]), ub, ex.size


def test_pruned_search_picks_the_candidate_of_the_exhaustive_one(monkeypatch, channels_dir):
    """DPO_12in with 2 FEXT and 1 NEXT, 3 x 2 CTLE x 35 TX settings: the branch and bound
    gives the same candidate, sampling time and FOM as evaluating every candidate; every
    bound is above its candidate's FOM; the FOM with quantization noise is below the FOM
    without at every candidate; the kernel's FOM equals the NumPy reference solve."""
    from serdes.com import mmse_grid, quant
    from test_com_dj import _dpo12_vtfs

    p = apply_overrides(preset("802.3dj-kr"), {
        "f_step_ghz": "0.05", "g_dc": "-12,-8,-4", "g_dc2": "-3,0",
        "tx_step": "0,0.07,0.085,0.1,0,0"})
    g, v, kinds = _dpo12_vtfs(p, channels_dir, n_fext=2, n_next=1)
    pruned = mmse_grid.search_grid_numba(p, g, v, kinds)
    monkeypatch.setattr(quant, "search_quant", _exhaustive)
    full = mmse_grid.search_grid_numba(p, g, v, kinds)
    ub, ex = _exhaustive.seen
    assert (pruned.g_dc, pruned.g_dc2, pruned.sol.ts) == (full.g_dc, full.g_dc2, full.sol.ts)
    assert np.array_equal(pruned.tx_taps, full.tx_taps) and pruned.fom_db == full.fom_db
    assert np.all(ub >= ex) and pruned.n_exact < ex.size
    # the landscape: each CTLE setting's best bound, at least its best exact FOM, and
    # that FOM at the chosen setting (the figure says so: landscape_bound)
    cells = [(i, j) for i in range(len(p.g_dc)) for j in range(len(p.g_dc2))]
    assert len(cells) == ex.shape[0] and pruned.landscape_bound
    chosen = (list(p.g_dc).index(pruned.g_dc), list(p.g_dc2).index(pruned.g_dc2))
    for (i, j), ub_k, ex_k in zip(cells, ub, ex):
        assert pruned.landscape[i, j] >= ex_k.max()
        if (i, j) != chosen:
            assert pruned.landscape[i, j] == pytest.approx(ub_k.max(), abs=1e-9)
    assert pruned.landscape[chosen] == pruned.fom_db == ex.max()
    monkeypatch.undo()
    off = mmse_grid.search_grid_numba(apply_overrides(p, {"n_qb": "0"}), g, v, kinds)
    assert np.all(off.landscape >= full.landscape - 1e-12) and off.fom_db > full.fom_db
    assert not off.landscape_bound    # every candidate evaluated: the landscape is exact
    # the chosen candidate's FOM from the NumPy solve with the same quantization noise
    from serdes.com.fom import _pairs, ctle_basis, ctle_weights, full_taps, tx_offsets
    from serdes.com.pulse import h_r, xsinc

    live = np.flatnonzero(np.any(full_taps(p, p.tx_grid) != 0.0, axis=0))
    offs = tx_offsets(p)[live]
    iu, mult = _pairs(len(offs))
    basis = ctle_basis(p, g.f)
    amps = [p.a_v] + [p.a_ne if k == "next" else p.a_fe for k in kinds]
    pulses = [np.fft.irfft(xsinc(g) * x * basis, axis=1) * a for x, a in zip(v, amps)]
    parts = mmse_grid._CtleParts(p, pulses, basis, kinds, h_r(p, g.f), g.f, g.m, offs, iu, mult)
    t = parts.at(ctle_weights(pruned.g_dc, pruned.g_dc2))
    _, _, f = mmse_grid._taps_at(p, t, pruned.tx_taps[live], offs, pruned.sol.ts, quant=True,
                                 with_fom=True)
    assert f == pytest.approx(pruned.fom_db, abs=1e-8)


def test_quant_keys_are_checked():
    p = preset("802.3dj-kr")
    with pytest.raises(ConfigError, match="n_qb"):
        apply_overrides(p, {"n_qb": "-1"})
    with pytest.raises(ConfigError, match="p_qc"):
        apply_overrides(p, {"p_qc": "0.7"})
    with pytest.raises(ConfigError, match="n_qb = 6 is not allowed.*RX FFE"):
        apply_overrides(preset("802.3ck-kr"), {"n_qb": "6"})
    assert preset("802.3ck-kr").n_qb == 0


def test_quant_pmf_is_the_sum_of_uniforms_through_the_taps():
    """178A-43/46: the detector's quantization PMF has the variance sum_k (|w_k| Delta)^2 / 12
    of uniforms of width |w_k| Delta (to the grid's rounding of each half-width)."""
    from serdes.com.quant import quant_pmf

    step, taps, ystep, npts = 0.01, np.array([1.0, -0.4, 0.25, 0.1]), 1e-5, 20001
    q = quant_pmf(step, taps, npts, ystep)
    y = (np.arange(npts) - npts // 2) * ystep
    n = np.round(np.abs(taps) * step / 2 / ystep)
    assert q.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.sum(y ** 2 * q) == pytest.approx(np.sum(ystep ** 2 * n * (n + 1) / 3), rel=1e-9)
    # (the grid adds ystep^2 n / 3 per tap: 0.3 % here)
    assert np.sum(y ** 2 * q) == pytest.approx(np.sum((taps * step) ** 2) / 12, rel=5e-3)


@pytest.mark.parametrize("n_wg", ["0", "2"])
def test_com_with_quantization_noise_is_lower_and_reported(channels_dir, n_wg):
    """One candidate (DPO_4in thru): the quantization noise lowers COM and A_s / A_ni
    and its step and rms at the detector are in the JSON case: Delta sqrt(sum w^2 / 12)
    over every RX FFE tap, the floating ones (rx_ffe_float) included when they are on."""
    from serdes.com.core import compute_com

    d = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119"
    ov = {"g_dc": "-9", "g_dc2": "0", "tx_min": "0,0,0,0,0,0", "tx_max": "0,0,0,0,0,0",
          "f_step_ghz": "0.05", "mlsd": "false", "rx_ffe_n_wg": n_wg}
    on = compute_com(d / "DPO_4in_Meg7_THRU.s4p", preset="802.3dj-kr", overrides=ov)
    off = compute_com(d / "DPO_4in_Meg7_THRU.s4p", preset="802.3dj-kr",
                      overrides={**ov, "n_qb": "0"})
    for a, b in zip(on.cases, off.cases):
        j = a.as_dict()
        assert a.com_db < b.com_db and a.fom_db < b.fom_db
        assert j["quant"]["n_qb"] == 6 and j["quant"]["step_v"] > 0
        w = np.asarray(a.rx_ffe_taps + (j["rx_ffe_float"]["taps"] if n_wg != "0" else []))
        assert len(w) == 15 + 4 * int(n_wg)      # n_wg groups of 4
        assert j["sigma_v"]["quant"] == pytest.approx(
            j["quant"]["step_v"] * np.sqrt(np.sum(w ** 2) / 12), rel=1e-12)
        assert "quant" not in b.as_dict()


def test_exact_pass_forms_each_ctle_setting_once(monkeypatch, channels_dir):
    """The exact pass goes CTLE setting by CTLE setting (quant.search_quant): each
    setting's tables are formed at most once there (beside once in the bound pass and
    once for the first candidate), however its candidates interleave in bound order;
    DPO_12in with 1 FEXT, 4 x 3 CTLE x 9 TX settings, floating RX FFE taps on (a looser
    bound: candidates of most settings are evaluated exactly), batches of 2. The result
    equals evaluating every candidate (as in the test above)."""
    from serdes.com import mmse_grid, quant
    from test_com_dj import _dpo12_vtfs

    p = apply_overrides(preset("802.3dj-kr"), {
        "f_step_ghz": "0.05", "g_dc": "-12,-10,-8,-6", "g_dc2": "-3,-2,-1",
        "rx_ffe_n_wg": "2", "mlsd": "false", "tx_step": "0,0,0.17,0.1,0,0"})
    g, v, kinds = _dpo12_vtfs(p, channels_dir, n_fext=1, n_next=0)
    monkeypatch.setattr(quant, "BATCH", 2)
    calls = []
    real_at = mmse_grid._CtleParts.at

    def at(self, wt):
        calls.append(tuple(np.round(wt, 12)))
        return real_at(self, wt)

    monkeypatch.setattr(mmse_grid._CtleParts, "at", at)
    pruned = mmse_grid.search_grid_numba(p, g, v, kinds)
    n_ctle = len(set(calls))
    assert n_ctle == 12 and len(set(calls[:n_ctle])) == n_ctle     # the bound pass
    exact = calls[n_ctle + 1:-1]    # after the first candidate's, before the chosen taps'
    assert pruned.n_exact > n_ctle and len(set(exact)) >= 3    # batches span the settings
    assert len(exact) == len(set(exact))                # no setting's tables formed twice
    monkeypatch.setattr(quant, "search_quant", _exhaustive)
    full = mmse_grid.search_grid_numba(p, g, v, kinds)
    assert (pruned.g_dc, pruned.g_dc2, pruned.sol.ts) == (full.g_dc, full.g_dc2, full.sol.ts)
    assert np.array_equal(pruned.tx_taps, full.tx_taps) and pruned.fom_db == full.fom_db


@pytest.mark.parametrize("levels", [2, 3, 4])
def test_qc_pmf_is_the_scatter_of_each_sample_to_the_bit(levels):
    """V_qc's PMF (kernel _qc_pmf: each sample's step a gather at its levels' shifts over
    zero-padded rows) equals the literal scatter, tmp[j + s_l] += pmf[j] level by level
    then / L, to the bit, with samples below half a grid step skipped and shifts reaching
    the grid's ends (one sample carrying most of the support)."""
    from serdes.kernels import com_mmse_search as K

    rng = np.random.default_rng(levels)
    for n, npts in ((1, 2001), (7, 41), (60, 2001), (300, 801)):
        h = rng.normal(size=n) * np.exp(-np.arange(n) / 10.0)
        h[rng.integers(n)] = 3.0 * np.abs(h).sum() + 0.1     # the largest shift: ~(npts-1)/2
        if n > 7:
            h[5::9] *= 1e-6                                   # below half a step
        ystep = 2.0 * np.abs(h).sum() / (npts - 1)
        pmf, lo, hi = K._qc_pmf(h, ystep, levels, npts)
        c = npts // 2
        ref = np.zeros(npts)
        ref[c] = 1.0
        rlo = rhi = c
        for x in h:
            if not abs(x) > ystep / 2.0:
                continue
            sh = [int(np.round(x * (2.0 * l / (levels - 1) - 1.0) / ystep))
                  for l in range(levels)]
            tmp = np.zeros(npts)
            for s in sh:
                tmp[rlo + s:rhi + 1 + s] += ref[rlo:rhi + 1]
            ref = tmp / levels
            rlo, rhi = rlo + min(sh), rhi + max(sh)
        np.testing.assert_array_equal(pmf, ref)
        assert (lo, hi) == (rlo, rhi) and ref[lo] > 0 and ref[hi] > 0
        assert 0 <= lo and hi < npts


def test_quant_pmf_running_sums_equal_the_fft_convolutions():
    """quant_pmf's boxcars as running sums give the FFT convolutions' PMF (to 1e-16,
    edges of the grid included), and the span's zero taps between floating taps change
    nothing (they were 64 of 87 full-grid FFT convolutions per package case)."""
    from serdes.com.noise import boxcar_same, conv
    from serdes.com.quant import quant_pmf

    rng = np.random.default_rng(3)
    for npts, n in ((101, 1), (2001, 17), (2001, 1000), (20001, 4321)):
        q = rng.random(npts) ** 4
        q /= q.sum()
        b = np.zeros(npts)
        b[npts // 2 - n: npts // 2 + n + 1] = 1.0 / (2 * n + 1)
        assert np.max(np.abs(boxcar_same(q, n) - conv(q, b))) < 1e-16
    step, ystep, npts = 0.01, 1e-5, 20001
    taps = np.array([1.0, -0.4, 0.25, 0.1])
    spread = np.array([1.0, 0.0, -0.4, 0.0, 0.0, 0.25, 1e-9, 0.1])
    assert np.array_equal(quant_pmf(step, taps, npts, ystep),
                          quant_pmf(step, spread, npts, ystep))
    ref = np.zeros(npts)
    ref[npts // 2] = 1.0
    for w in taps:
        k = int(round(abs(w) * step / 2 / ystep))
        b = np.zeros(npts)
        b[npts // 2 - k: npts // 2 + k + 1] = 1.0 / (2 * k + 1)
        ref = conv(ref, b)
    assert np.max(np.abs(quant_pmf(step, taps, npts, ystep) - ref)) < 1e-15
