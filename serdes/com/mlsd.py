"""COM with the maximum-likelihood sequence detector reference receiver (802.3dj Annex
178A.1.10, the rule as PyChOpMarg 3.4 documents it for eqs. 178A-49..56).

The MLSD's COM is the DFE receiver's COM (one DFE tap, b = b(1)) plus the MLSD's advantage:

    COM = COM_DFE + max(0, 20 log10(A_an^-1(DER_MLSD) / A_s))                  (178A-49)

* Added receiver noise (178A.1.10.1): the noise + interference distribution of COM_DFE
  with its Gaussian variance sigma_G^2 + g_an sigma_rn^2 (sigma_rn^2 the RX noise at the
  detector), g_an chosen so that its DER_0 quantile is 10^(dCOM_an/20) times COM_DFE's:
  the MLSD is judged at a noise where the DFE receiver would lose dCOM_an (3 dB).
* Error events (178A-51): the alternating symbol error e = (1, -1, 1, ...) of length j
  through the 1 + b D channel the MLSD assumes, u = e * (1, b) = (1, -(1-b), (1-b), ...,
  (-1)^(j+1) b) (j + 1 entries).
* The event's error ratio: the noise projected on u exceeds A_s |u|^2. Its distribution
  is taken as that of sum_i u_i n_i with the n_i independent, each with the added-noise
  PMF (178A-54/55: p_an * p_an(./b) * p_an(./(1-b))^(j-1)), and the threshold rescaled
  for the correlation of the noise, x_j = A_s |u|^3 / sqrt(u^T V u), V the Toeplitz
  matrix of the normalised autocorrelation rho of noise + residual ISI at the detector
  at whole-UI lags (178A-56).
* DER_MLSD = sum_j ((L-1)/L)^(j-1) P(sum u_i n_i <= -x_j)                    (178A-50),
  summed until a term adds less than 1e-4 of the sum (as MATLAB COM truncates it).

The CDF at a point is its value at the first grid point at or above it, and a quantile
the first grid point where the CDF reaches the probability (MATLAB COM's conventions, as
PyChOpMarg documents them; ``noise.a_ni`` uses the same quantile).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.fft import irfft, next_fast_len, rfft

from serdes.com.noise import fft_convolve
from serdes.errors import ConfigError

__all__ = ["MlsdResult", "added_noise", "autocorr", "der_mlsd", "error_event", "mlsd_com",
           "quantile", "scaled_pmf"]

TERM_REL = 1e-4


@dataclass
class MlsdResult:
    com_db: float          # COM with the MLSD reference receiver (never below com_dfe_db)
    com_dfe_db: float      # COM of the DFE receiver (one DFE tap)
    gain_db: float | None  # 20 log10(A_an^-1(DER_MLSD) / A_s) (may be negative; None
                           # when DER_MLSD reaches the median of p_an)
    der_mlsd: float
    g_an: float            # added RX noise, in units of the RX noise variance
    terms: int             # error-event lengths summed
    b: float               # the DFE tap the MLSD's 1 + b D channel uses

    def as_dict(self) -> dict:
        return {"com_db": self.com_db, "com_dfe_db": self.com_dfe_db, "gain_db": self.gain_db,
                "der_mlsd": self.der_mlsd, "g_an": self.g_an, "terms": self.terms, "b": self.b}


# An FFT convolution's rounding leaves about eps times its peak in every bin (1e-21 in the
# bins of a 550k-point PMF whose peak is 1e-5), half of it positive; kept, it stopped
# ``_trim`` from dropping any tail and every later transform ran over the whole grid.
# Values below ROUNDING_FLOOR times the peak are rounding and set to 0 (on the added-noise
# PMFs of real channels, 64-72 % of the bins holding about 1e-15 of the mass: far below
# any tail 178A-50 or a quantile reads).
ROUNDING_FLOOR = 32 * np.finfo(float).eps


def _above_floor(x: np.ndarray, peak: float) -> np.ndarray:
    """Where ``x`` (an FFT convolution's output whose peak is ``peak``) holds mass, not
    rounding."""
    return x > ROUNDING_FLOOR * peak


def _as_pmf(x: np.ndarray) -> np.ndarray:
    """A PMF from an FFT convolution's output: its rounding floor set to 0, sum 1."""
    out = np.where(_above_floor(x, x.max()), x, 0.0)
    return out / out.sum()


def _pmf_conv(a: np.ndarray, b: np.ndarray, same: bool) -> np.ndarray:
    return _as_pmf(fft_convolve(a, b, mode="same" if same else "full"))


def _trim(p: np.ndarray, tol: float = 1e-30) -> np.ndarray:
    """Drop the same number of bins at both ends, as long as each dropped tail holds < tol."""
    c = np.cumsum(p)
    lo = int(np.searchsorted(c, tol))
    hi = int(np.searchsorted(c[-1] - c[::-1], tol))
    n = min(lo, hi, (len(p) - 1) // 2)
    return p[n:len(p) - n] if n else p


def scaled_pmf(p: np.ndarray, a: float) -> np.ndarray:
    """PMF of a Y on the (centred, odd) grid of Y's PMF ``p``: each bin's mass spread
    uniformly over the bin, the CDF of a Y read at the bin edges (linear in between)."""
    n = len(p)
    if a == 0:
        out = np.zeros(n)
        out[n // 2] = 1.0
        return out
    if a < 0:
        return scaled_pmf(p[::-1], -a)
    edges = np.arange(n + 1) - n / 2.0
    cdf = np.concatenate(([0.0], np.cumsum(p)))
    out = np.diff(np.interp(edges / a, edges, cdf, left=0.0, right=cdf[-1]))
    return out / out.sum()


def _gauss(n: int, ystep: float, var: float) -> np.ndarray:
    if var <= 0:
        out = np.zeros(n)
        out[n // 2] = 1.0
        return out
    # beyond 38.7 sigma exp(-y^2 / 2 var) is below the smallest double (0): not computed
    m = min(n // 2, int(38.7 * math.sqrt(var) / ystep) + 1)
    out = np.zeros(n)
    y = np.arange(-m, m + 1) * ystep
    out[n // 2 - m:n // 2 + m + 1] = np.exp(-y ** 2 / (2 * var))
    return out / out.sum()


def quantile(p: np.ndarray, ystep: float, prob: float) -> float:
    """The grid value where the CDF of the centred PMF ``p`` first reaches ``prob``
    (+inf when it never does, i.e. prob > 1: a sum of 178A-50 can exceed 1)."""
    c = np.cumsum(p)
    hit = np.nonzero(c >= prob * c[-1])[0]
    return float((hit[0] - len(p) // 2) * ystep) if len(hit) else math.inf


def added_noise(p_rest: np.ndarray, ystep: float, var_g: float, var_rn: float, der0: float,
                dcom_an_db: float, rel_tol: float = 1e-6) -> tuple[float, np.ndarray]:
    """(g_an, p_an): the RX noise scale whose Gaussian variance var_g + g_an var_rn, with
    the non-Gaussian parts ``p_rest``, moves the DER_0 quantile out by dcom_an dB."""
    if not var_rn > 0:
        raise ConfigError("com: mlsd = true needs RX noise at the detector: its dCOM_an "
                          "penalty scales it (178A), and eta0 = 0 leaves none; set eta0 > 0 "
                          "or mlsd = false")
    n = len(p_rest)
    # fftconvolve(p_rest, gauss, "same") with p_rest's spectrum formed once: each step of
    # the search below transforms only its Gaussian (about 50 steps; on a long grid of a
    # COM far below zero the repeated transform of p_rest was a third of the search)
    nfft = next_fast_len(2 * n - 1, real=True)
    f_rest = rfft(p_rest, nfft)
    lo_same = (n - 1) // 2

    def pan(g):
        full = irfft(f_rest * rfft(_gauss(n, ystep, var_g + g * var_rn), nfft), nfft)
        return _as_pmf(full[lo_same:lo_same + n])

    target = quantile(pan(0.0), ystep, der0) * 10 ** (dcom_an_db / 20)   # both negative
    lo, hi = 0.0, 1.0
    # a noise of 1e3 times the target's magnitude (rms) moves the quantile past it; a
    # small eta0 only takes more doublings (each the same steps as before)
    cap = (1e3 * max(abs(target), ystep)) ** 2
    while quantile(pan(hi), ystep, der0) > target:
        lo, hi = hi, 2 * hi
        if not hi * var_rn <= cap:
            raise ConfigError(f"com: mlsd: no scale of the RX noise gives the dCOM_an "
                              f"penalty of {dcom_an_db:g} dB (a noise of 1e3 times the "
                              "DER_0 quantile did not); set mlsd = false")
    while hi - lo > rel_tol * hi:
        g = 0.5 * (lo + hi)
        if quantile(pan(g), ystep, der0) <= target:
            hi = g
        else:
            lo = g
    return hi, pan(hi)


def error_event(j: int, b: float) -> np.ndarray:
    """u of 178A-51: the alternating error of length j through 1 + b D."""
    e = (-1.0) ** np.arange(j)
    return np.convolve(e, [1.0, b])


def der_mlsd(p_an: np.ndarray, ystep: float, a_s: float, b: float, rho: np.ndarray,
             levels: int, rel_tol: float = TERM_REL) -> tuple[float, int]:
    """DER_MLSD of 178A-50 and the number of event lengths summed; ``rho`` the normalised
    autocorrelation of noise + residual ISI at lags 0, 1, ... UI.

    The PMF of event length j, p_an * p_an(./b) * p_an(./(1-b))^(j-1), is formed in the
    frequency domain: the three spectra once, on a transform long enough for the longest
    event of a batch (32 lengths, doubled while the sum goes on), then one product and one
    inverse transform per length; its CDF is read at -x_j. Before, each length convolved
    the last PMF again by FFT (three transforms of a growing array per length: on the
    550k-point grid of a COM of -30 dB, 4.6 / 3.2 s for the two package cases against
    1.1 / 0.8 s now, the rounding floor's trimming included)."""
    jmax = len(rho) - 1
    p_1mb = _trim(scaled_pmf(p_an, 1.0 - b))
    p_b = _trim(scaled_pmf(p_an, b))
    n1 = len(p_an) + len(p_b) - 1          # length of event 1's PMF (centred, odd)
    grow = len(p_1mb) - 1                  # each further length adds this many bins
    cap = min(jmax, 32)
    while True:
        nfft = next_fast_len(n1 + (cap - 1) * grow, real=True)
        spec = rfft(p_an, nfft) * rfft(p_b, nfft)
        f_1mb = rfft(p_1mb, nfft)
        der, j = 0.0, 0
        for j in range(1, cap + 1):
            if j > 1:
                spec *= f_1mb
            u = error_event(j, b)
            v = float(u @ (_toeplitz(rho[:j + 1]) @ u))
            x = a_s * float(u @ u) ** 1.5 / math.sqrt(v)
            nj = n1 + (j - 1) * grow
            k = int(math.ceil(-x / ystep - 1e-9)) + nj // 2
            if k < 0:
                cdf = 0.0
            elif k >= nj:
                cdf = 1.0
            else:
                # the lower tail up to k, its rounding floor dropped, over the whole
                # mass (the spectrum at 0; what the floor drops is below 1e-13 of it)
                pj = irfft(spec, nfft)[:nj]
                head = pj[:k + 1]
                cdf = float(np.sum(head[_above_floor(head, pj.max())]) / spec[0].real)
            term = ((levels - 1) / levels) ** (j - 1) * cdf
            der += term
            if term <= rel_tol * der:
                return der, j
        if cap >= jmax:
            return der, j
        cap = min(jmax, 2 * cap)


def _toeplitz(r: np.ndarray) -> np.ndarray:
    k = np.arange(len(r))
    return r[np.abs(k[:, None] - k[None, :])]


def autocorr(h: np.ndarray, nlags: int) -> np.ndarray:
    """sum_k h_k h_{k+l} for l = 0 .. nlags-1 (a process sum_k h_k x_{n-k}, x white, unit variance)."""
    from serdes.com.mmse import acf_rows

    h = np.asarray(h, dtype=float)
    if not len(h):
        return np.zeros(nlags)
    return acf_rows(h[None, :], nlags)[0]   # by FFT: 15 ms by np.correlate on 10k UIs


def rx_noise_autocorr(eta0: float, f_hz: np.ndarray, h_rx: np.ndarray, ui_s: float,
                      nlags: int) -> np.ndarray:
    """Autocorrelation at whole-UI lags of eta_0 (one-sided, V^2/GHz) through ``h_rx`` on
    the COM grid ``f_hz`` (0 .. M f_b / 2): eta_0 sum_{f>0} |H|^2 cos(2 pi f l T) df, lag 0
    the variance ``noise.budget`` uses; by one inverse FFT (the grid's time step is T/M)."""
    df_ghz = (f_hz[1] - f_hz[0]) / 1e9
    x = np.abs(np.asarray(h_rx)) ** 2
    last = x[-1]
    x = x.copy()
    x[0] = x[-1] = 0.0
    n = 2 * (len(x) - 1)
    r_t = np.fft.irfft(x, n) * (n / 2.0)
    m = int(round(ui_s * 2 * f_hz[-1]))          # samples per UI
    lags = np.arange(nlags) * m
    # the last bin (f = M f_b / 2) has cos(pi M l) = 1 for even M
    return eta0 * df_ghz * (r_t[lags % n] + last * np.cos(np.pi * lags))


def mlsd_com(p, budget, com_dfe_db: float, r_rn: np.ndarray, tx_pulse: np.ndarray,
             var_tx_unit: float) -> MlsdResult:
    """COM with the MLSD reference receiver from the DFE receiver's budget
    (``noise.budget``, its ``parts``), the RX noise autocorrelation ``r_rn`` at UI lags
    (at the detector), and the TX noise as ``var_tx_unit`` white noise through the
    UI samples ``tx_pulse`` (the RX FFE receiver's 178A-21 coloring; [h0] and
    10^(-SNR_TX/10) for eq. 93A-30's)."""
    parts = budget.parts
    y = budget.y
    ystep = float(y[1] - y[0])
    L = p.levels
    var_x = (L ** 2 - 1) / (3.0 * (L - 1) ** 2)
    b = float(budget.dfe_taps[0]) if len(budget.dfe_taps) else 0.0
    var_g = budget.sigma_tx ** 2 + budget.sigma_rj ** 2 + budget.sigma_n ** 2
    var_rn = budget.sigma_n ** 2
    rest = _pmf_conv(_pmf_conv(parts["p_isi"], parts["p_dd"], True), parts["p_xt"], True)
    if parts.get("p_q") is not None:          # 802.3dj quantization noise (quant.py)
        rest = _pmf_conv(rest, parts["p_q"], True)
    pad = int(math.ceil(4 * budget.a_ni * 10 ** (p.mlsd_dcom_an_db / 20) / ystep))
    rest = np.pad(rest, pad)
    g_an, p_an = added_noise(rest, ystep, var_g, var_rn, p.der0, p.mlsd_dcom_an_db)
    nl = len(parts["isi"])
    rni = (1.0 + g_an) * np.asarray(r_rn, dtype=float)[:nl]
    rni = np.pad(rni, (0, nl - len(rni)))
    rni = rni + var_tx_unit * autocorr(tx_pulse, nl)
    for s in parts["xt"]:
        rni = rni + var_x * autocorr(s, nl)
    rni = rni + var_x * (p.sigma_rj ** 2 + p.a_dd ** 2) * autocorr(parts["h_j"], nl)
    rni = rni + var_x * autocorr(parts["isi"], nl)
    if parts.get("q_acf") is not None:        # white at the FFE input, through the FFE
        rni = rni + autocorr(parts["q_acf"][0], nl) * parts["q_acf"][1]
    der, terms = der_mlsd(p_an, ystep, budget.a_s, b, rni / rni[0], L)
    q = -quantile(p_an, ystep, der)
    # DER_MLSD at or beyond the median (a closed eye; the sum of 178A-50 may even pass 1,
    # where a first-index search would return the grid's lowest value and a spurious
    # gain): no amplitude reaches it, no advantage (gain null in JSON)
    gain = 20 * math.log10(q / budget.a_s) if q > 0 else None
    return MlsdResult(com_db=float(com_dfe_db if gain is None else max(com_dfe_db, com_dfe_db + gain)),
                      com_dfe_db=float(com_dfe_db), gain_db=None if gain is None else float(gain),
                      der_mlsd=float(der), g_an=float(g_an), terms=int(terms), b=b)
