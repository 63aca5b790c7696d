"""benchmarks/peers.py times serdespy on serdes' own link; this checks that the peer's
chain really does the same work: the same decisions' slicer SNR as serdes on the same
pulse, taps and noise power (a misaligned FFE or DFE would be ~30 dB off)."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
peers = pytest.importorskip("peers", reason="benchmarks/peers.py not importable")

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("serdespy") is None,
                       reason="serdespy is not installed (pip install serdespy)"),
    pytest.mark.skipif(not (peers.CHANNELS / peers.CHANNEL).exists(),
                       reason=f"channel file {peers.CHANNEL} not found under {peers.CHANNELS}"),
]


def test_serdespy_chain_matches_serdes_slicer_snr():
    n = 40_000
    ours = peers.one_serdes(n, rj=False)
    theirs = peers.one_serdespy(n)
    # the SNR estimate of n Gaussian samples has a relative spread sqrt(2/n) (0.03 dB
    # here); serdes' noise is coloured and quantised, serdespy's white with the same
    # power: 0.04 dB apart at 1e6 symbols. 0.3 dB is many sigma of both.
    assert theirs["snr_db"] == pytest.approx(ours["snr_db"], abs=0.3)
    assert theirs["symbols"] > 0.97 * n
