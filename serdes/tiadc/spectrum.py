"""The sine test of an ADC (IEEE 1241 style): a coherently sampled sine through the
modelled converter, its FFT, SNDR, ENOB and the interleaving spurs.

Coherent sampling: ``n`` samples hold exactly ``M`` periods of the input (M odd and
prime to n), so the sine falls in one FFT bin and no window is needed; ``n`` is a
multiple of the lane count, so the interleaving images k fs/N +- f_in and the offset
tones k fs/N fall on bins too. SNDR is the sine's power over everything else but DC;
ENOB = (SNDR - 1.76 dB + 20 log10(A_fs / A)) / 6.02, referred to a full-scale sine of
amplitude A_fs = fullscale_v / 2.
"""

from __future__ import annotations

import math

import numpy as np

from serdes.errors import ConfigError


def coherent_bin(f_hz: float, fs_hz: float, n: int) -> int:
    """The bin M nearest f_hz with M odd and prime to n, 0 < M < n/2."""
    if not (0 < f_hz < fs_hz / 2):
        raise ConfigError(f"--fin = {f_hz:g} Hz: must lie between 0 and fs/2 = {fs_hz / 2:g} Hz")
    m0 = int(round(f_hz / fs_hz * n))
    for d in range(n):
        for m in (m0 - d, m0 + d):
            if 0 < m < n // 2 and math.gcd(m, n) == 1:
                return m
    raise ConfigError(f"no coherent bin near {f_hz:g} Hz with {n} samples")


def record_length(lanes: int, min_samples: int = 8192) -> int:
    """A multiple of ``lanes`` of at least ``min_samples``: lanes x a power of two."""
    return int(lanes) * (1 << max(0, math.ceil(math.log2(max(min_samples / lanes, 1)))))


def _fold(b: int, n: int) -> int:
    b %= n
    return b if b <= n // 2 else n - b


def analyze(y: np.ndarray, m: int, lanes: int, fs_hz: float, fullscale_v: float,
            amplitude_v: float) -> dict:
    """SNDR, ENOB, SFDR and the interleaving spurs of the record ``y`` (sine in bin m)."""
    n = y.shape[0]
    spec = np.fft.rfft(y) / n
    p = np.abs(spec) ** 2
    p[1:(n + 1) // 2] *= 2.0          # one-sided power of each real tone
    p_sig = float(p[m])
    rest = p.copy()
    rest[[0, m]] = 0.0
    p_nd = float(rest.sum())
    sndr = 10 * np.log10(p_sig / p_nd) if p_nd > 0 else math.inf
    enob = (sndr - 1.76 + 20 * np.log10((fullscale_v / 2) / amplitude_v)) / 6.02
    spurs, seen = [], {0, m}
    step = n // lanes
    for k in range(1, lanes):
        for kind, b in (("image", k * step - m), ("image", k * step + m), ("offset", k * step)):
            fb = _fold(b, n)
            if fb in seen:
                continue
            seen.add(fb)
            spurs.append({"f_hz": fb * fs_hz / n, "dbc": _db(p[fb] / p_sig), "kind": kind,
                          "k": k})
    spurs.sort(key=lambda s: s["f_hz"])
    sfdr = -_db(float(rest.max()) / p_sig) if rest.max() > 0 else math.inf
    return {"sndr_db": float(sndr), "enob": float(enob), "sfdr_db": float(sfdr),
            "signal_dbfs": _db(p_sig * 2 / (fullscale_v / 2) ** 2),
            "f_in_hz": m * fs_hz / n, "fs_hz": fs_hz, "samples": n, "spurs": spurs,
            "power": p}


def predicted_spurs(adc, m: int, n: int, fs_hz: float, amplitude_v: float) -> dict[int, float]:
    """The interleaving spurs' levels (dBc) in closed form, by bin (sine in bin m of n).

    Lane l passes the sine as c_l = g_l H_l(f_in) e^{j 2 pi f_in tau_l}; with C_q the DFT
    of c over the lanes, y holds a tone of amplitude A |C_q| / N at f_in + q fs/N (q = 0:
    the signal), and the offsets' DFT O_q gives tones 2 |O_q| / N at q fs/N (at q = N/2 the
    sequence +-|O_q| / N, of power |O_q|^2 / N^2). Two lanes with gains 1 +- dg/2 give
    20 log10(dg / 2), skews +-dt/2 20 log10(tan(2 pi f_in dt / 2)) ~ 20 log10(2 pi f_in
    dt / 2), at fs/2 - f_in (the two-channel formulas of Kurosawa et al., IEEE TCAS-I
    48(3) 2001, and Vogel, IEEE TIM 54(1) 2005)."""
    lanes, step = adc.lanes, n // adc.lanes
    f_in = m * fs_hz / n
    h = adc.lane_th_absolute(np.array([f_in]))[:, 0]
    c = adc.gains * h * np.exp(1j * 2 * np.pi * f_in * adc.skews_s)
    cq = np.fft.fft(c)
    oq = np.fft.fft(adc.offsets_v)
    signal = amplitude_v * abs(cq[0]) / lanes
    out: dict[int, float] = {}
    for q in range(1, lanes):
        out[_fold(m + q * step, n)] = _db((abs(cq[q]) / abs(cq[0])) ** 2)
    for q in range(1, lanes // 2 + 1):
        # power of the real tone: (2|O_q|/N)^2 / 2, or (|O_q|/N)^2 at fs/2 (+-1 samples)
        power = (abs(oq[q]) / lanes) ** 2 * (1.0 if 2 * q == lanes else 2.0)
        out.setdefault(_fold(q * step, n), _db(power / (signal ** 2 / 2)))
    return out


def _db(x: float) -> float:
    return float(10 * np.log10(x)) if x > 0 else -math.inf


def sine_test(adc, fs_hz: float, f_in_hz: float, *, amplitude_dbfs: float = -1.0,
              n: int | None = None, seed: int = 1, aperture: bool = True) -> dict:
    """A coherent sine through ``adc`` (a :class:`serdes.tiadc.model.TiAdc`): T/H, skew
    and aperture jitter on the analog sine, then lane gain, offset, ENOB noise and
    quantization. Returns :func:`analyze`'s dict (``f_in_hz`` is the coherent frequency
    used)."""
    lanes = adc.lanes
    n = n or record_length(lanes)
    if n % lanes:
        raise ConfigError(f"record length {n} is not a multiple of adc.lanes = {lanes}")
    m = coherent_bin(f_in_hz, fs_hz, n)
    f = m * fs_hz / n
    amp = adc.fullscale_v / 2 * 10 ** (amplitude_dbfs / 20)
    g = np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed))))
    jit = None
    if aperture and adc.aperture_jitter_s > 0:
        jit = adc.aperture_jitter_s * g.standard_normal(n)
    if adc.supply is not None and adc.supply.jitter_active:
        jit = (0 if jit is None else jit) + adc.supply.delay_s(0, n)
    x = adc.sample_sine(amp, f, fs_hz, n, phase_rad=0.3, jitter_s=jit)
    y = adc.convert(x, g.standard_normal(n), 0)
    out = analyze(y, m, lanes, fs_hz, adc.fullscale_v, amp)
    pred = predicted_spurs(adc, m, n, fs_hz, amp)
    for sp in out["spurs"]:
        sp["predicted_dbc"] = pred.get(int(round(sp["f_hz"] / fs_hz * n)), -math.inf)
    return out
