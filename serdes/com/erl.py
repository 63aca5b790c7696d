"""Effective return loss (ERL, IEEE 802.3 Annex 93A.5, eqs. 93A-57..65) of a channel's
ports, computed the way the IEEE COM code (``get_TDR``, 802.3ck sheets) computes it.

ERL rates a port's reflection by the interference it would cause at a receiver of the
link's kind, the way COM rates crosstalk:

1. Pulse TDR (PTDR): the port's differential reflection S_dd,ii (the file's 100 ohm
   differential reference, Z_t = 50 ohm: no renormalization) times the TDR source edge,
   a Gaussian of 20-80 % time TR_TDR (``erl_tr_tdr_ns``, 0.01 ns in every sheet; not the
   transmitter's T_r), exp(-2 (pi f TR_TDR / 1.6832)^2), delayed by 3 TR_TDR (to make
   it nearly causal) and by 500 ps (room for its pre-cursor), times the reference
   receiver filter H_r (Butterworth at f_r f_b) and the Tukey window (1 below f_r f_b,
   a raised cosine from f_r f_b to 0 at f_b; ``erl_tukey``). Put on a grid of the
   file's own frequency step up to M f_b / 2 (``pulse.to_grid``, as for the channels),
   inverse FFT, the impulse response cut after its last sample above 1e-5 of its peak,
   the time axis shifted back by 500 ps and kept from TR_TDR to N UI + T_fx; the pulse
   is the running sum of M impulse samples (a 1-UI rectangle ending at t).
2. Gating (93A-58..62 with the code's 3 TR_TDR offset): with
   x = (t - T_fx - 3 TR_TDR) / UI, nothing before x = 0; from x = 0 to the first sample
   past x = N_bx + 1 the reflection is weighted by
   G_rr = rho_x (1 + rho_x) exp(-(x - N_bx - 1)^2 / (N_bx + 1)^2) and, when N_bx > 0
   and beta_x != 0, G_loss = 10^(beta_x (t - t_k) / 20) (beta_x in dB/ns, t_k the end of
   that span); after it the weight is 1.
3. The phase: of the M sampling phases (samples once per UI), the one whose samples
   have the largest norm (the code's ``ERL_FOM = 1``; first one on ties).
4. Those samples, each times an equiprobable L-level symbol, summed: the distribution
   on bins of ``erl_bin`` volts (10 x the sheets' PDF bin size 1e-5; samples not above
   one bin dropped, each level value rounded to its bin), and R, its value at
   cumulative probability DER_0. ERL = -20 log10 |R| dB; infinite (JSON null) when R = 0.
5. ``erl_tdr_w_txpkg`` (the C2M sheet's TDR_W_TXPKG = 1): port 2 looks into the channel
   followed by the TX package of the first package case, its die end terminated by
   2 R_d, and only port 2 is rated (the code reports port 1 as NaN); port 1 is still
   computed on the channel alone and shown, not judged.
6. Pass: ERL >= ``erl_limit_db`` (the sheets' ERL Pass threshold: KR and C2C 9.7 dB,
   CR 8.25 dB, C2M 7.3 dB); 0: not judged.

Not followed: the host boards (the sheets' SHOW_BRD = 0: the channel file without
them, as here) and the code's automatic fixture delay (AUTO_TFX, off in the sheets).
When the file's frequency step gives a time window shorter than the gate span
(500 ps + T_fx + N UI + 2 UI), a finer step is used (the IEEE code would cut the span).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from serdes.com.noise import delta_pmf
from serdes.com.params import ComParams
from serdes.analog.package import cascade_s
from serdes.com.pulse import ComGrid, FILE_R0, h_r, package_s, read_channel, renormalize, to_grid

__all__ = ["ErlResult", "compute_erl", "erl_of_reflection", "gate", "ptdr", "tdr_grid",
           "tukey", "TDR_DELAY_S", "IR_TRUNC_ERL"]

#: the TDR source's extra delay (the code's 500 ps), removed again from the time axis
TDR_DELAY_S = 500e-12
#: the impulse response is cut after its last sample above this fraction of its peak
IR_TRUNC_ERL = 1e-5


@dataclass
class ErlResult:
    port: int
    erl_db: float            # inf when the gated reflection is zero
    r_der0: float            # R_eff value at DER_0 (V per V of pulse)
    phase: int               # sampling phase (of samples_per_ui), from the first sample at TR_TDR
    reff: np.ndarray         # gated, weighted PTDR, from t = TR_TDR
    limit_db: float | None = None   # the pass limit; None: not judged
    t0_s: float = 0.0        # time of reff[0] (the first grid time at or after TR_TDR)
    judged: bool = True      # False: a port the preset does not rate (TDR_W_TXPKG port 1)

    @property
    def passed(self) -> bool | None:
        if self.limit_db is None or not self.judged:
            return None
        return bool(self.erl_db >= self.limit_db)

    def as_dict(self) -> dict:
        return {"port": self.port, "erl_db": self.erl_db, "r_der0": self.r_der0,
                "limit_db": self.limit_db if self.judged else None, "pass": self.passed,
                "judged": self.judged}


def tukey(f_hz: np.ndarray, f_lo_hz: float, f_hi_hz: float) -> np.ndarray:
    """1 below ``f_lo_hz``, 0.5 + 0.5 cos(pi (f - f_hi) / (f_hi - f_lo) - pi) up to
    ``f_hi_hz``, 0 above (the code's ``Tukey_Window`` with fr = f_r f_b, fb = f_b)."""
    f = np.asarray(f_hz, dtype=float)
    w = np.ones_like(f)
    band = (f >= f_lo_hz) & (f <= f_hi_hz)
    w[band] = 0.5 * np.cos(2 * np.pi * (f[band] - f_hi_hz) / (2 * (f_hi_hz - f_lo_hz)) - np.pi) + 0.5
    w[f > f_hi_hz] = 0.0
    return w


def t_fx_ns(p: ComParams, port: int) -> float:
    """The fixture delay T_fx of a port (``erl_t_fx2_ns`` for port 2 when >= 0)."""
    return p.erl_t_fx2_ns if (port == 2 and p.erl_t_fx2_ns >= 0) else p.erl_t_fx_ns


def tdr_grid(p: ComParams, f_hz: np.ndarray, port: int = 1) -> ComGrid:
    """The file's own frequency step (``f[2] - f[1]``, as the code), rounded so that
    M f_b / 2 is a whole number of steps; finer when its window is too short."""
    fb = p.fb_gbd * 1e9
    m = int(p.samples_per_ui)
    fmax = m * fb / 2
    step = float(f_hz[2] - f_hz[1]) if len(f_hz) > 2 else float(f_hz[-1] - f_hz[0])
    need = TDR_DELAY_S + max(t_fx_ns(p, 1), t_fx_ns(p, 2)) * 1e-9 + (int(p.erl_n_ui) + 2) / fb
    step = min(step, 1.0 / need)
    return ComGrid(fb, m, fmax / round(fmax / step))


def ptdr(p: ComParams, grid: ComGrid, s_ii: np.ndarray, f_hz: np.ndarray, port: int = 1):
    """Pulse TDR of a reflection ``s_ii`` given at ``f_hz``: (t in s from TR_TDR, pulse)."""
    tr = p.erl_tr_tdr_ns * 1e-9
    fb = p.fb_gbd * 1e9
    h_src = (np.exp(-2.0 * (np.pi * f_hz * tr / 1.6832) ** 2)
             * np.exp(-2j * np.pi * f_hz * (TDR_DELAY_S + 3 * tr)))
    h = s_ii * h_src * h_r(p, f_hz)
    if p.erl_tukey:
        h = h * tukey(f_hz, p.f_r * fb, fb)
    if not np.any(h):
        ir = np.zeros(grid.n_t)
    else:
        ir = np.fft.irfft(to_grid(h, f_hz, grid.f), n=grid.n_t)
    a = np.abs(ir)
    last = int(np.nonzero(a > IR_TRUNC_ERL * a.max())[0][-1]) if a.max() > 0 else len(ir) - 1
    ir = ir[: last + 1]
    dt = grid.ui / grid.m
    t = np.arange(len(ir)) * dt - TDR_DELAY_S
    t_end = int(p.erl_n_ui) * grid.ui + t_fx_ns(p, port) * 1e-9
    hit = np.nonzero(t >= t_end)[0]
    end = int(hit[0]) + 1 if len(hit) else len(t)
    start_hit = np.nonzero(t[:end] >= tr)[0]
    start = int(start_hit[0]) if len(start_hit) and start_hit[0] < end - 1 else 0
    ir, t = ir[start:end], t[start:end]
    pulse = np.convolve(ir, np.ones(grid.m))[: len(ir)]
    return t, pulse


def gate(p: ComParams, t_s: np.ndarray, port: int = 1) -> np.ndarray:
    """G_rr G_loss at the times ``t_s`` (the code's ``fctrx``)."""
    ui = 1.0 / (p.fb_gbd * 1e9)
    t0 = t_fx_ns(p, port) * 1e-9 + 3 * p.erl_tr_tdr_ns * 1e-9
    nb1 = p.erl_n_bx + 1
    g = np.ones(len(t_s))
    after = np.nonzero(t_s >= t0)[0]
    ntx = int(after[0]) if len(after) else len(t_s)
    past = np.nonzero(t_s > nb1 * ui + t0)[0]
    ndfex = int(past[0]) if len(past) else len(t_s) - 1
    g[:ntx] = 0.0
    if ntx <= ndfex:
        w = slice(ntx, ndfex + 1)
        x = (t_s[w] - t0) / ui
        gw = p.erl_rho_x * (1 + p.erl_rho_x) * np.exp(-(x - nb1) ** 2 / nb1 ** 2)
        if p.erl_n_bx > 0 and p.erl_beta_x_ghz != 0:
            gw = gw * 10.0 ** (p.erl_beta_x_ghz * (t_s[w] - (nb1 * ui + t0)) * 1e9 / 20.0)
        g[w] = gw
    return g


def der0_value(x: np.ndarray, levels: int, der0: float, ystep: float) -> float:
    """The value at cumulative probability ``der0`` of sum_k x_k a_k, a_k equiprobable on
    the L levels, on bins of ``ystep`` (the code's ``get_pdf_from_sampled_signal``)."""
    x = np.asarray(x, dtype=float)
    if len(x) and x.max() > ystep:
        x = x[np.abs(x) > ystep]
    x = np.where(np.abs(x) < ystep, 0.0, x)
    x = x[x != 0.0]
    if len(x) == 0:
        return 0.0
    npts = 2 * int(np.ceil(np.abs(x) / ystep).sum() + 2) + 1
    pmf = delta_pmf(x, levels, npts, ystep)
    y = (np.arange(npts) - npts // 2) * ystep
    cdf = np.cumsum(pmf)
    return float(y[np.nonzero(cdf >= der0 * cdf[-1])[0][0]])


def erl_of_reflection(p: ComParams, grid: ComGrid, s_ii: np.ndarray, f_hz: np.ndarray,
                      port: int = 1) -> ErlResult:
    t, pulse = ptdr(p, grid, s_ii, f_hz, port)
    reff = pulse * gate(p, t, port)
    m = grid.m
    norms = [float(np.linalg.norm(reff[k::m])) for k in range(m)]
    ph = int(np.argmax(norms))
    r = der0_value(reff[ph::m], p.levels, p.der0, p.erl_bin)
    erl = -20.0 * math.log10(abs(r)) if r != 0 else math.inf
    limit = p.erl_limit_db if p.erl_limit_db > 0 else None
    return ErlResult(port, erl, r, ph, reff, limit_db=limit, t0_s=float(t[0]))


def port2_reflection(p: ComParams, sdd: np.ndarray, f_hz: np.ndarray) -> np.ndarray:
    """S_dd22 seen by the TDR: the channel alone, or (``erl_tdr_w_txpkg``) the channel
    behind the TX package of the first case, the package's die end at 2 R_d."""
    if not p.erl_tdr_w_txpkg:
        return sdd[:, 1, 1]
    s = cascade_s(package_s(p, p.cases[0]["tx"], "tx", f_hz), renormalize(sdd, FILE_R0, p.r0))
    g = (p.r_d - p.r0) / (p.r_d + p.r0)
    s22 = s[:, 1, 1] + s[:, 1, 0] * s[:, 0, 1] * g / (1.0 - s[:, 0, 0] * g)
    gz = (FILE_R0 - p.r0) / (FILE_R0 + p.r0)           # back to the TDR's Z_t = 50 ohm
    return (s22 - gz) / (1.0 - gz * s22)


def compute_erl(path, p: ComParams) -> list[ErlResult]:
    """ERL of both ports of a thru file (ports 1->2 and 3->4 of a 4-port, or a 2-port)."""
    ch = read_channel(path, "thru")
    grid = tdr_grid(p, ch.f_hz)
    r1 = erl_of_reflection(p, grid, ch.sdd[:, 0, 0], ch.f_hz, port=1)
    r2 = erl_of_reflection(p, grid, port2_reflection(p, ch.sdd, ch.f_hz), ch.f_hz, port=2)
    if p.erl_tdr_w_txpkg:
        r1.judged = False
    return [r1, r2]
