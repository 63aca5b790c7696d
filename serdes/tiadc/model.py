"""The time-interleaved ADC: N sub-ADCs (lanes) taking samples k = l, l + N, l + 2N, ...

Lane l of an N-way converter differs from the ideal one by

* an offset ``o_l`` (V), added before its quantizer;
* a gain ``g_l`` (1 + gain error);
* a timing skew ``tau_l`` (s): it samples at k T_s + tau_l;
* a track-and-hold bandwidth ``f_l`` (Hz): a first-order low pass 1 / (1 + j f / f_l)
  in front of its sampler (0: no T/H filter).

The common track-and-hold (the nominal ``bw_hz``) belongs to the analog front end: the
builder puts it in the RX stage list (:class:`TrackHold`), so the equalizer is designed
for it; only the lane's deviation from it, ``H_l(f) / H_0(f)``, is an impairment. The
front-end sampler's aperture jitter (``aperture_jitter_s``, rms) moves every sampling
instant independently. Each lane quantizes with the converter's bits and adds its ENOB
noise (:class:`serdes.adc.Adc`).

Drawn mismatch (:meth:`TiAdc.draw`): offsets, gain errors, skews and relative bandwidth
errors are Gaussian with the given rms, from a seeded stream of their own, and centred
over the lanes: their common part is another impairment (a DC offset, the VGA gain, the
sampling phase, the nominal T/H), not interleaving mismatch. Values given per lane are
taken as they are.
"""

from __future__ import annotations

import numpy as np

from serdes.adc import Adc
from serdes.errors import ConfigError
from serdes.kernels.adc_ti import lane_convert

# random streams of the converter (serdes.rng ids; high numbers, apart from the link's)
MISMATCH_STREAM = 1601
APERTURE_STREAM = 1602


class TrackHold:
    """The nominal track-and-hold of the ADC as an RX stage: a first-order low pass of
    -3 dB bandwidth ``bandwidth_hz``."""

    def __init__(self, bandwidth_hz: float):
        if not (bandwidth_hz > 0 and np.isfinite(bandwidth_hz)):
            raise ConfigError(f"adc.bw_hz = {bandwidth_hz!r}: must be > 0 for a T/H stage")
        self.bandwidth_hz = float(bandwidth_hz)

    def response(self, f_hz):
        return 1.0 / (1.0 + 1j * np.asarray(f_hz, dtype=np.float64) / self.bandwidth_hz)

    def describe(self) -> str:
        return f"ADC track-and-hold {self.bandwidth_hz / 1e9:g} GHz (first order)"


def _lane_values(name: str, values, lanes: int, default: float) -> np.ndarray:
    if values is None or len(values) == 0:
        return np.full(lanes, float(default))
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    if a.shape[0] != lanes:
        raise ConfigError(f"adc.{name}: {a.shape[0]} values given for adc.lanes = {lanes}; "
                          f"give one per lane or none")
    if not np.all(np.isfinite(a)):
        raise ConfigError(f"adc.{name}: values must be finite")
    return a


class TiAdc(Adc):
    """An :class:`~serdes.adc.Adc` of ``lanes`` interleaved sub-ADCs (see the module).

    Per-lane arrays: ``offsets_v``, ``gains``, ``skews_s``, ``bws_hz`` (T/H bandwidth of
    each lane, 0: none); ``bw_hz`` is the nominal T/H (0: none); ``aperture_jitter_s`` the
    sampler's rms aperture jitter; ``supply`` an optional
    :class:`serdes.tiadc.supply.SupplyPath` (clock jitter and front-end gain)."""

    def __init__(self, *, bits: int, fullscale_v: float, enob: float = 0.0, lanes: int = 1,
                 offsets_v=None, gains=None, skews_s=None, bw_hz: float = 0.0, bws_hz=None,
                 aperture_jitter_s: float = 0.0, supply=None, calibration=None):
        super().__init__(bits=bits, fullscale_v=fullscale_v, enob=enob)
        if not (isinstance(lanes, (int, np.integer)) and 1 <= lanes <= 1024):
            raise ConfigError(f"adc.lanes = {lanes!r}: must be an integer in [1, 1024]")
        self.lanes = int(lanes)
        self.offsets_v = _lane_values("offsets_v", offsets_v, self.lanes, 0.0)
        self.gains = _lane_values("gains", gains, self.lanes, 1.0)
        self.skews_s = _lane_values("skews_s", skews_s, self.lanes, 0.0)
        self.bw_hz = float(bw_hz)
        self.bws_hz = _lane_values("bws_hz", bws_hz, self.lanes, self.bw_hz)
        if np.any(self.gains <= 0):
            raise ConfigError("adc.gains: every lane gain must be > 0")
        if np.any(self.bws_hz < 0) or (self.bw_hz > 0) != bool(np.all(self.bws_hz > 0)):
            raise ConfigError("adc.bws_hz: lane bandwidths must all be > 0 with a nominal "
                              "adc.bw_hz > 0 (or all 0 without one)")
        if not (aperture_jitter_s >= 0 and np.isfinite(aperture_jitter_s)):
            raise ConfigError(f"adc.aperture_jitter_s = {aperture_jitter_s!r}: must be >= 0")
        self.aperture_jitter_s = float(aperture_jitter_s)
        self.supply = supply
        # background calibration settings (serdes.dsp.ti_cal.CalSettings), or None: the
        # digital correction is part of the ADC macro, the receiver chain runs it
        self.calibration = calibration
        # the lanes' clock delay-line trims (s), set by the background calibration during
        # a run (the sampling instant of lane l is k T + skew_l - trim_l)
        self.skew_trim_s = np.zeros(self.lanes)
        # the calibration's digital corrections now (offset estimates, V; gain factors),
        # updated in place by it: the clock-recovery front end's detector sees the
        # corrected lanes (serdes.engines.cdr_lanes)
        self.cal_offsets_v = np.zeros(self.lanes)
        self.cal_gains = np.ones(self.lanes)

    @classmethod
    def draw(cls, *, bits: int, fullscale_v: float, enob: float = 0.0, lanes: int = 1,
             offset_rms_v: float = 0.0, gain_rms: float = 0.0, skew_rms_s: float = 0.0,
             bw_hz: float = 0.0, bw_rms_rel: float = 0.0, seed: int = 0,
             offsets_v=None, gains=None, skews_s=None, bws_hz=None, **kw) -> "TiAdc":
        """Mismatch drawn from centred Gaussians of the given rms (seeded), unless given
        per lane."""
        g = np.random.Generator(np.random.PCG64(
            np.random.SeedSequence(int(seed), spawn_key=(MISMATCH_STREAM,))))
        z = g.standard_normal((4, int(lanes)))
        z -= z.mean(axis=1, keepdims=True)   # one lane: no mismatch

        def unset(v):
            return v is None or len(v) == 0

        if unset(offsets_v) and offset_rms_v > 0:
            offsets_v = offset_rms_v * z[0]
        if unset(gains) and gain_rms > 0:
            gains = 1.0 + gain_rms * z[1]
            _drawn_positive("adc.gain_rms", gain_rms, gains, seed, "gain")
        if unset(skews_s) and skew_rms_s > 0:
            skews_s = skew_rms_s * z[2]
        if unset(bws_hz) and bw_rms_rel > 0 and bw_hz > 0:
            bws_hz = bw_hz * (1.0 + bw_rms_rel * z[3])
            _drawn_positive("adc.bw_rms_rel", bw_rms_rel, bws_hz / bw_hz, seed, "bandwidth")
        return cls(bits=bits, fullscale_v=fullscale_v, enob=enob, lanes=int(lanes),
                   offsets_v=offsets_v, gains=gains, skews_s=skews_s, bw_hz=bw_hz,
                   bws_hz=bws_hz, **kw)

    # ------------------------------------------------------------ what is modelled
    @property
    def digital_mismatch(self) -> bool:
        """Offsets or gains differ from ideal (applied on the samples)."""
        return bool(np.any(self.offsets_v != 0) or np.any(self.gains != 1.0))

    @property
    def bw_mismatch(self) -> bool:
        return bool(np.any(self.bws_hz != self.bw_hz))

    @property
    def analog(self) -> bool:
        """Something moves or filters the sampling instant per sample (skew, bandwidth
        mismatch, aperture jitter, supply-induced clock jitter, calibration trims): the
        front end must form the samples lane by lane."""
        return bool(np.any(self.skews_s != 0) or self.bw_mismatch
                    or self.calibration is not None
                    or self.aperture_jitter_s > 0
                    or (self.supply is not None and self.supply.jitter_active))

    @property
    def interleaved(self) -> bool:
        """Anything differs from the single ideal converter of :class:`Adc`."""
        return self.digital_mismatch or self.analog or (
            self.supply is not None and self.supply.gain_active)

    def trim_range_s(self, ui_s: float) -> float:
        """The lanes' delay-line trim range (s, either way): twice the largest skew plus
        a quarter UI. The calibration's trims are held within it and the front end's
        pulse rows cover it (no sampling instant outside the rows)."""
        return 2 * float(np.max(np.abs(self.skews_s))) + 0.25 * float(ui_s)

    def lane_th(self, f_hz) -> np.ndarray:
        """(lanes, len(f)) complex: each lane's T/H relative to the nominal one,
        H_l(f) / H_0(f) (ones without bandwidth mismatch)."""
        f = np.asarray(f_hz, dtype=np.float64)
        if not self.bw_mismatch:
            return np.ones((self.lanes, f.shape[0]), dtype=np.complex128)
        return (1.0 + 1j * f[None, :] / self.bw_hz) / (1.0 + 1j * f[None, :] / self.bws_hz[:, None])

    def lane_th_absolute(self, f_hz) -> np.ndarray:
        """(lanes, len(f)) complex: each lane's whole T/H response H_l(f)."""
        f = np.asarray(f_hz, dtype=np.float64)
        if self.bw_hz <= 0:
            return np.ones((self.lanes, f.shape[0]), dtype=np.complex128)
        return 1.0 / (1.0 + 1j * f[None, :] / self.bws_hz[:, None])

    def describe(self) -> str:
        base = super().describe()
        if self.lanes == 1 and not self.interleaved:
            return base
        parts = [f"{self.lanes}-way interleaved"]
        if np.any(self.offsets_v):
            parts.append(f"offset rms {np.sqrt(np.mean(self.offsets_v ** 2)) * 1e3:.3g} mV")
        if np.any(self.gains != 1):
            parts.append(f"gain rms {np.sqrt(np.mean((self.gains - 1) ** 2)):.3g}")
        if np.any(self.skews_s):
            parts.append(f"skew rms {np.sqrt(np.mean(self.skews_s ** 2)) * 1e15:.3g} fs")
        if self.bw_mismatch:
            parts.append(f"T/H bw rms {np.std(self.bws_hz / self.bw_hz):.3g} rel")
        if self.aperture_jitter_s:
            parts.append(f"aperture jitter {self.aperture_jitter_s * 1e15:.3g} fs")
        return f"{base}, " + ", ".join(parts)

    # ------------------------------------------------------------ conversion
    def convert(self, x_v, extra_noise, k0: int) -> np.ndarray:
        """Samples k0 .. k0 + len - 1: the supply's front-end gain modulation, lane gain
        and offset, ENOB noise (``extra_noise``: unit normals), quantization."""
        x = np.ascontiguousarray(x_v, dtype=np.float64)
        if self.supply is not None and self.supply.gain_active:
            x = x * (1.0 + self.supply.gain_mod(k0, x.shape[0]))
        if extra_noise is not None and self.enob_noise_sigma_v > 0:
            noise = self.enob_noise_sigma_v * extra_noise
        else:
            noise = np.zeros(0)
        return lane_convert(x, noise, self.gains, self.offsets_v, k0 % self.lanes,
                            self.lsb_v, self.bits)

    def sample_sine(self, amplitude_v: float, f_in_hz: float, fs_hz: float, n: int, *,
                    phase_rad: float = 0.0, jitter_s=None) -> np.ndarray:
        """The analog sine amplitude sin(2 pi f_in t + phase) at each lane's input after
        its T/H, taken at k / fs + skew_l (+ ``jitter_s[k]``), k = 0 .. n-1 (before
        gain, offset and quantization: :meth:`convert`)."""
        k = np.arange(int(n))
        lane = k % self.lanes
        h = self.lane_th_absolute(np.array([f_in_hz]))[:, 0]
        t = k / fs_hz + self.skews_s[lane]
        if jitter_s is not None:
            t = t + jitter_s
        return amplitude_v * np.abs(h[lane]) * np.sin(2 * np.pi * f_in_hz * t + phase_rad
                                                      + np.angle(h[lane]))


def _drawn_positive(key: str, rms: float, rel: np.ndarray, seed: int, what: str) -> None:
    """A drawn lane factor 1 + rms z must stay > 0; an rms near the top of its range can
    draw one <= 0 (rms 0.5: 2.3 % of the lanes), which names the keys to change."""
    bad = np.nonzero(rel <= 0)[0]
    if bad.size:
        k = int(bad[0])
        raise ConfigError(f"{key} = {rms:g} drew lane {k}'s {what} factor {rel[k]:.3g} "
                          f"(<= 0) with adc.mismatch_seed = {seed}: lower {key} or draw "
                          "again with another adc.mismatch_seed")

