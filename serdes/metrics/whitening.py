"""Whitening measured on a run: the error autocorrelation before and after the noise-
whitening filter of an MLSE receiver, from the system's own pipeline."""

from __future__ import annotations

import numpy as np

from serdes.dsp.whitening import autocorr_normalized, colour


def measure_whitening(system, taps, *, symbols: int = 200_000, seed: int | None = None,
                      lags: int = 6) -> dict:
    """Measure the error autocorrelation before the whitening filter (FFE output minus
    the sent symbol) and after it (whitened samples minus the target applied to the sent
    symbols), on ``symbols`` symbols of the system's pipeline (its source, TX noise, the
    pulse engine, the ADC and the FFE; a :class:`~serdes.dsp.blocks.Probe` after the FFE
    records its output).

    Returns ``{"before": rho, "after": rho, "colour_before": .., "colour_after": ..}``
    with rho[0..lags-1] normalised autocorrelations.
    """
    from serdes.dsp.blocks import Ffe, Probe
    from serdes.dsp.receiver import build_chain
    from serdes.engines.run import pipeline
    from serdes.kernels.fir import fir_valid
    from serdes.pipeline import SlicerCapture

    link = system.link
    seed = system.run.seed if seed is None else int(seed)
    chain = build_chain(link, taps, system.receiver, seed=seed, adapt=False)
    at = next(i for i, b in enumerate(chain.blocks) if isinstance(b, Ffe))
    probe = Probe(limit=int(symbols))
    chain.blocks.insert(at + 1, probe)
    pipe = pipeline(system, taps, seed=seed, receiver=chain)
    sent = SlicerCapture(int(symbols))
    out = pipe.run(int(symbols), chunk=min(int(symbols), 1 << 16), observers=[sent])
    if sent.first is None or out.latency < 0:
        raise ValueError(f"symbols = {symbols}: too few to align the receiver")
    z = probe.samples                                   # z[k]: FFE output of ADC sample k
    a = np.asarray(link.levels)[sent.sent]              # a[j]: symbol s0 + j
    s0 = sent.first - out.latency
    c = np.asarray(taps.whitening, dtype=np.float64)
    g = np.asarray(taps.target, dtype=np.float64)
    u = fir_valid(z, c)                                 # u[i]: whitened sample i + len(c) - 1
    n_c, d = len(c), taps.delay
    # FFE target: the MLSE target when the FFE was designed for it, else a unit cursor
    t_ffe = g if np.allclose(c, [1.0]) else np.ones(1)
    span = max(len(t_ffe), len(g))
    k = np.arange(max(s0 + d + span, n_c - 1), min(s0 + d + a.shape[0], z.shape[0]))
    sym = k - d - s0                                    # index into a of symbol k - d

    def ref(t):
        return sum(t[i] * a[sym - i] for i in range(len(t)))

    before = z[k] - ref(t_ffe)
    after = u[k - (n_c - 1)] - ref(g)
    rb, ra = autocorr_normalized(before, lags), autocorr_normalized(after, lags)
    return {"before": rb, "after": ra, "colour_before": colour(rb), "colour_after": colour(ra),
            "var_before": float(np.var(before)), "var_after": float(np.var(after))}
