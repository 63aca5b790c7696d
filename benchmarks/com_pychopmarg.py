"""serdes com against PyChOpMarg 3.4 on the same channel sets and parameters.

PyChOpMarg's own equalizer search needs an RX FFE (its PR-ZF path asserts one; its MMSE
path optimizes a different figure of merit), so the 802.3ck and Clause 93 reference
receiver (CTLE + DFE, no RX FFE) is compared at the equalization our search chose: its
``calc_noise`` gives A_s, A_ni and COM there. Its cost per equalizer candidate is timed
on the same set (the pulse responses of thru and aggressors for one candidate, a lower
bound on one FOM evaluation) and scaled to the preset's grid.

Run: PYTHONPATH=. python3 benchmarks/com_pychopmarg.py [dpo|ca|ex2]  (needs pychopmarg
and the channel folder ../shared/channels).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from pychopmarg.com import COM
from pychopmarg.common import OptMode
from pychopmarg.config.template import COMParams

from serdes.com.core import compute_com
from serdes.com.params import apply_overrides, preset

# PyChOpMarg's range checks refuse some values used here (gamma0 = 0, the Clause 93 line's
# a1 = 1.734e-3 > 1e-3, T_r = 0): the values are passed as they are, its checks skipped.
COMParams.__post_init__ = lambda self: None

CH = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
SETS = {
    "dpo": ("802.3ck-kr", "ieee8023ck_KR_ortho_tracy_3ck_02_0119/DPO_12in_Meg7_THRU.s4p",
            [f"ieee8023ck_KR_ortho_tracy_3ck_02_0119/DPO_12in_Meg7_{n}.s4p"
             for n in ("FENG89", "FENG1415", "FENH89", "FENH1112", "FENH1415")],
            [f"ieee8023ck_KR_ortho_tracy_3ck_02_0119/DPO_12in_Meg7_{n}.s4p"
             for n in ("NENF89", "NENF1112", "NENF1415")]),
    "ca": ("802.3ck-cr", "ieee8023ck_CR_mellitz_3ck_04_1119/CA_19p75dB_thru.s4p",
           [f"ieee8023ck_CR_mellitz_3ck_04_1119/CA_19p75dB_fext{n}.s4p" for n in range(1, 8)],
           [f"ieee8023ck_CR_mellitz_3ck_04_1119/CA_19p75dB_next{n}.s4p" for n in range(1, 9)]),
    "ex2": ("100gbase-kr4", "pychopmarg_example2_vita682/example2_THRU.s4p",
            [f"pychopmarg_example2_vita682/example2_FEXT{n}.s4p" for n in (1, 2)],
            [f"pychopmarg_example2_vita682/example2_NEXT{n}.s4p" for n in (1, 2, 3)]),
}


def _tx6(p):
    """PyChOpMarg puts the cursor before the last 3 entries: pad to 3 pre + 3 post taps."""
    n_post = len(p.tx_min) - p.tx_n_pre

    def pad(v):
        return [0.0] * (3 - p.tx_n_pre) + list(v) + [0.0] * (3 - n_post)
    return pad(p.tx_min), pad(p.tx_max), pad(p.tx_step)


def pcm_params(p) -> COMParams:
    return COMParams(
        p.fb_gbd, p.f_step_ghz, p.levels, p.samples_per_ui, p.der0, p.t_r_ns, p.rlm,
        p.a_v, p.a_fe, p.a_ne, p.r0, p.a_dd, p.snr_tx_db, p.eta0, p.sigma_rj,
        p.f_z_ghz, p.f_p1_ghz, p.f_p2_ghz, p.f_lf_ghz, list(p.g_dc), list(p.g_dc2),
        *_tx6(p), p.c0_min, p.f_r,
        np.array(p.dfe_min), np.array(p.dfe_max), np.array([1.0]), np.array([1.0]), 0,
        np.array([p.r_d]), [list(p.c_d)] * 2, [p.c_b], [p.c_p, p.c_p], [list(p.l_s)] * 2,
        list(p.z_c), [c["tx"][0] for c in p.cases], p.gamma0, p.a1, p.a2, p.tau,
        zp_cases=[{"zp_tx": list(c["tx"]), "zp_rx": list(c["rx"]), "zp_next": list(c["next"]),
                   "zp_fext": list(c["fext"])} for c in p.cases])


def _com(p, thru, fext, nxt, case_ix):
    com = COM(pcm_params(p), {"THRU": [thru], "FEXT": list(fext), "NEXT": list(nxt)})
    if case_ix:
        com._set_pkg_case(pcm_params(p).zp_cases[case_ix])
    com.opt_mode = OptMode.PRZF
    com.rx_taps = np.array([])
    com.nRxTaps = 0
    return com


def _tx_index(com, p, tx_taps):
    n_post = len(p.tx_min) - p.tx_n_pre
    t = list(tx_taps)
    want = np.array([0.0] * (3 - p.tx_n_pre) + t[:p.tx_n_pre] + t[p.tx_n_pre + 1:]
                    + [0.0] * (3 - n_post))
    return int(np.argmin([np.abs(np.asarray(c) - want).sum() for c in com._tx_combs]))


def pcm_at(p, thru, fext, nxt, case_ix, g_dc, g_dc2, tx_taps, com=None):
    """PyChOpMarg's A_s, A_ni and COM at a given equalization (PR-ZF noise model)."""
    com = com or _com(p, thru, fext, nxt, case_ix)
    com.gDC, com.gDC2 = g_dc, g_dc2
    com.tx_ix = _tx_index(com, p, tx_taps)
    t = time.perf_counter()
    a_s, a_ni, cur = com.calc_noise()
    r = com.com_rslts
    return {"com_db": float(20 * np.log10(a_s / a_ni)), "a_s_v": float(a_s), "a_ni_v": float(a_ni),
            "cursor": int(cur), "dfe_taps": [float(x) for x in r["dfe_taps"]],
            "uneq_peak": float(com.pulse_resps_noeq[0].max()),
            "sigma_v": {k: float(r[k]) for k in ("sigma_Tx", "sigma_N", "sigma_J", "sigma_ISI",
                                                 "sigma_XT")},
            "calc_noise_s": time.perf_counter() - t, "_com": com}


def candidate_seconds(com, n=5) -> float:
    """PyChOpMarg's time to form the pulses of thru and aggressors for one candidate."""
    hc = com.calc_Hctf(-5.0, -2.0)
    t = time.perf_counter()
    for k in range(n):
        com.gen_pulse_resps(Hctf=hc, tx_ix=1 + k, rx_taps=np.array([]), dfe_taps=np.array([]))
    return (time.perf_counter() - t) / n


def compare(key: str, overrides=None) -> dict:
    name, thru, fext, nxt = SETS[key]
    thru, fext, nxt = str(CH / thru), [str(CH / f) for f in fext], [str(CH / f) for f in nxt]
    p = apply_overrides(preset(name), overrides)
    ours = compute_com(thru, fext, nxt, p)
    rows = []
    per_cand = None
    for k, c in enumerate(ours.cases):
        ref = pcm_at(p, thru, fext, nxt, k, c.g_dc_db, c.g_dc2_db, c.tx_taps)
        com = ref.pop("_com")
        if per_cand is None:
            per_cand = candidate_seconds(com)
        rows.append({"case": c.package_case, "ours": {
            "com_db": c.com_db, "a_s_v": c.a_s_v, "a_ni_v": c.a_ni_v, "uneq_peak": c.unequalized_peak_v,
            "tx_taps": c.tx_taps, "g_dc_db": c.g_dc_db, "g_dc2_db": c.g_dc2_db,
            "dfe_taps": c.dfe_taps, "sigma_v": c.sigmas_v}, "pychopmarg": ref,
            "delta_com_db": c.com_db - ref["com_db"]})
    n_grid = sum(c.n_fom for c in ours.cases)
    return {"set": key, "preset": name, "ours_elapsed_s": ours.elapsed_s, "fom_evaluations": n_grid,
            "pychopmarg_s_per_candidate": per_cand,
            "pychopmarg_grid_s_lower_bound": per_cand * n_grid, "cases": rows}


if __name__ == "__main__":
    keys = sys.argv[1:] or list(SETS)
    for key in keys:
        ov = {"t_r_ns": 0.001} if key == "ex2" else None  # PyChOpMarg needs T_r > 0
        print(json.dumps(compare(key, ov), default=float))
