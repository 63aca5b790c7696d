"""Effective return loss (ERL, IEEE 802.3 Annex 93A.5) of a channel's ports.

ERL rates a port's reflection by the interference it would cause at a receiver of the
link's kind, the same way COM rates crosstalk:

1. Pulse TDR: the port's differential reflection S_dd,ii (the file's reference
   impedance) times the TX edge filter H_t (eq. 93A-46, T_r of the preset) and the
   reference receiver filter H_r (Butterworth at f_r f_b), put on the COM grid like a
   channel (``pulse.to_grid``) and driven by a unit 1-UI pulse: PTDR(t), t from the port.
2. Time gating and weighting over N UI (the first N UI of PTDR): nothing before T_fx
   (the part the standard's test fixture accounts for); within the equalizer span
   T_fx <= t < T_fx + (N_bx + 1) UI the reflection is weighted by
   G_rr(t) = rho_x (1 + rho_x) exp(-((t - T_fx)/UI - (N_bx + 1))^2 / (N_bx + 1)^2)
   (a reflection of the far device, rho_x, partly cancelled by the equalizer) and
   G_loss(t) = 10^(beta_x/f_b ((t - T_fx)/UI - (N_bx + 1)) / 20) (the signal loss
   available to a reflection that close); after it both are 1.
3. R_eff(t) = PTDR(t) G_rr(t) G_loss(t), sampled once per UI at the phase of largest
   standard deviation; each sample times an equiprobable L-level symbol, the
   distribution of the sum (``noise.delta_pmf``, as for ISI and crosstalk), and its
   value R at cumulative probability DER_0 (negative).
4. ERL = -20 log10(|R|) dB; infinite (JSON null) when the gated reflection is zero.

Choices: the channel file alone (no package, no termination model), at its own
reference impedance; the preset's T_r and f_r; the distribution bin min(1e-4, max|R_eff|
/ 2000) with samples below one bin dropped (the IEEE code uses a 1e-4 bin). The gating
values (``erl_*`` keys of the preset, overridable with ``--set``; T_fx per port) of the
802.3ck presets are those of their COM configuration sheets (rho_x, beta_x, N_bx, fixture
delay, N); the other presets keep provisional defaults. When N UI exceed half the COM
time window, ERL alone uses a finer frequency step (a window of 2 N UI). Not followed
from the IEEE code: its TDR source edge (Gaussian, TR_TDR 0.01 ns, instead of T_r), its
gate start 3 TR_TDR after T_fx, the Tukey window and TDR_W_TXPKG (C2M: TX package in
the TDR).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from serdes.com.noise import delta_pmf
from serdes.errors import ConfigError
from serdes.com.params import ComParams
from serdes.com.pulse import ComGrid, h_r, h_t, read_channel, to_grid, xsinc

__all__ = ["ErlResult", "compute_erl", "erl_of_reflection", "gate", "ptdr"]


@dataclass
class ErlResult:
    port: int
    erl_db: float            # inf when the gated reflection is zero
    r_der0: float            # R_eff value at DER_0 (V per V of pulse)
    phase: int               # sampling phase (of samples_per_ui)
    reff: np.ndarray         # gated, weighted PTDR (N UI x M samples)

    def as_dict(self) -> dict:
        return {"port": self.port, "erl_db": self.erl_db, "r_der0": self.r_der0}


def ptdr(p: ComParams, grid: ComGrid, s_ii: np.ndarray, f_hz: np.ndarray) -> np.ndarray:
    """Pulse TDR of a reflection ``s_ii`` given at ``f_hz`` (unit 1-UI pulse)."""
    P = to_grid(h_t(p, f_hz) * s_ii * h_r(p, f_hz), f_hz, grid.f)
    return np.fft.irfft(xsinc(grid) * P)


def t_fx_ns(p: ComParams, port: int) -> float:
    """The fixture delay T_fx of a port (``erl_t_fx2_ns`` for port 2 when >= 0)."""
    return p.erl_t_fx2_ns if (port == 2 and p.erl_t_fx2_ns >= 0) else p.erl_t_fx_ns


def gate(p: ComParams, grid: ComGrid, n: int, port: int = 1) -> np.ndarray:
    """G_rr(t) G_loss(t) at the first ``n`` samples of the COM grid (step UI / M)."""
    t_ui = np.arange(n) / grid.m                     # time in UI
    tfx = t_fx_ns(p, port) * p.fb_gbd                # T_fx in UI
    nb1 = p.erl_n_bx + 1
    u = t_ui - tfx
    g = np.ones(n)
    g[u < 0] = 0.0
    w = (u >= 0) & (u < nb1)
    g_rr = p.erl_rho_x * (1 + p.erl_rho_x) * np.exp(-(u[w] - nb1) ** 2 / nb1 ** 2)
    g_loss = 10.0 ** (p.erl_beta_x_ghz / p.fb_gbd * (u[w] - nb1) / 20.0)
    g[w] = g_rr * g_loss
    return g


def erl_of_reflection(p: ComParams, grid: ComGrid, s_ii: np.ndarray, f_hz: np.ndarray,
                      port: int = 1) -> ErlResult:
    m = grid.m
    n = int(p.erl_n_ui) * m
    if n > grid.n_t // 2:
        raise ConfigError(f"com: erl_n_ui = {p.erl_n_ui:g} UI is longer than half the COM time "
                         f"window ({grid.n_t // 2 // m} UI at f_step_ghz = {p.f_step_ghz:g})")
    reff = ptdr(p, grid, s_ii, f_hz)[:n] * gate(p, grid, n, port)
    sd = [np.std(reff[k::m]) for k in range(m)]
    ph = int(np.argmax(sd))
    x = reff[ph::m]
    peak = float(np.max(np.abs(x)))
    if peak == 0.0:
        return ErlResult(port, math.inf, 0.0, ph, reff)
    ystep = min(1e-4, peak / 2000.0)
    x = x[np.abs(x) > ystep]
    npts = 2 * int(np.ceil(np.abs(x) / ystep).sum() + 2) + 1
    pmf = delta_pmf(x, p.levels, npts, ystep)
    y = (np.arange(npts) - npts // 2) * ystep
    cdf = np.cumsum(pmf)
    r = float(y[np.nonzero(cdf >= p.der0 * cdf[-1])[0][0]])
    erl = -20.0 * math.log10(-r) if r < 0 else math.inf
    return ErlResult(port, erl, r, ph, reff)


def compute_erl(path, p: ComParams) -> list[ErlResult]:
    """ERL of both ports of a thru file (ports 1->2 and 3->4 of a 4-port, or a 2-port)."""
    ch = read_channel(path, "thru")
    grid = ComGrid.of(p)
    if int(p.erl_n_ui) * grid.m > grid.n_t // 2:
        # a time window of at least 2 N UI (the sheets' N reaches 4500 UI, longer than
        # half the 100 ns of the 10 MHz COM grid): a finer frequency step for ERL only
        grid = ComGrid(grid.fb_hz, grid.m, grid.fb_hz / (2.0 * int(p.erl_n_ui) + 2.0))
    return [erl_of_reflection(p, grid, ch.sdd[:, i, i], ch.f_hz, port=i + 1) for i in (0, 1)]
