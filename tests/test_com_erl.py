"""Effective return loss (serdes/com/erl.py, Annex 93A.5) against closed forms: a matched
port has no reflection (ERL at the numerical floor, > 200 dB); one frequency-flat
reflection Gamma at a known delay gives ERL = -20 log10(Gamma sum_K |p_k G_k|) over the K
largest samples (L^-K >= DER_0) up to the sum of the other samples, with p the reference
pulse (computed here by direct integration of its spectrum) and G the gate written out
from the standard's formulas."""

from __future__ import annotations

import dataclasses
import json
import numpy as np
import pytest

from serdes.cli import main as cli_main
from serdes.com.erl import compute_erl
from serdes.com.params import preset

GAMMA = 0.05


def _write_reflection(path, f_ghz, s11, s22=None):
    s22 = np.zeros_like(s11) if s22 is None else s22
    with open(path, "w") as fh:
        fh.write("# GHz S RI R 50\n")
        for f, a, d in zip(f_ghz, s11, s22):
            fh.write(f"{f:.6f} {a.real:.12e} {a.imag:.12e} 1 0 1 0 {d.real:.12e} {d.imag:.12e}\n")
    return path


def _params(**kw):
    base = dict(t_r_ns=0.0, f_r=2.0, f_step_ghz=0.05, erl_n_ui=120, erl_t_fx_ns=0.0,
                erl_beta_x_ghz=0.0, erl_n_bx=12, erl_rho_x=0.618)
    base.update(kw)
    return dataclasses.replace(preset("802.3ck-kr"), **base)


def _butterworth4(f, fc):
    s = 1j * f / fc
    poles = np.exp(1j * np.pi * (2 * np.arange(1, 5) + 4 - 1) / 8)
    return 1.0 / np.prod([s - pk for pk in poles], axis=0)


def _reference_pulse(p, t_ui):
    """Unit 1-UI pulse through H_t and the 4th-order Butterworth H_r, band-limited to the
    COM grid's Nyquist frequency, by direct integration at the times t_ui (UI)."""
    fb = p.fb_gbd
    f = np.arange(0.0, p.samples_per_ui * fb / 2, 0.02)           # GHz
    H = np.sinc(f / fb) / fb * _butterworth4(f, p.f_r * fb)
    H = H * np.exp(-2.0 * (np.pi * f * p.t_r_ns / 1.6832) ** 2)
    e = np.exp(2j * np.pi * np.outer(t_ui / fb, f))
    return 2 * np.trapezoid((H * e).real, f, axis=1)


def _gate(p, t_ui):
    u = t_ui - p.erl_t_fx_ns * p.fb_gbd
    nb1 = p.erl_n_bx + 1
    g = np.where(u < 0, 0.0, 1.0)
    w = (u >= 0) & (u < nb1)
    g[w] = (p.erl_rho_x * (1 + p.erl_rho_x) * np.exp(-((u[w] - nb1) / nb1) ** 2)
            * 10 ** (p.erl_beta_x_ghz / p.fb_gbd * (u[w] - nb1) / 20))
    return g


@pytest.mark.parametrize("delay_ui, kw", [
    (60.0, {}),                                                   # beyond the gate: G = 1
    (8.0, {"erl_beta_x_ghz": 4.0, "erl_t_fx_ns": 0.02}),          # inside the gate
])
def test_single_reflection_closed_form(tmp_path, delay_ui, kw):
    p = _params(**kw)
    fb = p.fb_gbd
    f = np.arange(0.0, p.samples_per_ui * fb / 2 + 0.05, 0.05)
    s11 = GAMMA * np.exp(-2j * np.pi * f * delay_ui / fb)
    fn = _write_reflection(tmp_path / "refl.s2p", f, s11)
    r1, r2 = compute_erl(fn, p)
    assert r2.erl_db > 200          # matched port: only the eps floor of the grid remains
    m = p.samples_per_ui
    # the reference at the phase the code chose and its neighbours: samples k UI + ph/M
    k = np.arange(int(p.erl_n_ui))
    t = k + r1.phase / m
    x = GAMMA * _reference_pulse(p, t - delay_ui) * _gate(p, t)
    # the K largest samples take their worst values together with probability L^-K >=
    # DER_0, so |R| = sum of the K largest |x| up to the sum of all the others
    K = int(np.floor(np.log(p.der0) / np.log(1.0 / p.levels)))
    a = np.sort(np.abs(x))[::-1]
    top, rest = a[:K].sum(), a[K:].sum()
    ystep = min(1e-4, a[0] / 2000)
    tol = rest + (a > ystep / 2).sum() * ystep / 2 + 2 * ystep
    assert top - tol <= -r1.r_der0 <= top + tol
    erl_cf = -20 * np.log10(top)
    tol_db = -20 * np.log10(1 - tol / top)
    assert abs(r1.erl_db - erl_cf) <= tol_db
    assert tol_db < 0.05
    # the phase of largest spread: no other phase of the reference spreads more
    sds = [np.std(GAMMA * _reference_pulse(p, k + j / m - delay_ui) * _gate(p, k + j / m))
           for j in range(0, m, 8)]
    assert np.std(x) >= max(sds) * (1 - 1e-2)


def test_reflection_before_t_fx_is_gated_out(tmp_path):
    p = _params(erl_t_fx_ns=0.5)                     # 26.6 UI; reflection at 5 UI
    fb = p.fb_gbd
    f = np.arange(0.0, p.samples_per_ui * fb / 2 + 0.05, 0.05)
    fn = _write_reflection(tmp_path / "early.s2p", f, GAMMA * np.exp(-2j * np.pi * f * 5 / fb))
    r1, _ = compute_erl(fn, p)
    assert r1.erl_db > 60                            # only the filters' far tails remain


def test_cli_erl_json_and_errors(tmp_path, capsys):
    p = preset("802.3ck-kr")
    fb = p.fb_gbd
    f = np.arange(0.0, 40.0, 0.05)
    fn = _write_reflection(tmp_path / "r.s2p", f, GAMMA * np.exp(-2j * np.pi * f * 60 / fb))
    assert cli_main(["com", str(fn), "--erl", "--json", "--set", "g_dc=-6",
                     "--set", "g_dc2=0", "--set", "tx_min=0,0,0,0", "--set", "tx_max=0,0,0,0"]) == 0
    d = json.loads(capsys.readouterr().out)
    ports = {e["port"]: e["erl_db"] for e in d["erl"]}
    assert ports[2] > 200 and 20 < ports[1] < 40
    assert cli_main(["com", str(fn), "--erl", "--set", "erl_rho_x=2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "erl_rho_x" in err[0] and "[0, 1]" in err[0]
