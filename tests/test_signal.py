"""Tests of serdes.signal.prbs, serdes.signal.pam and their numba kernels."""

import hashlib
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from serdes.errors import ConfigError
from naive import (cells_from_state, slow_lfsr, slow_precode, slow_unprecode,
                   state_from_cells)
from serdes.kernels.precode import precode as k_precode
from serdes.kernels.precode import unprecode as k_unprecode
from serdes.kernels.prbs import lfsr_bits
from serdes.signal import pam
from serdes.signal.prbs import (
    POLYNOMIALS,
    QPRBS13_LENGTH,
    QPRBS13_SEED,
    PrbsGenerator,
    prbs_bits,
    qprbs13_symbols,
)


# --------------------------------------------------------------------------
# slow references


def one_period(name, state=None):
    order, _ = POLYNOMIALS[name]
    return prbs_bits(name, 2**order - 1, state)


def cyclic_runs(seq):
    """(value, length) of the runs of a periodic sequence, counted cyclically."""
    seq = np.asarray(seq)
    change = np.flatnonzero(seq != np.roll(seq, 1))   # indices starting a run
    assert change.size > 0
    rolled = np.roll(seq, -change[0])
    starts = np.flatnonzero(rolled != np.roll(rolled, 1))
    lengths = np.diff(np.append(starts, rolled.size))
    return rolled[starts], lengths


# --------------------------------------------------------------------------
# PRBS


@pytest.mark.parametrize("n", [7, 9, 11, 13, 15])
def test_period_is_two_to_the_n_minus_one(n):
    name = f"prbs{n}"
    period = 2**n - 1
    seq = prbs_bits(name, 2 * period + n)
    # state after bit i = the last n bits; find the first repeat of the first state
    weights = 1 << np.arange(n, dtype=np.int64)
    states = np.lib.stride_tricks.sliding_window_view(seq, n).astype(np.int64) @ weights
    first_repeat = np.flatnonzero(states[1:] == states[0])[0] + 1
    assert first_repeat == period
    assert np.unique(states[:period]).size == period       # every non-zero state once
    assert 0 not in states[:period]
    gen = PrbsGenerator(name)
    gen.bits(period)
    assert gen.state == 2**n - 1


@pytest.mark.parametrize("n", [7, 9, 11, 13, 15])
def test_period_statistics(n):
    seq = one_period(f"prbs{n}")
    assert int(seq.sum()) == 2 ** (n - 1)
    values, lengths = cyclic_runs(seq)
    ones, zeros = lengths[values == 1], lengths[values == 0]
    assert ones.max() == n and zeros.max() == n - 1
    assert np.count_nonzero(ones == n) == 1 and np.count_nonzero(zeros == n - 1) == 1
    assert np.count_nonzero(ones == n - 1) == 0 and np.count_nonzero(zeros == n) == 0
    assert lengths.size == 2 ** (n - 1)
    for k in range(1, n - 1):
        # 2**(n-k-1) runs of length k in total, half of each polarity
        assert np.count_nonzero(lengths == k) == 2 ** (n - k - 1)
        assert np.count_nonzero(ones == k) == 2 ** (n - k - 2)
        assert np.count_nonzero(zeros == k) == 2 ** (n - k - 2)


@pytest.mark.parametrize("name", ["prbs23", "prbs31"])
def test_long_prbs_obeys_recurrence(name):
    order, taps = POLYNOMIALS[name]
    n = 100_000
    seed = 0x5A5A5A5 & ((1 << order) - 1)
    gen = PrbsGenerator(name, seed)
    fast = gen.bits(n)
    slow, cells = slow_lfsr(taps, cells_from_state(seed, order), n)
    assert np.array_equal(fast, np.array(slow, dtype=np.uint8))
    assert gen.state == state_from_cells(cells)
    y = fast.astype(np.int64)
    rec = np.zeros(n - order, dtype=np.int64)
    for t in taps:
        rec ^= y[order - t:n - t]
    assert np.array_equal(rec, y[order:])


@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
def test_lfsr_kernel_matches_slow_reference(name):
    order, taps = POLYNOMIALS[name]
    rng = np.random.default_rng(sorted(POLYNOMIALS).index(name))
    for _ in range(5):
        seed = int(rng.integers(1, 2**order))
        n = int(rng.integers(0, 3000))
        out, new = lfsr_bits(n, seed, order, taps)
        slow, cells = slow_lfsr(taps, cells_from_state(seed, order), n)
        assert out.tolist() == slow
        assert int(new) == state_from_cells(cells)


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(POLYNOMIALS)),
    chunks=st.lists(st.integers(0, 200), min_size=1, max_size=12),
    seed=st.integers(1, 2**31 - 1),
)
def test_streaming_equals_one_call(name, chunks, seed):
    order, _ = POLYNOMIALS[name]
    seed = seed % (2**order - 1) + 1
    streamed = PrbsGenerator(name, seed)
    parts = [streamed.bits(c) for c in chunks]
    whole = PrbsGenerator(name, seed)
    ref = whole.bits(sum(chunks))
    assert np.array_equal(np.concatenate(parts), ref)
    assert isinstance(streamed.state, int) and streamed.state == whole.state


def test_generator_defaults_and_types():
    gen = PrbsGenerator("prbs31")
    assert gen.state == 2**31 - 1 and type(gen.state) is int
    out = gen.bits(10)
    assert out.dtype == np.uint8 and out.shape == (10,)
    assert set(np.unique(prbs_bits("prbs9", 1000)).tolist()) == {0, 1}
    assert prbs_bits("prbs7", 0).shape == (0,)
    assert np.array_equal(prbs_bits("prbs7", 50, 5), PrbsGenerator("prbs7", 5).bits(50))


def test_prbs31_is_fast():
    prbs_bits("prbs31", 1000)                      # compile / load cache
    t0 = time.perf_counter()
    bits = prbs_bits("prbs31", 10_000_000)
    assert time.perf_counter() - t0 < 1.0
    assert abs(int(bits.sum()) - 5_000_000) < 20_000


@pytest.mark.parametrize("kwargs", [
    dict(name="prbs8"),
    dict(name=7),
    dict(name="prbs7", seed_state=0),
    dict(name="prbs7", seed_state=128),
    dict(name="prbs7", seed_state=-1),
    dict(name="prbs7", seed_state=1.5),
])
def test_generator_rejects_bad_arguments(kwargs):
    with pytest.raises(ConfigError):
        PrbsGenerator(**kwargs)


@pytest.mark.parametrize("n", [-1, 2.0, "10"])
def test_bits_rejects_bad_count(n):
    with pytest.raises(ConfigError):
        PrbsGenerator("prbs7").bits(n)


# --------------------------------------------------------------------------
# QPRBS13


def slow_qprbs13():
    """QPRBS13 straight from the clause text (802.3 94.2.9.3), in plain Python.

    PRBS13 G(x) = 1 + x + x^2 + x^12 + x^13, cells S1..S13 loaded with the
    lane-0 seed 0000010101011, output = S1 ^ S2 ^ S12 ^ S13 shifted into S1.
    31096 bits = 8191 as is, 8191 inverted, 8191 as is, 6523 inverted;
    bit pairs (MSB first) Gray coded 00->0, 01->1, 11->2, 10->3.
    """
    cells = [0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 1]
    bits = []
    for length, invert in ((8191, 0), (8191, 1), (8191, 0), (6523, 1)):
        seg, cells = slow_lfsr((1, 2, 12, 13), cells, length)
        bits += [b ^ invert for b in seg]
    gray = {(0, 0): 0, (0, 1): 1, (1, 1): 2, (1, 0): 3}
    return [gray[(bits[i], bits[i + 1])] for i in range(0, len(bits), 2)]


def test_qprbs13_matches_clause_reference():
    sym = qprbs13_symbols()
    assert sym.dtype == np.uint8
    assert len(sym) == QPRBS13_LENGTH == 15548
    assert sym.tolist() == slow_qprbs13()


def test_qprbs13_histogram():
    counts = np.bincount(qprbs13_symbols(), minlength=4)
    assert counts.sum() == 15548 and counts.size == 4
    assert np.all(np.abs(counts - 15548 / 4) < 0.05 * 15548 / 4)


def test_qprbs13_structure():
    sym = qprbs13_symbols()
    bits = pam.symbols_to_bits(sym, 4)
    prbs = one_period("prbs13", QPRBS13_SEED)
    assert np.array_equal(bits[:8191], prbs)
    assert np.array_equal(bits[8191:16382], 1 - prbs)
    assert np.array_equal(bits[16382:24573], prbs)
    assert np.array_equal(bits[24573:], 1 - prbs[:6523])


def test_prbs13_lane0_matches_ieee_com_prbs13q():
    """Cross-check polynomial, seed and Gray map against published IEEE COM tool output.

    The COM tool's PRBS13Q emits the 13 seed cells (S13 first) before the
    first feedback bit, i.e. our lane-0 stream delayed by 13 bits; its 4095
    symbols (last unpaired bit dropped) are pinned by a SHA-256 of their digits.
    """
    rolled = np.roll(one_period("prbs13", QPRBS13_SEED), 13)
    assert rolled[:16].tolist() == [1, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    sym = pam.bits_to_symbols(rolled[:8190], 4)
    assert np.bincount(sym).tolist() == [1014, 1002, 1014, 1065]
    digits = "".join(map(str, sym.tolist()))
    assert hashlib.sha256(digits.encode()).hexdigest() == (
        "7b18e164d4d8b13c80c5db3955f86dbb1b097a24ffc937585d755f9b7b2ad81f")


# --------------------------------------------------------------------------
# PAM levels and Gray coding


def test_levels():
    assert pam.levels(2).tolist() == [-1.0, 1.0]
    assert np.allclose(pam.levels(4), [-1, -1 / 3, 1 / 3, 1])
    lv = pam.levels(4, rlm=0.8)
    assert lv.dtype == np.float64 and np.allclose(lv, [-1, -0.8 / 3, 0.8 / 3, 1])
    # IEEE 802.3 120D.3.1.2 RLM from the levels gives back rlm
    for rlm in (0.5, 0.77, 1.0):
        v = pam.levels(4, rlm)
        mid = (v[0] + v[3]) / 2
        es1 = (v[1] - mid) / (v[0] - mid)
        es2 = (v[2] - mid) / (v[3] - mid)
        assert np.isclose(min(3 * es1, 3 * es2, 2 - 3 * es1, 2 - 3 * es2), rlm)


@pytest.mark.parametrize("args", [(3,), (8,), ("4",), (4, 0.4), (4, 1.1)])
def test_levels_rejects_bad_arguments(args):
    with pytest.raises(ConfigError):
        pam.levels(*args)


def test_gray_table_and_adjacency():
    table = {(0, 0): 0, (0, 1): 1, (1, 1): 2, (1, 0): 3}
    for pair, s in table.items():
        assert pam.bits_to_symbols(list(pair), 4).tolist() == [s]
        assert pam.symbols_to_bits([s], 4).tolist() == list(pair)
    codes = [pam.symbols_to_bits([s], 4) for s in range(4)]
    for s in range(3):
        assert int(np.count_nonzero(codes[s] != codes[s + 1])) == 1


@pytest.mark.parametrize("m", [2, 4])
def test_bits_symbols_round_trip(m):
    rng = np.random.default_rng(m)
    bits = rng.integers(0, 2, 10_000).astype(np.uint8)
    sym = pam.bits_to_symbols(bits, m)
    assert sym.dtype == np.uint8 and sym.size == bits.size // (m // 2)
    assert sym.max() <= m - 1
    back = pam.symbols_to_bits(sym, m)
    assert back.dtype == np.uint8 and np.array_equal(back, bits)
    assert np.array_equal(pam.bits_to_symbols(bits.astype(bool), m), sym)


def test_pam2_is_identity():
    bits = np.array([0, 1, 1, 0, 1], dtype=np.uint8)
    assert np.array_equal(pam.bits_to_symbols(bits, 2), bits)
    assert np.array_equal(pam.symbols_to_bits(bits, 2), bits)


@pytest.mark.parametrize("call", [
    lambda: pam.bits_to_symbols([0, 1, 1], 4),
    lambda: pam.bits_to_symbols([0, 2], 4),
    lambda: pam.bits_to_symbols([0.0, 1.0], 4),
    lambda: pam.bits_to_symbols([[0, 1]], 4),
    lambda: pam.bits_to_symbols([0, 1], 3),
    lambda: pam.symbols_to_bits([4], 4),
    lambda: pam.symbols_to_bits([2], 2),
    lambda: pam.symbols_to_bits([-1], 4),
])
def test_mapping_rejects_bad_input(call):
    with pytest.raises(ConfigError):
        call()


# --------------------------------------------------------------------------
# precoding


@pytest.mark.parametrize("m", [2, 4])
def test_precode_kernels_match_slow_reference(m):
    rng = np.random.default_rng(10 + m)
    for _ in range(5):
        sym = rng.integers(0, m, int(rng.integers(0, 2000))).astype(np.uint8)
        prev = int(rng.integers(0, m))
        p, last = k_precode(sym, m, prev)
        ref, ref_last = slow_precode(sym, m, prev)
        assert p.tolist() == ref and int(last) == ref_last
        g, last = k_unprecode(sym, m, prev)
        ref, ref_last = slow_unprecode(sym, m, prev)
        assert g.tolist() == ref and int(last) == ref_last


@pytest.mark.parametrize("m", [2, 4])
def test_precode_round_trip(m):
    rng = np.random.default_rng(m)
    g = rng.integers(0, m, 5000).astype(np.uint8)
    for state in range(m):
        p, s1 = pam.precode(g, m, state)
        assert p.dtype == np.uint8 and p.max() <= m - 1
        back, s2 = pam.unprecode(p, m, state)
        assert np.array_equal(back, g)
        assert s1 == s2 == int(p[-1]) and type(s1) is int
    p, s = pam.precode([], m, 1)
    assert p.size == 0 and s == 1


@settings(max_examples=50, deadline=None)
@given(
    m=st.sampled_from([2, 4]),
    chunks=st.lists(st.integers(0, 50), min_size=1, max_size=8),
    seed=st.integers(0, 2**32 - 1),
)
def test_precode_chunked_equals_whole(m, chunks, seed):
    g = np.random.default_rng(seed).integers(0, m, sum(chunks)).astype(np.uint8)
    whole, whole_state = pam.precode(g, m)
    parts, state, i = [], 0, 0
    for c in chunks:
        out, state = pam.precode(g[i:i + c], m, state)
        parts.append(out)
        i += c
    assert np.array_equal(np.concatenate(parts), whole) and state == whole_state
    dec, dstate, i = [], 0, 0
    for c in chunks:
        out, dstate = pam.unprecode(whole[i:i + c], m, dstate)
        dec.append(out)
        i += c
    assert np.array_equal(np.concatenate(dec), g)


@pytest.mark.parametrize("m", [2, 4])
def test_single_precoded_error_gives_two_adjacent_errors(m):
    rng = np.random.default_rng(42 + m)
    g = rng.integers(0, m, 400).astype(np.uint8)
    p, _ = pam.precode(g, m)
    for pos in rng.choice(399, 40, replace=False):
        bad = p.copy()
        bad[pos] = (int(bad[pos]) + int(rng.integers(1, m))) % m
        dec, _ = pam.unprecode(bad, m)
        assert np.flatnonzero(dec != g).tolist() == [pos, pos + 1]


@pytest.mark.parametrize("call", [
    lambda: pam.precode([0, 1], 4, state=4),
    lambda: pam.precode([0, 1], 4, state=-1),
    lambda: pam.precode([0, 4], 4),
    lambda: pam.unprecode([0, 1], 2, state=2),
    lambda: pam.unprecode([0, 1], 5),
])
def test_precode_rejects_bad_input(call):
    with pytest.raises(ConfigError):
        call()
