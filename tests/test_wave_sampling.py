"""The waveform engine's ADC samples formed at the instants only (signal through the
interpolated pulse, noise at the reachable fine offsets) against the direct way: the
whole fine-grid waveform formed and interpolated (tests/naive.py)."""

import numpy as np
import pytest
from scipy import signal

from serdes import rng
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import design_equalizer, pipeline
from serdes.engines.wave_noise import SampledNoise
from serdes.engines.waveform import WaveformFrontEnd
from serdes.errors import ConfigError
from serdes.kernels.wave import polyphase_rows, sample_waveform
from serdes.metrics.ber import ErrorCounter

import naive
from conftest import earlier_default

JITTER = {
    "none": ["noise.rj_ui=0"],
    "rj": ["noise.rj_ui=0.01"],  # today's default: few offsets, pruned inverse FFT
    "large": ["noise.rj_ui=0.03", "noise.sj_ui=0.2", "noise.sj_hz=2e8", "noise.dd_ui=0.1"],
}


@pytest.mark.parametrize("kind", list(JITTER))
def test_adc_samples_equal_the_formed_waveform_interpolated(kind):
    """Seeded, uneven chunks across several noise blocks: the same samples to 1e-9 of
    their rms (the direct path's instants carry the rounding of a chunk-long fine
    index, about 1e-10 of a fine sample; without jitter both take grid samples)."""
    link = build(Config.default().with_overrides(JITTER[kind])).link
    a = np.random.default_rng(0).choice(link.levels, size=40_000)
    cuts = [0, 700, 9_000, 9_001, 31_000, len(a)]
    chunks = [(a[c0:c1], c0) for c0, c1 in zip(cuts[:-1], cuts[1:])]
    fe = WaveformFrontEnd(link, 3)
    ref = naive.WaveformDirect(WaveformFrontEnd(link, 3))
    want = np.concatenate([ref(x, k0) for x, k0 in chunks])
    got = np.concatenate([fe(x, k0) for x, k0 in chunks])
    assert len(a) > 3 * fe._sampled.nb  # several noise blocks crossed
    rms = np.sqrt(np.mean(want ** 2))
    tol = 1e-13 if kind == "none" else 1e-9
    assert np.max(np.abs(got - want)) <= tol * rms


def _noisy(extra=()):
    return earlier_default().with_overrides(["channel.loss_db=32", "noise.eta0_v2_per_ghz=4e-8",
                                            "link.target_errors=0", *extra])


def test_counted_errors_equal_the_direct_path():
    """A seeded run on a link with BER near 1e-3 counts the same errors through both."""
    system = build(_noisy(["noise.rj_ui=0.02"]))
    taps = design_equalizer(system)
    counts = []
    for direct in (False, True):
        pipe = pipeline(system, taps, engine="waveform", seed=11)
        if direct:
            pipe.front = naive.WaveformDirect(WaveformFrontEnd(system.link, 11))
        c = ErrorCounter(system.link.modulation_order, skip=0)
        pipe.run(60_000, chunk=16_384, observers=[c])
        counts.append((c.symbols, c.bit_errors, c.symbol_errors))
    assert counts[0][1] > 20
    assert counts[0] == counts[1]


@pytest.mark.parametrize("m, L, dmin, dmax", [(12, 100, -3, 2), (12, 100, 2, 20),
                                              (32, 700, 13, 21)])
def test_sampled_noise_equals_the_full_convolution(m, L, dmin, dmax):
    """Pruned (few residues) and full inverse FFTs, m not a power of two, offsets past
    the UI's ends: the rows equal the white stream convolved directly."""
    h = np.random.default_rng(1).standard_normal(L) * np.exp(-np.arange(L) / (L / 5))
    stream = rng.BlockRNG(5, 99, block=1000)
    sn = SampledNoise(h, m, 0.7, stream, dmin, dmax)
    lo, hi = -4, 3 * sn.nb + 17
    parts, s = [], lo
    for step in (5, sn.nb - 3, 1, sn.nb + 40, hi):  # uneven, growing windows
        e = min(s + step, hi)
        S, s0 = sn.window(s + dmin // m, e + dmax // m)
        d = np.arange(dmin, dmax + 1)
        parts.append(S[np.arange(s, e + 1)[:, None] + d // m - s0, sn.col[d % m]])
        s = e + 1
        if s > hi:
            break
    got = np.concatenate(parts)
    nf = (hi + 2) * m + dmax
    white = 0.7 * stream.normal(0, nf)
    full = signal.convolve(white, h)[:nf]
    f = np.arange(lo, hi + 1)[:, None] * m + np.arange(dmin, dmax + 1)
    want = np.where(f >= 0, full[np.maximum(f, 0)], 0.0)
    assert sn.pruned == (2 * len(sn.residues) <= m)
    assert np.max(np.abs(got - want)) <= 1e-12 * np.sqrt(np.mean(want ** 2))


@pytest.mark.parametrize("m, L, dmin, dmax", [(12, 100, -3, 2), (32, 700, 13, 21)])
def test_sampled_noise_started_later_equals_the_run_from_the_start(m, L, dmin, dmax):
    """A first window past UI 0 (a split run's range) starts at the block holding it,
    with that block's history drawn again: every row from there on is the one formed
    from UI 0, bit for bit, and none of the blocks before it are formed."""
    h = np.random.default_rng(2).standard_normal(L) * np.exp(-np.arange(L) / (L / 5))
    stream = rng.BlockRNG(5, 99, block=1000)
    ref = SampledNoise(h, m, 0.7, stream, dmin, dmax)
    for lo in (1, ref.nb - 1, ref.nb, 2 * ref.nb + 5):
        hi = lo + ref.nb + 50
        S, s0 = ref.window(-4, hi)
        late = SampledNoise(h, m, 0.7, rng.BlockRNG(5, 99, block=1000), dmin, dmax)
        T, t0 = late.window(lo, hi)
        b0 = lo // ref.nb   # the blocks formed: from the one holding lo up to hi
        assert t0 == b0 * ref.nb and late._blocks - b0 == (hi - t0) // ref.nb + 1
        assert np.array_equal(T[lo - t0:hi + 1 - t0], S[lo - s0:hi + 1 - s0])
        ref = SampledNoise(h, m, 0.7, stream, dmin, dmax)


def test_polyphase_rows_are_the_pulse_at_each_offset():
    p = np.arange(1.0, 4 * 8 + 1)  # 4 UI of 8 fine samples
    T, jhi = polyphase_rows(p, 8, -3, 10)
    for d in range(-3, 11):
        for t in range(T.shape[1]):
            f = d + (jhi - t) * 8
            assert T[d + 3, t] == (p[f] if 0 <= f < len(p) else 0.0)
    assert not np.any(np.all(T == 0, axis=0))  # no tap column that is zero for every d


def test_sampling_refuses_offsets_its_rows_or_noise_do_not_hold():
    T, jhi = polyphase_rows(np.ones(4 * 8), 8, 3, 3)
    S, col = np.zeros((100, 2)), np.full(8, -1)
    col[[3, 4]] = [0, 1]
    a = np.zeros(200)
    sample_waveform(a, -20, T, 3, jhi, 3, np.zeros(10), 0, 8, S, -5, col)  # on the grid
    with pytest.raises(ConfigError, match="pulse rows hold"):
        sample_waveform(a, -20, T, 3, jhi, 3, np.full(10, 0.5), 0, 8, S, -5, col)
    T, jhi = polyphase_rows(np.ones(4 * 8), 8, 2, 6)
    with pytest.raises(ConfigError, match="not all of them are columns"):
        sample_waveform(a, -20, T, 2, jhi, 3, np.full(10, 0.5), 0, 8, S, -5, col)
    with pytest.raises(ConfigError, match="symbols of UIs"):
        sample_waveform(a[:25], -20, T, 2, jhi, 3, np.zeros(10), 0, 8, S, -5, col)


@pytest.mark.parametrize("phase", [0, 5, 7])
def test_kernel_equals_lagrange_on_the_formed_waveform(phase):
    """Small case against tests/naive.py: the waveform formed sample by sample (symbols
    through the fine pulse, plus a fine noise sequence) interpolated one instant at a
    time; instants reach into the neighbouring UIs (offsets past 0 and m)."""
    m, n_ui, n = 8, 4, 300
    r = np.random.default_rng(4)
    p = r.standard_normal(n_ui * m)
    a = r.choice([-3.0, -1.0, 1.0, 3.0], size=n)
    offs = np.clip(r.normal(0, 1.2, n - 10), -3.5, 3.5)
    offs[::7] = np.round(offs[::7])  # some instants on the grid
    w = naive.upsample_pulse_sum(np.concatenate([np.zeros(n_ui - 1), a]), p, m, n_ui)
    nz = r.standard_normal(len(w))
    dmin, dmax = phase - 5, phase + 6
    T, jhi = polyphase_rows(p, m, dmin, dmax)
    res = np.unique(np.arange(dmin, dmax + 1) % m)
    col = np.full(m, -1)
    col[res] = np.arange(len(res))
    S = np.zeros((n + 2, len(res)))  # rows of UIs -1 .. n (zero outside the sequence)
    for v in range(n):
        S[v + 1] = nz[v * m + res]
    a_ext = np.concatenate([np.zeros(jhi + 2), a])
    u0 = 2
    got = sample_waveform(a_ext, -(jhi + 2), T, dmin, jhi, phase, offs[:n - 3 - u0],
                          u0, m, S, -1, col)
    ref = [naive.lagrange4(w + nz, (u0 + k) * m + phase + o)
           for k, o in enumerate(offs[:n - 3 - u0])]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.max(np.abs(ref)))
