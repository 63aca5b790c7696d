"""Quantization noise of the 802.3dj RX FFE receiver (Annex 178A.1.7.6, 178A.1.9).

The ADC at the RX FFE input has N_qb bits over +-V_qc, V_qc the amplitude whose lower
tail holds P_qc / 2 of the noisy signal there (178A-30); its step Delta = 2 V_qc /
(2^N_qb - 1) (178A-29) adds white noise Delta^2 / 12 at the FFE input (178A-28). V_qc
follows PyChOpMarg 3.4's rule (``serdes/kernels/com_quant.py``): in the search the noise
is Gaussian (RX, TX, crosstalk, RJ; the dual-Dirac part left out), in the final budget
crosstalk and dual-Dirac jitter enter as delta PMFs, the rest Gaussian (178A-44), on a
finer grid (8001 points); there the quantization noise reaches the detector through
each RX FFE tap as a uniform PMF of half-width |w_k| Delta / 2 (178A-43, 178A-46).

V_qc depends on the TX FFE, the CTLE and the sampling time, i.e. on every one of the
search's candidates; it is not computed for all of them. The search is a branch and
bound (:func:`search_quant`): the quantization noise only adds noise, so each
candidate's FOM is at most the FOM of the relaxed MMSE problem (no FFE tap limits; the
one DFE tap within its limits) with the noise of a lower bound on V_qc (the sum of the m
largest UI samples, L^-m >= P_qc; see the kernel), which costs one MMSE solve. Candidates
are then evaluated exactly in descending order of that bound until the bound falls below
the best exact FOM found: the same best candidate as evaluating every one.
"""

from __future__ import annotations

import numpy as np

from serdes.com.noise import conv, delta_pmf, quant_pmf  # noqa: F401 (quant_pmf re-exported)
from serdes.kernels.com_mmse import mmse_block
from serdes.kernels.com_quant import v_qc

__all__ = ["search_quant", "final_step", "quant_pmf"]

BATCH = 64          # candidates evaluated exactly at a time (in descending bound order)
# rows per parallel chunk of the bound pass (the kernel's default, 64, left the second
# thread idle at the end of each CTLE setting's 1308 rows: on CA_19p75dB's thru the pass
# used 1.88 of the 2 cores, 1.96 with 16)
BOUND_CHUNK = 16


def search_quant(p, parts, ctles, C, CC, offs, kw, stage=None):
    """Best (exact) FOM with quantization noise over ``ctles`` [(i, j, g_dc, g_dc2, wt)]
    x the TX settings C. Returns (fom, ctle index, TX row, ts, per-CTLE upper bounds, the
    number of candidates evaluated exactly). ``stage(text)``: called as the bound pass
    moves from one CTLE setting to the next and before each exact batch."""
    from serdes.com.fom import ctle_weights

    qkw = dict(kw, n_qb=p.n_qb, p_qc=p.p_qc, k_rj=kw["var_x"] * p.sigma_rj ** 2)
    ub = np.empty((len(ctles), len(C)))
    # with floating taps, each row's bound at every sampling time is kept for the exact
    # pass (which would compute the same numbers again: 12 % of its time on
    # CA_19p75dB); 8 bytes x 33 times x the grid: 51 MB for the 802.3dj-kr grid
    n_ts = 2 * (kw["m"] // 2) + 1
    fbs = [np.empty((len(C), n_ts)) for _ in ctles] if kw.get("n_wg") else None
    for n, (_, _, gdc, gdc2) in enumerate(ctles):
        if stage is not None:
            stage(f"bounds {n}/{len(ctles)} CTLE")
        t = parts.at(ctle_weights(gdc, gdc2))
        ub[n], _, _ = mmse_block(C, CC, t.gv, t.gj, t.gf, t.r_base, t.acf_next, t.t0, t.S,
                                 t.idx0, offs, qmode=1, t0r=t.t0r, a1=t.a1,
                                 chunk=BOUND_CHUNK,
                                 fbs=None if fbs is None else fbs[n], **qkw)
    flat = ub.ravel()
    order = np.argsort(-flat, kind="stable")       # ties: lower (CTLE, TX) index first
    best = (-np.inf, -1, -1, -1)
    n_exact = 0

    def evaluate(n, rows, t):
        nonlocal best, n_exact
        thr = np.full(len(rows), best[0])
        # one row per parallel chunk: an exact evaluation costs ~1 ms per sampling
        # time with floating taps, so the rows are spread over the threads
        f, ts, _ = mmse_block(C[rows], CC[rows], t.gv, t.gj, t.gf, t.r_base, t.acf_next,
                              t.t0, t.S, t.idx0, offs, qmode=2, thr=thr, chunk=1,
                              t0r=t.t0r, a1=t.a1,
                              fbs=None if fbs is None else fbs[n][rows], **qkw)
        n_exact += len(rows)
        for r, fr, tr in zip(rows, f, ts):
            if fr > best[0] or (fr == best[0] and (n, r) < (best[1], best[2])):
                best = (float(fr), int(n), int(r), int(tr))

    # the candidate of the highest bound alone: its FOM is the first incumbent
    n0, r0 = divmod(int(order[0]), len(C))
    evaluate(n0, np.array([r0]), parts.at(ctle_weights(ctles[n0][2], ctles[n0][3])))
    done = np.zeros(flat.shape, dtype=bool)
    done[order[0]] = True
    # then CTLE setting by CTLE setting, in descending order of each one's highest bound
    # still open: its tables are formed once, and its candidates whose bound reaches the
    # incumbent are evaluated BATCH at a time in descending bound order, each batch with
    # the incumbent of the one before. Every candidate whose bound reaches the final best
    # is evaluated with a threshold at most that best, so the result is that of
    # evaluating every candidate (ties to the lower (CTLE, TX) index).
    ubo = np.where(done, -np.inf, flat).reshape(ub.shape)
    # at most this many candidates are evaluated (fewer as the incumbent rises)
    n_open = 1 + int(np.count_nonzero(ubo >= best[0]))
    for n in np.argsort(-ubo.max(axis=1), kind="stable"):
        rows = np.flatnonzero(ubo[n] >= best[0])
        if not len(rows):
            continue
        rows = rows[np.argsort(-ubo[n, rows], kind="stable")]
        t = parts.at(ctle_weights(ctles[n][2], ctles[n][3]))
        for s0 in range(0, len(rows), BATCH):
            batch = rows[s0:s0 + BATCH]
            batch = np.sort(batch[ubo[n, batch] >= best[0]])
            if len(batch):
                if stage is not None:
                    stage(f"exact {n_exact:,}/<={n_open:,}")
                evaluate(n, batch, t)
    return best[0], best[1], best[2], best[3], ub, n_exact


def search_sigma2(t, c, offs, ts, k_rj, k_j, var_x, axt):
    """Variance of the Gaussian noise at the FFE input the search's V_qc uses: RX, TX,
    crosstalk and RJ (the kernel's rn at lag 0 without the dual-Dirac part)."""
    from serdes.com.fom import _pairs

    m, nw = t.t0.shape[0], t.r_base.shape[1]
    iu, _ = _pairs(len(offs))
    cc = c[iu[0]] * c[iu[1]]
    ph = ts % m
    e2 = float((cc @ t.gj).reshape(m, nw)[ph, 0])
    return float(t.r_base[ph, 0] + k_j * e2 + axt[0] + (k_rj - k_j) * e2)


def ui_samples(t0: np.ndarray, c: np.ndarray, offs: np.ndarray, ph: int) -> np.ndarray:
    """Every UI sample of the pulse with TX taps c at phase ph (cyclic, as the kernel)."""
    return sum(ck * np.roll(t0[ph], int(o)) for ck, o in zip(c, offs))


def final_step(p, sig: np.ndarray, h_dd: np.ndarray, xts: list, var_g: float,
               npts: int = 8001) -> float:
    """Delta (V) for the final budget (178A.1.9): V_qc of the UI samples ``sig`` of the
    victim at the FFE input, with the dual-Dirac samples ``h_dd`` and the aggressors'
    UI samples ``xts`` as delta PMFs and Gaussian noise of variance ``var_g`` (RX, TX,
    RJ), on a grid of ``npts`` points over their full support (PyChOpMarg's rule)."""
    if not p.n_qb:
        return 0.0
    L = p.levels
    sigma = float(np.sqrt(var_g))
    support = (np.abs(sig).sum() + sum(np.abs(h).sum() for h in xts) + np.abs(h_dd).sum()
               + 10 * sigma)
    npts |= 1
    ystep = 2 * support / (npts - 1)
    y = (np.arange(npts) - npts // 2) * ystep

    def pmf(h):
        return delta_pmf(h[np.abs(h) > ystep / 2], L, npts, ystep)

    psn = pmf(np.asarray(sig, float))
    for h in list(xts) + [h_dd]:
        psn = conv(psn, pmf(np.asarray(h, float)))
    if sigma > 0:
        psn = conv(psn, np.exp(-y ** 2 / (2 * var_g)))
    cdf = np.cumsum(psn) / psn.sum()
    vqc = -y[int(np.argmax(cdf >= p.p_qc / 2))]
    return 2 * float(vqc) / (2 ** p.n_qb - 1)


def search_v_qc(p, t, c, offs, ts, k_rj, k_j, var_x, axt) -> float:
    """V_qc the search uses at the candidate's sampling time ts (Python side, for the
    reference solve of the chosen candidate's taps)."""
    m = t.t0.shape[0]
    s2 = search_sigma2(t, c, offs, ts, k_rj, k_j, var_x, axt)
    return v_qc(ui_samples(t.t0, c, offs, ts % m), np.sqrt(max(s2, 0.0)), p.levels, p.p_qc)
