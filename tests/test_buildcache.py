"""The on-disk cache of the CTLE search (serdes/buildcache.py): a cached build is the
uncached build bit for bit, the key follows every input, and a bad entry is a miss."""

import contextlib
import io
import json

import numpy as np
import pytest

import serdes.dsp.ctle_search as ctle_search
from serdes import buildcache
from serdes.build import build
from serdes.config import Config
from serdes.engines.run import design_equalizer, simulate


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SERDES_CACHE_DIR", str(folder))
    return folder


def _no_search(*args, **kwargs):
    raise AssertionError("the CTLE search ran although its choice was cached")


def _same_system(a, b):
    assert a.link.summary() == b.link.summary()
    assert np.array_equal(a.link.pulse.taps, b.link.pulse.taps)
    ta, tb = design_equalizer(a), design_equalizer(b)
    assert np.array_equal(ta.ffe, tb.ffe) and np.array_equal(ta.dfe, tb.dfe)
    assert ta.predicted_snr_db == tb.predicted_snr_db


def test_a_cached_build_is_the_uncached_build_bit_for_bit(cache, monkeypatch):
    cfg = Config.default().with_overrides(["link.symbols=30000"])
    plain = build(cfg)
    first = build(cfg, cache=True)                      # a miss: searches and stores
    assert len(list(cache.glob("*.json"))) == 1
    monkeypatch.setattr(ctle_search, "search_ctle", _no_search)
    again = build(cfg.with_overrides(["link.symbols=40000"]), cache=True)  # a hit
    _same_system(plain, first)
    _same_system(plain, again)
    ra, rb = simulate(plain), simulate(build(cfg, cache=True))
    assert (ra.bit_errors, ra.symbol_errors, ra.snr_db) == (rb.bit_errors, rb.symbol_errors,
                                                            rb.snr_db)


def test_the_key_follows_the_config_the_files_and_the_code(tmp_path, monkeypatch):
    f = tmp_path / "ch.s4p"
    f.write_bytes(b"! one\n")
    values = {"channel": {"file": str(f), "loss_db": 25.0}, "link": {"seed": 1}}
    k0 = buildcache.key("ctle_search", values)
    assert buildcache.key("ctle_search", json.loads(json.dumps(values))) == k0
    assert buildcache.key("ctle_search", {**values, "link": {"seed": 2}}) != k0
    assert buildcache.key("ctle_search",
                          {**values, "channel": {"file": str(f), "loss_db": 25.000001}}) != k0
    f.write_bytes(b"! two\n")                           # same name, other contents
    k1 = buildcache.key("ctle_search", values)
    assert k1 != k0
    monkeypatch.setitem(buildcache._state, "code", "another revision")
    assert buildcache.key("ctle_search", values) != k1


def test_a_bad_entry_is_a_miss(cache):
    cfg = Config.default().with_overrides(["link.symbols=30000"])
    build(cfg, cache=True)
    (entry,) = cache.glob("*.json")
    good = json.loads(entry.read_text())
    plain = build(cfg)
    for text in ("{not json", json.dumps({"key": "other", "value": good["value"]}),
                 json.dumps({"key": good["key"], "value": {"g_dc_db": -7.5, "g_dc2_db": 0.0}})):
        entry.write_text(text)
        _same_system(plain, build(cfg, cache=True))     # searched again, stored again
        assert json.loads(entry.read_text()) == good


def test_the_cache_can_be_turned_off(tmp_path, monkeypatch):
    import serdes.cli

    folder = tmp_path / "cache"
    monkeypatch.setenv("SERDES_CACHE_DIR", str(folder))
    args = ["run", "--set", "link.symbols=20000", "--no-stat", "--no-progress", "--json"]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert serdes.cli.main(args + ["--no-cache"]) == 0
    assert not folder.exists()
    with contextlib.redirect_stdout(io.StringIO()) as out2:
        assert serdes.cli.main(args) == 0
    assert len(list(folder.glob("*.json"))) == 1
    assert json.loads(out.getvalue())["bit_errors"] == json.loads(out2.getvalue())["bit_errors"]
    monkeypatch.setenv("SERDES_CACHE_DIR", "off")
    assert buildcache.cache_dir() is None


def test_a_touchstone_link_from_the_cache_is_the_same(cache, channels_dir, monkeypatch):
    f = sorted(channels_dir.rglob("*thru*.s4p"))[0]
    cfg = Config.default().with_overrides(["channel.model=touchstone", f"channel.file={f}"])
    plain = build(cfg)
    build(cfg, cache=True)
    monkeypatch.setattr(ctle_search, "search_ctle", _no_search)
    _same_system(plain, build(cfg, cache=True))


def test_sweep_points_take_the_cached_choice(cache, tmp_path, monkeypatch, capsys):
    """`serdes sweep` keeps each point's CTLE choice as `serdes run` does: a second
    sweep of the same links (here with more symbols) searches nothing and gives the
    rows of a sweep with --no-cache, which searches at every point."""
    from serdes.cli import main as cli_main

    calls = []
    real = ctle_search.search_ctle

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ctle_search, "search_ctle", counted)
    argv = ["sweep", "--grid", "channel.loss_db=18,26", "--grid", "ffe.taps=12,16",
            "--workers", "0", "--no-progress", "--json"]
    assert cli_main(argv + ["--set", "link.symbols=20000", "--out", str(tmp_path / "a.csv")]) == 0
    capsys.readouterr()
    assert len(calls) == 4 and len(list(cache.glob("*.json"))) == 4
    calls.clear()
    assert cli_main(argv + ["--set", "link.symbols=30000", "--out", str(tmp_path / "b.csv")]) == 0
    cached = json.loads(capsys.readouterr().out)["rows"]
    assert calls == []
    assert cli_main(argv + ["--set", "link.symbols=30000", "--no-cache",
                            "--out", str(tmp_path / "c.csv")]) == 0
    searched = json.loads(capsys.readouterr().out)["rows"]
    assert len(calls) == 4
    for a, b in zip(cached, searched):
        a.pop("elapsed_s"), b.pop("elapsed_s")
        assert a == b


@pytest.mark.parametrize("argv", [
    ["eye", "--phases", "8", "--bins", "32", "--contours", "1e-6"],
    ["bathtub", "--phases", "8", "--points", "32"],
    ["jtol", "--freqs", "1e6", "--json"],
])
def test_eye_bathtub_and_jtol_share_the_runs_ctle_choice(argv, cache, tmp_path, monkeypatch,
                                                           capsys):
    """A link's CTLE choice kept by `serdes run` serves `eye`, `bathtub` and `jtol` (the
    same key, so the same link bit for bit); with --no-cache they search again."""
    from serdes.cli import main as cli_main

    link = ["--set", "channel.loss_db=22", "--set", "ffe.taps=16"]
    assert cli_main(["run", *link, "--set", "link.symbols=20000", "--no-stat"]) == 0
    assert len(list(cache.glob("*.json"))) == 1
    out = ["-o", str(tmp_path / "x.png")] if argv[0] != "jtol" else []
    monkeypatch.setattr(ctle_search, "search_ctle", _no_search)
    assert cli_main([*argv, *link, *out]) == 0
    with pytest.raises(AssertionError, match="the CTLE search ran"):
        cli_main([*argv, *link, *out, "--no-cache"])
    capsys.readouterr()
