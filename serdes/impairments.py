"""The impairment budget: every noise, jitter and quantization contribution, declared once.

:class:`Impairments` holds the settings (SI units); the functions below turn them, with
a :class:`serdes.link.Link`, into the second-order statistics that both the equalizer
design (:mod:`serdes.dsp.design`) and the statistical engine use, so neither can drift
from the other:

=============  ============================================================  =========
contribution   model at the ADC output (volts), per symbol-spaced sample      function
=============  ============================================================  =========
rx_thermal     white noise eta0 (one-sided, V^2/Hz) at the RX input through   rx_thermal_autocorr
               the RX stages and the VGA: R[k] = int S(f) cos(2 pi f k T) df
tx             white noise on the symbol values, variance E[a^2] 10^-SNR/10,  tx_autocorr,
               through the pulse: sigma_tx^2 (h * h~)[k]                      tx_sigma
adc            quantization LSB^2/12 plus the ENOB noise (white)              adc_variance,
                                                                              adc_*_variance
rj             Gaussian sampling jitter, first order: rj^2 E[a^2] |p'|^2     rj_variance
               (lag 0 only; the sampling instants are independent)
crosstalk      each aggressor's symbols (independent of the victim's) through  crosstalk_autocorr
               its pulse at the victim's instants: E[b^2] (c * c~)[k]          (serdes.crosstalk)
               (only with aggressors; the design sees it as coloured noise)
sj, dd         sinusoidal and dual-Dirac jitter: bounded, handled by the
               engines as phase offsets, not as noise
adc_*          a time-interleaved ADC's lane mismatch, clock (aperture,       serdes.tiadc.
               supply) jitter and supply gain modulation, only when the ADC   budget
               is interleaved (:mod:`serdes.tiadc.budget`)
=============  ============================================================  =========

Each has its own closed-form test in ``tests/test_impairments.py``. The statistical
engine (:mod:`serdes.engines.stat`) takes these same terms and keeps the detail the
design's lag-0 budget leaves out: the RJ term per PAM level (the decided symbol's own
slope), the TX noise and slope at every sampling phase, and the quantization as a
per-tap uniform distribution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.errors import ConfigError, require_nonnegative


@dataclass(frozen=True)
class Impairments:
    """Noise and jitter settings of a link.

    ``eta0_v2_per_hz``: one-sided RX-input noise PSD (V^2/Hz); ``tx_snr_db``: SNR_TX
    (inf: no TX noise); ``rj_ui``: random sampling jitter (rms UI); ``sj_ui``/``sj_hz``:
    sinusoidal sampling jitter amplitude (UI) and frequency; ``dd_ui``: dual-Dirac
    amplitude (UI).
    """

    eta0_v2_per_hz: float = 8.2e-18
    tx_snr_db: float = 33.0
    rj_ui: float = 0.01
    sj_ui: float = 0.0
    sj_hz: float = 1e6
    dd_ui: float = 0.0
    # set by serdes.engines.cdr_stat.stat_link for the statistical engine (no config
    # keys): a clock-recovery loop's static phase shift (UI) and its slow Gaussian
    # wander (rms UI, quasi-static against the equalizer span)
    offset_ui: float = 0.0
    wander_ui: float = 0.0

    def __post_init__(self):
        require_nonnegative(self, ("eta0_v2_per_hz", "rj_ui", "sj_ui", "sj_hz", "dd_ui",
                                   "wander_ui"))
        if not (self.tx_snr_db >= 0):
            raise ConfigError(f"tx_snr_db = {self.tx_snr_db!r}: must be >= 0 (inf: no TX noise)")

    @property
    def jitter_active(self) -> bool:
        return self.rj_ui > 0 or self.sj_ui > 0 or self.dd_ui > 0


def tx_noise_sigma(level_power: float, snr_db: float) -> float:
    """Std of the TX noise per symbol value (unitless, like the levels)."""
    if np.isinf(snr_db):
        return 0.0
    return float(np.sqrt(level_power * 10.0 ** (-snr_db / 10.0)))


def rx_thermal_autocorr(link, lags: int) -> np.ndarray:
    """R[k], k < lags, of the RX-input noise at the ADC input (V^2)."""
    r = np.zeros(lags)
    ac = link.noise.autocorr
    n = min(lags, ac.shape[0])
    r[:n] = ac[:n]
    return r


def rx_thermal_variance(link) -> float:
    """Power of the RX-input noise at the ADC input, lag 0 of :func:`rx_thermal_autocorr`
    (V^2)."""
    return float(rx_thermal_autocorr(link, 1)[0])


def tx_sigma(link) -> float:
    """Std of the TX noise per symbol value (unitless, like the levels): the noise is
    ``tx_sigma * h`` through any response ``h``."""
    return float(link.tx_noise_sigma)


def tx_autocorr(link, lags: int) -> np.ndarray:
    """R[k] of the TX noise through the sampled pulse (V^2)."""
    h = link.pulse.taps
    ac = np.correlate(h, h, mode="full")[h.shape[0] - 1:]
    r = np.zeros(lags)
    n = min(lags, ac.shape[0])
    r[:n] = tx_sigma(link) ** 2 * ac[:n]
    return r


def adc_quantization_variance(link) -> float:
    """Quantization noise power of the ADC, LSB^2/12 (V^2); 0 without a quantizer."""
    return float(link.adc.quantization_noise_v2)


def adc_enob_variance(link) -> float:
    """Power of the extra Gaussian noise that brings the ADC down to its ENOB (V^2)."""
    return float(link.adc.enob_noise_sigma_v ** 2)


def adc_variance(link) -> float:
    """White noise power of the ADC: quantization plus ENOB noise (V^2)."""
    return adc_quantization_variance(link) + adc_enob_variance(link)


def pulse_slope(link, offset_ui: float = 0.0) -> np.ndarray:
    """Symbol-spaced slope of the pulse ``offset_ui`` UI after the sampling phase (V per
    UI), central difference over one fine sample."""
    return link.pulse.slope(offset_ui)


def rj_variance(link, offset_ui: float = 0.0) -> float:
    """Sampling-jitter noise power to first order: rj^2 E[a^2] sum_j p'_j^2 (V^2), the
    slope taken ``offset_ui`` UI after the sampling phase."""
    rj = link.impairments.rj_ui
    if rj <= 0:
        return 0.0
    s = pulse_slope(link, offset_ui)
    return float(rj ** 2 * link.level_power * float(s @ s))


def budget(link, lags: int) -> dict[str, np.ndarray]:
    """Each Gaussian-modelled contribution as an autocorrelation R[k], k < lags (V^2)."""
    white = np.zeros(lags)
    adc = white.copy()
    adc[0] = adc_variance(link)
    rj = white.copy()
    rj[0] = rj_variance(link)
    out = {"rx_thermal": rx_thermal_autocorr(link, lags), "tx": tx_autocorr(link, lags),
           "adc": adc, "jitter": rj}
    if getattr(link, "aggressor_pulses", ()):
        from serdes.crosstalk import crosstalk_autocorr

        out["crosstalk"] = crosstalk_autocorr(link, lags)
    if getattr(link.adc, "interleaved", False):  # lanes, clock, supply: serdes.tiadc.budget
        from serdes.tiadc.budget import budget_terms

        out.update(budget_terms(link, lags))
    return out


def design_autocorr(link, lags: int) -> np.ndarray:
    """The noise autocorrelation the equalizer design uses: the sum of :func:`budget`."""
    return np.sum(list(budget(link, lags).values()), axis=0)


def slicer_powers(link, ffe, residual) -> dict[str, float]:
    """Power of each :func:`budget` contribution at the FFE output, ``w^T R_part w``
    (``R_part`` the Toeplitz covariance over the FFE span), and of the residual ISI,
    ``E[a^2] sum_k residual_k^2`` (the combined response with the cursor and the
    decision-fed lags removed, e.g. :meth:`serdes.dsp.design.ReceiverTaps.residual`), in
    the units of ``ffe`` squared times V^2."""
    from serdes.dsp.linalg import toeplitz

    w = np.asarray(ffe, dtype=np.float64)
    out = {name: float(w @ toeplitz(r) @ w) for name, r in budget(link, w.shape[0]).items()}
    res = np.asarray(residual, dtype=np.float64)
    out["residual_isi"] = float(link.level_power * float(res @ res))
    return out


def slicer_shares(link, ffe, residual) -> dict[str, float]:
    """:func:`slicer_powers` as shares (0..1) of their sum: the noise budget at the
    slicer (rx_thermal, tx, adc, jitter, residual_isi)."""
    p = slicer_powers(link, ffe, residual)
    total = sum(p.values())
    return {k: (v / total if total > 0 else 0.0) for k, v in p.items()}
