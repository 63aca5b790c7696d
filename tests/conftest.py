"""Shared test helpers."""

import os
import tempfile
from pathlib import Path

import pytest

from serdes.config import Config

CHANNELS = Path(__file__).resolve().parents[1].parent / "shared" / "channels"


def ideal_config(**sections) -> Config:
    """A link with no ISI: flat channel, no CTLE, no AFE bandwidth limit, no TX edge,
    no TX FFE, no ADC, no jitter, a one-tap FFE and no DFE."""
    data = {
        "link": {"window_ui": 256, "pulse_ui": 16},
        "tx": {"ffe": [1.0], "main": 0, "rise_time_s": 0.0, "snr_db": 200.0, "rlm": 1.0},
        "channel": {"model": "ideal"},
        "ctle": {"model": "none"},
        "afe": {"peaking_m": 0.0, "bandwidth_hz": 0.0},
        "noise": {"rj_ui": 0.0, "sj_ui": 0.0},
        "adc": {"bits": 0, "enob": 0.0},
        "ffe": {"taps": 1, "pre": 0},
        "dfe": {"taps": 0},
    }
    for name, values in sections.items():
        data.setdefault(name, {}).update(values)
    return Config(data)


@pytest.fixture
def channels_dir():
    if not CHANNELS.is_dir():
        pytest.skip(f"real channel data not found at {CHANNELS} (the shared/ folder beside "
                    "the checkout)")
    return CHANNELS


# The default link before the loss split, the CTLE search and ENOB 6 (the package-trace
# skin share of the Annex 93A line at 26.5625 GHz, the CTLE fixed at -8 dB, ENOB 5):
# tests that pin numbers of that link, or need its error rate, build it with these.
EARLIER_DEFAULT = ["channel.skin_fraction=0.6980985932251722", "ctle.auto=false",
                   "adc.enob=5"]


def earlier_default(*overrides) -> Config:
    return Config.default().with_overrides([*EARLIER_DEFAULT, *overrides])


@pytest.fixture(autouse=True, scope="session")
def _private_build_cache():
    """`serdes run` keeps its CTLE choices in the user's cache folder: the tests (and the
    processes they start) use a folder of their own."""
    old = os.environ.get("SERDES_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="serdes-test-cache-") as folder:
        os.environ["SERDES_CACHE_DIR"] = folder
        yield
    if old is None:
        os.environ.pop("SERDES_CACHE_DIR", None)
    else:
        os.environ["SERDES_CACHE_DIR"] = old
