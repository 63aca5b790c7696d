"""The calibrated 64-lane example's running state, chunk by chunk, against its errors:
is the counted BER an average of the statistical model's BER over the states the loop
actually visits (the skew trims' residual, the offset and gain estimates' errors)?

    python3 benchmarks/tiadc_cal_tails.py record --first 0 [--set link.pattern=random]
        --out /tmp/prbs_0.npz
    python3 benchmarks/tiadc_cal_tails.py tails /tmp/prbs_*.npz
    python3 benchmarks/tiadc_cal_tails.py states /tmp/prbs_*.npz [--top 200 --sample 150]
        [--skew-only] [--model]
    python3 benchmarks/tiadc_cal_tails.py frozen --scale 1.5 --seed 1

``record`` runs one segment of benchmarks/tiadc_cal_segments.py (a fresh calibration
started at chunk ``first * stride``, settled, then ``--symbols`` decisions counted) and
saves every chunk's bit errors and the calibration's state after every chunk (offsets,
gains, trims) with the converter's true lanes. ``tails`` compares the residuals'
distributions (lane mean square over the closed form; per-lane values in units of their
closed-form sigma: 99.9 % quantile, maximum, excess kurtosis, time beyond k sigma).
``states`` computes the statistical model's BER in each recorded state (the lanes'
residual skews, offsets and gains held static, the rest of the model as the engine's)
and its time average over the chunks, against the count of the same chunks: every
(chunk, output phase) pair is ranked by a cheap proxy (the power of the response's
change), the top ``--top`` evaluated exactly and two lower strata sampled (a stratified
estimate: unbiased whatever the proxy's quality, its standard error from the samples).
``frozen`` gives the model at the held state of ``tiadc_cal_segments.py --frozen``.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiadc_cal_segments as seg  # noqa: E402

from serdes.build import build  # noqa: E402
from serdes.config import Config  # noqa: E402
from serdes.dsp.receiver import build_chain  # noqa: E402
from serdes.dsp.ti_cal import TiCalibration  # noqa: E402
from serdes.engines.run import pipeline  # noqa: E402
from serdes.tiadc import cal_residual  # noqa: E402
from serdes.tiadc.stat import statistical_engine  # noqa: E402


class _PerChunk:
    """Bit errors per chunk (absolute chunk index of the decision)."""

    def __init__(self, chunk: int):
        self.chunk = chunk
        self.errors: dict[int, int] = {}

    def observe(self, al):
        err = np.asarray(al.bit_err)
        for i in np.nonzero(err)[0]:
            c = int((al.first + i) // self.chunk)
            self.errors[c] = self.errors.get(c, 0) + int(err[i])


def record(overrides, start_chunk: int, symbols: int) -> dict:
    system = build(Config.default().with_overrides(seg.CASE + list(overrides)))
    eng = statistical_engine(system)
    chain = build_chain(system.link, eng.taps, system.receiver, seed=system.run.seed)
    cal = chain.find(TiCalibration)
    cal.__class__ = seg._Shifted
    chunk = system.run.chunk_symbols
    cal.origin = start = start_chunk * chunk
    settle = system.link.adc.calibration.settle_symbols
    pipe = pipeline(system, eng.taps, seed=system.run.seed, receiver=chain)
    pipe.transmitter.seek(start)
    obs = _PerChunk(chunk)
    pipe.run(start + settle + symbols, chunk=chunk, observers=[obs], start=start,
             skip=start + settle, count_from=start + settle)
    h, adc = cal.history, system.link.adc
    # history entry i: the state after the calibration's chunk i (from the segment's
    # start), in force during chunk i + 1
    samples = np.array(h["samples"]) + start
    n = samples.shape[0]
    first = start // chunk
    errors = np.array([obs.errors.get(first + i, 0) for i in range(n + 1)])
    return {"samples": samples, "errors": errors, "first_chunk": first, "chunk": chunk,
            "count_from": start + settle, "count_to": start + settle + symbols,
            "offsets": np.array(h["offsets"]), "gains": np.array(h["gains"]),
            "skews_s": np.array(h["skews_s"]), "true_offsets": adc.offsets_v,
            "true_gains": adc.gains, "true_skews": adc.skews_s,
            "set": np.array(list(overrides), dtype=str)}


def _load(paths):
    return [dict(np.load(p)) for p in paths]


def _system(d):
    return build(Config.default().with_overrides(seg.CASE + [str(x) for x in d["set"]]))


def in_force(d):
    """(entries, weights): the history entries in force during the counted chunks (entry
    i during chunk first + i + 1) and the decisions counted in each, with the errors."""
    chunk, first = int(d["chunk"]), int(d["first_chunk"])
    c = first + 1 + np.arange(d["samples"].shape[0])
    lo = np.clip(int(d["count_from"]) - c * chunk, 0, chunk)
    hi = np.clip(int(d["count_to"]) - c * chunk, 0, chunk)
    w = hi - lo
    keep = w > 0
    return np.nonzero(keep)[0], w[keep], d["errors"][1:][keep]


def residual_states(d, ui_s: float):
    """Per entry: the lanes' skew residual (UI, what the front end samples with), gain
    and offset (V) after correction."""
    skew = (d["true_skews"][None, :] - d["skews_s"]) / ui_s
    gains = d["gains"] * d["true_gains"][None, :]
    offsets = d["gains"] * (d["true_offsets"][None, :] - d["offsets"])
    return skew, gains, offsets


def _describe(name, z):
    """Tail statistics of values z in units of their closed-form sigma."""
    a = np.abs(z.ravel())
    k = float(np.mean(z ** 4) / np.mean(z ** 2) ** 2 - 3)
    beyond = [float(np.mean(a > t)) for t in (3, 4)]
    return (f"  {name:<7} ms {np.mean(z ** 2):.3f}, |z| 99.9 % {np.quantile(a, 0.999):.2f}, "
            f"max {a.max():.2f}, excess kurtosis {k:+.3f}, beyond 3 / 4 sigma "
            f"{beyond[0]:.2e} / {beyond[1]:.2e} (Gaussian 2.70e-03 / 6.33e-05)")


def tails(paths) -> None:
    ds = _load(paths)
    link, s = None, None
    zs, zo, zg, ms, errs = [], [], [], [], 0
    for d in ds:
        if link is None:
            system = _system(d)
            link, s = system.link, system.link.adc.calibration
            chunk = system.run.chunk_symbols
            c = cal_residual.skew_covariance(link, s, chunk)
            so = np.sqrt(cal_residual.offset_variance(link, s))
            sg = np.sqrt(cal_residual.gain_variance(link, s))
        idx, w, e = in_force(d)
        skew, gains, offsets = residual_states(d, link.ui_s)
        sk = skew[idx] - skew[idx].mean(axis=1, keepdims=True)
        zs.append(sk / np.sqrt(c[0]))
        ms.append(np.mean(sk ** 2, axis=1) / c[0])
        g = gains[idx] / gains[idx].mean(axis=1, keepdims=True) - 1
        zg.append(g / sg)
        zo.append(offsets[idx] / so)
        errs += int(e.sum())
    ms = np.concatenate(ms)
    print(f"{len(ds)} segments, {ms.shape[0]} chunks counted, {errs} errors")
    print(f"  skew lane mean square / closed form: mean {ms.mean():.3f}, 99 % "
          f"{np.quantile(ms, 0.99):.2f}, 99.9 % {np.quantile(ms, 0.999):.2f}, max {ms.max():.2f}")
    for name, z in (("skew", zs), ("offset", zo), ("gain", zg)):
        print(_describe(name, np.concatenate(z)))


def fixed_engine(system):
    """(engine, fixed): the calibrated statistical engine and one on the same link and
    taps whose lanes are given outright (no residual terms: the state is static)."""
    import serdes.tiadc.stat as st

    eng = statistical_engine(system)
    keep = st._with_gaussian_offset
    st._with_gaussian_offset = lambda jitter, var, profile, points: jitter
    try:
        fixed = statistical_engine(system, eng.taps)
    finally:
        st._with_gaussian_offset = keep
    fixed.cal_skew, fixed._skew_var, fixed.cal_var = None, 0.0, {}
    return eng, fixed


def state_ber(fixed, skew, gains, offsets, phase: int) -> float:
    """The statistical BER of output phase ``phase`` with the lanes static at ``skew``
    (UI), ``gains`` and ``offsets`` (V): phase l of a state is phase 0 of the state
    rotated by l (tap i of phase l sees lane (l - i) mod N)."""
    from serdes.engines.stat.engine import StatisticalEngine

    fixed.skew_ui = np.roll(skew, -phase)
    fixed.gains = np.roll(gains, -phase)
    fixed.offsets_v = np.roll(offsets, -phase)
    fixed._set_phase(0)
    return float(StatisticalEngine.ber(fixed).ber)


def proxy(link, w, skew, gains, offsets) -> np.ndarray:
    """(entries, phases): a cheap rank of each state's cost at each output phase, the
    power of the response's change (skew through the pulse slope, gain through the
    pulse) over the PAM levels plus the offset's square, at the FFE output."""
    p, sl = link.pulse.taps, link.pulse.slope()
    n, lanes = w.shape[0], skew.shape[1]
    L = p.shape[0]
    a_sk = np.zeros((n + L - 1, n))
    a_g = np.zeros((n + L - 1, n))
    for i in range(n):
        a_sk[i:i + L, i] = w[i] * sl
        a_g[i:i + L, i] = w[i] * p
    lane = (np.arange(lanes)[:, None] - np.arange(n)[None, :]) % lanes   # (phase, tap)
    ea = link.level_power
    dsk = skew[:, lane] @ a_sk.T            # (entries, phases, cursors)
    dg = (gains[:, lane] - 1) @ a_g.T
    off = offsets[:, lane] @ w
    return ea * np.sum((dsk + dg) ** 2, axis=2) + off ** 2


def states(paths, top: int, sample: int, seed: int, with_model: bool = False,
           skew_only: bool = False) -> None:
    """The model's BER averaged over the recorded states, time-weighted (see the
    module). All (entry, phase) pairs ranked by :func:`proxy`: the ``top`` costliest
    evaluated exactly, ``sample`` of the rest drawn at random (stratified estimate with
    its standard error)."""
    ds = _load(paths)
    system = _system(ds[0])
    link = system.link
    eng, fixed = fixed_engine(system)
    model = eng.ber().ber if with_model else None
    lanes = int(link.adc.lanes)
    keys, wts, pr, counted, errs = [], [], [], 0, 0
    sts = []
    for f, d in enumerate(ds):
        idx, w, e = in_force(d)
        skew, gains, offsets = residual_states(d, link.ui_s)
        if skew_only:     # the offset and gain estimates exact: the trims' state alone
            gains, offsets = np.ones_like(gains), np.zeros_like(offsets)
        sts.append((skew, gains, offsets))
        q = proxy(link, fixed.w, skew[idx], gains[idx], offsets[idx])
        for j, (i, wi) in enumerate(zip(idx, w)):
            for l in range(lanes):
                keys.append((f, int(i), l))
                wts.append(wi / lanes)
                pr.append(q[j, l])
        counted += int(w.sum())
        errs += int(e.sum())
    wts, pr = np.array(wts, dtype=np.float64), np.array(pr)
    order = np.argsort(pr)[::-1]
    rng = np.random.default_rng(seed)
    # strata by proxy rank: the top evaluated whole, then [top, 10 top) and the rest
    # sampled (``sample`` pairs each)
    edges = [0, top, min(10 * top, order.shape[0]), order.shape[0]]
    cache: dict = {}

    def ber_of(k):
        if k not in cache:
            f, i, lane = keys[k]
            sk, g, o = sts[f]
            cache[k] = state_ber(fixed, sk[i], g[i], o[i], lane)
        return cache[k]

    total, var, parts = 0.0, 0.0, []
    for h in range(3):
        members = order[edges[h]:edges[h + 1]]
        if members.shape[0] == 0:
            continue
        pick = members if h == 0 else rng.choice(
            members, size=min(sample, members.shape[0]), replace=False)
        b = np.array([ber_of(int(k)) for k in pick])
        wt = wts[pick]
        share = wts[members].sum() / wts.sum()
        m = float(np.sum(wt * b) / wt.sum())
        total += share * m
        if h > 0 and pick.shape[0] > 1:
            var += share ** 2 * float(np.var(b * wt / wt.mean(), ddof=1)) / pick.shape[0]
        parts.append(f"ranks {edges[h]}-{edges[h + 1]}: {share * m:.2e} ({pick.shape[0]} "
                     f"evaluated, max {b.max():.1e})")
    counted_ber = errs / (2.0 * counted)
    print(f"{len(ds)} segments, {counted / 1e6:.0f} M decisions, {errs} errors: counted "
          f"{counted_ber:.3e}")
    if model is not None:
        print(f"  model (closed-form residual) {model:.3e}")
    print(f"  model over the recorded states {total:.3e} +- {np.sqrt(var):.1e} "
          f"(standard error of the sampled strata)")
    print("  " + "; ".join(parts))
    hi = order[:top]
    print(f"  proxy rank vs BER among the top: Spearman "
          f"{_spearman(pr[hi], np.array([cache[int(k)] for k in hi])):.2f}")


def _spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def frozen(scale: float, seed: int) -> None:
    """The model's BER at one held trim state (tiadc_cal_segments.py ``--frozen
    SCALE,SEED``: the offset and gain LMS running, so their closed-form terms kept), all
    output phases: the per-state model against that benchmark's count."""
    system = build(Config.default().with_overrides(seg.CASE))
    link = system.link
    eng, fixed = fixed_engine(system)
    fixed.cal_var = eng.cal_var
    trims = seg.frozen_trims(link, system.run.chunk_symbols, scale, seed)
    skew = (link.adc.skews_s - trims) / link.ui_s
    ones, zeros = np.ones_like(skew), np.zeros_like(skew)
    b = [state_ber(fixed, skew, ones, zeros, lane) for lane in range(skew.shape[0])]
    print(f"held trims {scale}x residual draw, seed {seed}: model {np.mean(b):.3e} "
          f"(phases' max {np.max(b):.2e})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--first", type=int, default=0)
    r.add_argument("--symbols", type=float, default=100e6)
    r.add_argument("--stride", type=int, default=0)
    r.add_argument("--set", action="append", default=[])
    r.add_argument("--out", required=True)
    t = sub.add_parser("tails")
    t.add_argument("files", nargs="+")
    st = sub.add_parser("states")
    st.add_argument("files", nargs="+")
    st.add_argument("--top", type=int, default=1000)
    st.add_argument("--sample", type=int, default=500)
    st.add_argument("--seed", type=int, default=1)
    st.add_argument("--model", action="store_true", help="the closed-form model's BER too")
    st.add_argument("--skew-only", action="store_true",
                    help="the recorded trims with exact offsets and gains")
    fz = sub.add_parser("frozen")
    fz.add_argument("--scale", type=float, default=1.5)
    fz.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.cmd == "frozen":
        frozen(args.scale, args.seed)
    if args.cmd == "states":
        states(args.files, args.top, args.sample, args.seed, args.model, args.skew_only)
    if args.cmd == "tails":
        tails(args.files)
    if args.cmd == "record":
        symbols = int(args.symbols)
        stride = args.stride or (symbols + 8_000_000) // 65536 + 1
        d = record(args.set, args.first * stride, symbols)
        np.savez(args.out, **d)
        print(f"{args.out}: {int(d['errors'].sum())} errors, {d['samples'].shape[0]} chunks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
