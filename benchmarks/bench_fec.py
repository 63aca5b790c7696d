"""RS(544,514) KP4 decoder throughput beside galois (an independent codec) in the same
run, and what FEC costs a counted run (the same link with fec.mode off and kp4).

Run: pytest benchmarks/bench_fec.py --benchmark-only -s

The goal: decoding is never the bottleneck of a counted run, i.e. the decoder handles
more than 2x the run's line symbols per second (one codeword = 2720 PAM4 symbols).
"""

import time

import numpy as np
import pytest

from conftest import best_time
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.fec.gf import K, N
from serdes.fec.rs import decode, encode

PAM4_PER_CODEWORD = N * 10 // 2
LINK_SYMBOLS = 2_000_000


def _received(count, errors, seed=0):
    rng = np.random.default_rng(seed)
    sent = encode(rng.integers(0, 1024, (count, K)))
    recv = sent.copy()
    for row in recv:
        p = rng.choice(N, errors, replace=False)
        row[p] ^= rng.integers(1, 1024, errors)
    return sent, recv


def _run_rate(fec: str) -> float:
    system = build(Config.default().with_overrides(
        [f"fec.mode={fec}", f"link.symbols={LINK_SYMBOLS}", "link.target_errors=0"]))
    simulate(system, symbols=100_000)  # compile / load caches
    t0 = time.perf_counter()
    res = simulate(system)
    return res.symbols / (time.perf_counter() - t0)


@pytest.mark.parametrize("errors", [0, 8, 15, 20])
def test_decoder_vs_galois(benchmark, errors):
    galois = pytest.importorskip("galois", reason="galois is not installed")
    gf = galois.GF(2 ** 10, irreducible_poly="x^10 + x^3 + 1")
    rs = galois.ReedSolomon(1023, 993, field=gf, c=0)
    sent, recv = _received(2000, errors)
    decode(recv[:2])
    benchmark.pedantic(lambda: decode(recv), rounds=3, iterations=1)
    ours = recv.shape[0] / benchmark.stats.stats.min
    few = gf(recv[:8])
    t_g = best_time(lambda: rs.decode(few, output="codeword", errors=True), repeat=2) / 8
    dec, status = decode(recv[:8])
    gdec, gn = rs.decode(few, output="codeword", errors=True)
    same = np.array_equal(dec, np.asarray(gdec)) and np.array_equal(status, np.asarray(gn))
    benchmark.extra_info.update(errors=errors, codewords_per_s=ours,
                                galois_codewords_per_s=1 / t_g, speedup=ours * t_g,
                                pam4_symbols_per_s=ours * PAM4_PER_CODEWORD, same=same)
    print(f"\n{errors} symbol errors per codeword: ours {ours:,.0f} codewords/s "
          f"({ours * PAM4_PER_CODEWORD / 1e6:.0f} M PAM4 symbols/s), galois "
          f"{1 / t_g:,.1f} codewords/s, {ours * t_g:,.0f}x, same results {same}")
    assert same


def test_decoder_keeps_up_with_a_counted_run(benchmark):
    """The default link's counted run with and without FEC (the whole pipeline) beside
    the decoder's rate at a pre-FEC load far above the link's (8 errors per codeword)."""
    _, recv = _received(2000, 8, seed=1)
    decode(recv[:2])
    benchmark.pedantic(lambda: decode(recv), rounds=3, iterations=1)
    dec_rate = recv.shape[0] / benchmark.stats.stats.min * PAM4_PER_CODEWORD
    off, on = _run_rate("off"), _run_rate("kp4")
    benchmark.extra_info.update(decoder_symbols_per_s=dec_rate, run_symbols_per_s=off,
                                run_fec_symbols_per_s=on, margin=dec_rate / off)
    print(f"\ndecoder {dec_rate / 1e6:.0f} M PAM4 symbols/s (8 errors per codeword); "
          f"counted run {off / 1e6:.2f} M symbols/s without FEC, {on / 1e6:.2f} M with; "
          f"decoder / run = {dec_rate / off:.0f}x")
    assert dec_rate > 2 * off
