"""Cost of crosstalk aggressors in the pulse engine, against the same link without them
(the baseline, in the same run, paired so both see the same machine load).

Run: taskset -c 1 pytest benchmarks/bench_crosstalk.py --benchmark-only -s
Printed: M symbols/s with 0, 1, 4 and 15 aggressors on the default link (thru copies,
short: the direct FIR path) and the 15 aggressors of the 802.3ck CR set CA_19p75dB (real
files, NEXT spans of 1000-2000 UI: the FFT path), the cost per aggressor in ns/symbol
and in units of the victim's own time per symbol (goal: an aggressor costs no more than
one extra pulse sum; 15 aggressors at >= 1 M symbols/s).
"""

from pathlib import Path

import pytest

from conftest import best_time
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate

N = 1_000_000
PAIRS = 3
CA = (Path(__file__).resolve().parents[1].parent / "shared" / "channels"
      / "ieee8023ck_CR_mellitz_3ck_04_1119")


def _copies(k):
    return [dict(kind="next" if i % 2 else "fext", model="copy", coupling_db=-30 - i,
                 delay_ui=2.5 * i) for i in range(k)]


def _rate(benchmark, base, aggs, label):
    sys0 = build(Config.default().with_overrides(base))
    sysx = build(Config.default().with_overrides(base).with_aggressors(aggs))
    for s in (sys0, sysx):
        simulate(s, symbols=20_000)
    t0 = tx = float("inf")
    for _ in range(PAIRS):
        t0 = min(t0, best_time(lambda: simulate(sys0, symbols=N), repeat=1))
        tx = min(tx, best_time(lambda: simulate(sysx, symbols=N), repeat=1))
    benchmark.pedantic(lambda: simulate(sysx, symbols=N), rounds=1, iterations=1)
    k = len(aggs)
    per = (tx - t0) / N / k * 1e9
    benchmark.extra_info.update(aggressors=k, msym_s=N / tx / 1e6, baseline_msym_s=N / t0 / 1e6,
                                ns_per_aggressor_symbol=per,
                                aggressor_over_victim=(tx - t0) / k / t0)
    print(f"\n{label}: {k} aggressors {N / tx / 1e6:.2f} M sym/s, none {N / t0 / 1e6:.2f} "
          f"M sym/s; {per:.1f} ns per aggressor-symbol = {(tx - t0) / k / t0:.2f} x the "
          "victim's own time")


@pytest.mark.parametrize("k", [1, 4, 15])
def test_thru_copies(benchmark, k):
    _rate(benchmark, ["link.target_errors=0"], _copies(k), "default link, thru copies")


def test_ca_cable_set_15_aggressors(benchmark):
    if not CA.is_dir():
        pytest.skip(f"real channel data not found at {CA}")
    aggs = [dict(kind=kind, file=str(CA / f"CA_19p75dB_{kind}{i}.s4p"))
            for kind, n in (("fext", 7), ("next", 8)) for i in range(1, n + 1)]
    base = ["link.target_errors=0", "channel.model=touchstone",
            f"channel.file={CA / 'CA_19p75dB_thru.s4p'}"]
    _rate(benchmark, base, aggs, "CA_19p75dB, its 7 FEXT + 8 NEXT files")
