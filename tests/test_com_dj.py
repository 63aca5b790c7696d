"""802.3dj-kr COM (Annex 178A reference receiver): the MMSE RX FFE/DFE solution against
an independent minimisation, and the whole COM against PyChOpMarg 3.4's own 802.3dj run."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize

from serdes.com import mmse
from serdes.com.core import compute_com
from serdes.com.params import preset


def _mse_direct(p, h, rn, dh, x):
    """MSE / sigma_X^2 of FFE w and DFE b (x = [w, b]) by forming the equalized samples:
    E[(sum_i w_i (y[n-i] + noise) - b^T past - x[n])^2] / sigma_X^2, y = h * x."""
    nw, dw, nb = len(p.rx_ffe_max), p.rx_ffe_pre, len(p.dfe_max)
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    w, b = x[:nw], x[nw:]
    z = np.convolve(h, w)                 # response of the FFE output to symbol x[n - k]
    target = np.zeros_like(z)
    d = dh + dw
    target[d] = 1.0
    target[d + 1:d + 1 + nb] = b
    isi = np.sum((z - target) ** 2)
    r = np.array([[rn[abs(i - j)] if abs(i - j) < len(rn) else 0.0 for j in range(nw)]
                  for i in range(nw)])
    return isi + w @ r @ w / var_x


@pytest.mark.parametrize("dfe_max", [5.0, 0.3])
def test_mmse_taps_minimise_the_mse(dfe_max):
    """solve_taps against SLSQP on the MSE written out directly (no KKT algebra), with the
    cursor constraint h_0^T w = 1, wide FFE limits, and the DFE tap free (5.0) or held at
    its limit (0.3: with one DFE tap the constrained optimum lies on the bound)."""
    rng = np.random.default_rng(1)
    p0 = preset("802.3dj-kr")
    nw0, dw0 = len(p0.rx_ffe_max), p0.rx_ffe_pre
    p = dataclasses.replace(p0, rx_ffe_min=(-1e9,) * dw0 + (1.0,) + (-1e9,) * (nw0 - dw0 - 1),
                            rx_ffe_max=(1e9,) * dw0 + (1.0,) + (1e9,) * (nw0 - dw0 - 1),
                            dfe_max=(dfe_max,), dfe_min=(-dfe_max,))
    n = np.arange(40)
    h = 0.3 * (np.exp(-0.5 * ((n - 12) / 0.9) ** 2) + 0.3 * np.exp(-np.clip(n - 12, 0, None) / 3.0) * (n > 12)) + 0.01 * rng.standard_normal(40)
    dh = int(np.argmax(h))
    rn = 3e-3 * 0.6 ** np.arange(16)
    s = mmse.solve_taps(h, rn, dh, p)
    nw = len(p.rx_ffe_max)
    x0 = np.concatenate((np.eye(nw)[p.rx_ffe_pre] / h[dh], [0.0]))
    h0 = np.array([h[dh + p.rx_ffe_pre - i] if 0 <= dh + p.rx_ffe_pre - i < len(h) else 0.0
                   for i in range(nw)])
    ref = optimize.minimize(lambda x: _mse_direct(p, h, rn, dh, x), x0, method="SLSQP",
                            bounds=[(None, None)] * nw + [(-dfe_max, dfe_max)],
                            constraints=[{"type": "eq", "fun": lambda x: h0 @ x[:nw] - 1.0}],
                            options={"ftol": 1e-14, "maxiter": 1000})
    assert ref.success
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    assert s.mse / var_x == pytest.approx(_mse_direct(p, h, rn, dh, np.r_[s.w, s.b]), rel=1e-9)
    assert s.mse / var_x == pytest.approx(ref.fun, rel=1e-6)
    assert np.allclose(s.w, ref.x[:nw], atol=1e-3 * np.abs(s.w).max())
    if dfe_max < 1:
        assert s.b[0] == pytest.approx(dfe_max)


def test_dj_against_pychopmarg(channels_dir):
    """The same reduced grid searched by both (2 CTLE settings, TX FFE off: PyChOpMarg
    adds the no-TX-FFE point when the grid lacks it, and TX settings within 0.01 dB of FOM
    are near-ties either program may break its own way) on the 4-inch backplane thru: COM
    within 0.1 dB, FOM within 0.05 dB, the same CTLE choice, RX FFE taps within 0.05, the
    same DFE tap (the larger-grid comparisons are in docs/com.md)."""
    pytest.importorskip("pychopmarg")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from com_pychopmarg_dj import compare

    grid = {"g_dc": [-12.0, -9.0], "g_dc2": [-2.0], "tx_min": [0.0] * 6,
            "tx_max": [0.0] * 6, "tx_step": [0.0] * 6,
            "f_step_ghz": 0.05}
    r = compare("dpo4", grid)
    o, ref = r["ours"], r["pychopmarg"]
    assert abs(r["delta_com_db"]) < 0.1
    assert abs(r["delta_fom_db"]) < 0.05
    assert (o["g_dc_db"], o["g_dc2_db"]) == (ref["g_dc_db"], ref["g_dc2_db"])
    assert np.allclose(o["tx_taps"], ref["tx_taps"])
    assert r["max_rx_tap_diff"] < 0.05
    assert o["dfe_taps"] == pytest.approx(ref["dfe_taps"], abs=0.01)


def test_dj_json_has_rx_ffe_taps(channels_dir):
    d = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119"
    res = compute_com(d / "DPO_4in_Meg7_THRU.s4p", preset="802.3dj-kr",
                      overrides={"g_dc": "-9", "g_dc2": "0", "tx_min": "0,0,0,0,0,0",
                                 "tx_max": "0,0,0,0,0,0", "f_step_ghz": "0.05"})
    cases = res.as_dict()["cases"]
    assert [c["package_case"] for c in cases] == [1, 2]       # D3.3 Test 1 and Test 2
    for c in cases:
        assert len(c["rx_ffe_taps"]) == 15 and c["rx_ffe_taps"][6] == 1.0
        assert len(c["dfe_taps"]) == 1 and len(c["tx_taps"]) == 7


def test_phase_tables_equal_the_per_sampling_time_noise():
    """search_ts (noise autocorrelations from per-phase tables, once per candidate) gives
    the solution of noise_acf + solve_taps evaluated at every sampling time directly."""
    p = preset("802.3dj-kr")
    m = 8
    t = np.arange(60 * m) / m
    v = 0.2 * np.exp(-0.5 * ((t - 20.3) / 0.7) ** 2) + 0.05 * np.exp(-np.clip(t - 20.3, 0, None) / 4) * (t > 20.3)
    g = 1.3 * v
    xt = [0.01 * np.sin(np.arange(60) / 3.0), 0.02 * np.cos(np.arange(60) / 5.0)]
    nw = len(p.rx_ffe_max)
    r_rx = 1e-6 * 0.5 ** np.arange(nw)
    var_x = 5 / 9
    acf_xt = var_x * sum(mmse.acf(x, nw) for x in xt)
    acf_g = mmse.acf_rows(mmse.phase_table(g, m), nw)
    fast = mmse.search_ts(p, v, acf_g, acf_xt, r_rx, m)
    pk = int(np.argmax(v))
    slow = max(((mmse.solve_taps(v[ts % m::m], mmse.noise_acf(p, v, g, xt, r_rx, ts, m, nw),
                                 ts // m, p), ts) for ts in range(pk - m // 2, pk + m // 2 + 1)),
               key=lambda s: s[0].fom_db)
    assert fast.ts == slow[1]
    assert fast.fom_db == pytest.approx(slow[0].fom_db, abs=1e-9)
    assert np.allclose(fast.w, slow[0].w, atol=1e-9)


def _search_grid_direct(p, grid, vtfs: list, kinds: list) -> mmse.MmseBest:
    """Slow reference of mmse.search_grid_fast: every TX setting's pulses formed by
    rolling the fine pulses, noise autocorrelations summed directly (mmse.search_ts)."""
    from serdes.com.fom import ctle_basis, ctle_weights, full_taps, tx_offsets
    from serdes.com.pulse import h_r, xsinc

    m = grid.m
    offs = tx_offsets(p)
    C = full_taps(p, p.tx_grid)
    basis = ctle_basis(p, grid.f)
    xs = xsinc(grid)
    amps = [p.a_v] + [p.a_ne if k == "next" else p.a_fe for k in kinds]
    base = [np.fft.irfft(xs * v * basis, axis=1) * a for v, a in zip(vtfs, amps)]
    hr = h_r(p, grid.f)
    nw = len(p.rx_ffe_max)
    var_x = (p.levels ** 2 - 1) / (3.0 * (p.levels - 1) ** 2)
    landscape = np.full((len(p.g_dc), len(p.g_dc2)), -np.inf)
    best = None
    n_eval = 0
    for i, gdc in enumerate(p.g_dc):
        for j, gdc2 in enumerate(p.g_dc2):
            wt = ctle_weights(gdc, gdc2)
            r_rx = mmse.rx_noise_acf(p.eta0, hr * (wt @ basis), grid.f, m, nw)
            p0 = wt @ base[0]
            acf_g = mmse.acf_rows(mmse.phase_table(p0, m), nw)
            aggs0 = [wt @ b for b in base[1:]]
            acf_next = np.zeros(nw)
            for a, k in zip(aggs0, kinds):
                if k == "next":
                    acf_next += var_x * mmse.acf(mmse.agg_samples(a, m)[1], nw)
            foms = np.empty(len(C))
            sols = []
            for r, c in enumerate(C):
                v = sum(ck * np.roll(p0, int(k) * m) for ck, k in zip(c, offs))
                acf_xt = acf_next.copy()
                for a, k in zip(aggs0, kinds):
                    if k == "fext":
                        acf_xt += var_x * mmse.acf(mmse.agg_samples(sum(ck * np.roll(a, int(o) * m)
                                                              for ck, o in zip(c, offs)), m)[1], nw)
                s = mmse.search_ts(p, v, acf_g, acf_xt, r_rx, m)
                foms[r] = s.fom_db
                sols.append(s)
            n_eval += len(C)
            k = int(np.argmax(foms))
            landscape[i, j] = foms[k]
            if best is None or foms[k] > best.fom_db:
                best = mmse.MmseBest(float(foms[k]), float(gdc), float(gdc2), C[k].copy(), sols[k],
                                landscape, foms.copy(), 0)
    best.n_evaluated = n_eval
    best.landscape = landscape
    return best


def test_fast_grid_search_equals_direct(channels_dir):
    """The quadratic-form search (TX FFE linear in the UI-sample autocorrelations, with
    the window-wrap terms removed) equals rolling every pulse and summing directly, for
    every TX setting of a small grid with a FEXT and a NEXT aggressor and packages."""
    from serdes.com.params import apply_overrides
    from serdes.com.pulse import ComGrid, channel_vtf, read_channel, xsinc

    d = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119"
    p = apply_overrides(preset("802.3dj-kr"), {
        "g_dc": "-9,-6", "g_dc2": "0", "tx_min": "-0.02,0,-0.1,-0.1,0,0",
        "tx_max": "0,0.02,0,0,0,0", "tx_step": "0.02,0.02,0.1,0.1,0,0", "f_step_ghz": "0.05",
        "rx_ffe_n_wg": "0"})    # the fixed taps (the floating ones: test_com_rxfloat.py)
    g = ComGrid.of(p)
    chans = [read_channel(d / "DPO_12in_Meg7_THRU.s4p", "thru"),
             read_channel(d / "DPO_12in_Meg7_FENG89.s4p", "fext"),
             read_channel(d / "DPO_12in_Meg7_NENF89.s4p", "next")]
    v = [channel_vtf(p, g, c, p.cases[0]) for c in chans]
    pk0 = int(np.argmax(np.fft.irfft(xsinc(g) * v[0])))
    sh = np.exp(-2j * np.pi * g.f * ((20 * g.m - pk0) % g.n_t) * g.ui / g.m)
    v = [x * sh for x in v]
    slow = _search_grid_direct(p, g, v, ["fext", "next"])
    fast = mmse.search_grid_fast(p, g, v, ["fext", "next"])
    assert np.abs(fast.tx_fom_at_best - slow.tx_fom_at_best).max() < 1e-8
    assert np.abs(fast.landscape - slow.landscape).max() < 1e-8
    assert fast.sol.ts == slow.sol.ts and np.allclose(fast.tx_taps, slow.tx_taps)
    assert np.allclose(fast.sol.w, slow.sol.w, atol=1e-7)


def _dpo12_vtfs(p, d, n_fext=5, n_next=3):
    from serdes.com.pulse import ComGrid, channel_vtf, read_channel, xsinc

    d = d / "ieee8023ck_KR_ortho_tracy_3ck_02_0119"
    names = ["FENG89", "FENG1415", "FENH89", "FENH1112", "FENH1415"][:n_fext]
    names += ["NENF89", "NENF1112", "NENF1415"][:n_next]
    g = ComGrid.of(p)
    chans = [read_channel(d / "DPO_12in_Meg7_THRU.s4p", "thru")]
    chans += [read_channel(d / f"DPO_12in_Meg7_{n}.s4p", "fext" if n[0] == "F" else "next")
              for n in names]
    v = [channel_vtf(p, g, c, p.cases[0]) for c in chans]
    pk0 = int(np.argmax(np.fft.irfft(xsinc(g) * v[0])))
    sh = np.exp(-2j * np.pi * g.f * ((20 * g.m - pk0) % g.n_t) * g.ui / g.m)
    return g, [x * sh for x in v], [c.kind for c in chans[1:]]


@pytest.mark.parametrize("grid", [
    # the 72-candidate grid of benchmarks/com_pychopmarg_dj.py
    {"g_dc": "-12,-9,-6,-3", "g_dc2": "-2,0", "tx_min": "0,0,-0.1,-0.1,0,0",
     "tx_max": "0,0,0,0,0,0", "tx_step": "0,0,0.05,0.05,0,0"},
    # 4 CTLE x 495 TX settings, all four TX taps of the preset moving, 2 DFE taps
    {"g_dc": "-9,-6", "g_dc2": "-2,0", "tx_min": "-0.06,0,-0.3,-0.2,0,0",
     "tx_max": "0,0.12,0,0,0,0", "tx_step": "0.02,0.04,0.05,0.05,0,0",
     "dfe_max": "0.85,0.3", "dfe_min": "0,-0.3", "f_step_ghz": "0.05",
     "mlsd": "false"},
    # the D3.3 ranges (c(-2) 0..0.14, c(-1) -0.34..0, c(1) -0.2..0, c(0) >= 0.54) on
    # coarser steps, 15 RX FFE taps (6 pre-cursor), 2 x 2 CTLE
    {"g_dc": "-10,-4", "g_dc2": "-3,0", "tx_step": "0,0.07,0.085,0.1,0,0"},
])
def test_numba_grid_search_equals_numpy_search(grid, channels_dir):
    """The numba kernel (Cholesky + Woodbury solves, loops) against the NumPy stacked
    search it replaces (LU of the full KKT system), every candidate of the grid, DPO_12in
    with 2 FEXT and 1 NEXT: same best candidate, FOM of every TX setting to 1e-8 dB."""
    from serdes.com.mmse_grid import search_grid_numba
    from serdes.com.params import apply_overrides

    # (quantization noise off: the NumPy search has none; quant.py's search is tested in
    # tests/test_com_quant.py; the fixed taps only: the NumPy search has no floating ones,
    # the kernel's are tested in tests/test_com_rxfloat.py)
    p = apply_overrides(preset("802.3dj-kr"), {"f_step_ghz": "0.05", "n_qb": "0",
                                               "rx_ffe_n_wg": "0", **grid})
    g, v, kinds = _dpo12_vtfs(p, channels_dir, n_fext=2, n_next=1)
    ref = mmse.search_grid_fast(p, g, v, kinds)
    new = search_grid_numba(p, g, v, kinds)
    assert (new.g_dc, new.g_dc2, new.sol.ts) == (ref.g_dc, ref.g_dc2, ref.sol.ts)
    assert np.array_equal(new.tx_taps, ref.tx_taps)
    assert abs(new.fom_db - ref.fom_db) < 1e-8
    assert np.abs(new.landscape - ref.landscape).max() < 1e-8
    assert np.abs(new.tx_fom_at_best - ref.tx_fom_at_best).max() < 1e-8
    assert np.allclose(new.sol.w, ref.sol.w, atol=1e-9) and np.allclose(new.sol.b, ref.sol.b)
    assert new.n_evaluated == ref.n_evaluated


def test_numba_search_gives_the_same_com(monkeypatch, channels_dir):
    """compute_com with the numba search and with the NumPy search: the same COM, A_s,
    A_ni and equalization (72-candidate grid, DPO_12in with 2 FEXT and 1 NEXT)."""
    from serdes.com import core

    d = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119"
    args = (d / "DPO_12in_Meg7_THRU.s4p", [d / "DPO_12in_Meg7_FENG89.s4p",
                                           d / "DPO_12in_Meg7_FENH1415.s4p"],
            [d / "DPO_12in_Meg7_NENF89.s4p"])
    ov = {"g_dc": "-12,-9,-6,-3", "g_dc2": "-2,0", "tx_min": "0,0,-0.1,-0.1,0,0",
          "tx_max": "0,0,0,0,0,0", "tx_step": "0,0,0.05,0.05,0,0", "f_step_ghz": "0.05",
          "n_qb": "0", "rx_ffe_n_wg": "0"}     # what the NumPy search covers
    new = compute_com(*args, preset="802.3dj-kr", overrides=ov).cases[0]
    monkeypatch.setattr(core._mmse_grid, "search_grid_numba",
                        lambda *a, stage=None, **k: mmse.search_grid_fast(*a, **k))
    ref = compute_com(*args, preset="802.3dj-kr", overrides=ov).cases[0]
    assert abs(new.com_db - ref.com_db) < 1e-8 and abs(new.fom_db - ref.fom_db) < 1e-8
    assert new.a_s_v == pytest.approx(ref.a_s_v, rel=1e-9)
    assert new.a_ni_v == pytest.approx(ref.a_ni_v, rel=1e-9)
    assert (new.tx_taps, new.g_dc_db, new.g_dc2_db) == (ref.tx_taps, ref.g_dc_db, ref.g_dc2_db)
    assert np.allclose(new.rx_ffe_taps, ref.rx_ffe_taps, atol=1e-9)


def test_mmse_kernel_refuses_bad_tables():
    """The kernel's wrapper names the wrong argument in one line."""
    from serdes.errors import ConfigError
    from serdes.kernels.com_mmse import mmse_block

    C = np.array([[0.0, 1.0, 0.0]])
    CC = np.ones((1, 6))
    ok = dict(gv=np.zeros((6, 4 * 3)), gj=np.zeros((6, 4 * 3)), gf=np.zeros((0, 6, 12)),
              r_base=np.zeros((4, 3)), acf_xt0=np.zeros(3), t0=np.zeros((4, 50)),
              S=np.zeros((3, 9)), idx0=40, offs=[-1, 0, 1], m=4, nw=3, dw=1, nb=1,
              wmin=[-1, 1, -1], wmax=[1, 1, 1], bmin=[0], bmax=[1], var_x=5 / 9, k_j=0.0,
              rlm=1.0, levels=4)
    with pytest.raises(ConfigError, match="gv: expected shape"):
        mmse_block(C, CC, **{**ok, "gv": np.zeros((6, 5))})
    with pytest.raises(ConfigError, match="offs: expected 3 values"):
        mmse_block(C, CC, **{**ok, "offs": [0, 1]})
    with pytest.raises(ConfigError, match="var_x: must be > 0"):
        mmse_block(C, CC, **{**ok, "var_x": 0.0})


#: P802.3dj/D3.3 Table 178-15 (KR column) and Table 178-14 (class A), written out here
#: independently of serdes/com/params.py and serdes/presets.py (units of the tables:
#: GBd, V, V^2/GHz, dB, UI, ns, ohm, nF, nH, mm; f_r in f_b)
D3P3_KR = dict(
    fb_gbd=106.25, levels=4, samples_per_ui=32, der0=2e-4, a_v=0.385, a_fe=0.385, a_ne=0.481,
    eta0=7.5e-9, snr_tx_db=33.5, rlm=0.95, sigma_rj=0.01, a_dd=0.02, t_r_ns=0.004,
    r0=46.25, r_d=46.25, f_r=0.55, f_z_ghz=42.5, f_p1_ghz=42.5, f_p2_ghz=106.25,
    f_lf_ghz=1.328125, c0_min=0.54, tx_n_pre=3, rx_ffe_pre=6,
    g_dc=[float(-n) for n in range(20, -1, -1)], g_dc2=[float(-n) for n in range(6, -1, -1)],
    # c(-3), c(-2), c(-1), c(1), c(2), c(3): (min, max, step)
    tx=[(0.0, 0.0, 0.0), (0.0, 0.14, 0.02), (-0.34, 0.0, 0.02), (-0.2, 0.0, 0.02),
        (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)],
    dfe_max=[0.85], dfe_min=[0.0],
    rx_ffe_max=[0.7] * 6 + [1.0] + [0.7] * 8, rx_ffe_min=[-0.7] * 6 + [1.0] + [-0.7] * 8,
    c_d=(4e-5, 9e-5, 1.1e-4), l_s=(0.13, 0.15, 0.14), c_b=3e-5, c_p=4e-5, z_c=(87.5, 92.5),
    gamma0=5e-4, a1=8.9e-4, a2=2e-4, tau=6.141e-3,
    # Test 1 and Test 2: line 1 of 33 and 12 mm (TX = RX = NEXT = FEXT), line 2 1.8 mm
    cases=[33.0, 12.0])


def test_dj_preset_equals_the_d3p3_tables():
    p = preset("802.3dj-kr")
    for k, v in D3P3_KR.items():
        if k == "tx":
            got = list(zip(p.tx_min, p.tx_max, p.tx_step))
            for (lo, hi, st), (glo, ghi, gst) in zip(v, got):
                assert (glo, ghi) == pytest.approx((lo, hi), abs=1e-12)
                assert gst == pytest.approx(st, abs=1e-12) or (lo == hi and gst == 0)
        elif k == "cases":
            assert [c["tx"] for c in p.cases] == [(z, 1.8) for z in v]
            for c in p.cases:
                assert c["tx"] == c["rx"] == c["next"] == c["fext"]
        else:
            assert np.allclose(np.atleast_1d(getattr(p, k)), np.atleast_1d(v), rtol=1e-12, atol=0), k
    assert len(p.tx_grid) == 1308 and len(p.g_dc) * len(p.g_dc2) == 147
    assert p.mlsd and p.mlsd_dcom_an_db == 3.0          # KR: the MLSD COM (178A.1.10)
    assert (p.n_qb, p.p_qc) == (6, 1e-7)                # quantization noise (178A.1.7.6)
    # floating RX FFE taps (178A.1.8.1): D3.3's 2 groups of 4 within +-0.05 up to 87
    assert (p.rx_ffe_n_wf, p.rx_ffe_n_max, p.rx_ffe_float_max, p.rx_ffe_n_wg) == (4, 87, 0.05, 2)
    assert "D3.3" in p.source and "Table 178-15" in p.source and "verified" in p.source
    # the earlier set stays available (not a preset) for the PyChOpMarg comparison
    from serdes.com.params import dj_early

    e = dj_early()
    assert len(e.rx_ffe_max) == 16 and e.rx_ffe_pre == 5 and len(e.tx_grid) == 794640
    assert e.rx_ffe_n_wg == 0 and e.n_qb == 0       # as PyChOpMarg's set: Nwg 0, N_qb 0
    assert (e.r0, e.r_d, e.f_r, len(e.cases)) == (50.0, 50.0, 0.58, 1)
    assert e.n_qb == 0          # as compared with PyChOpMarg's run of it


def test_renormalize_equals_the_line_at_the_new_reference():
    """178A-4: a 50 ohm lossy line (S at 50 ohm) renormalized to 46.25 ohm equals the same
    line's ABCD matrix converted to S at 46.25 ohm directly; and back again."""
    from serdes.analog.package import abcd_to_s
    from serdes.com.pulse import renormalize

    f = np.linspace(1e8, 6e10, 50)
    gl = (0.02 + 1j) * 2 * np.pi * f * 0.2e-9
    z0 = 50.0 * (1 + 0.03j)
    abcd = np.empty((f.size, 2, 2), complex)
    abcd[:, 0, 0] = abcd[:, 1, 1] = np.cosh(gl)
    abcd[:, 0, 1] = z0 * np.sinh(gl)
    abcd[:, 1, 0] = np.sinh(gl) / z0
    s50, s46 = abcd_to_s(abcd, 50.0), abcd_to_s(abcd, 46.25)
    assert np.abs(renormalize(s50, 50.0, 46.25) - s46).max() < 1e-12
    assert np.abs(renormalize(s46, 46.25, 50.0) - s50).max() < 1e-12
    assert renormalize(s50, 50.0, 50.0) is s50


def test_ctle_tables_from_parts_equal_the_direct_tables(channels_dir):
    """The per-CTLE tables of the numba search combined from their 10 parts (quadratic in
    the CTLE weights) equal the tables formed directly from each CTLE setting's pulses."""
    from serdes.com.fom import _pairs, ctle_basis, ctle_weights, tx_offsets
    from serdes.com.mmse_grid import _Ctle, _CtleParts
    from serdes.com.params import apply_overrides
    from serdes.com.pulse import h_r, xsinc

    p = apply_overrides(preset("802.3dj-kr"), {"f_step_ghz": "0.05"})
    g, v, kinds = _dpo12_vtfs(p, channels_dir, n_fext=2, n_next=1)
    m, offs = g.m, tx_offsets(p)[1:5]
    iu, mult = _pairs(len(offs))
    basis = ctle_basis(p, g.f)
    amps = [p.a_v] + [p.a_ne if k == "next" else p.a_fe for k in kinds]
    pulses = [np.fft.irfft(xsinc(g) * x * basis, axis=1) * a for x, a in zip(v, amps)]
    parts = _CtleParts(p, pulses, basis, kinds, h_r(p, g.f), g.f, m, offs, iu, mult)
    for gdc, gdc2 in ((-20.0, -6.0), (-7.0, -2.0), (0.0, 0.0)):
        wt = ctle_weights(gdc, gdc2)
        a = _Ctle(p, wt, pulses, basis, kinds, h_r(p, g.f), g.f, m, offs, iu, mult)
        b = parts.at(wt)
        for k in ("t0", "gv", "gj", "gf", "r_base", "acf_next", "S"):
            x, y = getattr(a, k), getattr(b, k)
            assert x.shape == y.shape and np.abs(x - y).max() <= 1e-9 * np.abs(x).max(), k
        assert a.idx0 == b.idx0


def _chunk_rows(out, c_first, c_step):
    """A stand-in for the search kernel: each chunk (one row) writes its own row."""
    n = 0
    for ci in range(c_first, out.shape[0], c_step):
        out[ci] = 2.0 * ci + 1.0
        n += 1
    return 0, n


def _in_forked_child(target, args, timeout):
    """``target(*args, conn)`` in a forked child, which sends one value on conn: (the
    value, or None when the child died or sent nothing within ``timeout`` s, its exit
    code)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=target, args=(*args, send))
    child.start()
    send.close()             # the child's end: a child that dies gives EOF at once
    try:
        got = recv.recv() if recv.poll(timeout) else None
    except EOFError:
        got = None
    child.join(10)
    if child.is_alive():
        child.kill()
        child.join()
    return got, child.exitcode


def _threads_in_child(kernel, conn):
    from serdes.kernels.threads import run_chunks

    out = np.zeros(9)
    counts = run_chunks(kernel, (out,), 9, 2)
    conn.send((counts, out))
    conn.close()


def test_com_kernel_threads_work_in_a_forked_child():
    """The COM kernels' thread pool (serdes/kernels/threads.py) is made per process: a
    child forked after the parent used it runs its own chunks (the parent's pool threads
    do not exist in the child, so a job given to that pool would wait for ever)."""
    import multiprocessing as mp

    from numba import njit

    from serdes.kernels.threads import run_chunks

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork on this platform")
    kernel = njit(nogil=True)(_chunk_rows)
    out = np.zeros(9)
    assert run_chunks(kernel, (out,), 9, 2) == [(0, 5), (0, 4)]
    assert np.array_equal(out, 2.0 * np.arange(9) + 1.0)
    got, _ = _in_forked_child(_threads_in_child, (kernel,), 120)
    assert got is not None, "the forked child's kernel threads never ran"
    assert got[0] == [(0, 5), (0, 4)] and np.array_equal(got[1], out)


# a kernel whose chunk 0 is interrupted while chunk 1 is still running (for an hour, as
# a first run's numba compile is deaf to a Ctrl-C for up to a minute)
_STUCK = """
import sys, time
from serdes.kernels.threads import run_chunks

def kernel(j, step):
    if j == 0:
        time.sleep(0.5)
        raise KeyboardInterrupt
    time.sleep(3600)

try:
    run_chunks(kernel, (), 2, 2)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def test_an_interrupted_caller_does_not_wait_for_the_kernel_threads():
    """The pool's threads are daemons: a caller stopped by a Ctrl-C ends while a chunk is
    still running (a ThreadPoolExecutor's threads are joined at exit: the process waited
    for the chunk, 37-48 s for a first serdes com's compile). The time limit only guards
    against that hang."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _STUCK], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 130 and out.stdout == "interrupted\n", out.stderr


def _com_in_child(path, name, ov, conn):
    conn.send(compute_com(path, preset=name, overrides=ov).cases[0].com_db)
    conn.close()


@pytest.mark.parametrize("name, ov", [
    ("802.3dj-kr", {"g_dc": "-12", "g_dc2": "-2", "tx_step": "0,0,0.17,0.1,0,0",
                    "mlsd": "false"}),
    ("802.3ck-kr", {"g_dc": "-8", "g_dc2": "-2"})])     # its floating DFE taps' kernel
def test_com_runs_in_a_child_forked_after_a_com_run(channels_dir, name, ov):
    """A worker forked after a COM run (multiprocessing's default start on Linux) computes
    the same COM. With the kernels compiled parallel=True, GNU OpenMP ended such a
    child ("fork() called from a process already using GNU OpenMP")."""
    import multiprocessing as mp

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork on this platform")
    path = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_4in_Meg7_THRU.s4p"
    here = compute_com(path, preset=name, overrides=ov).cases[0].com_db
    got, code = _in_forked_child(_com_in_child, (path, name, ov), 300)
    assert got == here, f"the forked child gave {got} (exit code {code})"


@pytest.mark.parametrize("quant", [True, False])
def test_the_search_reports_where_it_is(quant):
    """compute_com(stage=...): the RX FFE search names its CTLE setting in the bound pass
    (and without the quantization noise, its one pass), then the candidates evaluated
    exactly against those still open; the result is the run's without it."""
    from serdes.com.columns import channel_set

    thru = channel_set("loss", "", "12,34", 20.0, 0.24, preset("802.3dj-kr").fb_gbd * 1e9)[0]
    ov = ["g_dc=-12,-10", "g_dc2=-2", "tx_step=0,0,0.17,0.1,0,0", "mlsd=false"]
    ov += [] if quant else ["n_qb=0"]
    seen = []
    res = compute_com(thru, preset="802.3dj-kr", overrides=ov, stage=seen.append)
    ref = compute_com(thru, preset="802.3dj-kr", overrides=ov)
    a, b = res.as_dict(), ref.as_dict()
    a.pop("elapsed_s"), b.pop("elapsed_s")
    assert json.dumps(a) == json.dumps(b)
    ctle = [s for s in seen if "CTLE" in s]
    head = "bounds " if quant else ""
    assert ctle == [f"{head}0/2 CTLE", f"{head}1/2 CTLE"] * 2     # per package case
    exact = [s for s in seen if s.startswith("exact ")]
    assert bool(exact) == quant and len(seen) == len(ctle) + len(exact)
    for s in exact:
        done, most = (int(x.replace(",", "")) for x in s[6:].split("/<="))
        assert 1 <= done <= most <= 9 * 2        # 9 TX x 2 CTLE settings per case
