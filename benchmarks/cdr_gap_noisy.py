"""Where the statistical BER of the noisy MM-loop link parts from the count: genie
splits on the 30 dB link of tests/test_cdr_lanes_cal.py with one converter.

    PYTHONPATH=. python3 benchmarks/cdr_gap_noisy.py genie PHASE SYMBOLS [--set k=v ...]
    PYTHONPATH=. python3 benchmarks/cdr_gap_noisy.py loop SYMBOLS [--set k=v ...]
    PYTHONPATH=. python3 benchmarks/cdr_gap_noisy.py noise PATTERN SYMBOLS [--set k=v ...]

``genie``: the loop opened (kp = ki = 0) at a fixed sampling phase PHASE (UI from the
pulse peak), counted BER with its 95 % interval against the statistical engine at the
same offset with no wander (:class:`serdes.engines.cdr_track.OffsetBer`): do the two
agree without the loop?

``loop``: the closed loop, every symbol's recovered phase recorded (after the warm-up):
the counted BER; the engine's BER averaged over that recorded phase (the per-phase BER
time-weighted by the loop's own trajectory); the run's statistical BER (the Gaussian
wander model) and the wander model's mean and rms against the recorded phase's; the
recorded phase's tail shares against the Gaussian's; and the counted BER per phase bin
against the engine's BER there.

``noise``: the MM detector's output with the loop opened at the model's static phase,
over PATTERN (the transmitter's symbols with their TX noise; ``prbs31`` the
default, ``random`` i.i.d. levels): the excess kurtosis of its sums over 256, 1024 and 4096 UI, and the
phase-domain loop (:func:`serdes.kernels.cdr_phase.phase_loop`, the measured S-curve)
driven by that noise (scaled by the long-run variance there) against the same loop
driven by white Gaussian noise: the tail shares of the phase and the averaged BER.

The link: ``noise.rj_ui=0 channel.loss_db=30 tx.snr_db=21 ctle.auto=false
ctle.g_dc_db=-19 ctle.g_dc2_db=-2 cdr.mode=mm`` (``--set ctle.g_dc_db=-18 --set
ctle.g_dc2_db=-1`` for the other CTLE).
"""

import sys
from dataclasses import replace

import numpy as np
from scipy import stats

from serdes.build import build
from serdes.config import Config
from serdes.engines import cdr_track
from serdes.engines.cdr import LOOKAHEAD
from serdes.engines.cdr_stat_model import stat_system
from serdes.engines.run import design_equalizer, pipeline
from serdes.engines.stat import StatisticalEngine
from serdes.metrics.ber import ErrorCounter, clopper_pearson

NOISY = ["noise.rj_ui=0", "channel.loss_db=30", "tx.snr_db=21", "ctle.auto=false",
         "ctle.g_dc_db=-19", "ctle.g_dc2_db=-2", "cdr.mode=mm", "link.target_errors=0"]


class ErrorPositions:
    """Observer: the TX symbol index of every bit error (repeated per bit)."""

    def __init__(self):
        self.pos = []

    def observe(self, rec):
        idx = np.nonzero(rec.bit_err)[0]
        self.pos.append(np.repeat(rec.first - rec.delay + idx, rec.bit_err[idx]))

    def close(self):
        return None

    @property
    def positions(self):
        return np.concatenate(self.pos) if self.pos else np.zeros(0, dtype=np.int64)


def system_of(extra):
    return build(Config.default().with_overrides(NOISY + list(extra)))


def run_traced(system, taps, n, setup=None):
    """(error positions, recorded phase per TX symbol 0..n-1-LOOKAHEAD, front end)."""
    pipe = pipeline(system, taps, seed=system.run.seed)
    if setup is not None:
        setup(pipe.front)
    pipe.front.trace = []
    ep = ErrorPositions()
    pipe.run(n, chunk=1 << 16, observers=[ep, ErrorCounter(4, skip=0)], target_errors=0)
    ph = np.concatenate(pipe.front.trace)
    return ep.positions, ph[LOOKAHEAD:], pipe.front


def counted(pos, first, last):
    """(BER, lo, hi, errors) of the bits of TX symbols first..last-1."""
    e = int(np.count_nonzero((pos >= first) & (pos < last)))
    bits = 2 * (last - first)
    lo, hi = clopper_pearson(e, bits, 0.95)
    return e / bits, lo, hi, e


def genie(phase, n, extra):
    system = system_of(extra)
    taps = design_equalizer(system)

    def setup(fe):
        fe.kp = fe.ki = 0.0
        fe.state[0], fe.state[1] = phase, 0.0

    pos, ph, _ = run_traced(system, taps, n, setup)
    skip = 1 << 14
    b, lo, hi, e = counted(pos, skip, ph.shape[0])
    sb = cdr_track.OffsetBer(system, taps)
    lk = system.link
    lk2 = replace(lk.impairments, offset_ui=float(ph[skip]), wander_ui=0.0, sj_ui=0.0)
    import copy
    link = copy.copy(lk)
    link.impairments = lk2
    s = StatisticalEngine(replace(system, link=link), taps).ber(0.0).ber
    print(f"genie phase {ph[skip]:+.4f} (asked {phase:+.4f}, all equal "
          f"{bool(np.all(ph[skip:] == ph[skip]))}): counted {b:.3e} [{lo:.2e}, {hi:.2e}] "
          f"({e} errors); stat {s:.3e}; counted / stat {b / s:.2f} "
          f"[{lo / s:.2f}, {hi / s:.2f}]; grid table at 0: {sb.at_index(0):.3e}", flush=True)


def loop(n, extra):
    system = system_of(extra)
    taps = design_equalizer(system)
    pos, c, fe = run_traced(system, taps, n)
    first = max(system.cdr.warmup_symbols, 1 << 17)
    c = c[first:]
    b, lo, hi, e = counted(pos, first, first + c.shape[0])
    table = cdr_track.OffsetBer(system, taps)
    fine = cdr_track.FINE
    bl = int(np.floor(c.min() / fine + 0.5))
    idx = np.floor(c / fine + 0.5).astype(np.int64) - bl
    tr = cdr_track.Tracking(lo=bl, counts=np.bincount(idx).astype(float), mean=0.0,
                            untracked=0.0, wander=0.0)
    avg = table.mean_ber(tr, 1e-12)
    sysm, _ = stat_system(system, taps, fe)
    imp = sysm.link.impairments
    gauss = StatisticalEngine(sysm, taps).ber(0.0).ber
    print(f"counted {b:.3e} [{lo:.2e}, {hi:.2e}] ({e} errors in {c.shape[0]} symbols)")
    print(f"stat averaged over the recorded phase {avg:.3e} (counted / it {b / avg:.2f} "
          f"[{lo / avg:.2f}, {hi / avg:.2f}]); the run's stat (Gaussian wander) {gauss:.3e} "
          f"(counted / it {b / gauss:.2f})")
    m, sd = float(c.mean()), float(c.std())
    print(f"recorded phase mean {m:+.4f} rms {sd:.4f} UI; model offset "
          f"{imp.offset_ui:+.4f} wander {imp.wander_ui:.4f}")
    z = (c - m) / sd
    for k in (2.0, 3.0, 3.5, 4.0, 4.5):
        print(f"  share beyond {k} sd: early (c < mean) {np.mean(z < -k):.2e} late "
              f"{np.mean(z > k):.2e}; Gaussian {stats.norm.sf(k):.2e}")
    # the per-phase BER: counted errors in each phase bin against the engine there
    cb = np.floor(c / 0.01 + 0.5).astype(np.int64)
    ep = pos[(pos >= first) & (pos < first + c.shape[0])] - first
    ce = cb[ep]
    for j in range(int(cb.min()), int(cb.max()) + 1):
        ns = int(np.count_nonzero(cb == j))
        if ns < 20000:
            continue
        ne = int(np.count_nonzero(ce == j))
        lo_j, hi_j = clopper_pearson(ne, 2 * ns, 0.95)
        sj = table.at_index(2 * j)  # 0.01 UI = 2 STEP
        print(f"  phase {j * 0.01:+.2f}: {ns / c.shape[0]:.3f} of the time, counted "
              f"{ne / (2 * ns):.2e} [{lo_j:.1e}, {hi_j:.1e}] ({ne}), stat {sj:.2e}",
              flush=True)
    np.save(f"/tmp/cdr_gap_noisy_phase_{system.run.seed}.npy", c[::16])


def noise(pattern, n, extra):
    from serdes.engines import cdr_stat
    from serdes.engines.cdr import CdrFrontEnd
    from serdes.kernels.cdr_phase import phase_loop
    from serdes.kernels.fir import fir_valid
    from serdes.signal.source import Transmitter

    system = system_of(extra)
    lk, taps = system.link, design_equalizer(system)
    fe = CdrFrontEnd(lk, system.run.seed, system.cdr, system.tx_jitter)
    resp = cdr_stat.response_for(system, fe)
    c0 = stat_system(system, taps, fe)[0].link.impairments.offset_ui - fe.cal.lock_ui
    g = np.random.default_rng(777)
    tx = Transmitter(lk, replace(system.source, pattern=pattern), system.run.seed)
    parts, chunk = [], 1 << 22
    for _ in range(0, n, chunk):
        m = chunk + fe.hist
        a = tx.next(m)[2]
        w = fir_valid(np.concatenate([np.zeros(fe.noise_fir.shape[0] - 1),
                                      g.standard_normal(m - fe.hist)]), fe.noise_fir)
        parts.append(fe._open_loop(a, np.zeros(m), w, fe.cal.lock_ui + c0) - fe.cal.bias)
    xi = np.concatenate(parts)
    xi = (xi - xi.mean()) / np.sqrt(float(resp.lr_at(c0)))
    kurt = []
    for m in (256, 1024, 4096):
        b = xi[:xi.shape[0] // m * m].reshape(-1, m).sum(axis=1)
        kurt.append(f"{m} UI {stats.kurtosis(b):+.3f}")
    print(f"{pattern}: static phase {c0:+.4f} UI; detector noise sums, excess kurtosis: "
          + ", ".join(kurt))
    table = cdr_track.OffsetBer(system, taps)
    for name, drive in (("its detector noise", xi),
                        ("white Gaussian", np.random.default_rng(3).standard_normal(xi.size))):
        state = np.array([fe.cal.lock_ui, 0.0, 0.0])
        ring = np.zeros(system.cdr.latency_ui + 1)
        c = phase_loop(np.zeros(drive.shape[0]), drive, resp.s, resp.lr_at(resp.grid),
                       resp.grid[0] + fe.cal.lock_ui, resp.grid[1] - resp.grid[0], fe.kp,
                       fe.ki, system.cdr.pi_steps, state, ring)[1 << 17:]
        lo = int(np.floor(c.min() / cdr_track.FINE + 0.5))
        b = np.floor(c / cdr_track.FINE + 0.5).astype(np.int64) - lo
        tr = cdr_track.Tracking(lo=lo, counts=np.bincount(b).astype(float), mean=0.0,
                                untracked=0.0, wander=0.0)
        print(f"  phase loop driven by {name}: mean {c.mean():+.4f} rms {c.std():.4f}; "
              + ", ".join(f"P(c < {t}) {np.mean(c < t):.1e}" for t in (-0.06, -0.08, -0.1))
              + f"; averaged BER {table.mean_ber(tr, 1e-12):.3e}", flush=True)


def main(argv):
    sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
    pos = [a for i, a in enumerate(argv) if a != "--set" and (i == 0 or argv[i - 1] != "--set")]
    if pos[0] == "genie":
        genie(float(pos[1]), int(pos[2]), sets)
    elif pos[0] == "loop":
        loop(int(pos[1]), sets)
    elif pos[0] == "noise":
        noise(pos[1], int(pos[2]), sets)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main(sys.argv[1:])
