"""serdes.forked.Forked: a value computed in a forked child, or here when the child gives
none (an exception, an unpicklable value, a killed child), and the same either way."""

import multiprocessing as mp
import os
import signal
import time

import pytest

from serdes.forked import Forked

pytestmark = pytest.mark.skipif("fork" not in mp.get_all_start_methods(),
                                reason="no fork on this platform: Forked computes in-process")

ME = os.getpid()


def _pid_and(x):
    return os.getpid(), x * 2


def _fails_in_child(x):
    if os.getpid() != ME:
        raise RuntimeError("child")
    return os.getpid(), x


def _unpicklable(x):
    return os.getpid(), (lambda: x)


def _dies_in_child(x):
    if os.getpid() != ME:
        os._exit(3)
    return os.getpid(), x


def _interrupted_in_child(x):
    if os.getpid() != ME:
        os.kill(os.getpid(), signal.SIGINT)     # a Ctrl-C reaches the child too
        time.sleep(0.2)
    return os.getpid(), x


def _fails_everywhere(x):
    raise ValueError(f"bad value {x}")


def test_the_value_comes_from_a_child():
    f = Forked(_pid_and, 21)
    assert f.forked
    pid, v = f.result()
    assert pid != ME and v == 42
    assert f.result() == (pid, 42)      # computed once


@pytest.mark.parametrize("fn", [_fails_in_child, _unpicklable, _dies_in_child])
def test_a_child_without_a_value_leaves_it_to_this_process(fn):
    pid, v = Forked(fn, 5).result()
    assert pid == ME
    assert (v() if callable(v) else v) == 5


def test_the_child_leaves_ctrl_c_to_this_process():
    pid, v = Forked(_interrupted_in_child, 3).result()
    assert pid != ME and v == 3


def test_an_error_in_both_reaches_the_caller_from_this_process():
    with pytest.raises(ValueError, match="bad value 7"):
        Forked(_fails_everywhere, 7).result()


def test_close_ends_a_running_child():
    f = Forked(time.sleep, 60)
    proc = f._proc
    t0 = time.perf_counter()
    f.close()
    assert not proc.is_alive() and time.perf_counter() - t0 < 10


def _in_a_daemon(q):
    f = Forked(_pid_and, 4)
    q.put((f.forked, f.result(), os.getpid()))


def test_a_daemonic_caller_computes_it_itself():
    """multiprocessing refuses children to a daemonic process (a pool or cluster
    worker): the value is then computed in the caller."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_in_a_daemon, args=(q,), daemon=True)
    p.start()
    forked, (pid, v), caller = q.get(timeout=60)
    p.join()
    assert not forked and pid == caller and v == 8


def _slow(x):
    time.sleep(0.5)
    return x


def test_ready_says_whether_the_child_has_answered():
    side = Forked(_slow, 3)
    assert side.forked and not side.ready()
    deadline = time.monotonic() + 30
    while not side.ready() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert side.ready() and side.result() == 3 and side.ready()
