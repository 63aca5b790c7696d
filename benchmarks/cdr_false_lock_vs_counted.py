"""Counted BER and lock-point occupancy of a CDR run with several stable detector zeros,
against the statistical false-lock model (:mod:`serdes.engines.cdr_false_lock`).

    PYTHONPATH=. python3 benchmarks/cdr_false_lock_vs_counted.py SYMBOLS SEED [K=V ...]

One run of SYMBOLS symbols (no error target, 65536-symbol chunks) on the default config
with the K=V overrides. Prints the model (lock points, occupancy, per-point and weighted
BER), then the counted BER with a 95 % interval from batch means over BATCH-symbol
batches (only an interval for the run's own mix of lock points: the loop stays at one
point for millions of UI, so a run shorter than many escape times is not the
stationary mix), the share of the counted chunks at each lock point (by the chunk's
mean recovered phase) and the counted BER of those chunks. SYMBOLS = 0: no counted run;
instead the PI loop itself (gains, latency, interpolator) run in the phase domain on the
measured S-curve and noise (:func:`serdes.kernels.cdr_phase.phase_loop`, PHASE_UI UI):
its share of time in each basin, against the model's reduction to a first-order chain.
"""

import sys
import time

import numpy as np
from scipy.stats import t as student_t

from serdes.build import build
from serdes.config import Config
from serdes.engines import cdr_false_lock as fl
from serdes.engines.run import design_equalizer, pipeline
from serdes.metrics.ber import ErrorCounter

CHUNK = 65536
BATCH = 16  # chunks per batch (1 M symbols)
PHASE_UI = 1 << 28


def phase_domain(system, model):
    """Share of PHASE_UI UI in each basin of the PI loop run in the phase domain."""
    from serdes.engines import cdr_stat
    from serdes.engines.cdr import CdrFrontEnd
    from serdes.engines.cdr_lanes import lanes_response
    from serdes.kernels.cdr_phase import phase_loop

    front = CdrFrontEnd(system.link, system.run.seed, system.cdr, system.tx_jitter)
    resp = cdr_stat.response_for(system, front)
    if np.any(getattr(system.link.adc, "skews_s", 0.0)):
        resp = lanes_response(resp, system.link.adc.skews_s / system.link.ui_s)
    s = system.cdr
    g = np.random.default_rng(1)
    state, ring = np.array([0.0, 0.0, 0.0]), np.zeros(s.latency_ui + 1)
    n = 1 << 22
    counts = np.zeros(len(model["points"]))
    for _ in range(PHASE_UI // n):
        c = phase_loop(np.zeros(n), g.standard_normal(n), resp.s, resp.lr_at(resp.grid),
                       resp.grid[0], resp.grid[1] - resp.grid[0], front.kp, front.ki,
                       s.pi_steps, state, ring) + front.cal.lock_ui
        for i, p in enumerate(model["points"]):
            counts[i] += np.count_nonzero((c >= p["basin_ui"][0]) & (c < p["basin_ui"][1]))
    print(f"PI loop in the phase domain ({PHASE_UI} UI): share per lock point "
          + ", ".join(f"{x / PHASE_UI:.3f}" for x in counts))


def main(argv):
    n, seed = int(argv[0]), int(argv[1])
    system = build(Config.default().with_overrides(
        list(argv[2:]) + ["link.target_errors=0", f"link.chunk_symbols={CHUNK}"]))
    taps = design_equalizer(system)
    t0 = time.process_time()
    model = fl.report_model(system, taps)
    t1 = time.process_time()
    print(f"model: BER {model['ber']:.3e} (main point alone {model['main_point_ber']:.3e})")
    for p in model["points"]:
        print(f"  lock point {p['phase_ui']:+.4f} UI, basin [{p['basin_ui'][0]:+.3f}, "
              f"{p['basin_ui'][1]:+.3f}], occupancy {p['occupancy']:.4f}, hump "
              f"{p['hump_sigma']:.2f} sigma, BER {p.get('ber', float('nan')):.3e}")
    if n == 0:
        phase_domain(system, model)
        return
    pipe = pipeline(system, taps, seed=seed)
    counter = ErrorCounter(system.link.modulation_order, skip=0)
    rec = []
    pipe.run(n, chunk=CHUNK, observers=[counter], target_errors=0,
             progress=lambda *x: rec.append((x[3], x[4])))
    t2 = time.process_time()
    e = np.diff([0] + [r[0] for r in rec])
    b = np.diff([0] + [r[1] for r in rec])
    blocks = np.array([m for m, _ in pipe.front.stats.offset])
    per = CHUNK // 1024
    # the counted chunks are the last ones (the warm-up and alignment come first)
    ch = blocks[:blocks.shape[0] // per * per].reshape(-1, per).mean(axis=1)
    ch = ch[ch.shape[0] - e.shape[0]:] if ch.shape[0] >= e.shape[0] else ch
    m = min(ch.shape[0], e.shape[0])
    e, b, ch = e[-m:], b[-m:], ch[-m:]
    full = b == 2 * CHUNK
    nb = int(full.sum()) // BATCH
    eb = e[full][:nb * BATCH].reshape(nb, BATCH).sum(1)
    bb = b[full][:nb * BATCH].reshape(nb, BATCH).sum(1)
    rr = eb / bb
    half = student_t.ppf(0.975, nb - 1) * rr.std(ddof=1) / np.sqrt(nb) if nb > 1 else np.nan
    print(f"counted (seed {seed}): BER {e.sum() / b.sum():.3e} ({int(e.sum())} errors in "
          f"{int(b.sum())} bits), batch means 95 % [{rr.mean() - half:.3e}, "
          f"{rr.mean() + half:.3e}] over {nb} batches of {BATCH * CHUNK} symbols")
    for p in model["points"]:
        lo, hi = p["basin_ui"]
        at = (ch >= lo) & (ch < hi)
        ber = e[at].sum() / max(b[at].sum(), 1)
        print(f"  at {p['phase_ui']:+.4f} UI: {at.mean():.3f} of the counted chunks, "
              f"counted BER there {ber:.3e} ({int(e[at].sum())} errors)")
    first = np.nonzero(ch < model["points"][0]["basin_ui"][1])[0] if model["points"] else []
    if len(first):
        print(f"  first chunk in the lowest basin: {int(first[0])} of {m}")
    print(f"CPU: model {t1 - t0:.1f} s, counted {t2 - t1:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
