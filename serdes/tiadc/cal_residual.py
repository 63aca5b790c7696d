"""The mismatch a background-calibrated interleaved ADC keeps (:mod:`serdes.dsp.ti_cal`),
in closed form, after settling (the fine gear's steps):

* offset: the LMS mean estimator o += mu (x - o) is unbiased and fluctuates with
  var(o_l) = mu / (2 - mu) sigma_x^2, independently per lane (sigma_x^2: power of the
  ADC input);
* gain: the power-normalising c += mu c (P - u^2) / P fluctuates with
  var(dc / c) = mu var(u^2) / (4 P^2) per lane; var(u^2) = E[x^4] - P^2 from the PAM
  levels' fourth cumulant through the pulse (PAM4 is lighter-tailed than Gaussian);
* skew: the detector e_k = y_{k-1} (y_k - y_{k-2}) = z_k - z_{k-1}, z_k = y_{k-1} y_k,
  summed over a chunk for lane l = (k - 1) mod N, is Z_{l+1} - Z_l (Z_m: the sum of
  z_k over k = m mod N), so its noise in lane-mode q (a DFT over the lanes) is
  |e^{j theta_q} - 1|^2 = lambda_q = 2 - 2 cos(theta_q) times that of Z, which is
  (chunk / N) N S_z(theta_q) (S_z: the spectrum of z, from the ADC output's
  autocorrelation and the levels' fourth cumulant). The loop solves the chunk's means
  with its own R'(T) estimate r^ (:func:`loop_slopes`: a windowed differentiator on
  the samples, E[y_{c-1} sum_n h_n (y_{c+n} - y_{c-n})] = sum_n h_n (R(n+1) - R(n-1)),
  R the ADC output's symbol-spaced autocorrelation), so each chunk leaves mode q the
  noise nu_q = S_z(theta_q) / (chunk r^2 lambda_q) per lane. The detector's true
  response to the lanes' errors comes from the pulse's slope on either side of the lag:
  a eps_{l+1} + (b - a) eps_l - b eps_{l-1}, a = E[a^2] sum_j p_j p'_{j+1},
  b = E[a^2] sum_j p'_j p_{j+1} (a PAM signal is cyclostationary: b = -a only nearly),
  so trimming a fraction g of mode q's solution moves it by g rho_q,
  rho_q = (a e^{j theta} + b - a - b e^{-j theta}) / (r^ (2 cos theta - 2)), and the
  trims keep g^2 nu_q / (1 - |1 - g rho_q|^2) of it (g / (2 - g) nu_q when r^ = a = -b,
  the earlier closed form). The sampled estimate r^ is ~10 % above the pulse's a on the
  default link (the differentiator reads an aliased spectrum), so the loop's effective
  gain is ~g / 1.1 and the residual ~0.9x the g / (2 - g) form
  (benchmarks/tiadc_cal_residual.py). With the gain LMS running (mu_gain > 0) the trims
  and the lanes' gain errors gamma form one loop per lane mode (:func:`skew_gain_modes`:
  a 2 x 2 state, skew and gain, chunk to chunk, its covariance from the discrete
  Lyapunov equation): a lane sampled eps late has the power P + P' eps, so the gain LMS
  moves it towards gamma = -kappa eps (kappa = E[a^2] sum p_j p'_j / P; measured on 8
  lanes, eps = +-0.05 UI: 1.034e-3 +- 0.091e-3 against 1.128e-3), the detector reads a
  gain error as R(1) (gamma_(l+1) - gamma_(l-1)) (measured 2.38e-5 +- 0.02e-5 against
  2.39e-5 for a 2 % gain step), and, what matters most, the detector's chunk noise and
  the gain LMS's noise are correlated (a lane whose samples ran large lowers its gain and
  reads large on the detector; cross-spectrum of x_k^2 and the detector, from R and the
  levels' fourth cumulant). The kept variance falls to 0.90x (8 lanes, chunk 4096,
  g = 1/8, the default steps) and 0.81x (64 lanes, chunk 65536) of the skew loop alone;
  tests/test_ti_cal_residual.py checks it on 8 lanes (mu_gain 4e-3, g = 1 and 1/8),
  benchmarks/tiadc_cal_residual.py in the receiver chain. The lanes' residuals are
  correlated (low modes dominate): their covariance is circulant,
  C[m] = sum_{q != 0} cos(theta_q m) v_q (UI^2, theta_q = 2 pi q / N, v_q the kept
  variance of mode q per lane).

Through an FFE w (tap i sees lane (l - i) mod N), offset and gain give Gaussian terms
whose variance does not depend on the output phase l:

    offset  sigma_o^2 sum_{i, i'} w_i w_i' [i = i' mod N]
    gain    sigma_g^2 sum_{i, i'} w_i w_i' [i = i' mod N] R_x(i - i')

with R_x the ADC input's autocorrelation. The skew residual, mostly in the lowest lane
modes, moves the taps of one output phase nearly alike: :class:`SkewTerm` splits it into
a common sampling-phase offset and a first-order rest. The calibration removes the lanes'
static offsets, gains and skews; a T/H bandwidth mismatch is not calibrated.
"""

from __future__ import annotations

import numpy as np


def _input_autocorr(link, lags: int, converter: bool = False) -> np.ndarray:
    """R_x[k], k < lags, of the ADC input: PAM symbols (plus TX noise) through the pulse,
    plus the RX noise (V^2); with ``converter``, plus the converter's white noise
    (quantization and ENOB) at lag 0: the ADC output the skew detector reads."""
    p = link.pulse.taps
    ea = link.level_power + link.tx_noise_sigma ** 2
    r = np.array([ea * float(p[:p.shape[0] - k] @ p[k:]) if k < p.shape[0] else 0.0
                  for k in range(lags)])
    ac = link.noise.autocorr   # the RX noise at the ADC input (the budget's rx_thermal)
    n = min(lags, ac.shape[0])
    r[:n] += ac[:n]
    if converter and lags > 0:
        r[0] += float(link.adc.noise_v2)
    return r


def offset_variance(link, settings) -> float:
    """Per-lane variance (V^2) of the offset estimate after settling (fine gear)."""
    mu = settings.mu_offset * settings.fine_ratio
    return float(mu / (2 - mu) * _input_autocorr(link, 1)[0])


def gain_variance(link, settings) -> float:
    """Per-lane variance of the relative gain correction after settling (fine gear)."""
    mu = settings.mu_gain * settings.fine_ratio
    p = link.pulse.taps
    lv = np.asarray(link.levels, dtype=np.float64)
    k4 = float(np.mean(lv ** 4)) - 3 * float(np.mean(lv ** 2)) ** 2   # TX noise: Gaussian
    power = float(_input_autocorr(link, 1)[0])
    x4 = 3 * power ** 2 + k4 * float(np.sum(p ** 4))
    return float(mu * (x4 - power ** 2) / (4 * power ** 2))


def _product_spectrum(link, theta: np.ndarray) -> np.ndarray:
    """S_z(theta) = sum_d c_z(d) cos(theta d): the spectrum of z_k = y_{k-1} y_k, with
    c_z(d) = R(d)^2 + R(d-1) R(d+1) + k4 sum_j A_j A_{j+d}, A_j = p_{j-1} p_j (R the
    ADC input's autocorrelation, k4 the PAM levels' fourth cumulant)."""
    p = link.pulse.taps
    n = p.shape[0] + 2
    r = _input_autocorr(link, n + 2, converter=True)
    rr = np.concatenate([r[:0:-1], r])            # R(-n-1 .. n+1)
    z0 = r.shape[0] - 1
    d = np.arange(-n, n + 1)
    cz = rr[z0 + d] ** 2 + rr[z0 + d - 1] * rr[z0 + d + 1]
    lv = np.asarray(link.levels, dtype=np.float64)
    k4 = float(np.mean(lv ** 4)) - 3 * float(np.mean(lv ** 2)) ** 2
    a = p[:-1] * p[1:]
    ac = np.correlate(a, a, mode="full")           # lags -(len-1) .. len-1
    mid = a.shape[0] - 1
    ok = np.abs(d) <= mid
    cz[ok] += k4 * ac[mid + d[ok]]
    return np.cos(np.outer(theta, d)) @ cz


def loop_slopes(link, settings) -> tuple[float, float, float]:
    """(a, b, r^): the detector's sensitivities to the later and the earlier sample's
    timing, E[a^2] sum_j p_j p'_{j+1} and E[a^2] sum_j p'_j p_{j+1} (V^2 per UI), and the
    loop's R'(T) estimate on the samples, sum_n h_n (R(n+1) - R(n-1)) (see the module)."""
    from serdes.dsp.ti_cal import differentiator

    p, slope = link.pulse.taps, link.pulse.slope()
    ea = link.level_power + link.tx_noise_sigma ** 2
    a = ea * float(p[:-1] @ slope[1:])
    b = ea * float(slope[:-1] @ p[1:])
    h = differentiator(settings.deriv_taps)
    r = _input_autocorr(link, h.shape[0] + 2, converter=True)
    n = np.arange(1, h.shape[0] + 1)
    return a, b, float(h @ (r[n + 1] - r[np.abs(n - 1)]))


def _skew_modes(link, settings, chunk_symbols: int):
    """theta_q, lambda_q's sign-flipped form 2 cos(theta_q) - 2, nu_q, rho_q and r^ of the
    skew loop's lane modes q = 1 .. N-1 (see the module)."""
    lanes = int(link.adc.lanes)
    theta = 2 * np.pi * np.arange(1, lanes) / lanes
    lap = 2 * np.cos(theta) - 2
    a, b, r_est = loop_slopes(link, settings)
    nu = _product_spectrum(link, theta) / (chunk_symbols * r_est ** 2 * -lap)
    rho = (a * np.exp(1j * theta) + b - a - b * np.exp(-1j * theta)) / (r_est * lap)
    return theta, lap, nu, rho, r_est


def _gain_spectra(link, theta: np.ndarray):
    """(S_w, S_ew): at theta, the spectrum of the squared ADC output x_k^2 (what the gain
    LMS reads) and the cross-spectrum sum_d e^(-j theta d) Cov(e_(m+d), x_m^2) of the skew
    detector e_k = x_(k-1) (x_k - x_(k-2)) with it: Gaussian parts 2 R(d)^2 and
    2 R(d-1) R(d) (the latter for z_k = x_(k-1) x_k; e_k = z_k - z_(k-1) multiplies it by
    1 - e^(-j theta)), plus the levels' fourth cumulant k4 through the pulse."""
    p = link.pulse.taps
    n = p.shape[0] + 2
    r = _input_autocorr(link, n + 2, converter=True)
    rr = np.concatenate([r[:0:-1], r])
    z0 = r.shape[0] - 1
    d = np.arange(-n, n + 1)
    lv = np.asarray(link.levels, dtype=np.float64)
    k4 = float(np.mean(lv ** 4)) - 3 * float(np.mean(lv ** 2)) ** 2
    sq = p * p
    prod = np.concatenate([[0.0], p[:-1] * p[1:]])     # p_(j-1) p_j
    c_ww = 2 * rr[z0 + d] ** 2
    c_zw = 2 * rr[z0 + d - 1] * rr[z0 + d]
    mid = p.shape[0] - 1
    ok = np.abs(d) <= mid
    c_ww[ok] += k4 * np.correlate(sq, sq, mode="full")[mid + d[ok]]
    c_zw[ok] += k4 * np.correlate(prod, sq, mode="full")[mid + d[ok]]
    ph = np.exp(-1j * np.outer(theta, d))
    return (ph @ c_ww).real, (1 - np.exp(-1j * theta)) * (ph @ c_zw)


def skew_gain_modes(link, settings, chunk_symbols: int):
    """(F, X), each (N-1, 2, 2): per lane mode q = 1 .. N-1, the chunk-to-chunk transition
    of the joint state (skew residual eps_q in UI, gain error gamma_q at the chunk's start)
    of the trims and the running gain LMS, and its stationary covariance
    X = F X F^H + Q (the modes' per-lane normalisation of :func:`skew_mode_variance`).

    Within a chunk (M = chunk / N samples a lane) the gain LMS moves gamma by
    beta = 1 - 2 mu a sample towards -kappa eps_q (a lane sampled eps late has the power
    P + P' eps, kappa = P' / (2 P) = E[a^2] sum p_j p'_j / P per UI), plus its noise
    w = mu (P - x^2) / P, of spectrum mu^2 S_w(theta) / P^2 (:func:`_gain_spectra`); the
    detector reads the chunk's mean gain through R(1) (gamma_(l+1) - gamma_(l-1)), i.e.
    c_q = 2 j sin(theta) R(1) / (r^ lambda) in the trims' units, and its noise is
    correlated with the gain LMS's (the cross-spectrum S_ew: a lane whose samples ran
    large this chunk lowers its gain and reads large on the detector)."""
    lanes = int(link.adc.lanes)
    g = settings.skew_gain * settings.fine_ratio
    mu = settings.mu_gain * settings.fine_ratio
    theta, lap, nu, rho, r_est = _skew_modes(link, settings, chunk_symbols)
    r = _input_autocorr(link, 2, converter=True)
    power = float(r[0])
    ea = link.level_power + link.tx_noise_sigma ** 2
    kappa = ea * float(link.pulse.taps @ link.pulse.slope()) / power
    c = 2j * np.sin(theta) * r[1] / (r_est * lap)
    m = max(int(chunk_symbols) // lanes, 1)
    beta = 1 - 2 * mu
    t = np.arange(m)
    w_end = beta ** (m - 1 - t)                   # a sample's noise in gamma at the end
    w_mean = (1 - w_end) / (2 * mu * m)          # ... in the chunk's mean of gamma
    bm, am = beta ** m, float(np.sum(beta ** t)) / m
    s_w, s_ew = _gain_spectra(link, theta)
    sig2 = mu * mu * s_w / (lanes * power ** 2)
    chi = -mu * np.exp(1j * theta) * s_ew / (lanes * m * power * r_est * lap)
    f = np.empty((theta.shape[0], 2, 2), dtype=complex)
    f[:, 0, 0] = 1 - g * rho + g * c * (1 - am) * kappa
    f[:, 0, 1] = -g * c * am
    f[:, 1, 0] = -(1 - bm) * kappa
    f[:, 1, 1] = bm
    q = np.empty_like(f)
    q[:, 0, 0] = g * g * (np.abs(c) ** 2 * sig2 * np.sum(w_mean ** 2) + nu
                          + 2 * np.real(c * np.conj(chi)) * np.sum(w_mean))
    q[:, 0, 1] = -g * c * sig2 * np.sum(w_mean * w_end) - g * chi * np.sum(w_end)
    q[:, 1, 0] = np.conj(q[:, 0, 1])
    q[:, 1, 1] = sig2 * np.sum(w_end ** 2)
    if np.any(np.max(np.abs(np.linalg.eigvals(f)), axis=1) >= 1):
        raise ValueError("skew trim loop unstable with the gain LMS for some lane mode")
    k = np.eye(4) - np.einsum("qik,qjl->qijkl", f, f.conj()).reshape(-1, 4, 4)
    x = np.linalg.solve(k, q.reshape(-1, 4, 1)).reshape(-1, 2, 2)
    return f, x


def skew_mode_variance(link, settings, chunk_symbols: int) -> np.ndarray:
    """v_q, q = 1 .. N-1: the kept variance (UI^2 per lane) of lane-mode q of the skew
    residual after settling (fine trim gain); see the module. With the gain LMS running
    (mu_gain > 0) from the joint loop of :func:`skew_gain_modes`."""
    if settings.mu_gain * settings.fine_ratio > 0:
        return skew_gain_modes(link, settings, chunk_symbols)[1][:, 0, 0].real
    g = settings.skew_gain * settings.fine_ratio
    theta, lap, nu, rho, r_est = _skew_modes(link, settings, chunk_symbols)
    keep = 1 - np.abs(1 - g * rho) ** 2
    if np.any(keep <= 0):
        raise ValueError("skew trim loop unstable: |1 - g rho_q| >= 1 for some lane mode")
    return g * g * nu / keep


def skew_covariance(link, settings, chunk_symbols: int) -> np.ndarray:
    """C[m], m = 0 .. N-1: covariance (UI^2) of the lanes' skew residuals at lane distance
    m after settling (fine trim gain); see the module."""
    lanes = int(link.adc.lanes)
    g = settings.skew_gain * settings.fine_ratio
    if lanes < 2 or g <= 0:
        return np.zeros(lanes)
    theta = 2 * np.pi * np.arange(1, lanes) / lanes
    m = np.arange(lanes)
    return np.cos(np.outer(m, theta)) @ skew_mode_variance(link, settings, chunk_symbols)


def skew_rms_s(link, settings, chunk_symbols: int) -> float:
    """rms over the lanes of the skew residual (s)."""
    return float(np.sqrt(skew_covariance(link, settings, chunk_symbols)[0])) * link.ui_s


def ffe_variance(link, w, settings) -> dict[str, float]:
    """The offset and gain terms (V^2) at the output of the FFE ``w`` (see the module);
    the skew term depends on the sampling instants: :class:`SkewTerm`."""
    w = np.asarray(w, dtype=np.float64)
    n, lanes = w.shape[0], int(link.adc.lanes)
    d = np.subtract.outer(np.arange(n), np.arange(n))
    same = (d % lanes) == 0
    ww = np.outer(w, w)
    rx = _input_autocorr(link, n)[np.abs(d)]
    return {"offset": offset_variance(link, settings) * float(np.sum(ww[same])),
            "gain": gain_variance(link, settings) * float(np.sum(ww[same] * rx[same]))}


class SkewTerm:
    """The skew residual seen by the FFE taps of one output phase l, split by regression
    on the lane at the main cursor's tap d: eps_{l-i} = beta_i eps_c + r_i with
    eps_c = eps_{l-d} of variance C[0] (``common_var``, UI^2), beta_i = C[i - d] / C[0]
    (``profile``) and r_i independent of eps_c (Gaussian), of covariance
    K[i, i'] = C[i - i'] - C[i - d] C[i' - d] / C[0]. The statistical engine averages
    over eps_c exactly (a quadrature of sampling offsets beta_i eps_c); the rest is taken
    to first order through the pulse slope at each sample's own instant
    (:meth:`variance`): E[a^2] sum_{i, i'} w_i w_i' K[i, i'] sum_j p'_i(j - i)
    p'_i'(j - i'), p'_i the slope at FFE tap i's sampling offset (a sampling phase or a
    jitter point moves it off the pulse peak, where the slope, and so the skew's cost,
    grows)."""

    def __init__(self, link, w, delay: int, settings, chunk_symbols: int):
        self.w = np.asarray(w, dtype=np.float64)
        n, lanes = self.w.shape[0], int(link.adc.lanes)
        c = skew_covariance(link, settings, chunk_symbols)
        i = np.arange(n)
        cd = c[(i - int(delay)) % lanes]
        self.common_var = float(c[0])
        self.profile = cd / c[0] if c[0] > 0 else np.zeros(n)
        k = c[np.subtract.outer(i, i) % lanes] - np.outer(cd, self.profile)
        self._ea = link.level_power + link.tx_noise_sigma ** 2
        self._pulse = link.pulse
        self._slopes: dict = {}
        # the rest's costliest direction: moved out of the Gaussian term (see the class)
        self.mode = self._top_mode(k) if c[0] > 0 else np.zeros(n)
        k = k - np.outer(self.mode, self.mode)
        self._wcw = np.outer(self.w, self.w) * k
        self._active = bool(np.any(np.abs(k) > 1e-12 * max(c[0], 1e-300)))

    def _top_mode(self, k: np.ndarray) -> np.ndarray:
        """d (UI per unit normal z): the direction r = d z of the rest r ~ N(0, K)
        whose cost at the FFE output, E[a^2] r' (w w' o G) r (G the slopes' Gram matrix at
        the pulse peak), is largest: d = K^(1/2) y, y the top eigenvector of
        K^(1/2)' (w w' o G) K^(1/2)."""
        s, u = np.linalg.eigh(k)
        half = u * np.sqrt(np.clip(s, 0.0, None))[None, :]
        n, slope = self.w.shape[0], self._slope(0.0)
        m = np.zeros((n, n + slope.shape[0] - 1))
        for i in range(n):
            m[i, i:i + slope.shape[0]] = slope
        b = np.outer(self.w, self.w) * (m @ m.T)
        ev, y = np.linalg.eigh(half.T @ b @ half)
        return half @ y[:, -1]

    def _slope(self, offset_ui: float) -> np.ndarray:
        key = round(float(offset_ui), 12)
        s = self._slopes.get(key)
        if s is None:
            if len(self._slopes) > 4096:
                self._slopes.clear()
            s = self._slopes[key] = self._pulse.slope(offset_ui)
        return s

    def variance(self, offset_ui: float = 0.0, tap_offsets_ui=None) -> float:
        if not self._active:
            return 0.0
        n = self.w.shape[0]
        if tap_offsets_ui is None or np.all(tap_offsets_ui == tap_offsets_ui[0]):
            extra = 0.0 if tap_offsets_ui is None else float(tap_offsets_ui[0])
            rows = np.broadcast_to(self._slope(offset_ui + extra), (n, self._pulse.n_ui))
        else:
            rows = self._slopes_at([offset_ui + float(t) for t in tap_offsets_ui])
        L = rows.shape[1]
        m = np.zeros((n, n + L - 1))
        m[np.arange(n)[:, None], np.arange(n)[:, None] + np.arange(L)[None, :]] = rows
        return self._ea * float(np.sum(self._wcw * (m @ m.T)))

    def variance_many(self, offset_ui: float, tap_offsets) -> np.ndarray:
        """:meth:`variance` of every row of ``tap_offsets`` (rows, taps): the slopes of
        all rows re-sampled in one call and their Gram matrices in one batched product
        (equal to :meth:`variance` row by row up to rounding)."""
        from serdes.engines.stat.rj import resample

        t = np.asarray(tap_offsets, dtype=np.float64)
        if not self._active:
            return np.zeros(t.shape[0])
        n, p, m = self.w.shape[0], self._pulse, self._pulse.m
        f = ((offset_ui + t) * m).ravel()
        rows = ((resample(p, f + 0.5) - resample(p, f - 0.5)) * m).reshape(t.shape[0], n, -1)
        L = rows.shape[2]
        g = np.zeros((t.shape[0], n, n + L - 1))
        g[:, np.arange(n)[:, None], np.arange(n)[:, None] + np.arange(L)[None, :]] = rows
        return self._ea * np.sum(self._wcw[None] * (g @ g.transpose(0, 2, 1)), axis=(1, 2))

    def _slopes_at(self, offsets_ui) -> np.ndarray:
        """:meth:`_slope` at each offset (rows), the missing ones re-sampled in one call
        (the same positions and interpolation as ``Pulse.slope``)."""
        from serdes.engines.stat.rj import resample

        keys = [round(float(o), 12) for o in offsets_ui]
        wanted: dict = {}
        for k, o in zip(keys, offsets_ui):
            wanted.setdefault(k, float(o))      # the first offset of a key, as _slope
        need = {k: o for k, o in wanted.items() if k not in self._slopes}
        if need:
            if len(self._slopes) + len(need) > 4096:
                self._slopes.clear()
                need = wanted
            p, m = self._pulse, self._pulse.m
            f = [o * m for o in need.values()]
            hi = resample(p, [x + 0.5 for x in f])
            lo = resample(p, [x - 0.5 for x in f])
            for k, a, b in zip(need, hi, lo):
                self._slopes[k] = (a - b) * m
        return np.stack([self._slopes[k] for k in keys])
