"""The CDR's lock report: the lock is the first sustained settling of the recovered
phase, and a later excursion is reported as one, not as a later lock."""

from types import SimpleNamespace

import numpy as np

from serdes.engines.cdr_summary import (LOCK_BLOCKS, LOCK_TOL, SETTLED_WINDOWS, STAT_BLOCK,
                                        PhaseStats, settled, summarize)

SETTINGS = SimpleNamespace(mode="mm", lock="peak", latency_ui=32, pi_steps=64)
CAL = SimpleNamespace(mm_zero_ui=0.0, lock_ui=0.0)


def _stats(means, rms=0.01):
    st = PhaseStats()
    st.offset = [(m, m * m + rms * rms) for m in means]
    st.integ = [0.0] * len(means)
    return st


def _blocks(n, lock_at, excursion=None, seed=0):
    """Block means: an acquisition ramp from 1 UI down to 0 over ``lock_at`` blocks, then
    the loop's dither (block-mean spread 0.005 UI), with an optional excursion
    (start block, length in blocks, depth in UI)."""
    rng = np.random.default_rng(seed)
    m = 0.005 * rng.standard_normal(n)
    m[:lock_at] += np.linspace(1.0, 0.0, lock_at)
    if excursion:
        k, length, depth = excursion
        m[k:k + length] += depth
    return m


def test_a_late_excursion_is_not_a_late_lock():
    m = _blocks(30000, 60, excursion=(27000, 10, -0.11))
    out = summarize(_stats(m), SETTINGS, CAL, {}, 0)
    # the ramp ends at block 60; its last windows within LOCK_TOL start a few blocks before
    assert 40 * STAT_BLOCK <= out["lock_symbols"] <= 60 * STAT_BLOCK
    assert out["excursion_windows"] >= 1 and out["max_excursion_ui"] > LOCK_TOL
    after = m[out["lock_symbols"] // STAT_BLOCK:]
    assert out["phase_mean_ui"] == np.mean(after)     # over the whole run after the lock


def test_no_excursion_reports_none_and_the_same_lock_as_the_last_window_rule():
    m = _blocks(3000, 60)
    out = summarize(_stats(m), SETTINGS, CAL, {}, 0)
    win = np.convolve(m, np.ones(LOCK_BLOCKS) / LOCK_BLOCKS, mode="valid")
    bad = np.nonzero(np.abs(win - m[1500:].mean()) > LOCK_TOL)[0]
    assert out["lock_symbols"] == (bad[-1] + 1) * STAT_BLOCK
    assert out["excursion_windows"] == 0


def test_settled_is_the_first_long_enough_run():
    bad = np.zeros(500, bool)
    bad[:10] = True
    bad[40] = True                     # a run of 29 good windows: too short
    bad[300] = True                    # after a run of SETTLED_WINDOWS: an excursion
    assert settled(bad) == 41
    assert settled(np.zeros(3, bool)) == 0
    short = np.zeros(SETTLED_WINDOWS - 1, bool)
    short[5] = True                    # too short for the run rule: after the last bad one
    assert settled(short) == 6
    assert settled(np.ones(SETTLED_WINDOWS + 5, bool)) == SETTLED_WINDOWS + 5
