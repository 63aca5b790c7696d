"""The supply of the sampling clock and the front end: ripple tones and broadband noise
through a regulator (LDO), turned into sampling-clock jitter and front-end gain
modulation.

Regulator: PSRR(f) = psrr_db at low frequency, falling 20 dB per decade above the
error amplifier's pole ``pole_hz`` (its loop gain falls), never below 0 dB: the supply
transfer is |T(f)| = min(1, 10^(-psrr_db / 20) sqrt(1 + (f / pole_hz)^2)).

At the regulator's output a ripple tone of amplitude A_i (mV) at f_i becomes
A_i |T(f_i)|; the broadband noise, a flat one-sided PSD e_n^2 (uV/rtHz) up to
``noise_bw_hz``, becomes a Gaussian of rms sqrt(int e_n^2 |T(f)|^2 df), drawn
independently per sample (its spectral shape within the band is not kept). The clock
buffer's delay sensitivity k_d (ps/mV) turns the regulated supply v(t) into a sampling
delay k_d v(t): each tone is a sinusoidal jitter of amplitude k_d A_i |T(f_i)|. The
front end's gain sensitivity k_g (% per mV) multiplies the ADC input by 1 + k_g v(t).
The clock and the front end are fed by the same regulated rail.
"""

from __future__ import annotations

import numpy as np

from serdes import rng
from serdes.errors import ConfigError

SUPPLY_STREAM = 1603  # serdes.rng stream id of the supply noise and tone phases


class Ldo:
    """The regulator's supply transfer (see the module)."""

    def __init__(self, psrr_db: float = 40.0, pole_hz: float = 1e6):
        if not (psrr_db >= 0 and pole_hz > 0):
            raise ConfigError(f"supply.psrr_db = {psrr_db!r} (>= 0) and supply.psrr_pole_hz "
                              f"= {pole_hz!r} (> 0) are required")
        self.psrr_db = float(psrr_db)
        self.pole_hz = float(pole_hz)

    def transfer(self, f_hz) -> np.ndarray:
        """|T(f)|: regulated ripple over supply ripple."""
        f = np.asarray(f_hz, dtype=np.float64)
        return np.minimum(1.0, 10 ** (-self.psrr_db / 20) * np.sqrt(1 + (f / self.pole_hz) ** 2))

    def psrr(self, f_hz) -> np.ndarray:
        """PSRR(f) in dB (positive: rejection)."""
        return -20 * np.log10(self.transfer(f_hz))

    def noise_rms(self, psd_v_per_rthz: float, bw_hz: float) -> float:
        """rms (V) of a flat one-sided PSD psd^2 over 0..bw_hz after the regulator, in
        closed form: int a (1 + f^2/p^2) df up to the corner f_c where |T| reaches 1,
        then int 1 df."""
        a = 10 ** (-self.psrr_db / 10)
        p = self.pole_hz
        fc = p * np.sqrt(max(1.0 / a - 1.0, 0.0))
        f1 = min(bw_hz, fc)
        power = a * (f1 + f1 ** 3 / (3 * p * p)) + max(bw_hz - fc, 0.0)
        return float(psd_v_per_rthz * np.sqrt(power))


class SupplyPath:
    """Supply ripple and noise through ``ldo`` into clock delay and front-end gain, at the
    ADC's sample rate ``fs_hz``. ``ripple_mv``/``ripple_hz``: tones at the regulator's
    input; ``noise_uv_per_rthz`` up to ``noise_bw_hz``: broadband noise there;
    ``delay_ps_per_mv``, ``gain_pct_per_mv``: the sensitivities; ``seed``: the tones'
    phases and the noise stream."""

    def __init__(self, *, fs_hz: float, ldo: Ldo, ripple_mv=(), ripple_hz=(),
                 noise_uv_per_rthz: float = 0.0, noise_bw_hz: float = 1e9,
                 delay_ps_per_mv: float = 0.0, gain_pct_per_mv: float = 0.0, seed: int = 0):
        self.ripple_mv = np.asarray(ripple_mv, dtype=np.float64).reshape(-1)
        self.ripple_hz = np.asarray(ripple_hz, dtype=np.float64).reshape(-1)
        if self.ripple_mv.shape != self.ripple_hz.shape:
            raise ConfigError(f"supply.ripple_mv has {self.ripple_mv.size} values and "
                              f"supply.ripple_hz {self.ripple_hz.size}: give one frequency "
                              f"per tone")
        if np.any(self.ripple_hz <= 0) or np.any(self.ripple_hz >= fs_hz / 2):
            raise ConfigError(f"supply.ripple_hz = {self.ripple_hz.tolist()}: each must lie "
                              f"in (0, {fs_hz / 2:g}) Hz (half the ADC sample rate)")
        self.fs_hz = float(fs_hz)
        self.ldo = ldo
        self.noise_uv_per_rthz = float(noise_uv_per_rthz)
        self.noise_bw_hz = float(noise_bw_hz)
        self.delay_ps_per_mv = float(delay_ps_per_mv)
        self.gain_pct_per_mv = float(gain_pct_per_mv)
        self._noise = rng.BlockRNG(seed, SUPPLY_STREAM)
        ph = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
            int(seed), spawn_key=(SUPPLY_STREAM, 1 << 20))))
        self.ripple_phase = 2 * np.pi * ph.random(self.ripple_mv.size)

    # ------------------------------------------------------------ regulated rail
    @property
    def tones_mv(self) -> np.ndarray:
        """Tone amplitudes at the regulator's output (mV)."""
        return self.ripple_mv * self.ldo.transfer(self.ripple_hz)

    @property
    def noise_mv_rms(self) -> float:
        """Broadband noise at the regulator's output, rms (mV)."""
        return self.ldo.noise_rms(self.noise_uv_per_rthz * 1e-3, self.noise_bw_hz)

    @property
    def _rail_active(self) -> bool:
        return bool(np.any(self.ripple_mv > 0) or self.noise_uv_per_rthz > 0)

    @property
    def jitter_active(self) -> bool:
        return self._rail_active and self.delay_ps_per_mv > 0

    @property
    def gain_active(self) -> bool:
        return self._rail_active and self.gain_pct_per_mv > 0

    @property
    def sj_s(self) -> np.ndarray:
        """Sinusoidal clock jitter amplitude of each tone (s)."""
        return self.delay_ps_per_mv * 1e-12 * self.tones_mv

    @property
    def rj_s(self) -> float:
        """Random clock jitter from the broadband noise, rms (s)."""
        return self.delay_ps_per_mv * 1e-12 * self.noise_mv_rms

    def rail_mv(self, k0: int, n: int) -> np.ndarray:
        """The regulated rail's deviation (mV) at samples k0 .. k0 + n - 1."""
        t = (k0 + np.arange(n, dtype=np.float64)) / self.fs_hz
        v = np.zeros(n)
        for a, f, ph in zip(self.tones_mv, self.ripple_hz, self.ripple_phase):
            v += a * np.sin(2 * np.pi * f * t + ph)
        neg = min(max(-k0, 0), n)  # the noise stream starts at the first symbol
        if self.noise_uv_per_rthz > 0 and n > neg:
            v[neg:] += self.noise_mv_rms * self._noise.normal(k0 + neg, n - neg)
        return v

    def delay_s(self, k0: int, n: int) -> np.ndarray:
        """Sampling-clock delay (s) of samples k0 .. k0 + n - 1."""
        return self.delay_ps_per_mv * 1e-12 * self.rail_mv(k0, n)

    def gain_mod(self, k0: int, n: int) -> np.ndarray:
        """Front-end fractional gain change of samples k0 .. k0 + n - 1."""
        return self.gain_pct_per_mv * 1e-2 * self.rail_mv(k0, n)

    def gain_mod_variance(self) -> float:
        """Mean square of :meth:`gain_mod`."""
        ms = float(np.sum(self.tones_mv ** 2) / 2 + self.noise_mv_rms ** 2)
        return (self.gain_pct_per_mv * 1e-2) ** 2 * ms


