"""Design of the whole digital receiver: FFE, DFE, reflection canceller (RC) and the
noise-whitening filter and target of the MLSE detector.

One joint MMSE design covers them all. With the FFE output z_k = sum_i w_i y_{k-i}
estimating a_{k-d}, every lag j > 0 after the cursor whose ISI is removed by a
decision-fed path (a DFE tap, an RC tap, or a tap of the MLSE target, which the
Viterbi detector accounts for) is a *free* lag: its coefficient equals the combined
response f_{d+j} = (w * h)_{d+j}. Minimising E[(z_k - a_{k-d} - sum_free f_{d+j}
a_{k-d-j})^2] over w gives (as in :mod:`serdes.dsp.mmse`, with the DFE columns replaced
by the free columns F)

    w = (s2 (H H^T - H_F H_F^T) + R_n)^(-1) s2 h_d,

rescaled so that f_d = 1. ``mmse_ffe_dfe`` is the special case F = 1..n_dfe.

* A DFE tap beyond the limit is clipped and the FFE designed again with that lag fixed
  at the limit (:func:`serdes.dsp.mmse.clipped_dfe_design`).
* RC placement from the pulse ("pulse" mode): a first design without RC gives f; the
  ``taps`` lags in the RC range with the largest |f_{d+j}| get the RC taps, and the FFE
  is designed again with those lags free (so it spends nothing on the echo). In
  "adaptive" mode the lags are found at run time (:mod:`serdes.dsp.rc`).
* MLSE with whitening "predictor": a linear MMSE FFE (no DFE), followed by the
  order-L linear predictor of its output error (:mod:`serdes.dsp.whitening`); the
  whitening filter c is also the Viterbi target.
* MLSE with whitening "target" (default): the FFE designed with lags 1..L free is the
  MMSE FFE for the best monic target 1 + g_1 D + .. + g_L D^L, g_j = f_{d+j} (the
  feedforward filter of an MMSE-DFE with L feedback taps); no extra filter. Its error is
  *not* white, so the Euclidean branch metric is mismatched: measured on a 35 dB line
  (``measure_whitening``, 200k symbols) rho_1 = -0.21, rho_2 = -0.17 at memory 1 and
  rho_1 = 0.00, rho_2 = -0.10 at memory 2 (predictor form: |rho_1| <= 0.11). It is the
  default because it detects better all the same: at 35 dB it counts 4.5e-3 (L=1) and
  1.65e-3 (L=2) against 6.8e-3 and 5.3e-3 for the whitened "predictor" form, whose
  linear FFE (no free lags) pays 0.9-1.3 dB more noise enhancement than whitening gains
  (``benchmarks/mlse_fair.py``).

In a notebook::

    from serdes.build import build
    from serdes.config import Config
    from serdes.engines.run import design_equalizer, simulate
    from serdes.metrics.whitening import measure_whitening

    system = build(Config.default().with_overrides(
        ["channel.loss_db=35", "eq.detector=mlse", "mlse.whitening=predictor"]))
    taps = design_equalizer(system)          # a ReceiverTaps
    taps.whitening, taps.target              # [1, -p1], the Viterbi target
    measure_whitening(system, taps)["after"] # error autocorrelation after the filter
    simulate(system, symbols=10**6).ber_ci
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from serdes.dsp.mmse import EqualizerTaps, clipped_dfe_design, mmse_ffe_free
from serdes.dsp.spec import ReceiverSpec


def _int_array(v=()) -> np.ndarray:
    return np.asarray(v, dtype=np.int64).reshape(-1)


@dataclass(frozen=True)
class ReceiverTaps(EqualizerTaps):
    """:class:`EqualizerTaps` plus the RC, the detector and the MLSE filters.

    ``rc_lags[i]`` is the lag in UI after the cursor of the decision that RC tap
    ``rc_taps[i]`` multiplies. ``whitening`` is the FIR after the FFE (``[1.0]``: none),
    ``target`` the Viterbi target g (g[0] = 1) in the whitened domain.
    """

    detector: str = "dfe"
    rc_lags: np.ndarray = field(default_factory=_int_array)
    rc_taps: np.ndarray = field(default_factory=lambda: np.zeros(0))
    whitening: np.ndarray = field(default_factory=lambda: np.ones(1))
    target: np.ndarray = field(default_factory=lambda: np.ones(1))
    traceback: int = 0

    @property
    def latency(self) -> int:
        """Decision k of the receiver is about FFE-output symbol k - latency."""
        return self.delay + (self.traceback - 1 if self.detector == "mlse" else 0)

    def residual(self) -> np.ndarray:
        """The combined response (FFE output) with the cursor and all decision-fed lags
        (DFE, RC, MLSE target) removed: the ISI the detector sees as noise."""
        f = self.combined.copy()
        d = self.delay
        f[d] = 0.0
        n_dfe = min(self.dfe.shape[0], f.shape[0] - d - 1)
        f[d + 1:d + 1 + n_dfe] -= self.dfe[:n_dfe]
        ok = d + self.rc_lags < f.shape[0]
        f[d + self.rc_lags[ok]] -= self.rc_taps[ok]
        if self.detector == "mlse" and np.allclose(self.whitening, [1.0]):
            n = min(self.target.shape[0] - 1, f.shape[0] - d - 1)
            f[d + 1:d + 1 + n] -= self.target[1:1 + n]
        return f


def select_rc_lags(combined: np.ndarray, delay: int, *, taps: int, first: int,
                   span: int) -> np.ndarray:
    """The ``taps`` lags j in first..span with the largest |combined[delay + j]|,
    ascending."""
    last = min(span, combined.shape[0] - 1 - delay)
    if last < first or taps <= 0:
        return _int_array()
    cand = np.arange(first, last + 1)
    mag = np.abs(combined[delay + cand])
    order = np.argsort(-mag, kind="stable")[:taps]
    return np.sort(cand[order]).astype(np.int64)


def design_receiver(link, spec: ReceiverSpec) -> ReceiverTaps:
    """FFE, DFE, RC, whitening and MLSE target of the receiver ``spec`` on ``link`` (see
    the module notes); with ``spec.mode = 'lms'`` the starting point of the adaptation."""
    h = link.pulse.taps
    cursor = link.pulse.cursor
    s2 = link.level_power
    n_taps, n_pre = spec.ffe_taps, spec.ffe_pre
    d = cursor + n_pre
    detector = spec.detector
    mlse = detector == "mlse"
    memory = spec.mlse.memory if mlse else 0
    n_dfe = 0 if mlse else spec.dfe_taps
    rc = spec.rc
    by_target = mlse and spec.mlse.whitening == "target"
    base = list(range(1, (memory if by_target else n_dfe) + 1))
    rn = link.sampled_noise_autocorr(n_taps + memory + 2)

    w, f, Rn = mmse_ffe_free(h, cursor, rn, n_taps=n_taps, n_pre=n_pre, free_lags=base,
                             level_power=s2)
    rc_lags = _int_array()
    if rc.taps and rc.mode == "pulse":
        rc_lags = select_rc_lags(f, d, taps=rc.taps, first=spec.rc_first_lag,
                                 span=rc.span_ui)
        w, f, Rn = mmse_ffe_free(h, cursor, rn, n_taps=n_taps, n_pre=n_pre,
                                 free_lags=base + rc_lags.tolist(), level_power=s2)
    rc_taps = f[d + rc_lags] if rc_lags.size else np.zeros(0)
    if rc.taps and rc.mode == "adaptive":
        rc_lags, rc_taps = _int_array(), np.zeros(0)  # placed at run time
    b = np.zeros(n_dfe)
    m = min(n_dfe, f.shape[0] - d - 1)
    b[:m] = np.clip(f[d + 1:d + 1 + m], -spec.dfe_limit, spec.dfe_limit)
    if m and np.any(np.abs(f[d + 1:d + 1 + m]) > spec.dfe_limit):
        # a clipped DFE tap: the FFE is designed again with that lag fixed at the limit
        w, f, Rn, b, _ = clipped_dfe_design(h, cursor, rn, n_taps=n_taps, n_pre=n_pre,
                                            n_dfe=n_dfe, other_lags=rc_lags.tolist(),
                                            level_power=s2, dfe_limit=spec.dfe_limit)
        if rc_lags.size and rc.mode == "pulse":
            rc_taps = f[d + rc_lags]

    resid = f.copy()
    resid[d] = 0.0
    resid[d + 1:d + 1 + m] -= b[:m]
    resid[d + rc_lags] -= rc_taps
    whitening = np.ones(1)
    target = np.ones(1)
    if mlse and by_target:
        target = f[d:d + memory + 1].copy()
        resid[d + 1:d + 1 + memory] = 0.0
        err = s2 * float(resid @ resid) + float(w @ Rn @ w)
    elif mlse:
        from serdes.dsp.whitening import ffe_error_autocorr, noise_predictor  # MLSE only

        r_err = ffe_error_autocorr(resid, w, rn, s2, memory + 1)
        whitening, err = noise_predictor(r_err, memory)
        target = whitening.copy()
    else:
        err = s2 * float(resid @ resid) + float(w @ Rn @ w)
    snr = 10 * np.log10(s2 / err) if err > 0 else np.inf

    if spec.mode == "lms":
        w = np.zeros(n_taps)
        w[n_pre] = 1.0 / h[cursor]
        b = np.zeros(n_dfe)
        rc_taps = np.zeros(rc_lags.shape[0])
    return ReceiverTaps(ffe=np.ascontiguousarray(w), dfe=np.ascontiguousarray(b), delay=d,
                        combined=f, predicted_snr_db=float(snr), detector=detector,
                        rc_lags=rc_lags, rc_taps=np.ascontiguousarray(rc_taps, dtype=float),
                        whitening=whitening, target=target,
                        traceback=spec.mlse.traceback if mlse else 0)


#: first DFE tap from which 1/(1+D) precoding lowers the counted BER (measured crossover)
PRECODING_FIRST_TAP = 0.55


def wants_precoding(link, spec: ReceiverSpec) -> bool:
    """Whether the receiver asks for 1/(1+D) precoding (``link.precoding = "auto"``): a
    DFE receiver whose first MMSE DFE tap is at least :data:`PRECODING_FIRST_TAP`.

    Precoding turns a DFE error burst of alternating errors into two decoded symbol errors
    but also doubles an isolated error, so it pays when bursts average more than about two
    symbols: after an error of one level (2/3) the next slicer input moves by b1 * 2/3,
    past the threshold (1/3) from b1 = 0.5 on. Measured on the loss line (default link,
    ``benchmarks/mlse_fair.py`` and 4e6 symbols): 26 dB (b1 0.54) off 2.10e-5, on 2.53e-5;
    27 dB (b1 0.575) off 6.54e-5, on 5.75e-5; 28 dB (0.595) off 1.33e-4, on 1.12e-4;
    30 dB (0.645) off 6.3e-4, on 4.3e-4; 35 dB (0.775) off 1.52e-2, on 7.6e-3. Near the
    threshold it matters little either way: the default link with a 2-tap DFE (b1 0.573,
    so precoded) counts 7.3e-6 off and 8.5e-6 on (2e6 symbols, intervals overlapping,
    -0.07 dB). An MLSE receiver is left alone (precoding is an explicit ``true`` there)."""
    if spec.detector != "dfe" or spec.dfe_taps < 1:
        return False
    taps = design_receiver(link, replace(spec, mode="mmse"))
    return bool(abs(taps.dfe[0]) >= PRECODING_FIRST_TAP)
