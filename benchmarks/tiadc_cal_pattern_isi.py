"""Does PRBS31's ISI differ from random data's on the calibrated 64-lane example? The
slicer's noise-free value for each symbol (the FFE and DFE's residual ISI on the data,
statistical engine's taps, output phase 0) and the Gaussian probability of crossing an
adjacent threshold at a noise sigma given relative to the cursor, averaged over 4 M
symbols after settling at each of the three segments of tiadc_cal_segments.py:

    python3 benchmarks/tiadc_cal_pattern_isi.py [SIGMA_REL ...]

Printed per pattern and sigma: the mean error probability per bit (Gray: one bit per
adjacent error), and PRBS31's over random data's.
"""
import sys, numpy as np
from scipy.special import erfc
from serdes.build import build
from serdes.config import Config
from serdes.signal.source import SymbolSource
from serdes.tiadc.stat import statistical_engine
CASE = ["adc.lanes=64", "adc.skew_rms_s=0.3e-12", "supply.ripple_mv=[20]",
        "supply.ripple_hz=[1e7]", "supply.delay_ps_per_mv=0.5", "adc_cal.enabled=true"]
system = build(Config.default().with_overrides(CASE))
eng = statistical_engine(system)
f, jv = eng.response(0.0)
res = eng._residual(f)
d = eng.d
lv = np.asarray(system.link.levels)
print("d", d, "f_d", f[d], "res top", np.round(np.sort(np.abs(res))[::-1][:6]/f[d], 4))
def isi_of(pattern, start, n):
    src = SymbolSource(pattern=pattern, m=4, precoding=False, seed=1)
    src.seek(start)
    a = lv[src.next(n)[1]]
    # slicer value for symbol k: sum_j f_j a_{k+d-j}
    isi = np.convolve(a, res, mode="full")[d:d + n]     # isi[k] = sum_j res_j a_{k-j+d}
    k = np.arange(len(res), n - len(res))
    return a[k], isi[k]
for sigma_rel in [float(x) for x in sys.argv[1:]] or [0.1]:
    out = {}
    for pat, starts in (("random", [0, 432_013_312, 864_026_624]), ("prbs31", [0, 432_013_312, 864_026_624])):
        tot = []
        for s in starts:
            a, isi = isi_of(pat, s + 4_800_000, 4_000_000)
            sig = sigma_rel * f[d]
            # errors toward the neighbouring levels (1 bit each, Gray), inner levels both sides
            th = (lv[:-1] + lv[1:]) / 2 * f[d]
            v = f[d] * a + isi
            p = np.zeros_like(v)
            for t in th:
                dist = np.where(v > t, v - t, t - v)
                # only the thresholds adjacent to the sent level
                adj = np.abs(a * f[d] - t) < (lv[1] - lv[0]) * f[d] * 0.51
                p += np.where(adj, 0.5 * erfc(dist / sig / np.sqrt(2)), 0.0)
            tot.append(p.mean() / 2)
        out[pat] = tot
        print(pat, sigma_rel, ["%.3e" % x for x in tot], "%.3e" % np.mean(tot))
    print("ratio", np.mean(out["prbs31"]) / np.mean(out["random"]))
