"""serdes.forked.Forked: a value computed in a forked child, or here when the child gives
none (an exception, an unpicklable value, a killed child), and the same either way."""

import multiprocessing as mp
import os
import signal
import time

import numpy as np
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


# ------------------------------------------------------------ split_map, helpers
def _pid_of(x):
    return os.getpid(), x * x


def test_split_map_gives_the_items_in_order_and_uses_the_helpers(monkeypatch):
    """With helpers allowed and a slow first item, the later parts are computed in
    forked children (other pids), the values in the items' order; without helpers, or
    with a quick first item, all in this process; this process's own part may use only
    the helpers left, and a helper starts none."""
    import serdes.forked as fk

    items = list(range(7))
    with fk.helpers(2):
        got = fk.split_map(_pid_of, items, slow_s=-1)
    assert [v for _, v in got] == [x * x for x in items]
    pids = [p for p, _ in got]
    assert pids[0] == ME and len(set(pids)) == 3            # this process and two helpers
    assert pids == sorted(pids, key=pids.index)              # contiguous parts
    with fk.helpers(2):
        quick = fk.split_map(_pid_of, items)                 # the first item took < 0.2 s
    with fk.helpers(0):
        none = fk.split_map(_pid_of, items, slow_s=-1)
    assert {p for p, _ in quick} == {p for p, _ in none} == {ME}
    nested = (lambda: fk.split_map(lambda x: fk.split_map(_pid_of, [x, x, x], slow_s=-1),
                                   [1, 2], slow_s=-1))
    with fk.helpers(1):   # the one helper taken: this process's part has none left
        inner = nested()
    assert [len({p for p, _ in part}) for part in inner] == [1, 1]
    with fk.helpers(2):   # one left for this process's part; a helper starts none
        inner = nested()
    assert [len({p for p, _ in part}) for part in inner] == [2, 1]
    assert fk.helpers_allowed() == 0


def _forks_at_once(monkeypatch) -> list:
    """Helpers forked without timing a first item; returns the list that gets, for
    each Forked made, whether a child was started."""
    import serdes.forked as fk

    monkeypatch.setattr(fk, "FORK_AFTER_S", 0.0)
    made, real = [], fk.Forked.__init__

    def counted(self, *a):
        real(self, *a)
        made.append(self.forked)

    monkeypatch.setattr(fk.Forked, "__init__", counted)
    return made


def _views(eng):
    from serdes.engines.stat import views

    op = views.eye_opening(eng)
    h = views.bathtub_horizontal(eng, 8)
    e = views.eye(eng, n_phases=8, n_bins=32)
    return op.height, op.width_ui, h.ber_per_eye, h.ber, e.ber


@pytest.mark.parametrize("sets", [(), ("noise.sj_ui=0.1", "noise.sj_hz=1e8")],
                         ids=["one-row", "sj-rows"])
def test_the_statistical_views_are_the_same_with_helpers(monkeypatch, sets):
    """The eye openings (the horizontal walk's other side in a helper), the horizontal
    bathtub and the eye map (phases split over a helper) equal those computed in this
    process alone, to the bit: on the default link (one jitter row) and with SJ (32 rows,
    each phase over all of them)."""
    import serdes.forked as fk
    from serdes.build import build
    from serdes.config import Config
    from serdes.engines.run import design_equalizer
    from serdes.engines.stat import StatisticalEngine

    system = build(Config.default().with_overrides(list(sets)))
    taps = design_equalizer(system)
    alone = _views(StatisticalEngine(system, taps))
    made = _forks_at_once(monkeypatch)
    with fk.helpers(1):
        helped = _views(StatisticalEngine(system, taps))
    assert len(made) >= 3 and all(made)   # the walk's side, the bathtub, the eye map
    for a, b in zip(alone, helped):
        assert np.array_equal(a, b)


def _helper_pids_then_sleep(path):
    import serdes.forked as fk

    def work(x):
        if x:   # the helper's item: say who it is, then outlast any wait
            with open(path, "a") as f:
                f.write(f"{os.getpid()}\n")
            time.sleep(60)
        return x

    with fk.helpers(1):
        return fk.split_map(work, [0, 1], slow_s=-1)


def test_closing_a_child_ends_the_helpers_it_started(tmp_path):
    """A child that started helpers of its own (the report's statistical child, not
    daemonic) and is ended by close() ends them too, instead of leaving them to run."""
    path = tmp_path / "pids"
    side = Forked(_helper_pids_then_sleep, str(path))
    deadline = time.monotonic() + 60
    while not (path.exists() and path.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    helper = int(path.read_text().split()[0])
    side.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(helper, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(helper, signal.SIGKILL)
        pytest.fail("the helper outlived its parent's close()")


def test_an_interleaved_adcs_rows_are_the_same_with_a_helper(monkeypatch):
    """The rows that take the joint RJ classes (serdes.tiadc.rows.screened_rows) split
    over a helper: the BER and the per-eye rates equal those of one process, to the
    bit."""
    import serdes.forked as fk
    from serdes.build import build
    from serdes.config import Config
    from serdes.engines.run import design_equalizer
    from serdes.tiadc.stat import statistical_engine

    system = build(Config.default().with_overrides(
        ["adc.lanes=2", "adc.skew_rms_s=2e-12", "supply.ripple_mv=[20]",
         "supply.ripple_hz=[1e8]", "supply.delay_ps_per_mv=0.05"]))
    taps = design_equalizer(system)
    alone = statistical_engine(system, taps).ber(0.0)
    made = _forks_at_once(monkeypatch)
    with fk.helpers(1):
        helped = statistical_engine(system, taps).ber(0.0)
    assert made and all(made)
    assert helped.ber == alone.ber and helped.ser == alone.ser
    assert np.array_equal(helped.ber_per_eye, alone.ber_per_eye)
