"""COM pulse responses: channel files with the Annex 93A packages, on the COM time grid.

Steps (Annex 93A.1.4-93A.1.5, and what the IEEE COM reference code does to get a
measured channel onto its grid):

1. The differential 2-port (SDD11, SDD12, SDD21, SDD22) of each file, ports "12,34"
   (:mod:`serdes.channel.touchstone_io`), is cascaded at the file's own frequencies
   with the TX-side package (victim TX, NEXT or FEXT lengths) and the RX package
   (:class:`serdes.analog.package.Package`), with the host boards between them when the
   preset includes them (``include_pcb``, :mod:`serdes.com.board`), and terminated by R_d at both dies
   (eq. 93A-18, :func:`~serdes.analog.package.terminated_transfer`).
2. The voltage transfer times the TX edge filter H_t (eq. 93A-46) and the reference
   receiver filter H_r (eq. 93A-20, :mod:`serdes.analog.butterworth`) is put on the
   COM grid (f = 0, df, ..., M f_b / 2): magnitude linear in f, continued to DC by a
   line fitted to the first 10 points and above the data toward the value a line
   fitted to the upper half reaches at the grid's end (never above the last point);
   unwrapped phase linear in f, continued at the ends with the mean group delay of
   the first 50 / last 51 points (outliers beyond one standard deviation dropped).
   The impulse response is cut after its last sample above 1e-3 of its peak.
3. A pulse is ``irfft(M sinc(f T) P(f) H_ctf(f) H_ffe(f)) * A`` (eq. 93A-24), M samples
   per UI over 1/df.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from serdes.analog.butterworth import butterworth_response
from serdes.analog.ctle import ctle_ieee
from serdes.analog.package import Package, PackageParams, cascade_s, terminated_transfer
from serdes.channel.touchstone import checked_sigma_max
from serdes.channel.touchstone_io import load_touchstone, parse_ports
from serdes.com.board import with_boards
from serdes.com.params import ComParams
from serdes.errors import FileFormatError

__all__ = ["ComGrid", "Channel", "read_channel", "package_s", "channel_vtf", "ctle", "pulse"]

IR_TRUNC = 1e-3


@dataclass(frozen=True)
class ComGrid:
    fb_hz: float
    m: int
    f_step_hz: float

    @property
    def ui(self) -> float:
        return 1.0 / self.fb_hz

    @property
    def n_t(self) -> int:
        return 2 * (len(self.f) - 1)

    @property
    def f(self) -> np.ndarray:
        tstep = self.ui / self.m
        fmax = 0.5 / tstep
        return np.arange(0.0, fmax + self.f_step_hz / 2, self.f_step_hz)

    @classmethod
    def of(cls, p: ComParams) -> "ComGrid":
        return cls(p.fb_gbd * 1e9, int(p.samples_per_ui), p.f_step_ghz * 1e9)


@dataclass(frozen=True)
class Channel:
    path: str
    kind: str            # "thru", "fext" or "next"
    f_hz: np.ndarray
    sdd: np.ndarray      # (nf, 2, 2) [[SDD11, SDD12], [SDD21, SDD22]]


def read_channel(path, kind: str) -> Channel:
    p, f, s = load_touchstone(path)
    # with the packages a thru scaled by 10 .. 1e100 gave COMs of -31 to -37 dB, by 1e200
    # an IndexError (synthetic test channels such as 1 + e^(-j 2 pi f T) reach 2)
    checked_sigma_max(p, s)
    if s.shape[1] == 2:
        sdd = s.astype(np.complex128)
    else:
        a, b, c, d = parse_ports("12,34")
        pairs = ((a, c), (b, d))
        sdd = np.empty((s.shape[0], 2, 2), dtype=np.complex128)
        for i, (ip, im) in enumerate(pairs):
            for j, (jp, jm) in enumerate(pairs):
                sdd[:, i, j] = 0.5 * (s[:, ip, jp] - s[:, ip, jm] - s[:, im, jp] + s[:, im, jm])
    if kind == "thru" and abs(sdd[0, 1, 0]) < 10 ** (-10 / 20):
        raise FileFormatError(f"{p}: not a thru: |SDD21| at {f[0] / 1e9:g} GHz is "
                              f"{20 * np.log10(max(abs(sdd[0, 1, 0]), 1e-300)):.1f} dB, a thru "
                              "needs at least -10 dB (ports 1->2 and 3->4 expected)")
    return Channel(str(p), kind, f, sdd)


def package_params(p: ComParams, lengths) -> PackageParams:
    lengths = tuple(float(x) for x in lengths)
    z_c = tuple(p.z_c[: len(lengths)]) if len(p.z_c) >= len(lengths) else tuple(p.z_c) + (p.z_c[-1],) * (len(lengths) - len(p.z_c))
    return PackageParams(c_d_nf=p.c_d, l_s_nh=p.l_s if len(p.l_s) == len(p.c_d) else (p.l_s[0],) * len(p.c_d),
                         c_b_nf=p.c_b, c_p_nf=p.c_p, r_d_ohm=p.r_d, z_c_ohm=z_c, z_p_mm=lengths,
                         gamma0_per_mm=p.gamma0, a1=p.a1, a2=p.a2, tau_ns_per_mm=p.tau, r0_ohm=p.r0)


def package_s(p: ComParams, lengths, side: str, f: np.ndarray) -> np.ndarray:
    pp = package_params(p, lengths)
    if side == "rx" and not p.rx_package:   # no RX package: the channel's port at R_d
        pp = replace(pp, c_d_nf=(0.0,) * len(pp.c_d_nf), l_s_nh=(0.0,) * len(pp.l_s_nh),
                     c_b_nf=0.0, c_p_nf=0.0, z_p_mm=(0.0,) * len(pp.z_p_mm))
    return Package(pp, side).s_matrix(f)


def h_t(p: ComParams, f: np.ndarray) -> np.ndarray:
    """TX edge filter, eq. 93A-46 (f in GHz, T_r in ns); 1 when T_r = 0."""
    return np.exp(-2.0 * (np.pi * (f / 1e9) * p.t_r_ns / 1.6832) ** 2)


def h_r(p: ComParams, f: np.ndarray) -> np.ndarray:
    return butterworth_response(f, p.f_r * p.fb_gbd * 1e9)


def _interp_extrap(x, y, xq):
    yq = np.interp(xq, x, y)
    lo, hi = xq < x[0], xq > x[-1]
    yq[lo] = y[0] + (xq[lo] - x[0]) * (y[1] - y[0]) / (x[1] - x[0])
    yq[hi] = y[-1] + (xq[hi] - x[-1]) * (y[-1] - y[-2]) / (x[-1] - x[-2])
    return yq


def _trend(x):
    if len(x) < 3:
        return float(np.mean(x))
    keep = np.abs(x - np.median(x)) < np.std(x, ddof=1)
    return float(np.mean(x[keep])) if keep.any() else float(np.mean(x))


def to_grid(h: np.ndarray, fin: np.ndarray, fout: np.ndarray) -> np.ndarray:
    """A transfer function at ``fin`` on the grid ``fout`` (see the module docstring)."""
    eps = np.finfo(float).eps
    mag = np.maximum(np.abs(h), eps)
    fx, mx = fin, mag
    if fin[0] > 0:
        c = np.polyfit(fin[:10], mag[:10], 1)
        fx, mx = np.concatenate(([0.0], fx)), np.concatenate(([np.polyval(c, 0.0)], mx))
    if fin[-1] < fout[-1]:
        mid = int(np.floor(len(fin) / 2 + 0.5)) - 1
        c = np.polyfit(fin[mid:], mag[mid:], 1)
        end = min(max(np.polyval(c, fout[-1]), eps), mag[-1])
        fx, mx = np.concatenate((fx, [fout[-1]])), np.concatenate((mx, [end]))
    mag_i = _interp_extrap(fx, mx, fout)
    ph = np.unwrap(np.angle(h))
    if fin[0] != 0:
        gd = -np.diff(ph) / np.diff(fin)
        lf = _trend(gd[:50])
        for k in range(min(9, len(ph) - 2), -1, -1):
            ph[k] = ph[k + 1] + lf * (fin[k + 1] - fin[k])
        ph_i = _interp_extrap(fin, ph, fout)
        hf = fout > fin[-1]
        if hf.any():
            last = int(np.argmax(hf)) - 1
            ph_i[hf] = ph_i[last] - (fout[hf] - fout[last]) * _trend(gd[-51:])
    else:
        ph_i = _interp_extrap(fin, ph, fout)
    return mag_i * np.exp(1j * ph_i)


#: single-ended reference resistance of the channel files (Touchstone ``R 50``)
FILE_R0 = 50.0


def renormalize(s: np.ndarray, r_old: float, r_new: float) -> np.ndarray:
    """2-port S-parameters (nf, 2, 2) from the real reference ``r_old`` at both ports to
    ``r_new``: S' = (S - G I)(I - G S)^-1, G = (r_new - r_old) / (r_new + r_old)."""
    if r_new == r_old:
        return s
    g = (r_new - r_old) / (r_new + r_old)
    eye = np.eye(2)
    return np.linalg.solve(np.swapaxes(eye - g * s, 1, 2), np.swapaxes(s - g * eye, 1, 2)).swapaxes(1, 2)


def channel_vtf(p: ComParams, grid: ComGrid, ch: Channel, case: dict) -> np.ndarray:
    """P(f) = H_t H21 H_r of a channel with its packages on the COM grid (truncated IR).
    The file's S-parameters are first renormalized to the packages' R_0 (178A-4; a no-op
    at 50 ohm)."""
    f = ch.f_hz
    tx_len = case["tx"] if ch.kind == "thru" else case[ch.kind]
    sdd = renormalize(ch.sdd, FILE_R0, p.r0)
    sdd = with_boards(p, sdd, ch.kind, f)   # host boards (Include PCB), inside the packages
    s = cascade_s(cascade_s(package_s(p, tx_len, "tx", f), sdd), package_s(p, case["rx"], "rx", f))
    g = (p.r_d - p.r0) / (p.r_d + p.r0)
    h21 = terminated_transfer(s, g, g)
    fg = grid.f
    P = to_grid(h_t(p, f) * h21 * h_r(p, f), f, fg)
    h = np.fft.irfft(P)
    a = np.abs(h)
    last = np.nonzero(a > IR_TRUNC * a.max())[0][-1]
    h[last + 1:] = 0.0
    return np.fft.rfft(h)


def ctle(p: ComParams, f: np.ndarray, g_dc: float, g_dc2: float) -> np.ndarray:
    return ctle_ieee(f, g_dc_db=g_dc, g_dc2_db=g_dc2, f_z_hz=p.f_z_ghz * 1e9,
                     f_p1_hz=p.f_p1_ghz * 1e9, f_p2_hz=p.f_p2_ghz * 1e9, f_lf_hz=p.f_lf_ghz * 1e9)


def xsinc(grid: ComGrid) -> np.ndarray:
    return grid.m * np.sinc(grid.ui * grid.f)


def pulse(grid: ComGrid, P: np.ndarray, amplitude: float, hctf=None) -> np.ndarray:
    H = xsinc(grid) * P
    if hctf is not None:
        H = H * hctf
    return np.fft.irfft(H) * amplitude
