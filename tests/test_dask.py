"""serdes sweep on a Dask cluster: a real scheduler and two workers on 127.0.0.1.

The scheduler and the workers are separate `dask` processes started here (as on a
real cluster), each waited for with a bounded timeout and stopped at the end.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time

import pytest

pytest.importorskip("distributed", reason="Dask is an optional extra: pip install "
                    "'serdes[dask]'")

from serdes.cli import main as cli_main  # noqa: E402

START_TIMEOUT_S = 120


def _stop(procs):
    for p in procs:  # after a clean shutdown they are gone or going
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    from distributed import Client

    tmp = tmp_path_factory.mktemp("dask")
    sched_file = tmp / "scheduler.json"
    logs = [open(tmp / f"{name}.log", "w") for name in ("scheduler", "worker1", "worker2")]
    procs = []
    try:
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
            stdout=logs[0], stderr=subprocess.STDOUT, cwd=tmp))
        deadline = time.monotonic() + START_TIMEOUT_S
        while not sched_file.exists() and time.monotonic() < deadline:
            if procs[0].poll() is not None:
                break
            time.sleep(0.1)
        if not sched_file.exists():
            pytest.fail("the dask scheduler did not start: "
                        + (tmp / "scheduler.log").read_text()[-2000:])
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        for log in logs[1:]:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address,
                 "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard",
                 "--memory-limit", "0", "--death-timeout", "60"],
                stdout=log, stderr=subprocess.STDOUT, cwd=tmp))
        with Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT_S)
        yield address
        with Client(address, timeout=30, set_as_default=False) as client:
            client.shutdown()  # the scheduler stops its workers, then itself
    finally:
        _stop(procs[::-1])
        for log in logs:
            log.close()


def _rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r.pop("elapsed_s")
    return rows


def test_dask_and_local_give_identical_rows(scheduler, tmp_path, capsys):
    argv = ["sweep", "--set", "link.symbols=20000", "--grid", "channel.loss_db=22:30:4",
            "--grid", "ffe.taps=2,12"]  # ffe.taps=2 < ffe.pre: error rows too
    local, remote = tmp_path / "local.csv", tmp_path / "dask.csv"
    # a local worker process: one BLAS thread, as a Dask worker under its nanny
    assert cli_main(argv + ["--out", str(local), "--workers", "1"]) == 0
    assert cli_main(argv + ["--out", str(remote), "--scheduler", scheduler, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (summary["points"], summary["ran"], summary["errors"]) == (6, 6, 3)
    assert _rows(remote) == _rows(local)
    assert {r["status"] for r in _rows(remote)} == {"ok", "error"}
    # resuming through the cluster runs nothing again
    assert cli_main(argv + ["--out", str(remote), "--scheduler", scheduler]) == 0
    assert "0 run now, 6 already in" in capsys.readouterr().out
    assert _rows(remote) == _rows(local)


def test_com_sweep_on_the_cluster_equals_local(scheduler, tmp_path, capsys):
    """`--com`: each channel set's COM is a task of its own on the cluster (keys apart
    from the points' runs); the rows equal the local sweep's."""
    argv = ["sweep", "--set", "link.symbols=4000", "--set", "channel.model=loss",
            "--grid", "channel.loss_db=16,26", "--grid", "ffe.taps=8,12", "--com",
            "802.3ck-kr", "--com-set", "g_dc=-10,-6", "--com-set", "g_dc2=0",
            "--com-set", "tx_min=0,0,-0.1,0", "--com-set", "tx_max=0,0,0,0"]
    local, remote = tmp_path / "local.csv", tmp_path / "dask.csv"
    assert cli_main(argv + ["--out", str(local), "--workers", "1"]) == 0
    assert cli_main(argv + ["--out", str(remote), "--scheduler", scheduler]) == 0
    capsys.readouterr()
    a, b = _rows(local), _rows(remote)
    for r in a + b:
        r.pop("com_elapsed_s")
    assert a == b and len(a) == 4 and all(r["status"] == "ok" for r in a)
    assert len({r["com_db"] for r in a}) == 2


def test_api_sweep_on_the_cluster_leaves_no_tasks_behind(scheduler, monkeypatch):
    from distributed import Client

    import serdes.sweep.cluster as cluster
    from serdes.config import Config
    from serdes.sweep import Grid, run_sweep

    # one point in flight at a time: the next ones are submitted as points finish
    monkeypatch.setattr(cluster._DaskExecutor, "_window", lambda self: 1)
    grid = Grid.parse(["ffe.taps=2,3,4"])  # error rows: fast, still run remotely
    s = run_sweep(Config.default(), grid, None, scheduler=scheduler, progress=False)
    assert [r["status"] for r in s.rows] == ["error"] * 3 and s.ran == 3
    assert s.rows[0]["message"] == "ffe.pre = 4 must be below ffe.taps = 2"
    with Client(scheduler, timeout=30, set_as_default=False) as client:
        assert len(client.nthreads()) == 2
        deadline = time.monotonic() + 30
        while True:
            left = client.run_on_scheduler(
                lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks
                                        if "serdes-point" in str(k)])
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert left == []


def test_unreachable_scheduler_is_one_line(tmp_path, capsys, monkeypatch):
    import serdes.sweep.cluster as cluster

    monkeypatch.setattr(cluster, "DASK_TIMEOUT_S", 1)
    rc = cli_main(["sweep", "--grid", "ffe.taps=8", "--out", str(tmp_path / "r.csv"),
                   "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err
    assert cli_main(["sweep", "--grid", "ffe.taps=8", "--out", str(tmp_path / "r.csv"),
                     "--scheduler", "tcp://127.0.0.1:9", "--workers", "2"]) == 2
    assert "exclude each other" in capsys.readouterr().err


# -- a scheduler address that is not a Dask scheduler -----------------------------------
class _FakeServer:
    """A TCP server on 127.0.0.1 that accepts connections and either says nothing or
    answers like an HTTP server and hangs up."""

    def __init__(self, reply: bytes | None):
        import socket
        import threading

        self.reply = reply
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.conns = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.reply is not None:
                try:
                    conn.recv(65536)
                    conn.sendall(self.reply)
                    conn.close()
                except OSError:
                    pass

    def close(self):
        for c in self.conns + [self.sock]:
            c.close()


def _sweep_cli(*args):
    return subprocess.run([sys.executable, "-m", "serdes.cli", "sweep", "--grid",
                           "ffe.taps=8", *args], capture_output=True, text=True,
                          timeout=300)  # a guard against the hang, not a speed limit


@pytest.mark.parametrize("reply", [None, b"HTTP/1.0 400 Bad Request\r\n\r\nno\r\n"],
                         ids=["silent", "http"])
def test_a_server_that_is_not_a_scheduler_times_out_in_one_line(tmp_path, reply):
    server = _FakeServer(reply)
    try:
        # the silent one with a short --timeout, the other with the default wait
        wait = ["--timeout", "2"] if reply is None else []
        r = _sweep_cli("--out", str(tmp_path / "r.csv"), "--scheduler",
                       f"tcp://127.0.0.1:{server.port}", *wait)
    finally:
        server.close()
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"tcp://127.0.0.1:{server.port}" in r.stderr


def test_an_unknown_scheme_is_one_line_without_a_traceback(tmp_path):
    r = _sweep_cli("--out", str(tmp_path / "r.csv"), "--scheduler", "foo://127.0.0.1:8786")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert "foo://127.0.0.1:8786" in r.stderr and "unknown address scheme" in r.stderr


def test_timeout_option_is_checked(tmp_path, capsys):
    out = str(tmp_path / "r.csv")
    assert cli_main(["sweep", "--grid", "ffe.taps=8", "--out", out, "--timeout", "5"]) == 2
    assert "--timeout applies to --scheduler only" in capsys.readouterr().err
    assert cli_main(["sweep", "--grid", "ffe.taps=8", "--out", out, "--timeout", "0",
                     "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "--timeout 0: expected seconds" in capsys.readouterr().err
