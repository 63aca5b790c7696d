"""Statistical engine: the slicer-input distribution of each PAM level, hence BER to 1e-15
and below, bathtubs and statistical eyes, from the same Link as the pulse engine.

Model at the slicer (normalised symbol units: levels ``link.levels``, main cursor 1)::

    v_k = f_d(phi) a_{k-d} + sum_{j != d} r_j(phi) a_{k-j} + n_k

* ``f(phi) = w * p(phi)`` is the pulse response sampled ``phi`` UI after the nominal
  phase, through the DSP FFE ``w`` (taps fixed at their design phase, as in a
  receiver whose sampling phase moves); ``r_j = f_j - b_{j-d}`` for the DFE
  positions (correct decisions, taps as designed: clipped to the tap limit), ``f_j``
  elsewhere.
* The ISI term is the exact convolution of the per-cursor distributions (each cursor
  takes ``r_j a`` for the M equiprobable levels). Points are put on a grid of spacing
  ``delta = sigma / resolution`` by the mean-preserving linear split; the variance
  that the split adds is known exactly and taken off the Gaussian noise, so the
  first two moments of the total are exact and the grid error is of third order.
* Gaussian noise with the variance of: the coloured RX noise after the FFE
  (``w^T R w``), TX noise through the whole response (``sigma_tx^2 |f|^2``), ADC ENOB
  noise (``sigma_e^2 |w|^2``) and random jitter through the pulse slope: with a
  sampling offset ``tau_k`` per ADC sample, ``sigma_RJ^2 sum_i w_i^2 E[(sum_j a p'_j)^2]``,
  whose part from the decided symbol depends on its level (so sigma is per level).
* ADC quantization: per FFE tap an independent uniform error of one LSB times
  ``|w_i|``, convolved like a cursor (taps too small to matter go to the Gaussian).
* Sinusoidal jitter (``noise.sj_ui``, ``noise.sj_hz``) and dual-Dirac deterministic
  jitter (``dd_ui``: offsets +-A_DD, probability 1/2 each) move the sampling instant;
  the pulse response is re-sampled at the moved instant (the exact form of the
  slope model) and the error rates are averaged over the jitter distribution. For SJ
  of any frequency the instant of each FFE tap's sample is moved by its own phase of
  the sine; SJ slow against the equalizer span and DD are quasi-static.

Per-eye error rate at a threshold y in eye e (between levels e and e+1): the
probability that a symbol lands on the wrong side of y, divided by the bits per
symbol, ``(1/(M log2 M)) [sum_{i<=e} P(v_i > y) + sum_{i>e} P(v_i < y)]``. At the slicer
thresholds the three eyes add up to the BER when errors go to the adjacent level.
The same quantity over (phase, y) is the statistical eye map.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import toeplitz

from serdes.impairments import rx_thermal_autocorr
from serdes.kernels.stat import isi_pmf, tail_grid, tail_points

EYE_NAMES_PAM4 = ("lower", "middle", "upper")
DEFAULT_TARGETS = (1e-6, 1e-12, 1e-15)
MAP_FLOOR = 1e-30


def gray_bit_errors(m: int) -> np.ndarray:
    """bits[i, j]: bit errors when level i is decided as level j (IEEE Gray code)."""
    if m == 2:
        return 1 - np.eye(2, dtype=np.int64)
    gray = np.array([0, 1, 3, 2])
    x = gray[:, None] ^ gray[None, :]
    return np.array([[bin(int(v)).count("1") for v in row] for row in x], dtype=np.int64)


def eye_names(m: int) -> tuple[str, ...]:
    return EYE_NAMES_PAM4 if m == 4 else ("eye",)


# ======================================================================= distribution
@dataclass
class SlicerDistribution:
    """Slicer input of level i: means[i] + X + N_i, X ~ pmf on the grid, N_i Gaussian."""

    pmf: np.ndarray
    k0: int
    delta: float
    means: np.ndarray        # f_d * a_i
    sigmas: np.ndarray       # Gaussian std per level (after the grid correction)
    levels: np.ndarray       # nominal levels a_i
    thresholds: np.ndarray
    bit_errors: np.ndarray
    isi_var: float           # exact variance of the ISI (+ uniform quantization) term
    noise_var: np.ndarray    # Gaussian variance per level before the grid correction
    approximate: bool = False  # the grid correction could not be applied in full

    @property
    def m(self) -> int:
        return self.levels.shape[0]

    @property
    def bits_per_symbol(self) -> int:
        return 1 if self.m == 2 else 2

    @property
    def x(self) -> np.ndarray:
        return (self.k0 + np.arange(self.pmf.shape[0])) * self.delta

    def upper(self, i: int, y) -> np.ndarray:
        """P(v_i > y)."""
        y = np.atleast_1d(np.asarray(y, dtype=np.float64)) - self.means[i]
        return tail_points(self.pmf, self.k0, self.delta, y, float(self.sigmas[i]), True)

    def lower(self, i: int, y) -> np.ndarray:
        """P(v_i < y)."""
        y = np.atleast_1d(np.asarray(y, dtype=np.float64)) - self.means[i]
        return tail_points(self.pmf, self.k0, self.delta, y, float(self.sigmas[i]), False)

    def decision_matrix(self) -> np.ndarray:
        """P[i, j]: probability that level i is decided as level j (off-diagonal)."""
        m = self.m
        t = self.thresholds
        P = np.zeros((m, m))
        for i in range(m):
            if i < m - 1:
                up = np.append(self.upper(i, t[i:]), 0.0)  # P(v > t_e), e = i..m-2
                P[i, i + 1:] = up[:-1] - up[1:]
            if i > 0:
                lo = np.concatenate([[0.0], self.lower(i, t[:i])])  # P(v < t_e), e = 0..i-1
                P[i, :i] = lo[1:] - lo[:-1]
        return np.maximum(P, 0.0)

    def ser(self) -> float:
        return float(self.decision_matrix().sum() / self.m)

    def ber(self) -> float:
        P = self.decision_matrix()
        return float((P * self.bit_errors).sum() / (self.m * self.bits_per_symbol))

    def wrong_side(self, y) -> np.ndarray:
        """The eye map at voltages y: (1/(M bits)) sum_i P(v_i beyond y, away from
        its mean)."""
        y = np.atleast_1d(np.asarray(y, dtype=np.float64))
        out = np.zeros(y.shape[0])
        for i in range(self.m):
            above = y > self.means[i]
            if above.any():
                out[above] += self.upper(i, y[above])
            if (~above).any():
                out[~above] += self.lower(i, y[~above])
        return out / (self.m * self.bits_per_symbol)

    def ber_per_eye(self) -> np.ndarray:
        return self.wrong_side(self.thresholds)

    def wrong_side_grid(self, y_start: float, stride: int, n: int) -> np.ndarray:
        """wrong_side at y_v = y_start + v * stride * delta (fast: tabulated Q)."""
        out = np.zeros(n)
        ys = y_start + np.arange(n) * stride * self.delta
        for i in range(self.m):
            u = (y_start - self.means[i]) / self.delta
            s0 = math.floor(u)
            frac = u - s0
            # first v with y_v > mean_i
            v_split = int(np.searchsorted(ys, self.means[i], side="right"))
            v_split = min(max(v_split, 0), n)
            sig = float(self.sigmas[i])
            if v_split > 0:
                out[:v_split] += tail_grid(self.pmf, self.k0, self.delta, s0, stride,
                                           v_split, frac, sig, False)
            if v_split < n:
                out[v_split:] += tail_grid(self.pmf, self.k0, self.delta,
                                           s0 + v_split * stride, stride, n - v_split, frac,
                                           sig, True)
        return out / (self.m * self.bits_per_symbol)

    def pdf(self, i: int, y) -> np.ndarray:
        """Probability density of v_i at y (for plots: the PMF is regrouped to a quarter
        of the Gaussian std, which the density cannot resolve anyway)."""
        y = np.asarray(y, dtype=np.float64)
        s = float(self.sigmas[i])
        g = max(1, int(s / (4 * self.delta)))
        n = -(-self.pmf.shape[0] // g) * g
        p = np.pad(self.pmf, (0, n - self.pmf.shape[0])).reshape(-1, g)
        x = (self.k0 + np.arange(n)).reshape(-1, g) * self.delta
        w = p.sum(axis=1)
        keep = w > 1e-300
        xc = (p * x).sum(axis=1)[keep] / w[keep] + self.means[i]
        w = w[keep]
        out = np.zeros(y.size)
        flat = y.ravel()
        for k in range(0, flat.size, 256):
            z = (flat[k:k + 256, None] - xc[None, :]) / s
            out[k:k + 256] = np.exp(-0.5 * z * z) @ w
        return (out / (s * np.sqrt(2 * np.pi))).reshape(y.shape)


# ======================================================================== results
@dataclass
class StatBer:
    """Error rates at one sampling phase, averaged over the jitter distribution."""

    offset_ui: float
    ber: float
    ser: float
    ber_per_eye: np.ndarray
    eye_names: tuple
    sndr_db: float
    sigma: np.ndarray        # Gaussian std per level (at the centre of the jitter)
    isi_rms: float
    rel_error: float = float("nan")  # estimate from a grid twice as coarse

    def to_dict(self) -> dict:
        return {"offset_ui": self.offset_ui, "ber": self.ber, "ser": self.ser,
                "ber_per_eye": {n: float(v) for n, v in zip(self.eye_names, self.ber_per_eye)},
                "sndr_db": self.sndr_db, "noise_sigma": [float(s) for s in self.sigma],
                "isi_rms": self.isi_rms, "grid_rel_error": self.rel_error}


@dataclass
class Bathtub:
    x: np.ndarray             # phase offsets (UI) or threshold offsets (normalised)
    ber_per_eye: np.ndarray   # (n_eyes, n)
    ber: np.ndarray | None    # total BER (horizontal bathtub) or None
    eye_names: tuple
    kind: str                 # "horizontal" or "vertical"
    ui_s: float
    volts_per_unit: float


@dataclass
class StatEye:
    """Statistical eye: the eye map over sampling phase x slicer voltage."""

    phases_ui: np.ndarray     # (n_phases,) offsets from the nominal phase
    y: np.ndarray             # (n_bins,) slicer voltages (normalised)
    ber: np.ndarray           # (n_phases, n_bins)
    means: np.ndarray         # (n_phases, M) level positions f_d(phi) a_i
    thresholds: np.ndarray
    eye_names: tuple
    ui_s: float
    volts_per_unit: float     # ADC-input volts of one normalised unit (the main cursor)
    elapsed_s: float = 0.0


@dataclass
class EyeOpening:
    """Height and width of each eye at each target BER (statistical)."""

    targets: tuple
    eye_names: tuple
    height: np.ndarray        # (n_targets, n_eyes), normalised units
    width_ui: np.ndarray      # (n_targets, n_eyes)
    volts_per_unit: float
    ui_s: float
    offset_ui: float = 0.0

    def to_dict(self) -> dict:
        eyes = {}
        for e, name in enumerate(self.eye_names):
            eyes[name] = {
                "height": [float(v) for v in self.height[:, e]],
                "height_mv": [float(v * self.volts_per_unit * 1e3) for v in self.height[:, e]],
                "width_ui": [float(v) for v in self.width_ui[:, e]],
                "width_ps": [float(v * self.ui_s * 1e12) for v in self.width_ui[:, e]],
            }
        veo = self.height.min(axis=1)
        return {"targets": list(self.targets), "phase_ui": self.offset_ui, "eyes": eyes,
                "vertical_eye_opening": [float(v) for v in veo],
                "vertical_eye_opening_mv": [float(v * self.volts_per_unit * 1e3) for v in veo]}


@dataclass
class _Jitter:
    """Quadrature of the sampling-offset distribution of SJ and DD jitter."""

    offsets: np.ndarray       # (Q, n_taps) offset (UI) of the sample seen by each FFE tap
    weights: np.ndarray       # (Q,)
    quasi_static: bool        # every row is constant

    @property
    def common(self) -> np.ndarray:
        return self.offsets[:, 0]

    @property
    def span_ui(self) -> float:
        return float(np.max(np.abs(self.offsets))) if self.offsets.size else 0.0


# ========================================================================== engine
class StatisticalEngine:
    """Statistical BER, bathtubs and eyes of a Link with a given equalizer (FFE, DFE and
    reflection-canceller taps; decisions assumed correct).

    ``system``: a :class:`~serdes.system.System`; ``taps``: EqualizerTaps (default:
    ``design_equalizer(system)``, as the pulse engine). The noise contributions come from
    :mod:`serdes.impairments`, the same functions the equalizer design uses.
    ``resolution``: grid points per Gaussian std (the grid error falls as its cube).
    ``dd_ui``: dual-Dirac deterministic jitter amplitude A_DD (UI); default: the
    config's ``noise.dd_ui``.
    ``jitter_points``: quadrature points over the SJ period.
    ``quantization``: "uniform" (per-tap uniform LSB error) or "gaussian".
    """

    def __init__(self, system, taps=None, *, resolution: float = 16.0,
                 dd_ui: float | None = None, jitter_points: int = 32,
                 quantization: str = "uniform", max_bins: int = 1 << 14):
        from serdes.engines.run import design_equalizer

        link = system.link
        if resolution <= 0:
            raise ValueError(f"resolution = {resolution!r}: expected a number > 0")
        if dd_ui is None:
            dd_ui = link.impairments.dd_ui
        if dd_ui < 0 or dd_ui > 0.5:
            raise ValueError(f"dd_ui = {dd_ui!r}: expected a number in [0, 0.5]")
        if quantization not in ("uniform", "gaussian"):
            raise ValueError(f"quantization = {quantization!r}: expected 'uniform' or "
                             "'gaussian'")
        self.system = system
        self.link = link
        self.taps = taps if taps is not None else design_equalizer(system)
        if getattr(self.taps, "detector", "dfe") != "dfe":
            raise ValueError("the statistical engine models FFE + DFE (+ reflection "
                             "canceller) receivers, not the MLSE detector")
        self.resolution = float(resolution)
        self.dd_ui = float(dd_ui)
        self.jitter_points = int(jitter_points)
        self.quantization = quantization
        self.max_bins = int(max_bins)
        imp = link.impairments
        self.m_levels = link.levels.shape[0]
        self.levels = np.asarray(link.levels, dtype=np.float64)
        self.thresholds = (self.levels[1:] + self.levels[:-1]) / 2.0
        self.bit_errors = gray_bit_errors(self.m_levels)
        self.eye_names = eye_names(self.m_levels)
        self.es = float(np.mean(self.levels ** 2))
        self.w = np.asarray(self.taps.ffe, dtype=np.float64)
        self.b = np.asarray(self.taps.dfe, dtype=np.float64)
        self.d = int(self.taps.delay)
        self.pulse = link.pulse
        self.ui_s = link.ui_s
        self.volts_per_unit = float(self.pulse.taps[self.pulse.cursor])
        n = self.w.shape[0]
        r = rx_thermal_autocorr(link, n)
        self.rx_var = float(self.w @ toeplitz(r) @ self.w)
        self.sigma_tx = float(link.tx_noise_sigma)
        adc = link.adc
        ww = float(self.w @ self.w)
        self.enob_var = adc.enob_noise_sigma_v ** 2 * ww
        self.lsb = adc.lsb_v
        self.rj_ui = float(imp.rj_ui)
        self.sj_ui = float(imp.sj_ui)
        self.sj_rad_per_ui = 2 * np.pi * imp.sj_hz * link.ui_s
        self.jitter = self._jitter_quadrature()
        self._cache: dict = {}

    # -- jitter --------------------------------------------------------------------------
    def _jitter_quadrature(self) -> _Jitter:
        n = self.w.shape[0]
        dd = np.array([-self.dd_ui, self.dd_ui]) if self.dd_ui > 0 else np.zeros(1)
        if self.sj_ui > 0:
            K = max(self.jitter_points, 4)
            theta = 2 * np.pi * (np.arange(K) + 0.5) / K
            # the sample seen by FFE tap i was taken i UI before the output sample
            span = (n + self.pulse.n_ui) * self.sj_rad_per_ui
            quasi = span * self.sj_ui < 1e-3
            i = np.arange(n)
            if quasi:
                sj = self.sj_ui * np.sin(theta)[:, None] * np.ones(n)[None, :]
            else:
                sj = self.sj_ui * np.sin(theta[:, None] - self.sj_rad_per_ui * i[None, :])
        else:
            sj = np.zeros((1, n))
            quasi = True
        offs = (sj[:, None, :] + dd[None, :, None]).reshape(-1, n)
        wts = np.full(offs.shape[0], 1.0 / offs.shape[0])
        if quasi:  # merge equal offsets (sin is symmetric)
            key = np.round(offs[:, 0], 12)
            uniq, inv = np.unique(key, return_inverse=True)
            wts = np.bincount(inv, weights=wts)
            offs = np.repeat(uniq[:, None], n, axis=1)
        return _Jitter(offsets=offs, weights=wts, quasi_static=quasi)

    # -- response and noise -------------------------------------------------------------
    def _pulse_at(self, offset_ui: float):
        """Symbol-spaced pulse samples and slopes (per UI) at an offset (UI)."""
        key = round(float(offset_ui), 12)
        hit = self._cache.get(key)
        if hit is None:
            m = self.pulse.m
            f = offset_ui * m
            h = self.pulse.at_offset(f)
            slope = (self.pulse.at_offset(f + 0.5) - self.pulse.at_offset(f - 0.5)) * m
            hit = (h, slope)
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def response(self, offset_ui: float = 0.0, tap_offsets_ui=None):
        """Combined response f = FFE * pulse at a phase offset, with per-FFE-tap extra
        sampling offsets (jitter). Returns (f, slopes per FFE tap (n_taps, n_ui))."""
        n = self.w.shape[0]
        L = self.pulse.n_ui
        if tap_offsets_ui is None or np.all(tap_offsets_ui == tap_offsets_ui[0]):
            extra = 0.0 if tap_offsets_ui is None else float(tap_offsets_ui[0])
            h, s = self._pulse_at(offset_ui + extra)
            return np.convolve(self.w, h), np.broadcast_to(s, (n, L))
        f = np.zeros(n + L - 1)
        slopes = np.empty((n, L))
        for i in range(n):
            h, s = self._pulse_at(offset_ui + float(tap_offsets_ui[i]))
            f[i:i + L] += self.w[i] * h
            slopes[i] = s
        return f, slopes

    def _noise_var_per_level(self, f: np.ndarray, slopes: np.ndarray) -> np.ndarray:
        var = self.rx_var + self.sigma_tx ** 2 * float(f @ f) + self.enob_var
        if self.quantization == "gaussian":
            var += self.lsb ** 2 / 12.0 * float(self.w @ self.w)
        out = np.full(self.m_levels, var)
        if self.rj_ui > 0:
            n = self.w.shape[0]
            L = self.pulse.n_ui
            s2 = np.sum(slopes ** 2, axis=1)          # |p'|^2 seen by each tap
            j = self.d - np.arange(n)                 # pulse index of the decided symbol
            own = np.zeros(n)
            ok = (j >= 0) & (j < L)
            own[ok] = slopes[np.nonzero(ok)[0], j[ok]] ** 2
            w2 = self.w ** 2
            base = self.es * float(w2 @ s2)
            for i, a in enumerate(self.levels):
                out[i] += self.rj_ui ** 2 * (base + (a * a - self.es) * float(w2 @ own))
        return out

    def _residual(self, f: np.ndarray) -> np.ndarray:
        """ISI left at the slicer: f without the main cursor, DFE positions minus the
        DFE taps (correct decisions)."""
        resid = f.copy()
        resid[self.d] = 0.0
        nb = self.b.shape[0]
        end = min(self.d + 1 + nb, f.shape[0])
        resid[self.d + 1:end] -= self.b[: end - self.d - 1]
        # reflection-canceller taps (serdes.dsp.design.ReceiverTaps) are decision-fed too
        lags = np.asarray(getattr(self.taps, "rc_lags", ()), dtype=np.int64)
        if lags.size:
            rc = np.asarray(getattr(self.taps, "rc_taps"), dtype=np.float64)
            ok = self.d + lags < f.shape[0]
            resid[self.d + lags[ok]] -= rc[ok]
        return resid

    def _components(self, f: np.ndarray, sigma_min: float, delta: float):
        """Discrete components (values, probs) and their exact variance."""
        resid = self._residual(f)
        tiny = 1e-12 * abs(f[self.d])
        cur = resid[np.abs(resid) > tiny]
        vals = [np.outer(cur, self.levels)]
        probs = [np.full(vals[0].shape, 1.0 / self.m_levels)]
        var = self.es * float(cur @ cur)
        if self.quantization == "uniform" and self.lsb > 0:
            half = 0.5 * self.lsb * np.abs(self.w)
            big = half[half >= delta]
            if big.size:
                K = int(min(max(np.ceil(2 * big.max() / delta), 2), 512))
                # K-point midpoint rule of each uniform; the variance deficit
                # h^2/(3K^2) is made up by the Gaussian below
                u = (np.arange(K) + 0.5) / K * 2 - 1
                kv = np.outer(big, u)
                pad = max(K, self.m_levels)
                vals = [np.pad(vals[0], ((0, 0), (0, pad - self.m_levels))),
                        np.pad(kv, ((0, 0), (0, pad - K)))]
                probs = [np.pad(probs[0], ((0, 0), (0, pad - self.m_levels))),
                         np.pad(np.full(kv.shape, 1.0 / K), ((0, 0), (0, pad - K)))]
                var += float(np.sum(big ** 2)) / 3.0
            small = half[half < delta]
            extra_gauss = float(np.sum(small ** 2)) / 3.0
            if big.size:
                extra_gauss += float(np.sum(big ** 2)) / 3.0 / K ** 2
                var -= float(np.sum(big ** 2)) / 3.0 / K ** 2
        else:
            extra_gauss = 0.0
        values = np.ascontiguousarray(np.vstack(vals))
        p = np.ascontiguousarray(np.vstack(probs))
        return values, p, var, extra_gauss, resid

    def distribution(self, offset_ui: float = 0.0, tap_offsets_ui=None,
                     delta: float | None = None, grid_step: float | None = None
                     ) -> SlicerDistribution:
        """The slicer-input distribution at one sampling phase (one jitter point).

        delta: grid spacing (default sigma_min / resolution); grid_step: make delta an
        integer fraction of this (for eye maps on a voltage grid).
        """
        f, slopes = self.response(offset_ui, tap_offsets_ui)
        fd = float(f[self.d])
        nv = self._noise_var_per_level(f, slopes)
        sig_min = float(np.sqrt(max(nv.min(), 0.0)))
        floor = 1e-6 * max(abs(fd), 1e-3)
        sig_ref = max(sig_min, floor)
        if delta is None:
            delta = sig_ref / self.resolution
        resid = self._residual(f)
        spread = float(np.sum(np.abs(resid))) * float(np.max(np.abs(self.levels)))
        spread += (0.5 * self.lsb * float(np.sum(np.abs(self.w)))) if self.lsb else 0.0
        delta = max(delta, 2.0 * spread / self.max_bins)
        if grid_step is not None:
            delta = grid_step / max(1, math.ceil(grid_step / delta))
        values, probs, var_true, extra_gauss, _ = self._components(f, sig_ref, delta)
        pmf, k0 = isi_pmf(values, probs, delta)
        x = (k0 + np.arange(pmf.shape[0])) * delta
        mean = float(pmf @ x)
        var_grid = float(pmf @ (x - mean) ** 2)
        excess = var_grid - var_true   # what the linear split added
        gvar = nv + extra_gauss
        approx = False
        eff = gvar - excess
        lim = 0.25 * gvar
        if np.any(eff < lim):
            approx = True
            eff = np.maximum(eff, lim)
        eff = np.maximum(eff, floor ** 2)
        return SlicerDistribution(pmf=pmf, k0=int(k0), delta=float(delta),
                                  means=fd * self.levels, sigmas=np.sqrt(eff),
                                  levels=self.levels, thresholds=self.thresholds,
                                  bit_errors=self.bit_errors, isi_var=var_true,
                                  noise_var=gvar, approximate=approx)

    def _jitter_rows(self, offset_ui: float):
        J = self.jitter
        for q in range(J.weights.shape[0]):
            yield J.weights[q], J.offsets[q]

    # -- error rates ---------------------------------------------------------------------
    def ber(self, offset_ui: float = 0.0, *, error_estimate: bool = False) -> StatBer:
        """BER, SER and per-eye BER at a sampling-phase offset (UI), jitter-averaged."""
        tot = ser = mse = 0.0
        per_eye = np.zeros(self.m_levels - 1)
        for wq, row in self._jitter_rows(offset_ui):
            dist = self.distribution(offset_ui, row)
            P = dist.decision_matrix()
            tot += wq * float((P * self.bit_errors).sum() / (dist.m * dist.bits_per_symbol))
            ser += wq * float(P.sum() / dist.m)
            per_eye += wq * dist.ber_per_eye()
            fd = float(dist.means[-1] / dist.levels[-1])
            # slicer error v - a: (f_d - 1) a + ISI + quantization + Gaussian noise
            mse += wq * (self.es * (fd - 1.0) ** 2 + dist.isi_var + float(np.mean(dist.noise_var)))
        d0 = self.distribution(offset_ui)
        isi_rms = float(np.sqrt(self.es * np.sum(self._residual(self.response(offset_ui)[0]) ** 2)))
        sndr = 10 * np.log10(self.es / mse)
        rel = float("nan")
        if error_estimate:
            coarse = StatisticalEngine(self.system, self.taps, resolution=self.resolution / 2,
                                       dd_ui=self.dd_ui, jitter_points=self.jitter_points,
                                       quantization=self.quantization,
                                       max_bins=self.max_bins).ber(offset_ui).ber
            # the error falls as resolution^-3: the fine one is ~1/8 of the difference
            rel = abs(coarse - tot) / 7.0 / tot if tot > 0 else 0.0
        return StatBer(offset_ui=float(offset_ui), ber=float(tot), ser=float(ser),
                       ber_per_eye=per_eye, eye_names=self.eye_names, sndr_db=float(sndr),
                       sigma=np.sqrt(d0.noise_var), isi_rms=isi_rms,
                       rel_error=rel)

    # -- bathtubs ------------------------------------------------------------------------
    def _phase_grid_values(self, phases: np.ndarray, fn) -> np.ndarray:
        """fn(dist) -> array, averaged over the jitter at every phase. Quasi-static
        jitter: evaluated on a grid covering the jitter, interpolated in log."""
        J = self.jitter
        if J.weights.shape[0] == 1 and not J.span_ui:
            return np.array([fn(self.distribution(p)) for p in phases])
        if not J.quasi_static:
            out = []
            for p in phases:
                acc = None
                for wq, row in self._jitter_rows(p):
                    v = wq * fn(self.distribution(p, row))
                    acc = v if acc is None else acc + v
                out.append(acc)
            return np.array(out)
        step = float(np.min(np.diff(phases))) / 2 if phases.shape[0] > 1 else 1 / 128
        lo = phases.min() - J.span_ui - 2 * step
        hi = phases.max() + J.span_ui + 2 * step
        grid = np.arange(lo, hi + step / 2, step)
        vals = np.array([fn(self.distribution(p)) for p in grid])
        logv = np.log(np.maximum(vals, MAP_FLOOR))
        out = np.zeros((phases.shape[0],) + vals.shape[1:])
        for wq, tau in zip(J.weights, J.common):
            pos = (phases + tau - grid[0]) / step
            i = np.clip(np.floor(pos).astype(int), 0, grid.shape[0] - 2)
            t = (pos - i).reshape((-1,) + (1,) * (vals.ndim - 1))
            lv = logv[i] * (1 - t) + logv[i + 1] * t
            out += wq * np.exp(lv)
        return out

    def bathtub_horizontal(self, n_phases: int = 64, span_ui: float = 1.0) -> Bathtub:
        """BER per eye (at its slicer threshold) and total BER vs sampling phase."""
        phases = -span_ui / 2 + np.arange(n_phases) * span_ui / n_phases
        ne = self.m_levels - 1

        def fn(dist):
            return np.concatenate([dist.ber_per_eye(), [dist.ber()]])

        vals = self._phase_grid_values(phases, fn)
        return Bathtub(x=phases, ber_per_eye=vals[:, :ne].T.copy(), ber=vals[:, ne].copy(),
                       eye_names=self.eye_names, kind="horizontal", ui_s=self.ui_s,
                       volts_per_unit=self.volts_per_unit)

    def bathtub_vertical(self, offset_ui: float = 0.0, n_points: int = 401,
                         span: float | None = None) -> Bathtub:
        """Per-eye error rate vs threshold offset from each slicer threshold."""
        if span is None:
            span = float(np.min(np.diff(self.levels)))
        dy = np.linspace(-span / 2, span / 2, n_points)
        out = np.zeros((self.m_levels - 1, n_points))
        for wq, row in self._jitter_rows(offset_ui):
            dist = self.distribution(offset_ui, row)
            for e, t in enumerate(self.thresholds):
                out[e] += wq * dist.wrong_side(t + dy)
        return Bathtub(x=dy, ber_per_eye=out, ber=None, eye_names=self.eye_names,
                       kind="vertical", ui_s=self.ui_s, volts_per_unit=self.volts_per_unit)

    # -- eye -----------------------------------------------------------------------------
    def eye(self, n_phases: int = 64, n_bins: int = 256, y_range: float = 1.3) -> StatEye:
        """Statistical eye: the eye map over one UI of phase x n_bins slicer voltages."""
        import time

        t0 = time.perf_counter()
        ymax = y_range * float(np.max(np.abs(self.levels)))
        y = np.linspace(-ymax, ymax, n_bins)
        step = float(y[1] - y[0])
        phases = -0.5 + np.arange(n_phases) / n_phases

        def fn(dist):
            stride = int(round(step / dist.delta))
            return dist.wrong_side_grid(float(y[0]), stride, n_bins)

        def dist_at(p, row=None):
            return self.distribution(p, row, grid_step=step)

        J = self.jitter
        if J.weights.shape[0] == 1 and not J.span_ui:
            ber = np.array([fn(dist_at(p)) for p in phases])
        elif not J.quasi_static:
            ber = np.zeros((n_phases, n_bins))
            for k, p in enumerate(phases):
                for wq, row in self._jitter_rows(p):
                    ber[k] += wq * fn(dist_at(p, row))
        else:
            dstep = 1.0 / n_phases
            lo = phases.min() - J.span_ui - 2 * dstep
            hi = phases.max() + J.span_ui + 2 * dstep
            grid = np.arange(lo, hi + dstep / 2, dstep)
            logv = np.log(np.maximum(np.array([fn(dist_at(p)) for p in grid]), MAP_FLOOR))
            ber = np.zeros((n_phases, n_bins))
            for wq, tau in zip(J.weights, J.common):
                pos = (phases + tau - grid[0]) / dstep
                i = np.clip(np.floor(pos).astype(int), 0, grid.shape[0] - 2)
                t = (pos - i)[:, None]
                ber += wq * np.exp(logv[i] * (1 - t) + logv[i + 1] * t)
        means = np.array([float(self.response(p)[0][self.d]) * self.levels for p in phases])
        return StatEye(phases_ui=phases, y=y, ber=np.maximum(ber, MAP_FLOOR), means=means,
                       thresholds=self.thresholds, eye_names=self.eye_names, ui_s=self.ui_s,
                       volts_per_unit=self.volts_per_unit,
                       elapsed_s=time.perf_counter() - t0)

    # -- eye opening ---------------------------------------------------------------------
    def eye_opening(self, targets=DEFAULT_TARGETS, offset_ui: float = 0.0,
                    n_phases: int = 64, vertical: Bathtub | None = None,
                    horizontal: Bathtub | None = None) -> EyeOpening:
        """Eye height (at the phase offset) and eye width (at the slicer threshold) of
        every eye at each target BER."""
        from serdes.metrics.eye import opening_from_bathtub

        v = vertical or self.bathtub_vertical(offset_ui, n_points=801)
        h = horizontal or self.bathtub_horizontal(n_phases)
        targets = tuple(float(t) for t in targets)
        ne = self.m_levels - 1
        height = np.zeros((len(targets), ne))
        width = np.zeros((len(targets), ne))
        for k, tb in enumerate(targets):
            for e in range(ne):
                height[k, e] = opening_from_bathtub(v.x, v.ber_per_eye[e], tb, centre=0.0)
                width[k, e] = opening_from_bathtub(h.x, h.ber_per_eye[e], tb, centre=offset_ui)
        return EyeOpening(targets=targets, eye_names=self.eye_names, height=height,
                          width_ui=width, volts_per_unit=self.volts_per_unit, ui_s=self.ui_s,
                          offset_ui=offset_ui)

    # -- ADC clipping --------------------------------------------------------------------
    def clip_probability(self, offset_ui: float = 0.0) -> float:
        """P(|ADC input| > full scale / 2) at the phase (clipping is not modelled in the
        error rates; this says whether it matters)."""
        link = self.link
        fs = link.adc.fullscale_v / 2.0
        h, s = self._pulse_at(offset_ui)
        var = (link.noise.variance + self.sigma_tx ** 2 * float(h @ h)
               + link.adc.enob_noise_sigma_v ** 2 + self.rj_ui ** 2 * self.es * float(s @ s))
        sig = math.sqrt(max(var, 1e-30))
        delta = sig / self.resolution
        spread = float(np.sum(np.abs(h)))
        delta = max(delta, 2 * spread / self.max_bins)
        vals = np.ascontiguousarray(np.outer(h, self.levels))
        probs = np.full(vals.shape, 1.0 / self.m_levels)
        pmf, k0 = isi_pmf(vals, probs, delta)
        x = (k0 + np.arange(pmf.shape[0])) * delta
        excess = float(pmf @ (x - pmf @ x) ** 2) - self.es * float(h @ h)
        sig = math.sqrt(max(var - excess, 0.25 * var))
        up = tail_points(pmf, k0, delta, np.array([fs]), sig, True)[0]
        lo = tail_points(pmf, k0, delta, np.array([-fs]), sig, False)[0]
        return float(up + lo)


# ========================================================== DFE error propagation
def dfe_error_propagation(engine: StatisticalEngine, offset_ui: float = 0.0,
                          max_burst: int = 16) -> dict | None:
    """Markov model of DFE error propagation (first DFE tap only).

    State: the error e = (decided - sent) level of the previous symbol. Given e, the
    DFE subtracts b_1 (a + e) instead of b_1 a, i.e. shifts the slicer input by
    -b_1 e. The next symbol's decision probabilities come from the statistical
    distribution shifted by that amount (symbols and noise taken as independent of
    the previous error, which is the model's approximation). Returns the predicted
    BER with propagation, its ratio to the error-free-feedback BER, and the
    distribution of burst lengths (runs of consecutive symbol errors).
    """
    b = engine.b
    if b.shape[0] == 0 or not np.any(b):
        return None
    m = engine.m_levels
    lv = engine.levels
    dist = engine.distribution(offset_ui)
    bits = engine.bit_errors
    bps = dist.bits_per_symbol
    # error values e = lv[j] - lv[i]; index states by (i, j) pair's difference
    diffs = sorted({round(float(lv[j] - lv[i]), 12) for i in range(m) for j in range(m)})
    idx = {d: k for k, d in enumerate(diffs)}
    ns = len(diffs)
    T = np.zeros((ns, ns))       # T[s, s'] = P(next error state s' | state s)
    bit_rate = np.zeros(ns)      # expected bit errors of the next symbol given state s
    for s, e in enumerate(diffs):
        shift = -b[0] * e
        shifted = SlicerDistribution(pmf=dist.pmf, k0=dist.k0, delta=dist.delta,
                                     means=dist.means + shift, sigmas=dist.sigmas,
                                     levels=dist.levels, thresholds=dist.thresholds,
                                     bit_errors=dist.bit_errors, isi_var=dist.isi_var,
                                     noise_var=dist.noise_var)
        P = shifted.decision_matrix()
        for i in range(m):
            P[i, i] = 1.0 - P[i].sum() + P[i, i]
            P[i, i] = max(P[i, i], 0.0)
        for i in range(m):
            for j in range(m):
                T[s, idx[round(float(lv[j] - lv[i]), 12)]] += P[i, j] / m
        bit_rate[s] = float((P * bits).sum() / m)
    s0 = idx[0.0]
    # stationary distribution
    evals, evecs = np.linalg.eig(T.T)
    k = int(np.argmin(np.abs(evals - 1.0)))
    pi = np.real(evecs[:, k])
    pi = pi / pi.sum()
    ber_prop = float(pi @ bit_rate) / bps
    ber_free = float(bit_rate[s0]) / bps
    err = np.arange(ns) != s0
    p_ee = float(1.0 - (pi[err] @ T[err, s0]) / pi[err].sum()) if pi[err].sum() > 0 else 0.0
    # burst lengths: start from the error state distribution right after a clean symbol
    start = T[s0].copy()
    start[s0] = 0.0
    p_start = start.sum()
    hist = {}
    if p_start > 0:
        cur = start / p_start
        Te = T.copy()
        for L in range(1, max_burst + 1):
            stop = float(cur @ Te[:, s0])     # the next symbol is clean
            hist[L] = stop
            cur = cur @ Te
            cur[s0] = 0.0
            if cur.sum() < 1e-12:
                break
    mean_len = sum(L * p for L, p in hist.items()) / max(sum(hist.values()), 1e-300)
    return {"ber_with_propagation": ber_prop, "ber_correct_feedback": ber_free,
            "ratio": ber_prop / ber_free if ber_free > 0 else float("nan"),
            "p_error_after_error": p_ee,
            "mean_burst_length": float(mean_len),
            "burst_length_pmf": {int(L): float(p) for L, p in hist.items() if p > 1e-9}}


def distribution_from_cursors(main: float, cursors, levels, sigma: float, *,
                              resolution: float = 16.0, delta: float | None = None
                              ) -> SlicerDistribution:
    """Slicer distribution for a given main cursor, residual ISI cursors and Gaussian
    noise std (no link needed): the engine's ISI convolution and grid correction."""
    levels = np.asarray(levels, dtype=np.float64)
    m = levels.shape[0]
    cur = np.asarray(cursors, dtype=np.float64)
    cur = cur[cur != 0.0]
    if sigma <= 0:
        raise ValueError(f"sigma = {sigma!r}: expected a number > 0")
    delta = sigma / resolution if delta is None else float(delta)
    vals = np.ascontiguousarray(np.outer(cur, levels)) if cur.size else np.zeros((1, m))
    probs = np.full(vals.shape, 1.0 / m)
    pmf, k0 = isi_pmf(vals, probs, delta)
    es = float(np.mean(levels ** 2))
    var_true = es * float(cur @ cur)
    x = (k0 + np.arange(pmf.shape[0])) * delta
    excess = float(pmf @ (x - pmf @ x) ** 2) - var_true
    gvar = np.full(m, float(sigma) ** 2)
    eff = np.maximum(gvar - excess, 0.25 * gvar)
    return SlicerDistribution(pmf=pmf, k0=int(k0), delta=delta, means=main * levels,
                              sigmas=np.sqrt(eff), levels=levels,
                              thresholds=(levels[1:] + levels[:-1]) / 2,
                              bit_errors=gray_bit_errors(m), isi_var=var_true, noise_var=gvar,
                              approximate=bool(np.any(gvar - excess < 0.25 * gvar)))
