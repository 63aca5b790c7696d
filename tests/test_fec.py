"""RS(544,514) KP4 FEC: the codec against an independent implementation (galois), the
line mapping and the encoded source, the burst model against closed forms, and the
counted post-FEC results of links against the binomial and the burst model."""

from collections import Counter

import numpy as np
import pytest
from scipy import stats

from serdes.fec import FecSpec, model
from serdes.fec.counter import CodewordCounter
from serdes.fec.framing import (bits_to_messages, codewords_to_data, data_to_codewords)
from serdes.fec.gf import GEN, K, N, T
from serdes.fec.rs import decode, encode
from serdes.pipeline import Aligned
from serdes.signal.prbs import PrbsGenerator
from serdes.signal.source import SymbolSource

from fec_stats import assert_binomial_histogram


@pytest.fixture(scope="module")
def rs_galois():
    galois = pytest.importorskip("galois", reason="galois (extra: crosscheck) is not installed")
    gf = galois.GF(2 ** 10, irreducible_poly="x^10 + x^3 + 1")
    # the full-length (1023, 993) code with roots alpha^0..alpha^29; galois shortens it
    # to (544, 514) for messages of 514 symbols
    return gf, galois.ReedSolomon(1023, 993, field=gf, c=0)


def _corrupt(cw, count, rng):
    r = cw.copy()
    for row in r:
        p = rng.choice(N, count, replace=False)
        row[p] ^= rng.integers(1, 1024, count)
    return r


def _line_bursts(sent, spec, rng, max_len=80):
    """Each codeword gets one burst of wrong PAM4 symbols at a random phase of the RS
    grid; returns the received rows and the RS symbols each burst overlaps."""
    data = codewords_to_data(sent, spec, 4)
    g = spec.line_symbols(4)
    overlap = []
    for i in range(sent.shape[0]):
        length = int(rng.integers(1, max_len))
        start = i * g + int(rng.integers(0, g - length))
        data[start:start + length] = (data[start:start + length]
                                      + rng.integers(1, 4, length)) % 4
        first, last = (start - i * g) // 5, (start + length - 1 - i * g) // 5
        overlap.append(last - first + 1)
    return data_to_codewords(data, spec, 4), np.array(overlap)


def test_codec_matches_galois(rs_galois):
    """galois is slow (~0.3 s a codeword, after ~20 s of set-up): one batch with 0 to 30
    random symbol errors and 3 line bursts across symbol boundaries; the encoder, the
    decoder's output and its count (or -1) must equal galois's."""
    gf, rs = rs_galois
    assert np.array_equal(GEN, np.asarray(rs.generator_poly.coeffs))
    rng = np.random.default_rng(1)
    msg = rng.integers(0, 1024, (12, K))
    sent = encode(msg)
    assert np.array_equal(sent[:2], np.asarray(rs.encode(gf(msg[:2]))))
    counts = np.array([0, 4, 8, 12, 15, 16, 20, 25, 30])
    recv = np.concatenate([_corrupt(sent[i:i + 1], c, rng) for i, c in enumerate(counts)]
                          + [_line_bursts(sent[9:], FecSpec(interleave=1), rng)[0]])
    dec, status = decode(recv)
    gdec, gn = rs.decode(gf(recv), output="codeword", errors=True)
    assert np.array_equal(status, np.asarray(gn))
    assert np.array_equal(dec, np.asarray(gdec))
    assert np.array_equal(status[:5], counts[:5]) and (status[5:9] == -1).all()


def test_encoder_check_symbols_are_the_remainder():
    """c(x) = m(x) x^30 + (m(x) x^30 mod g(x)) is divisible by g(x): every codeword has
    the 30 roots alpha^0..alpha^29 (zero syndromes, so decode() changes nothing)."""
    sent = encode(np.random.default_rng(2).integers(0, 1024, (50, K)))
    dec, status = decode(sent)
    assert (status == 0).all() and np.array_equal(dec, sent)


@pytest.mark.parametrize("lo,hi", [(0, 15), (16, 30)])
def test_decoder_bounded_distance(lo, hi):
    """Up to t errors: the codeword sent, with the count. Beyond: either detected (-1,
    the word returned as received) or a miscorrection that is itself a codeword within t
    of the received word - never anything else."""
    rng = np.random.default_rng(lo)
    sent = encode(rng.integers(0, 1024, (20 * (hi - lo + 1), K)))
    counts = np.repeat(np.arange(lo, hi + 1), 20)
    recv = np.concatenate([_corrupt(sent[i:i + 1], c, rng) for i, c in enumerate(counts)])
    dec, status = decode(recv)
    if hi <= T:
        assert np.array_equal(status, counts) and np.array_equal(dec, sent)
        return
    det = status == -1
    assert np.array_equal(dec[det], recv[det])
    mis = ~det
    if mis.any():
        assert np.array_equal(encode(dec[mis][:, :K]), dec[mis])
        assert ((dec[mis] != recv[mis]).sum(axis=1) == status[mis]).all()
        assert (status[mis] <= T).all()


def test_line_bursts_across_symbol_boundaries():
    """Bursts of wrong PAM4 symbols at every phase of the 5-symbol RS grid: the RS symbols
    hit are exactly those the burst overlaps; up to t of them are corrected."""
    rng = np.random.default_rng(7)
    spec = FecSpec(interleave=1)
    sent = encode(rng.integers(0, 1024, (200, K)))
    recv, overlap = _line_bursts(sent, spec, rng)
    assert np.array_equal((recv != sent).sum(axis=1), overlap)
    dec, status = decode(recv)
    ok = overlap <= T
    assert np.array_equal(status[ok], overlap[ok]) and np.array_equal(dec[ok], sent[ok])
    assert ((status[~ok] == -1) | (dec[~ok] != sent[~ok]).any(axis=1)).all()


def test_a_miscorrection_is_counted_as_one():
    """A received word 16 symbols from the codeword sent and 15 from another (they are 31
    apart, the code's minimum distance) is decoded into the other: the counter calls it
    miscorrected, not detected."""
    msg = np.zeros((1, K), dtype=np.int64)
    msg[0, -1] = 1
    w = encode(msg)[0]                      # weight 31: one message symbol + 30 checks
    support = np.nonzero(w)[0]
    assert support.size == 31
    sent = encode(np.random.default_rng(3).integers(0, 1024, (2, K)))
    recv = sent.copy()
    recv[0, support[:16]] ^= w[support[:16]]
    dec, status = decode(recv[:1])
    assert status[0] == 15 and np.array_equal(dec[0], sent[0] ^ w)
    spec = FecSpec(interleave=2)
    tx, rx = codewords_to_data(sent, spec, 4), codewords_to_data(recv, spec, 4)
    c = CodewordCounter(spec, 4)
    c.observe(_aligned(tx, rx))
    r = c.result()
    assert (r["codewords"], r["miscorrected"], r["detected"], r["uncorrectable"]) == (2, 1, 0, 1)
    assert r["errors_per_codeword"] == {"0": 1, "16": 1}


def _aligned(tx, rx, first=0):
    return Aligned(first=first, tx_line=tx, tx_data=tx, rx_line=rx, rx_data=rx,
                   soft=np.zeros(tx.shape[0]), sym_err=tx != rx,
                   bit_err=(tx != rx).astype(np.int64))


@pytest.mark.parametrize("il", [1, 2])
def test_framing_round_trip_and_interleave(il):
    spec = FecSpec(interleave=il)
    cw = np.random.default_rng(il).integers(0, 1024, (2 * il, N))
    data = codewords_to_data(cw, spec, 4)
    assert data.shape == (2 * il * N * 5,)
    assert np.array_equal(data_to_codewords(data, spec, 4), cw)
    bad = data.copy()
    bad[5] ^= 1                            # the second RS symbol slot on the line
    diff = data_to_codewords(bad, spec, 4) != cw
    assert diff.sum() == 1 and diff[1 if il == 2 else 0, 0 if il == 2 else 1]


@pytest.mark.parametrize("pattern,precoding,il", [("prbs31", False, 2), ("random", True, 1)])
def test_encoded_source_is_chunk_invariant_and_seekable(pattern, precoding, il):
    spec = FecSpec(interleave=il)
    g = spec.line_symbols(4)

    def src():
        return SymbolSource(pattern=pattern, m=4, precoding=precoding, seed=5, fec=spec)

    whole_line, whole = src().next(3 * g + 100)
    s = src()
    parts = [s.next(n) for n in (7, g - 3, 1000, 2 * g + 100 - 1004)]
    assert np.array_equal(np.concatenate([p[1] for p in parts]), whole)
    assert np.array_equal(np.concatenate([p[0] for p in parts]), whole_line)
    s = src()
    s.seek(g + 1234)
    line, data = s.next(g)
    assert np.array_equal(data, whole[g + 1234:2 * g + 1234])
    assert np.array_equal(line, whole_line[g + 1234:2 * g + 1234])
    cw = data_to_codewords(whole[:3 * g], spec, 4)
    assert (decode(cw)[1] == 0).all()          # every group is made of codewords
    if pattern == "prbs31":                    # ... carrying the PRBS payload in order
        bits = PrbsGenerator("prbs31").bits(3 * spec.message_bits())
        msgs = bits_to_messages(bits, spec).reshape(3, il, K)
        assert np.array_equal(cw[:, :K], msgs.reshape(-1, K))


def test_hit_distribution_closed_forms():
    # one error: one RS symbol of codeword A; with the 2-way interleave half the phases
    # put it in codeword B
    one = Counter({(0,): 1})
    assert np.allclose(model.hit_distribution(one, FecSpec(interleave=1), 4)[:2], [0, 1])
    assert np.allclose(model.hit_distribution(one, FecSpec(interleave=2), 4)[:2], [.5, .5])
    # two adjacent errors straddle an RS boundary at 1 of the 5 phases
    two = Counter({(0, 1): 1})
    assert np.allclose(model.hit_distribution(two, FecSpec(interleave=1), 4)[:3],
                       [0, .8, .2])
    # a 10-symbol burst on the 2-way grid hits A in 2 symbols at 4 of 10 phases, else 1
    ten = Counter({tuple(range(10)): 1})
    assert np.allclose(model.hit_distribution(ten, FecSpec(interleave=2), 4)[:3],
                       [0, .6, .4])


def test_renewal_kernel_closed_forms():
    from serdes.fec.renewal import window_hits

    # single-symbol events, no exclusion, one RS symbol per step: the binomial exactly
    one = dict(prob=[1.0], span=[0], hits=[[1]], gap=0, period=1)
    p = window_hits(0.013, window=N, kmax=N, **one)
    b = stats.binom.pmf(np.arange(N + 1), N, 0.013)
    assert np.allclose(p, b, rtol=1e-10, atol=1e-250)
    # events of two hits: K = 2 Binomial
    p = window_hits(0.01, prob=[1.0], span=[0], hits=[[2]], gap=0, period=1, window=N,
                    kmax=2 * N)
    assert np.allclose(p[0::2], stats.binom.pmf(np.arange(N + 1), N, 0.01), rtol=1e-10,
                       atol=1e-250)
    assert not p[1::2].any()
    # a tail far below anything countable keeps its digits (summed, not 1 - head)
    p = window_hits(1e-4, window=N, kmax=40, **one)
    assert model.tail(p, T) == pytest.approx(stats.binom.sf(T, N, 1e-4), rel=1e-9)
    assert model.tail(p, T) < 1e-30


def test_model_binomial_limit_far_below_counting():
    """Independent PAM4 symbol errors at SER 2e-4 (the usual pre-FEC level): the model
    built from their counted events gives the binomial FLR of the counted RS symbol error
    ratio, ~1e-18. The tolerance is the estimate's spread: FLR ~ r^16 and r comes from
    ~4000 errors (16 / sqrt(4000) = 25 %)."""
    rng = np.random.default_rng(4)
    n = 20_000_000
    pos = np.sort(rng.choice(n, int(rng.binomial(n, 2e-4)), replace=False))
    evs = model.events_of(pos)
    pats = Counter(tuple(int(v) for v in e - e[0]) for e in evs)
    rs_ser = np.unique(pos // 5).size / (n / 5)
    for il in (1, 2):
        mdl = model.predict(pats, len(evs), n, FecSpec(interleave=il), 4, 1.0)
        assert mdl["flr"] == pytest.approx(model.binomial_flr(rs_ser, N, T), rel=0.25)
        assert 1e-19 < mdl["flr"] < 1e-17


def test_counter_binomial_limit_on_independent_errors():
    """Independent PAM4 symbol errors: the counted errors-per-codeword histogram is the
    binomial of the counted RS symbol error ratio (chi-square), and the burst model,
    built from the same counts, gives the binomial's FLR."""
    spec = FecSpec(interleave=1)
    rng = np.random.default_rng(11)
    g = spec.line_symbols(4)
    groups = 3000
    tx = codewords_to_data(encode(rng.integers(0, 1024, (groups, K))), spec, 4)
    err = rng.random(tx.shape[0]) < 2.2e-3
    rx = tx.copy()
    rx[err] = (rx[err] + rng.integers(1, 4, int(err.sum()))) % 4
    c = CodewordCounter(spec, 4)
    for k in range(0, tx.shape[0], 100_000):  # chunks not aligned to the groups
        c.observe(_aligned(tx[k:k + 100_000], rx[k:k + 100_000], first=k))
    r = c.result()
    assert r["codewords"] == groups and tx.shape[0] == groups * g
    assert_binomial_histogram(r, groups)
    assert r["flr_model"] == pytest.approx(r["flr_binomial"], rel=0.25)
    assert r["miscorrected"] == 0
