"""How tight convex relaxations of the floating taps' constraints are, beside the whole
span's bound and the pair bound, at the sampling times the 802.3dj exact pass visits.

The exact pass visits a sampling time when the whole span's bound (every floating
position free, no tap limits) reaches the threshold; the pair bound (fixed taps plus two
windows of 4) then prunes about 97 % of them at some 28 us each. A cheaper bound that
pruned most of them would shorten the thrus' runs. This measures, on a random sample
of visits of `serdes com THRU --preset 802.3dj-kr` (every EVERY-th exact-pass call
captured by com_exact_split's capture), the FOM of (all minus the row's threshold, dB):
  span      the whole span's bound (kernel _relaxed_span; the dense KKT solve without
            constraints below is checked to give it)
  dual k    Lagrangian dual bounds of the tap limits and of the floating taps' l1 norm,
            after k projected-gradient steps, each with a golden-section line search
            (any multipliers give a valid bound; a step needs the relaxed taps and one
            more right side of R^-1)
  box       min of the MSE with every tap within its limits (a QP, CLARABEL)
  box+l1    and the floating taps' l1 norm at most N_wg N_wf times their limit (with
            the box, the convex hull of the placements' floating taps)
  pair      the pair bound's maximum over its sets (kernel _pair_bound, by bisection on
            its threshold); "prunes" for it is the gate's own test at the row's threshold
and the share of visits each would prune (below 0).
Also V_qc's lower bound (the gate's) over the exact V_qc at the same visits, and the
whole span's bound at the exact V_qc.

With --shared, instead: for each sampled row, the first dual step's multipliers of one
of its visited sampling times used at the other (any multipliers give a valid bound, so
one row's could be reused across its visits), against that visit's own first step.

With --removal, instead: a bound on every pair from the whole span's relaxed taps x =
M^-1 h0 alone (M = R - h1 h1^T, the DFE tap free): removing the floating positions U
outside a pair lowers h0^T M^-1 h0 by x_U^T ((M^-1)_UU)^-1 x_U, at least
(x_U^T x_U)^2 / (x_U^T (M^-1)_UU x_U) by Cauchy-Schwarz, a test per pair of a few
products; against the pair bound's maximum with the DFE tap free and with its limits.

With --collapse, instead: the IEEE placement's FOM itself (kernel _float_solve, no
pruning) at the gate's noise, against the pair bound's maximum and the threshold: how
far below every relaxation the exact FOM falls where the IEEE steps clip the fixed taps
next to the cursor and do not solve again (docs/com.md, "Why the bounds stay flat").

With --cuts, instead: at the sampled visits the pair bound prunes, the pair steps it
takes (windows a up to the first suffix F + [a, m) below the threshold, windows c from
max(a + nwf, e_star - nwf), as the kernel) and how many of them two more tests would
remove, each a valid bound by the same containment argument (dense solves):
  window + suffix  F + window a + [c0, m), c0 that first c: every pair (a, c) lies in it
  interval         F + [a, c + nwf): the pair (a, c) lies in it, and its FOM does not
                   decrease with c, so the pairs of a start at its first c reaching thr
                   (counted on what the window + suffix test leaves)
  union            one test per visit, F + [0, a_stop - 1 + nwf) + [e_star - nwf, m):
                   every pair the steps visit lies in it (the whole span less a gap)

Run: OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python3 benchmarks/com_float_relax.py THRU
     [EVERY [CALLS [ROWS]]] [--shared | --cuts | --removal | --collapse]   (defaults 40, 40, 2:
     two sampling times of ROWS
     random rows of CALLS random captured calls). The table needs cvxpy (pip install cvxpy), which
     the project does not depend on.
"""

from __future__ import annotations

import math
import os
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np

NAMES = ("C CC gv gj gf r_base acf_xt0 t0 S idx0 offs m nw dw nb wmin wmax bmin bmax "
         "var_x k_j rlm levels").split()


def capture(thru: str, every: int) -> list:
    """The captured exact-pass calls (com_exact_split's capture: a CLI run in a child)."""
    from com_exact_split import ROOT
    from com_exact_split import capture as run

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "calls.pkl"
        err = run(thru, every, path, {**os.environ, "OPENBLAS_NUM_THREADS": "1",
                                      "PYTHONPATH": str(ROOT)})
        with open(path, "rb") as f:
            calls = pickle.load(f)
    print(f"captured {err.split()[1]} of {err.split()[0]} exact-pass calls", file=sys.stderr)
    if not calls:
        raise SystemExit(f"no exact-pass call captured (every {every}-th of {err.split()[0]})")
    return calls


def visits(calls, n_calls, n_rows, rng):
    """The problems (R, h0, h1, limits) of sampled visits, at V_qc's lower bound (the
    gate's noise), with the kernel's whole-span and pair bounds."""
    from serdes.kernels import com_mmse_search as K
    from serdes.kernels.com_quant import n_lower

    for ci in rng.choice(len(calls), size=min(len(calls), n_calls), replace=False):
        a, k = calls[ci]
        A = dict(zip(NAMES, a))
        A.update(k)
        C, CC = np.ascontiguousarray(A["C"]), np.ascontiguousarray(A["CC"])
        m, nfix, dw, nb = A["m"], A["nw"], A["dw"], A["nb"]
        if A["gf"].shape[0] or nb != 1:
            raise SystemExit("a thru alone (no FEXT) with one DFE tap, as the presets")
        nwt, nwg, nwf = A["n_span"], A["n_wg"], A["n_wf"]
        var_x, k_j, rlm, L = A["var_x"], A["k_j"], A["rlm"], float(A["levels"])
        wmin, wmax, bmin, bmax = A["wmin"], A["wmax"], A["bmin"], A["bmax"]
        t0, t0r, a1, thr, fbs = A["t0"], A["t0r"], A["a1"], A["thr"], A["fbs"]
        offs = np.asarray(A["offs"], dtype=np.int64)
        qden = float(2 ** A["n_qb"] - 1)
        m_lb = n_lower(int(L), A["p_qc"])
        npts_q = A.get("npts_q", 2001) | 1
        P = CC.shape[1]
        av, rn, hr = np.empty(nwt), np.empty(nwt), np.empty((2, nwt))
        hq, top = np.empty(64), np.empty(max(m_lb, 1))
        lv, gram, G, b = np.empty((3, nwt + 2)), np.empty((2, 2)), np.empty((1, 2)), np.empty(1)
        hist = np.empty((nwt, 2, 2))
        axt = np.ascontiguousarray(A["acf_xt0"][:nwt]).copy()
        for r in rng.choice(C.shape[0], size=min(C.shape[0], n_rows), replace=False):
            pk = A["idx0"] + int(np.argmax(C[r] @ A["S"]))
            vis = [dt for dt in range(-(m // 2), m // 2 + 1) if fbs[r, dt + m // 2] >= thr[r]]
            for dt in (rng.choice(vis, size=min(len(vis), 2), replace=False) if vis else []):
                ts = pk + dt
                dh = ts // m
                ph = ts - dh * m
                K._ts_tables(C, CC, A["gv"], A["gj"], A["r_base"], axt, t0r, -offs, r, ph, dh,
                             dw, nb, nwt, k_j, av, rn, hr)
                rn0 = rn[0]
                dvar = (A["k_rj"] - k_j) * K._slope_e0(CC, A["gj"], r, ph, nwt, P)
                sig = math.sqrt(max(rn0 + dvar, 0.0))
                dy = 2.0 * (np.abs(C[r]).sum() * a1[ph] + 10.0 * sig) / (npts_q - 1)
                K._shift_sum(C[r], t0[ph], offs, dh - 8, 64, hq)
                d = 2.0 * K._v_qc_lower(hq[:64], m_lb, dy / 2.0, top) / qden
                rn[0] = rn0 + d * d / 12.0
                fw = K._relaxed_span(av, rn, hr, nwt, nb, bmin, bmax, var_x, rlm, L, lv,
                                     gram, G, b)
                # the same at the exact V_qc (every UI of the pulse), for comparison
                hf = np.empty(t0.shape[1])
                K._shift_sum(C[r], t0[ph], offs, 0, t0.shape[1], hf)
                v_ex = K._v_qc(hf, sig, np.int64(L), A["p_qc"] / 2.0, npts_q)
                d_ex = 2.0 * v_ex / qden
                rn[0] = rn0 + d_ex * d_ex / 12.0
                fwx = K._relaxed_span(av, rn, hr, nwt, nb, bmin, bmax, var_x, rlm, L, lv,
                                      gram, G, b)
                rn[0] = rn0 + d * d / 12.0
                def pair(t):
                    return K._pair_bound(av, rn, hr, nfix, nwt, nwg, nwf, nb, bmin, bmax,
                                         var_x, rlm, L, t, lv, gram, G, b, hist)
                # the pair bound's value is its maximum over the sets only where no set
                # reaches the threshold (else the first that does; with thr = -inf the
                # fixed taps alone): the maximum by bisection on the threshold (a set
                # reaches t iff the returned value does), and the bound as the gate uses
                # it, at the row's threshold
                lo_t, hi_t = pair(-np.inf), fw + 1e-3
                for _ in range(40):
                    mid = 0.5 * (lo_t + hi_t)
                    if pair(mid) >= mid:
                        lo_t = mid
                    else:
                        hi_t = mid
                fp = lo_t
                gate = pair(thr[r])
                idx = np.arange(nwt)
                R = av[np.abs(idx[:, None] - idx[None, :])] + rn[
                    np.abs(idx[:, None] - idx[None, :])] / var_x
                yield dict(av=av.copy(), rn=rn.copy(), hr=hr.copy(), bmin=bmin, bmax=bmax,
                           wmin_all=wmin, wmax_all=wmax,
                           R=R, h0=hr[0].copy(), h1=hr[1].copy(), wmin=wmin[:nwt].copy(),
                           wmax=wmax[:nwt].copy(), lo=bmin[0], hi=bmax[0], dw=dw, nfix=nfix,
                           l1=nwg * nwf * max(abs(wmin[nfix]), abs(wmax[nfix])),
                           thr=thr[r], row=(int(ci), int(r)), nwg=nwg, nwf=nwf, fw=fw,
                           fwx=fwx, gate=gate,
                           vq=(d * qden / 2.0) / v_ex, fp=fp, var_x=var_x, rlm=rlm, L=L)


def fom(p, q):
    return 20 * np.log10(p["rlm"] / (p["L"] - 1) / np.sqrt(p["var_x"] * q)) if q > 0 else np.inf


def inner(p, c):
    """min over w (h0'w = 1) and b in the DFE limits of q(w, b) + c'w, by the KKT
    systems of b free, at its lower and at its upper limit (q convex in b)."""
    R, h0, h1, lo, hi = p["R"], p["h0"], p["h1"], p["lo"], p["hi"]
    n = len(h0)
    out = None
    for mode in ("free", "lo", "hi"):
        M = np.zeros((n + 2, n + 2))
        rhs = np.zeros(n + 2)
        M[:n, :n] = 2 * R
        M[:n, n] = -2 * h1
        M[:n, n + 1] = -h0
        rhs[:n] = 2 * h0 - c
        if mode == "free":
            M[n, :n] = -2 * h1
            M[n, n] = 2
        else:
            M[n, n] = 1
            rhs[n] = lo if mode == "lo" else hi
        M[n + 1, :n] = h0
        rhs[n + 1] = 1
        x = np.linalg.solve(M, rhs)
        w, b = x[:n], x[n]
        v = 1 + w @ R @ w - 2 * h0 @ w - 2 * b * (h1 @ w) + b * b + c @ w
        if mode == "free":
            if lo <= b <= hi:
                return v, w
            continue
        if out is None or v < out[0]:
            out = (v, w)
    return out


def constraints(p, w):
    """Rows a (a'w <= 0 for every final set of taps): each tap but the cursor within its
    limits times the cursor tap, and s'w_float <= l1 w_cursor with s = sign(w_float)."""
    n, dw, nfix = len(w), p["dw"], p["nfix"]
    rows = []
    for i in range(n):
        if i != dw:
            a = np.zeros(n)
            a[i], a[dw] = 1.0, -p["wmax"][i]
            rows.append(a)
            a = np.zeros(n)
            a[i], a[dw] = -1.0, p["wmin"][i]
            rows.append(a)
    a = np.zeros(n)
    a[nfix:] = np.sign(w[nfix:])
    a[dw] -= p["l1"]
    rows.append(a)
    return np.array(rows)


def line_max(p, A, lam, d):
    """The dual's best point on lam + t d (t >= 0, clipped at 0), by golden section (the
    dual is concave); returns the multipliers."""
    def f(t):
        return inner(p, A.T @ np.maximum(lam + t * d, 0.0))[0]
    hi = 1e-6
    while f(2 * hi) > f(hi) and hi < 1e8:
        hi *= 2
    lo_t, hi_t = 0.0, 2 * hi
    gr = (math.sqrt(5) - 1) / 2
    for _ in range(60):
        c1, c2 = hi_t - gr * (hi_t - lo_t), lo_t + gr * (hi_t - lo_t)
        if f(c1) > f(c2):
            hi_t = c2
        else:
            lo_t = c1
    return np.maximum(lam + (lo_t + hi_t) / 2 * d, 0.0)


def shared(probs) -> None:
    """Each row's second visit bounded with the first visit's first-step multipliers
    (scaled by a line search) and with its own."""
    rows = []
    by_row = {}
    for p in probs:
        by_row.setdefault(p["row"], []).append(p)
    for p1, p2 in (v for v in by_row.values() if len(v) == 2):
        own = []
        for p in (p1, p2):
            _, w = inner(p, np.zeros(len(p["h0"])))
            A = constraints(p, w)
            own.append((A, line_max(p, A, np.zeros(A.shape[0]), np.maximum(A @ w, 0.0))))
        (A1, lam1), (A2, lam2) = own
        f_own = fom(p2, inner(p2, A2.T @ lam2)[0])
        lam = line_max(p2, A1, np.zeros_like(lam1), lam1)
        f_sh = fom(p2, inner(p2, A1.T @ lam)[0])
        rows.append([p2["fw"] - p2["thr"], f_own - p2["thr"], f_sh - p2["thr"]])
        print(" ".join(f"{x:+.4f}" for x in rows[-1]), flush=True)
    rows = np.array(rows)
    print(f"{len(rows)} rows: the span's, its own first dual step, the other visit's multipliers")
    for j, name in enumerate(("span", "own", "shared")):
        print(f"  {name:7s} median {np.median(rows[:, j] - rows[:, 0]):+.4f} dB from the span's,"
              f" prunes {100 * (rows[:, j] < 0).mean():.0f} %")


def cuts(probs) -> None:
    """Pair steps of the gate at the visits it prunes, and those the window + suffix and
    the interval tests would remove (see the module doc)."""
    def f(p, idx):
        idx = np.asarray(idx)
        sub = dict(p, R=p["R"][np.ix_(idx, idx)], h0=p["h0"][idx], h1=p["h1"][idx])
        return fom(p, inner(sub, np.zeros(len(idx)))[0])

    tot = np.zeros(4, dtype=np.int64)
    n_vis = n_all = n_union = 0
    for p in probs:
        if p["gate"] >= p["thr"]:
            continue
        if p["nwg"] != 2:
            raise SystemExit("--cuts counts pairs of windows: a preset with 2 floating groups")
        nfix, n, thr, nwf = p["nfix"], len(p["h0"]), p["thr"], p["nwf"]
        m = n - nfix
        fix = list(range(nfix))
        e_star = next((e for e in range(2 * nwf, m + 1)
                       if f(p, fix + list(range(nfix, nfix + e))) >= thr), m + 1)
        pairs = ws = iv = 0
        a = 0
        while a <= m - nwf and f(p, fix + list(range(nfix + a, n))) >= thr:
            c0 = max(a + nwf, e_star - nwf)
            nc = max(m - nwf + 1 - c0, 0)
            pairs += nc
            win = list(range(nfix + a, nfix + a + nwf))
            if nc and f(p, fix + win + list(range(nfix + c0, n))) < thr:
                ws += nc
            else:
                for c in range(c0, m - nwf + 1):
                    if f(p, fix + list(range(nfix + a, nfix + c + nwf))) >= thr:
                        break
                    iv += 1
            a += 1
        hi, cs = a - 1 + nwf, e_star - nwf
        un = pairs if a > 0 and hi < cs and f(
            p, fix + list(range(nfix, nfix + hi)) + list(range(nfix + cs, n))) < thr else 0
        n_vis += 1
        n_all += int(ws == pairs)
        n_union += int(un > 0)
        tot += (pairs, ws, iv, un)
        print(f"a_stop {a:2d}  e_star {e_star:2d}  pairs {pairs:4d}  window+suffix {ws:4d}"
              f"  interval {iv:4d}  union {un:4d}", flush=True)
    if not n_vis:
        raise SystemExit("no sampled visit that the pair bound prunes: more CALLS or ROWS")
    print(f"{n_vis} visits the pair bound prunes: {tot[0]} pair steps; the window + suffix"
          f" test removes {tot[1]} ({100 * tot[1] / max(tot[0], 1):.0f} %; every pair at"
          f" {n_all} visits), the interval test {tot[2]} more"
          f" ({100 * tot[2] / max(tot[0], 1):.0f} %); the union test alone {tot[3]}"
          f" ({100 * tot[3] / max(tot[0], 1):.0f} %; every pair at {n_union} visits)")


def removal(probs) -> None:
    """The Cauchy-Schwarz removal bound over the pairs (see the module doc), beside the
    whole span's and the pair bound's maxima, each less the row's threshold (dB)."""
    rows = []
    for p in probs:
        R, h0, h1, nfix, nwf = p["R"], p["h0"], p["h1"], p["nfix"], p["nwf"]
        n = len(h0)
        M = R - np.outer(h1, h1)
        Mi = np.linalg.inv(M)
        x = Mi @ h0
        p_span = h0 @ x

        def f_of(pv):       # the FOM of h0^T M_T^-1 h0 = pv (DFE tap free)
            return fom(p, 1.0 / pv - 1.0)

        best_pair = best_cs = -np.inf
        flo = np.arange(nfix, n)
        for a in range(nfix, n - nwf + 1):
            for c in range(a + nwf, n - nwf + 1):
                T = np.r_[np.arange(nfix), np.arange(a, a + nwf), np.arange(c, c + nwf)]
                best_pair = max(best_pair, h0[T] @ np.linalg.solve(M[np.ix_(T, T)], h0[T]))
                U = np.setdiff1d(flo, T)
                xu = x[U]
                num = xu @ xu
                best_cs = max(best_cs, p_span - num * num / (xu @ Mi[np.ix_(U, U)] @ xu))
        rows.append([p["fw"] - p["thr"], f_of(p_span) - p["thr"], p["fp"] - p["thr"],
                     f_of(best_pair) - p["thr"], f_of(best_cs) - p["thr"]])
        print(" ".join(f"{v:+.4f}" for v in rows[-1]), flush=True)
    if not rows:
        raise SystemExit("no visited sampling time in the sampled rows: more CALLS or ROWS")
    rows = np.array(rows)
    print(f"{len(rows)} visits, each bound's FOM less the row's threshold:")
    for j, name in enumerate(("span (DFE tap in its limits, the kernel's)", "span, DFE tap free",
                              "pair bound (DFE tap in its limits, the kernel's)",
                              "pair bound, DFE tap free", "Cauchy-Schwarz removal, DFE tap free")):
        print(f"  {name:50s} median {np.median(rows[:, j]):+.4f} dB,"
              f" prunes {100 * (rows[:, j] < 0).mean():.0f} %")


def collapse(probs) -> None:
    """The IEEE placement's FOM at the gate's noise against the pair bound (module doc)."""
    from serdes.kernels import com_mmse_search as K

    rows = []
    for p in probs:
        n, nfix = len(p["h0"]), p["nfix"]
        R, lo, Y, G = np.empty((n, n)), np.empty((n, n)), np.empty((1, n)), np.empty((1, 2))
        y, z, w, b = np.empty(n), np.empty(n), np.empty(n), np.empty(1)
        cols, valid = np.empty(n, np.int64), np.empty(n, np.int64)
        chosen = np.empty(p["nwg"] * p["nwf"], np.int64)
        fo = K._float_solve(p["av"], p["rn"], p["hr"], nfix, n, p["nwg"], p["nwf"], p["dw"], 1,
                            p["wmin_all"], p["wmax_all"], p["bmin"], p["bmax"], p["var_x"],
                            p["rlm"], p["L"], R, lo, Y, G, y, z, w, b, cols, chosen, valid,
                            -np.inf, np.empty(0))
        rows.append([p["fp"] - p["thr"], fo - p["thr"]])
        print(f"pair {rows[-1][0]:+.3f}  IEEE {rows[-1][1]:+.3f}", flush=True)
    if not rows:
        raise SystemExit("no visited sampling time in the sampled rows: more CALLS or ROWS")
    rows = np.array(rows)
    d = rows[:, 1] - rows[:, 0]
    print(f"{len(rows)} visits: the IEEE FOM less the pair bound's maximum, percentiles"
          f" 10/25/50/75/90: {np.percentile(d, [10, 25, 50, 75, 90]).round(3)} dB")
    for t in (0.3, 1.0, 3.0):
        print(f"  more than {t} dB below the pair bound: {100 * (d < -t).mean():.0f} % of the"
              f" visits; more than {t} dB below the threshold:"
              f" {100 * (rows[:, 1] < -t).mean():.0f} %")


def dual_steps(p, steps):
    v0, w = inner(p, np.zeros(len(p["h0"])))
    A = constraints(p, w)
    lam = np.zeros(A.shape[0])
    out = []
    for step in range(steps):
        g = A @ w                       # the dual's gradient at lam
        lam = line_max(p, A, lam, np.where(lam > 0, g, np.maximum(g, 0.0)))
        v, w = inner(p, A.T @ lam)
        out.append(fom(p, v))
    return fom(p, v0), out


def qp(p, l1):
    import cvxpy as cp

    n, dw, nfix = len(p["h0"]), p["dw"], p["nfix"]
    Rt = p["R"] - np.outer(p["h1"], p["h1"])
    w, b = cp.Variable(n), cp.Variable()
    obj = 1 + cp.quad_form(w, cp.psd_wrap(Rt)) + cp.square(b - p["h1"] @ w) - 2 * p["h0"] @ w
    cons = [p["h0"] @ w == 1, b >= p["lo"], b <= p["hi"],
            w >= cp.multiply(p["wmin"], w[dw]), w <= cp.multiply(p["wmax"], w[dw])]
    if l1:
        cons.append(cp.norm1(w[nfix:]) <= p["l1"] * w[dw])
    pr = cp.Problem(cp.Minimize(obj), cons)
    pr.solve(solver="CLARABEL")
    return fom(p, pr.value)


def main(argv) -> None:
    modes = [a for a in argv if a in ("--shared", "--cuts", "--removal", "--collapse")]
    argv = [a for a in argv if a not in modes]
    usage = ("usage: com_float_relax.py THRU [EVERY [CALLS [ROWS]]]"
             " [--shared | --cuts | --removal | --collapse] (positive integers)")
    if len(modes) > 1:
        raise SystemExit(usage)
    share, cut = "--shared" in modes, "--cuts" in modes
    if not 1 <= len(argv) <= 4:
        raise SystemExit(usage)
    thru = argv[0]
    try:
        every, n_calls, n_rows = (int(x) for x in (argv[1:] + ["40", "40", "2"][len(argv) - 1:]))
    except ValueError:
        raise SystemExit(usage) from None
    if min(every, n_calls, n_rows) < 1:
        raise SystemExit(usage)
    rng = np.random.default_rng(0)
    if share:
        shared(list(visits(capture(thru, every), n_calls, n_rows, rng)))
        return
    if cut:
        cuts(visits(capture(thru, every), n_calls, n_rows, rng))
        return
    if "--removal" in modes:
        removal(visits(capture(thru, every), n_calls, n_rows, rng))
        return
    if "--collapse" in modes:
        collapse(visits(capture(thru, every), n_calls, n_rows, rng))
        return
    try:                        # the QPs of the table (not --shared or --cuts)
        import cvxpy  # noqa: F401
    except ImportError:
        raise SystemExit("needs cvxpy (pip install cvxpy); the project does not depend on it")
    rows, vq, gate = [], [], []
    print("span-thr  dual1  dual2  dual3  dual4  box  box+l1  pair  (dB)")
    for p in visits(capture(thru, every), n_calls, n_rows, rng):
        f0, duals = dual_steps(p, 4)
        assert abs(f0 - p["fw"]) < 1e-6, (f0, p["fw"])   # the QP form is the kernel's
        row = [p["fw"]] + duals + [qp(p, False), qp(p, True), p["fp"]]
        rows.append([x - p["thr"] for x in row])
        vq.append((p["vq"], p["fwx"] - p["fw"], p["fwx"] - p["thr"]))
        gate.append(p["gate"] - p["thr"])
        print(" ".join(f"{x:+.4f}" for x in rows[-1]), flush=True)
    if not rows:
        raise SystemExit("no visited sampling time in the sampled rows: more CALLS or ROWS")
    rows = np.array(rows)
    gate_prunes = np.array(gate) < 0
    names = ["span", "dual 1", "dual 2", "dual 3", "dual 4", "box", "box+l1", "pair"]
    print(f"{len(rows)} visits")
    vq = np.array(vq)
    print(f"  V_qc's lower bound / the exact V_qc: {np.percentile(vq[:, 0], [10, 50, 90]).round(3)}"
          f" (10th, 50th, 90th percentiles); the span's bound at the exact V_qc: median"
          f" {np.median(vq[:, 1]):+.4f} dB, prunes {100 * (vq[:, 2] < 0).mean():.0f} %")
    for j, name in enumerate(names):
        print(f"  {name:7s} median {np.median(rows[:, j] - rows[:, 0]):+.4f} dB from the span's,"
              f" prunes {100 * (rows[:, j] < 0).mean():.0f} %")
    print(f"  the pair bound at the row's threshold (the gate) prunes {100 * gate_prunes.mean():.0f} %;"
          f" its maximum is below the threshold by {-np.median(rows[:, -1]):.4f} dB (median)")


if __name__ == "__main__":
    main(sys.argv[1:])
