"""The waveform engine's filtered RX noise (one FFT product per fixed block, the
filter's FFT computed once) against the plain per-block scipy.signal.oaconvolve of the
earlier engine: the same samples to rounding, whatever the chunk sizes."""

import numpy as np
import pytest

signal = pytest.importorskip("scipy.signal")

from serdes import rng  # noqa: E402
from serdes.build import build_link  # noqa: E402
from serdes.config import Config  # noqa: E402
from serdes.engines.waveform import NOISE_BLOCK_UI, WAVE_NOISE, WaveformFrontEnd  # noqa: E402


def _reference_noise(fe, seed, n_blocks):
    """Blocks of white noise with the filter's history in front, each convolved by
    oaconvolve ("valid"), joined."""
    block = NOISE_BLOCK_UI * fe.m
    stream = rng.BlockRNG(seed, WAVE_NOISE)
    hist = np.zeros(fe.h_rx.shape[0] - 1)
    out = []
    for b in range(n_blocks):
        ext = np.concatenate([hist, fe.noise_sigma * stream.normal(b * block, block)])
        hist = ext[ext.shape[0] - hist.shape[0]:]
        out.append(signal.oaconvolve(ext, fe.h_rx, mode="valid"))
    return np.concatenate(out)


def test_filtered_noise_equals_the_per_block_convolution():
    link = build_link(Config.default())
    seed = 7
    fe = WaveformFrontEnd(link, seed)
    m = fe.m
    # uneven calls crossing the 2048-UI block boundaries
    got = np.concatenate([fe._noise(f0 * m, n * m) for f0, n in
                          ((0, 1500), (1500, 3000), (4500, 2600))])
    n_blocks = -(-got.shape[0] // (NOISE_BLOCK_UI * m))
    ref = _reference_noise(WaveformFrontEnd(link, seed), seed, n_blocks)[:got.shape[0]]
    scale = float(np.sqrt(np.mean(ref ** 2)))
    assert scale > 0
    assert np.max(np.abs(got - ref)) <= 1e-12 * scale
