"""``serdes precompile --com`` (serdes/com/warm.py): its small workload compiles every COM
kernel signature that COM runs of every preset call, so a first ``serdes com`` after it
compiles nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from serdes.com.warm import WORKLOAD, compile_kernels, first_run_note, mmse_kernel_cached

# in a fresh process: the workload, then every preset with a FEXT and a NEXT aggressor
# (synthetic loss lines) on a small grid; prints the kernels' signatures after each
_CODE = r"""
import json, sys
import numba
from serdes.com.columns import channel_set
from serdes.com.core import compute_com
from serdes.com.params import preset
from serdes.com.pulse import Channel
from serdes.com.warm import WORKLOAD, compile_kernels
from serdes.kernels import com_eye_bound, com_float, com_mmse_search, com_pmf, com_quant

def signatures():
    out = {}
    for mod in (com_float, com_mmse_search, com_quant, com_pmf, com_eye_bound):
        for name, f in vars(mod).items():
            if isinstance(f, numba.core.registry.CPUDispatcher):
                out[f"{mod.__name__}.{name}"] = sorted(str(s) for s in f.signatures)
    return out

skip = sys.argv[1:]
compile_kernels([(n, o) for n, o in WORKLOAD if n not in skip])
after_workload = signatures()
runs = {"802.3dj-kr": ["g_dc=-12", "g_dc2=-2", "tx_max=0,0.02,0,0,0,0"],
        "802.3ck-kr": ["g_dc=-6"], "802.3ck-cr": ["g_dc=-6"], "802.3ck-c2c": ["g_dc=-6"],
        "802.3ck-c2m": ["g_dc=-5", "g_dc2=-2.5", "eye_min_veo_test_mv=5"],
        "100gbase-kr4": ["g_dc=-6"]}
for name, ov in runs.items():
    fb = preset(name).fb_gbd * 1e9
    thru = channel_set("loss", "", "12,34", 18.0, 0.24, fb)[0]
    agg = channel_set("loss", "", "12,34", 30.0, 0.24, fb)[0]
    agg = Channel("aggressor", "fext", agg.f_hz, agg.sdd * 0.02)
    compute_com(thru, [agg], [agg], name, ov)
print(json.dumps({"workload": after_workload, "runs": signatures()}))
"""


def _signatures(*skip):
    out = subprocess.run([sys.executable, "-c", _CODE, *skip], capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_the_workload_compiles_every_signature_the_presets_runs_call():
    s = _signatures()
    new = {k: sorted(set(v) - set(s["workload"].get(k, []))) for k, v in s["runs"].items()}
    assert not {k: v for k, v in new.items() if v}
    # the big kernels are among them (the test would pass on an empty module list)
    assert s["workload"]["serdes.kernels.com_mmse_search._mmse_block"]
    assert s["workload"]["serdes.kernels.com_float._delta_rows"]
    assert s["workload"]["serdes.kernels.com_eye_bound._eh_bounds"]
    assert s["workload"]["serdes.kernels.com_pmf._accumulate"]


def test_without_the_802_3ck_run_a_preset_run_compiles_more():
    """The check above has teeth: the workload without its 802.3ck run leaves the floating
    DFE taps' kernel for the 802.3ck presets' runs to compile."""
    s = _signatures("802.3ck-kr")
    assert not s["workload"]["serdes.kernels.com_float._delta_rows"]
    assert s["runs"]["serdes.kernels.com_float._delta_rows"]


def test_precompile_com_command():
    out = subprocess.run([sys.executable, "-m", "serdes.cli", "precompile", "--com"],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert line.startswith("COM kernels compiled into numba's cache, or found there, in ")
    assert "802.3dj-kr" in line and "802.3ck-kr" in line
    out = subprocess.run([sys.executable, "-m", "serdes.cli", "precompile", "--com", "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


def test_the_kernel_cache_check_sees_an_empty_and_a_filled_cache(tmp_path):
    """mmse_kernel_cached: False with an empty numba cache (the next 802.3dj-kr run
    compiles for about a minute, and `serdes com` says so), True once the kernel is in it."""
    code = ("from serdes.com.warm import mmse_kernel_cached as c\n"
            "from serdes.com.warm import first_run_note as n\n"
            "print(c(), n('802.3dj-kr'), n('802.3ck-kr'), n('nope'), sep='|')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}, timeout=300)
    assert out.returncode == 0, out.stderr
    cached, dj, ck, bad = out.stdout.strip().split("|")
    assert cached == "False" and "serdes precompile --com" in dj and "802.3dj-kr" in dj
    assert ck == bad == "None"      # no RX FFE kernel to compile; an unknown preset
    compile_kernels(WORKLOAD[:1])   # the 802.3dj-kr run: compiled, or loaded from the cache
    assert mmse_kernel_cached() is True and first_run_note("802.3dj-kr") is None


def test_serdes_com_tells_a_terminal_about_the_first_runs_compile(monkeypatch, capsys):
    """The note is printed where the progress line is drawn, only when the kernel is not
    in the cache and the preset has an RX FFE; never into a log (no progress line)."""
    import serdes.com.core
    import serdes.com.warm
    from serdes.cli import main as cli_main
    from serdes.errors import ConfigError

    stages = []

    def stop(*a, progress=None, stage=None, **k):   # the checks passed, the search starts
        progress(0, 2)
        stages.append(stage)
        raise ConfigError("stopped here")

    monkeypatch.setattr(serdes.com.core, "compute_com", stop)
    for cached, preset_name, bar, noted in ((False, "802.3dj-kr", "--progress", True),
                                            (False, "802.3dj-kr", "--no-progress", False),
                                            (True, "802.3dj-kr", "--progress", False),
                                            (False, "802.3ck-kr", "--progress", False)):
        monkeypatch.setattr(serdes.com.warm, "mmse_kernel_cached", lambda c=cached: c)
        assert cli_main(["com", "thru.s4p", "--preset", preset_name, bar]) == 2
        err = capsys.readouterr().err
        noted_now = "compiles its COM kernels on this first run" in err
        assert noted_now == noted, (cached, preset_name, bar)
        assert "stopped here" in err
        # the search's stage reaches the progress line, where one is drawn
        assert callable(stages[-1]) == (bar == "--progress"), (preset_name, bar)
    # a file or value the run refuses: its error alone, no word of a compile
    monkeypatch.setattr(serdes.com.warm, "mmse_kernel_cached", lambda: False)
    monkeypatch.setattr(serdes.com.core, "compute_com",
                        lambda *a, **k: (_ for _ in ()).throw(ConfigError("bad file")))
    assert cli_main(["com", "thru.s4p", "--preset", "802.3dj-kr", "--progress"]) == 2
    err = capsys.readouterr().err
    assert "bad file" in err and "compiles its COM kernels" not in err


def test_serdes_sweep_com_tells_a_terminal_about_the_first_runs_compile(monkeypatch, capsys,
                                                                       tmp_path):
    """`serdes sweep --com 802.3dj-kr`: the same line where its progress bar is drawn, as
    the points start (not with --no-progress, nor after a refused command line)."""
    import serdes.com.warm
    import serdes.sweep.runner as runner
    from serdes.cli import main as cli_main

    class Stop(Exception):
        pass

    def stop(*a, **k):          # the points would start here
        raise Stop

    monkeypatch.setattr(runner, "_com_sets", stop)
    monkeypatch.setattr(serdes.com.warm, "mmse_kernel_cached", lambda: False)
    base = ["sweep", "--grid", "channel.loss_db=20,24", "--com", "802.3dj-kr", "--workers", "0"]
    for n, (extra, noted) in enumerate(((["--progress"], True), (["--no-progress"], False))):
        with pytest.raises(Stop):
            cli_main(base + ["--out", str(tmp_path / f"s{n}.csv")] + extra)
        err = capsys.readouterr().err
        assert ("compiles its COM kernels on this first run" in err) == noted, extra
    assert cli_main(base + ["--out", str(tmp_path / "no" / "s.csv"), "--progress"]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "compiles its COM kernels" not in err
