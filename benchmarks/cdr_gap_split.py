"""Where the statistical JTOL below the loop bandwidth parts from counted runs: genie
splits of the gap on the default link with the MM loop.

    PYTHONPATH=. python3 benchmarks/cdr_gap_split.py fixed [SYMBOLS]
    PYTHONPATH=. python3 benchmarks/cdr_gap_split.py loop SJ_UI SJ_HZ SYMBOLS SEEDS [--set k=v ...]
    PYTHONPATH=. python3 benchmarks/cdr_gap_split.py model SJ_UI SJ_HZ SEEDS [--set k=v ...]
    PYTHONPATH=. python3 benchmarks/cdr_gap_split.py rjcorr

``rjcorr``: why the RJ at an offset is off: over random symbols (no DFE, the link's
FFE), the RJ noise's variance at the slicer given the data, V (first order: the FFE's
squared taps times the squared data-dependent slopes), in the patterns whose ISI leans
furthest toward a threshold (top 1e-2, 1e-3, 1e-4 per outer level), against its mean
at that level; the statistical engine's RJ mixture takes V independent of the ISI.

``fixed``: the fixed-offset BER. The CDR front end with its loop opened (kp = ki = 0)
samples at a fixed phase (+-0.125 UI from the peak: whole interpolator steps), no SJ;
counted BER (95 % binomial interval: errors at a fixed phase are independent without
the DFE; the share of errors right after an error is printed) against the statistical
engine at the same offset (``cdr_track.OffsetBer``'s link), with the link's RX RJ and
without it, with the DFE and without it.

``loop``: the closed loop under a TX SJ, per seed: the counted BER, the statistical
BER averaged over the loop's own recorded tracking error (c = recovered phase - TX SJ,
the offset the data sees; the split's part (a) in the loop), and the tail of that
tracking error (share of UI with c < -0.11 and < -0.13).

``model``: the phase-domain model (``cdr_track.simulate``) at the same point with its
detector-noise seed set to each of SEEDS (the module's fixed seed is one draw): its
averaged BER and the same tail shares (part (b)).
"""

import copy
import sys
from dataclasses import replace

import numpy as np

from serdes.build import build
from serdes.config import Config
from serdes.engines import cdr_track
from serdes.engines.cdr import LOOKAHEAD
from serdes.engines.run import design_equalizer, pipeline
from serdes.engines.stat import StatisticalEngine
from serdes.metrics.ber import ErrorCounter

from cdr_gap_noisy import ErrorPositions  # the same observer as the noisy-link script


def count(system, taps, n, seed=None, setup=None):
    """(counter, error positions, sampling phase per front-end output, front end)."""
    pipe = pipeline(system, taps, seed=system.run.seed if seed is None else seed)
    if setup is not None:
        setup(pipe.front)
    pipe.front.trace = []
    cnt, ep = ErrorCounter(system.link.modulation_order, skip=0), ErrorPositions()
    pipe.run(n, chunk=1 << 16, observers=[cnt, ep], target_errors=0)
    return cnt, ep, np.concatenate(pipe.front.trace), pipe.front


def averaged_ber(table, c):
    lo = int(np.floor(c.min() / cdr_track.FINE + 0.5))
    b = np.floor(c / cdr_track.FINE + 0.5).astype(np.int64) - lo
    tr = cdr_track.Tracking(lo=lo, counts=np.bincount(b).astype(float), mean=0.0,
                            untracked=0.0, wander=0.0)
    return table.mean_ber(tr, 1e-12)


def fixed(n):
    for extra in ([], ["noise.rj_ui=0"], ["dfe.taps=0"], ["dfe.taps=0", "noise.rj_ui=0"]):
        system = build(Config.default().with_overrides(["cdr.mode=mm"] + extra))
        taps = design_equalizer(system)
        for c0 in (-0.125, 0.125):
            def setup(fe, c0=c0):
                fe.kp = fe.ki = 0.0
                fe.state[0], fe.state[1] = c0, 0.0

            cnt, ep, ph, _ = count(system, taps, n, setup=setup)
            assert np.all(ph == c0)
            pos = ep.positions
            after = float(np.mean(np.diff(pos) == 1)) if pos.size > 1 else 0.0
            lk = copy.copy(system.link)
            lk.impairments = replace(lk.impairments, offset_ui=c0)
            sb = StatisticalEngine(replace(system, link=lk), taps).ber(0.0).ber
            lo, hi = cnt.ber_ci()
            print(f"{' '.join(extra) or 'default':28s} offset {c0:+.3f}: counted "
                  f"{cnt.ber:.3e} [{lo:.2e}, {hi:.2e}] ({cnt.bit_errors} errors, "
                  f"{after:.3f} right after one); stat {sb:.3e}; counted / stat "
                  f"{cnt.ber / sb:.2f}", flush=True)


def loop(amp, f, n, seeds, extra):
    system = build(Config.default().with_overrides(
        ["cdr.mode=mm", f"tx_jitter.sj_ui={amp}", f"tx_jitter.sj_hz={f}"] + extra))
    taps = design_equalizer(system)
    table = cdr_track.OffsetBer(system, taps)
    for seed in seeds:
        cnt, ep, ph, fe = count(system, taps, n, seed=seed)
        # the tracking error of TX symbol s is output s + P's phase minus its TX SJ
        c = ph[LOOKAHEAD:] - fe.tx_source.slow(0, ph.shape[0] - LOOKAHEAD)
        c = c[system.cdr.warmup_symbols + (1 << 17):]
        lo, hi = cnt.ber_ci()
        print(f"seed {seed}: counted {cnt.ber:.3e} ({cnt.bit_errors} errors; binomial "
              f"[{lo:.2e}, {hi:.2e}], errors cluster); stat averaged over the loop's "
              f"tracking error {averaged_ber(table, c):.3e}; P(c < -0.11) "
              f"{np.mean(c < -0.11):.2e}, P(c < -0.13) {np.mean(c < -0.13):.2e}",
              flush=True)


def model(amp, f, seeds, extra):
    from serdes.engines.cdr_stat import response_for
    from serdes.jtol import Jtol

    system = build(Config.default().with_overrides(["cdr.mode=mm"] + extra))
    jt = Jtol(system)
    resp = response_for(system, jt.front)
    table = cdr_track.OffsetBer(system, jt.taps)
    keep = cdr_track.SEED
    try:
        for seed in seeds:
            cdr_track.SEED = seed
            tr = cdr_track.simulate(jt.front, resp, amp, f)
            p = tr.counts / tr.counts.sum()
            print(f"model noise seed {seed}: averaged BER {table.mean_ber(tr, 1e-12):.3e}; "
                  f"P(c < -0.11) {p[tr.centers < -0.11].sum():.2e}, P(c < -0.13) "
                  f"{p[tr.centers < -0.13].sum():.2e}", flush=True)
    finally:
        cdr_track.SEED = keep


def rjcorr(n=4_000_000):
    system = build(Config.default().with_overrides(["dfe.taps=0"]))
    p, w = system.link.pulse, np.asarray(design_equalizer(system).ffe)
    lv = np.sort(system.link.levels)
    a = lv[np.random.default_rng(5).integers(0, lv.shape[0], n)]
    for c in (0.0, -0.125, 0.125):
        h = p.at_offset(c * p.m)
        hp = (p.at_offset((c + 0.01) * p.m) - p.at_offset((c - 0.01) * p.m)) / 0.02
        z = np.convolve(np.convolve(a, h)[:n], w)[:n]
        v = np.convolve(np.convolve(a, hp)[:n] ** 2, w ** 2)[:n]
        g = np.convolve(h, w)
        d = int(np.argmax(np.abs(g)))
        k = np.arange(d + h.shape[0] + w.shape[0], n)
        dec = a[k - d]
        isi = z[k] - g[d] * dec
        out = []
        for lev in (lv[-1], lv[0]):
            m = dec == lev
            e, vm = isi[m] * np.sign(-lev), v[k][m]
            out.append(" ".join(f"{vm[e > q].mean() / vm.mean():.2f}"
                                for q in np.quantile(e, [0.99, 0.999, 0.9999])))
        print(f"offset {c:+.3f}: V in the top 1e-2 / 1e-3 / 1e-4 ISI toward the threshold "
              f"over its level mean: top level {out[0]}, bottom level {out[1]}")


def main(argv):
    sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
    pos = [a for i, a in enumerate(argv) if a != "--set" and (i == 0 or argv[i - 1] != "--set")]
    if pos[0] == "fixed":
        fixed(int(pos[1]) if len(pos) > 1 else 4_000_000)
    elif pos[0] == "loop":
        loop(float(pos[1]), float(pos[2]), int(pos[3]), [int(s) for s in pos[4].split(",")],
             sets)
    elif pos[0] == "rjcorr":
        rjcorr()
    elif pos[0] == "model":
        model(float(pos[1]), float(pos[2]), [int(s) for s in pos[3].split(",")], sets)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main(sys.argv[1:])
