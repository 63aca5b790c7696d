"""What the DFE error propagation model must hold to predict a count: replay one link's
genie-fed slicer inputs through a decision-fed DFE, with parts of the disturbance
reordered.

A genie-fed run (the DFE fed the sent symbols) records every slicer input y_n. Its
disturbance D_n = y_n - f_d a_n (noise, residual ISI, quantization) is what the
decision-fed DFE sees too, plus its own wrong feedback, so replaying D through a DFE
reproduces the decision-fed count of the same seed. Then:

* D shuffled in time (i.i.d.): what a chain with fresh symbols and noise can predict;
* the residual pre-cursor ISI (from the statistical engine's combined response and the
  sent symbols) kept in order, the rest shuffled;
* the post-cursor ISI kept in order, the rest shuffled;
* the rest (noise, quantization) kept in order, the ISI shuffled;

each against the report's model (``stat.dfe_error_propagation``).

Run: python benchmarks/propagation_replay.py [SYMBOLS] [--set key=value ...]
     (default 2e6 symbols on the earlier default link at 35 dB, RJ 0, 1-tap DFE, no
     precoding: benchmarks/mlse_fair.py's propagation case)
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

from serdes.build import build
from serdes.config import Config
from serdes.dsp.blocks import GenieDfe
from serdes.dsp.receiver import build_chain
from serdes.engines.run import simulate
from serdes.engines.stat import dfe_error_propagation
from serdes.engines.stat.distribution import gray_bit_errors
from serdes.tiadc.stat import statistical_engine
from symbols_and_sets import symbols_and_sets

LINK = ["channel.skin_fraction=0.6980985932251722", "ctle.auto=false", "ctle.g_dc_db=-8",
        "adc.enob=5", "channel.loss_db=35", "noise.rj_ui=0", "dfe.taps=1",
        "link.precoding=false"]


class _Keep:
    def __init__(self):
        self.sent, self.soft = [], []

    def observe(self, rec):
        self.sent.append(rec.tx_line.copy())
        self.soft.append(rec.soft.copy())


@njit(cache=True)
def _dfe(sent, dist, levels, thresholds, b, fd):
    n, k_taps = sent.shape[0], b.shape[0]
    dec = np.empty(n, np.int64)
    for t in range(n):
        y = fd * levels[sent[t]] + dist[t]
        for k in range(1, k_taps + 1):
            if t - k >= 0:
                y += b[k - 1] * (levels[sent[t - k]] - levels[dec[t - k]])
        j = 0
        while j < thresholds.shape[0] and y > fd * thresholds[j]:
            j += 1
        dec[t] = j
    return dec


def main(argv: list[str]) -> int:
    symbols, sets = symbols_and_sets(argv, 2_000_000)
    system = build(Config.default().with_overrides(LINK + sets))
    eng = statistical_engine(system)
    taps = eng.taps
    model = dfe_error_propagation(eng)
    genie = build_chain(system.link, taps, system.receiver, seed=system.run.seed)
    genie.blocks[-1] = GenieDfe(taps.dfe, system.link.levels)
    keep = _Keep()
    g = simulate(system, symbols=symbols, taps=taps, receiver=genie, target_errors=0,
                 observers=[keep])
    fed = simulate(system, symbols=symbols, taps=taps, target_errors=0)
    sent = np.concatenate(keep.sent).astype(np.int64)
    soft = np.concatenate(keep.soft)
    lv = np.asarray(system.link.levels, dtype=np.float64)
    thr = (lv[1:] + lv[:-1]) / 2
    b = np.asarray(taps.dfe, dtype=np.float64)
    a = lv[sent]
    fd = float(soft @ a / (a @ a))
    dist = soft - fd * a
    # the residual ISI of the engine's combined response: pre-cursors multiply later
    # symbols (a_(n+s), s > 0), post-cursors earlier ones
    f, _ = eng.response(0.0)
    r, d = eng._residual(f), eng.d
    n = sent.shape[0]
    pre, post = np.zeros(n), np.zeros(n)
    for j in np.flatnonzero(r):
        s = d - j
        src = np.arange(n) + s
        ok = (src >= 0) & (src < n)
        (pre if s > 0 else post)[ok] += r[j] * lv[sent[src[ok]]]
    rest = dist - pre - post
    bits = gray_bit_errors(lv.shape[0])
    bps = 2 if lv.shape[0] == 4 else 1

    def ber(x):
        dec = _dfe(sent, np.ascontiguousarray(x), lv, thr, b, fd)
        return bits[sent, dec].sum() / (n * bps)

    rng = np.random.default_rng(0)
    p = rng.permutation(n)
    print(f"link: {' '.join(LINK + sets)}; DFE taps {np.round(b, 3)}; {n} symbols")
    print(f"counted: genie-fed {g.ber:.4e}, decision-fed {fed.ber:.4e}")
    print(f"model: correct feedback {model['ber_correct_feedback']:.4e}, with propagation "
          f"{model['ber_with_propagation']:.4e}")
    print(f"replayed, in order (the decision-fed count again): {ber(dist):.4e}")
    print(f"replayed, all shuffled (i.i.d.): {ber(dist[p]):.4e}")
    print(f"replayed, pre-cursor ISI in order, the rest shuffled: {ber(pre + (post + rest)[p]):.4e}")
    print(f"replayed, post-cursor ISI in order, the rest shuffled: {ber(post + (pre + rest)[p]):.4e}")
    print(f"replayed, noise and quantization in order, the ISI shuffled: "
          f"{ber(rest + (pre + post)[p]):.4e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
