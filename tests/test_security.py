"""User files are data, never code: channel files are read as size-capped text by our
own Touchstone parser (no unpickling), config files as size-capped UTF-8 TOML."""

from __future__ import annotations

import os
import pickle

import pytest

from serdes.cli import main


class _Payload:
    """Unpickling this object calls os.system, which would create the marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch '{self.marker}'",))


@pytest.mark.parametrize("name", ["evil.s4p", "evil.s2p", "EVIL.S4P"])
@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_pickled_channel_file_is_not_executed(tmp_path, capsys, name, protocol):
    marker = tmp_path / "pwned"
    evil = tmp_path / name
    evil.write_bytes(pickle.dumps(_Payload(marker), protocol=protocol))
    # the payload is real: unpickling it does create the marker
    check = tmp_path / "check"
    pickle.loads(pickle.dumps(_Payload(check), protocol=protocol))
    assert check.exists()
    rc = main(["run", "--set", "channel.model=touchstone", "--set", f"channel.file={evil}",
               "--set", "link.symbols=2000"])
    err = capsys.readouterr().err
    assert rc == 2
    assert not marker.exists(), "the channel file was unpickled"
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert name in err and "Touchstone" in err, err


def test_channel_file_size_is_capped(tmp_path, capsys, monkeypatch):
    from serdes.channel import touchstone_io

    path = tmp_path / "big.s2p"
    path.write_text("# GHz S RI R 50\n" + "0 0 0 1 0 1 0 0 0\n" * 200)
    monkeypatch.setattr(touchstone_io, "MAX_FILE_BYTES", 1000)
    rc = main(["eye", "--set", "channel.model=touchstone", "--set", f"channel.file={path}",
               "-o", str(tmp_path / "eye.png")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert "big.s2p" in err and "too large" in err, err


@pytest.mark.parametrize("content, words", [
    (b"\xff\xfe[link]\nsymbols = 1000\n", ["not UTF-8 text", "0xff"]),
    (b"[link]\nsymbols = 1000\x00\x01\x02\n", ["not valid TOML"]),
    (b"[link]\nsymbols = = 3\n", ["not valid TOML", "line 2"]),
])
def test_bad_config_file_is_one_line(tmp_path, capsys, content, words):
    cfg = tmp_path / "link.toml"
    cfg.write_bytes(content)
    assert main(["run", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "link.toml" in err, err
    for w in words:
        assert w in err, err


def _cap_memory():  # in the child: a read without limit fails instead of filling the machine
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_config_that_is_not_a_regular_file(tmp_path, capsys):
    # /dev/zero never ends: it must be refused before reading, not read until memory runs
    # out (run in a child with 1 GB of address space so a regression cannot hurt the host)
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, "-m", "serdes.cli", "run", "/dev/zero"], cwd=root,
                       env=env, capture_output=True, text=True, preexec_fn=_cap_memory)
    assert r.returncode == 2, r.stderr[-500:]
    assert r.stderr.count("\n") == 1 and "/dev/zero" in r.stderr, r.stderr
    assert "not a regular file" in r.stderr, r.stderr
    assert main(["run", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a regular file" in err, err


def test_config_size_is_capped(tmp_path, capsys):
    from serdes.config import MAX_CONFIG_BYTES

    cfg = tmp_path / "huge.toml"
    cfg.write_text("# " + "x" * MAX_CONFIG_BYTES + "\n[link]\nsymbols = 1000\n")
    assert main(["run", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "huge.toml" in err and "larger than 1 MB" in err, err
