"""The sampled forms every engine reads: the pulse response and the receiver noise.

:class:`Pulse` is one symbol's response on the fine grid with its symbol-spaced samples
(:func:`trim_pulse` cuts it to the UIs that matter); :class:`Noise` is the noise at the
ADC input as its symbol-spaced autocorrelation and a colouring FIR (:func:`noise_model`
derives both from a one-sided PSD). :class:`serdes.link.Link` builds them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TRIM_TOL = 1e-4    # pulse UIs below this fraction of the peak are trimmed at the ends


@dataclass(frozen=True)
class Pulse:
    """A pulse response on the fine grid, with its symbol-spaced samples.

    ``fine[phase + j*m]`` is the j-th symbol-spaced sample ``taps[j]``; the main
    cursor is ``taps[cursor]``. Units: volts at the ADC input per unit symbol value.
    """

    fine: np.ndarray
    m: int
    phase: int
    cursor: int
    dropped_energy: float  # energy fraction trimmed away
    dropped_peak: float = 0.0  # largest |p| in a UI left out, as a fraction of the peak

    @property
    def n_ui(self) -> int:
        return self.fine.shape[0] // self.m

    @property
    def taps(self) -> np.ndarray:
        return np.ascontiguousarray(self.fine[self.phase::self.m][: self.n_ui])

    def at_offset(self, offset_fine: float) -> np.ndarray:
        """Symbol-spaced samples taken ``offset_fine`` fine samples after the phase."""
        from serdes.kernels.fir import interp_cubic

        pos = self.phase + offset_fine + self.m * np.arange(self.n_ui, dtype=np.float64)
        return interp_cubic(self.fine, pos)

    def slope(self, offset_ui: float = 0.0) -> np.ndarray:
        """Symbol-spaced slope ``offset_ui`` UI after the sampling phase (V per UI),
        central difference over one fine sample."""
        f = offset_ui * self.m
        return (self.at_offset(f + 0.5) - self.at_offset(f - 0.5)) * self.m


@dataclass(frozen=True)
class Noise:
    """Coloured RX noise at the ADC input, sampled at the symbol rate."""

    autocorr: np.ndarray  # R[k], k = 0 .. window_ui - 1 (V^2), circular
    fir: np.ndarray       # symbol-rate FIR g with (g * g~)[k] = R[k] for unit white input

    @property
    def variance(self) -> float:
        return float(self.autocorr[0])


def ui_cells(full: np.ndarray, m: int) -> tuple[np.ndarray, int]:
    """(cells, c0): the largest |sample| of each UI cell of a fine-grid pulse, cell j the
    m samples centred on the sampling instant (the peak's fine phase) + j m, circularly
    from the phase - m/2; c0 the peak's cell."""
    ipk = int(np.argmax(full))
    start0 = ipk % m - m // 2
    n_ui_all = full.shape[0] // m
    cells = np.max(np.abs(np.roll(full, -start0)[: n_ui_all * m].reshape(n_ui_all, m)), axis=1)
    return cells, ipk // m


def trim_pulse(full: np.ndarray, m: int, max_ui: int, tol: float = TRIM_TOL,
               max_pre: int | None = None) -> Pulse:
    """Cut a fine-grid pulse to the UIs around its peak that matter.

    The sampling phase is the fine-grid position of the peak (the phase that
    maximizes the main cursor). UIs are kept while their largest sample is at least
    ``tol`` of the peak; at most ``max_ui`` UIs, trimming pre-cursors first, and at
    most ``max_pre`` (default ``max_ui // 4``) UIs before the cursor.
    """
    n_ui_all = full.shape[0] // m
    ipk = int(np.argmax(full))
    phase = ipk % m
    half = m // 2
    start0 = phase - half
    # UI cell j: the m samples from start0 + j*m on, circularly (centred on its instant)
    cells, c0 = ui_cells(full, m)
    peak = full[ipk]
    big = np.nonzero(cells >= tol * peak)[0]
    first, last = int(big[0]), int(big[-1])
    first = max(first, c0 - (max_ui // 4 if max_pre is None else max_pre))
    last = min(last, first + max_ui - 1)
    n_ui = last - first + 1
    start = start0 + first * m
    idx = (start + np.arange(n_ui * m)) % full.shape[0]
    fine = np.ascontiguousarray(full[idx])
    dropped = 1.0 - float(fine @ fine) / float(full @ full)
    out = np.concatenate([cells[:first], cells[last + 1:]]) if n_ui < n_ui_all else cells[:0]
    dropped_peak = float(np.max(out)) / peak if out.size else 0.0
    return Pulse(fine=fine, m=m, phase=half, cursor=c0 - first, dropped_energy=max(dropped, 0.0),
                 dropped_peak=dropped_peak)


def noise_model(psd_one_sided: np.ndarray, dt_s: float, m: int) -> Noise:
    """Autocorrelation at symbol spacing and a colouring FIR for a one-sided PSD (V^2/Hz)
    given on an rfft grid of a window of n_fft = 2 (len - 1) fine samples."""
    n_fft = 2 * (psd_one_sided.shape[0] - 1)
    # R(tau) = int_0^inf S(f) cos(2 pi f tau) df  ->  irfft with the trapezoid weights
    r_fine = np.fft.irfft(psd_one_sided, n=n_fft) / (2.0 * dt_s)
    r_sym = np.ascontiguousarray(r_fine[::m])
    if not np.any(r_sym):
        return Noise(autocorr=r_sym, fir=np.zeros(1))
    s_sym = np.maximum(np.fft.rfft(r_sym).real, 0.0)  # symbol-rate (aliased) PSD
    g = np.fft.irfft(np.sqrt(s_sym), n=r_sym.shape[0])  # zero-phase, circular
    half = r_sym.shape[0] // 2
    g = np.roll(g, half)
    e = g ** 2
    total = e.sum()
    # smallest symmetric span around the centre holding all but 1e-12 of the energy
    k = 0
    while k < half - 1 and e[half - k:half + k + 1].sum() < total * (1 - 1e-12):
        k += 1
    fir = np.ascontiguousarray(g[half - k:half + k + 1])
    return Noise(autocorr=r_sym, fir=fir)
