"""The library's counts (simulate's symbols, target_errors, chunk, seed; a split run's
threads): whole numbers in range or one ConfigError naming the argument. int() had run
0 or -1 symbols as an empty run (BER NaN), truncated 2.5 threads to 2, turned 0 threads
into one and NaN into a bare ValueError."""

from __future__ import annotations

import pytest

from conftest import EARLIER_DEFAULT
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import simulate
from serdes.errors import ConfigError
from serdes.report import run_report


@pytest.fixture(scope="module")
def system():
    return build(Config.default().with_overrides(EARLIER_DEFAULT).with_overrides(
        ["link.symbols=20000"]))


@pytest.mark.parametrize("kw", [dict(symbols=0), dict(symbols=-1), dict(symbols=1.5),
                                dict(symbols=float("nan")), dict(symbols="1000"),
                                dict(target_errors=-1), dict(chunk=0), dict(seed=-1),
                                dict(seed=True)])
def test_simulate_refuses_a_bad_count(system, kw):
    (name, value), = kw.items()
    with pytest.raises(ConfigError, match=f"^{name} = "):
        simulate(system, **kw)


def test_a_whole_float_is_a_count(system):
    a, b = simulate(system, symbols=2e4), simulate(system, symbols=20000)
    assert a.symbols == b.symbols > 0 and a.bit_errors == b.bit_errors


@pytest.mark.parametrize("threads", [0, -2, 2.5, "x"])
def test_run_report_refuses_a_bad_thread_count(system, threads):
    with pytest.raises(ConfigError, match="^threads = "):
        run_report(system, threads=threads)
