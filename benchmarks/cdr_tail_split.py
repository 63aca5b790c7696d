"""Why the phase-domain model's tracking error (serdes/engines/cdr_track.py) had a
lighter early tail than the closed loop at 1-1.7 MHz of TX SJ: genie splits on the
default link with the MM loop.

    PYTHONPATH=. python3 benchmarks/cdr_tail_split.py tail SJ_UI SJ_HZ SYMBOLS SEEDS [MODEL_RUNS]
    PYTHONPATH=. python3 benchmarks/cdr_tail_split.py scurve [RECORDS]

``tail``: the closed loop (the CDR front end alone: i.i.d. PAM4 levels with the link's TX
noise, the link's RX noise and RJ; the tracking error c = recovered phase - TX SJ of
the sampled symbol, after the warm-up and 2^17 UI more) per seed: the shares of UI with
c < -0.11 and < -0.13 UI; the phase-domain model (``cdr_track``'s loop on the measured
S-curve S and noise, white Gaussian) over MODEL_RUNS noise seeds of the same length;
the detector's recorded output minus S(c), r, averaged given c (its standard error from
4096-UI blocks); and the model's loop driven by r itself instead of its Gaussian noise:
as recorded (it follows the closed loop), r minus its mean given c, and r shifted in
time (by a random 1/8..1/2 of the record, and by 3.5 + seed SJ periods: the same noise,
a new draw of the excursions; a shift by whole periods would give the same excursions).

``scurve``: ``measure``'s S-curve against the mean of RECORDS (4) independent
2^20-symbol records (their own seeds; TX noise, RX noise and first-order RX RJ as
``measure`` has them), -0.20..+0.10 UI.
"""

import sys

import numpy as np

from serdes import cdr as loop
from serdes.build import build
from serdes.config import Config
from serdes.engines import cdr as ecdr
from serdes.engines.cdr import LOOKAHEAD, CdrFrontEnd
from serdes.engines.cdr_stat import _with_tx_noise, response_for
from serdes.kernels import cdr as kc
from serdes.kernels.cdr_phase import phase_loop
from serdes.kernels.fir import fir_valid


class _Recorder:
    """Stands in for the kernel module in the front end: keeps each chunk's detector
    output (the kernel's third result)."""

    def __init__(self):
        self.e = []

    def __getattr__(self, name):
        return getattr(kc, name)

    def cdr_sampler(self, *a, **kw):
        out = kc.cdr_sampler(*a, **kw)
        self.e.append(out[2].copy())
        return out


def closed(system, n, seed):
    """(c, e - bias, SJ phase) per TX symbol after the warm-up."""
    rec = _Recorder()
    keep, ecdr.kc = ecdr.kc, rec
    try:
        fe = CdrFrontEnd(system.link, seed, system.cdr, system.tx_jitter)
        fe.trace = []
        g = np.random.default_rng(seed)
        sigma = float(system.link.tx_noise_sigma)
        for k0 in range(0, n, 1 << 16):
            a = fe.levels[g.integers(0, 4, 1 << 16)] + sigma * g.standard_normal(1 << 16)
            fe(a, k0)
    finally:
        ecdr.kc = keep
    ph = np.concatenate(fe.trace)
    m = ph.shape[0] - LOOKAHEAD
    c = ph[LOOKAHEAD:] - fe.tx_source.slow(0, m) - fe.cal.lock_ui
    e = np.concatenate(rec.e)[LOOKAHEAD:] - fe.bias
    th = fe.tx_source.sj_rad_per_ui * np.arange(m) + fe.tx_source.sj_phase
    skip = system.cdr.warmup_symbols + (1 << 17)
    return c[skip:], e[skip:], th[skip:]


def model_run(fe, resp, amp, th, noise=None, seed=0, c0=0.0):
    """The phase-domain loop over the SJ phases ``th``, started at the tracking error
    ``c0`` with the integrator in the SJ's steady state: Gaussian noise of the measured
    long-run variance (``noise`` None; the first 2^18 UI are left out) or ``noise``
    added to S as it is."""
    w = th[1] - th[0]
    s = fe.settings
    state = np.array([fe.cal.lock_ui + amp * np.sin(th[0]) + c0,
                      loop.sj_integrator(amp, w, th[0], fe.cal.kpd, fe.kp, fe.ki,
                                         s.latency_ui), 0.0])
    v = resp.lr_at(resp.grid) if noise is None else np.ones_like(resp.s)
    z = np.random.default_rng(seed).standard_normal(th.shape[0]) if noise is None else noise
    c = phase_loop(amp * np.sin(th), z, resp.s, v, resp.grid[0] + fe.cal.lock_ui,
                   resp.grid[1] - resp.grid[0], fe.kp, fe.ki, s.pi_steps, state,
                   np.zeros(s.latency_ui + 1)) - fe.cal.lock_ui
    return c if noise is not None else c[1 << 18:]


def shares(c):
    return np.mean(c < -0.11), np.mean(c < -0.13)


def tail(amp, f, n, seeds, runs):
    system = build(Config.default().with_overrides(
        ["cdr.mode=mm", f"tx_jitter.sj_ui={amp}", f"tx_jitter.sj_hz={f}"]))
    fe = CdrFrontEnd(system.link, 1, system.cdr, system.tx_jitter)
    resp = response_for(system, fe)
    period = 1.0 / (f * fe.ui_s)
    bins = np.arange(-0.3, 0.3001, 0.01)
    sums, cnt, sq = (np.zeros(bins.shape[0] + 1) for _ in range(3))
    fed = {k: [] for k in ("closed", "fed r", "fed r - E[r|c]", "r shifted", "r half periods on")}
    recs = []
    for seed in seeds:
        c, e, th = closed(system, n, seed)
        r = e - np.interp(c, resp.grid, resp.s)
        recs.append((c, r, th))
        fed["closed"].append(shares(c))
        i = np.digitize(c, bins)
        sums += np.bincount(i, r, sums.shape[0])
        cnt += np.bincount(i, None, cnt.shape[0])
        blocks = c.shape[0] // 4096 * 4096
        ib = i[:blocks].reshape(-1, 4096)
        rb = r[:blocks].reshape(-1, 4096)
        for j in np.unique(ib):
            sq[j] += float((np.where(ib == j, rb, 0.0).sum(1) ** 2).sum())
    mr = np.where(cnt > 0, sums / np.maximum(cnt, 1), 0.0)
    for seed, (c, r, th) in zip(seeds, recs):
        shift = int(np.random.default_rng(seed).integers(c.shape[0] // 8, c.shape[0] // 2))
        half = int(round(period * (3.5 + seed)))
        for name, z in (("fed r", r), ("fed r - E[r|c]", r - mr[np.digitize(c, bins)]),
                        ("r shifted", np.roll(r, shift)),
                        ("r half periods on", np.roll(r, half))):
            fed[name].append(shares(model_run(fe, resp, amp, th, z, c0=c[0])))
    th = recs[0][2]
    th = np.concatenate([th[0] - (th[1] - th[0]) * np.arange(1 << 18, 0, -1), th])
    fed["model (Gaussian)"] = [shares(model_run(fe, resp, amp, th, seed=1000 + k))
                               for k in range(runs)]
    for name, v in fed.items():
        v = np.array(v)
        print(f"{name:20s} P(c<-0.11) mean {v[:, 0].mean():.2e}, P(c<-0.13) mean "
              f"{v[:, 1].mean():.2e} [{' '.join(f'{x:.2e}' for x in v[:, 1])}]", flush=True)
    print("c (UI)   UI        E[r|c]   se      S(c)")
    for j in range(1, bins.shape[0]):
        if cnt[j] >= 20000 and bins[j] <= -0.05:
            print(f"{0.5 * (bins[j - 1] + bins[j]):+.3f} {int(cnt[j]):9d} {mr[j]:+.5f} "
                  f"{np.sqrt(sq[j]) / cnt[j]:.5f} {np.interp(bins[j] - 0.005, resp.grid, resp.s):+.5f}")


def scurve(records):
    system = build(Config.default().with_overrides(["cdr.mode=mm"]))
    fe = CdrFrontEnd(system.link, 1, system.cdr)
    resp = response_for(system, fe)
    p = fe.pulse
    slope = (p.at_offset(1.0) - p.at_offset(-1.0)) * p.m / 2.0
    sd = np.sqrt(system.link.impairments.rj_ui ** 2 * float(np.mean(fe.levels ** 2))
                 * float(slope @ slope))
    phases = np.round(np.arange(-0.20, 0.1001, 0.01), 3)
    means = []
    for rep in range(records):
        g = np.random.default_rng(777 + rep)
        n = (1 << 20) + fe.hist
        a = _with_tx_noise(fe, fe.levels[g.integers(0, 4, n)], 888 + rep)
        w = fir_valid(np.concatenate([np.zeros(fe.noise_fir.shape[0] - 1),
                                      g.standard_normal(n - fe.hist)]), fe.noise_fir)
        w = w + sd * g.standard_normal(w.shape[0])
        means.append([float(np.mean(fe._open_loop(a, np.zeros(n), w, fe.cal.lock_ui + x)
                                    - fe.cal.bias)) for x in phases])
    m = np.array(means)
    print("phase   records' mean  se       measure's S  difference")
    for x, v, se in zip(phases, m.mean(0), m.std(0, ddof=1) / np.sqrt(records)):
        s = float(np.interp(x, resp.grid, resp.s))
        print(f"{x:+.3f}  {v:+.5f}      {se:.5f}  {s:+.5f}     {s - v:+.5f}")


def main(argv):
    if argv and argv[0] == "tail":
        tail(float(argv[1]), float(argv[2]), int(argv[3]), [int(s) for s in argv[4].split(",")],
             int(argv[5]) if len(argv) > 5 else 8)
    elif argv and argv[0] == "scurve":
        scurve(int(argv[1]) if len(argv) > 1 else 4)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main(sys.argv[1:])
