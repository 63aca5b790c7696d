"""The jittered pulse-sum kernels (serdes/kernels/jitter.py): the exact polyphase-rows
kernel against the Lagrange reference, the Taylor-2 kernel against its definition, and
the error bound that decides which one the pulse engine runs, against the exact kernel."""

import numpy as np
import pytest

import naive
from pulse_cases import jittered_case
from serdes.build import build
from serdes.config import Config
from serdes.errors import ConfigError
from serdes.kernels import jitter as kj

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])


@pytest.mark.parametrize("seed", range(3))
def test_pulse_sum_rows_is_the_lagrange_sum(seed):
    m, n_ui = 8, 6
    p, a, off, pad = jittered_case(seed, m, n_ui)
    phase = pad + 3.0
    first = int(np.floor(phase - 1.5 * m)) - 1
    rows = kj.pulse_rows(p, m, n_ui, first, int(np.floor(phase + 1.5 * m)) + 3 - first)
    got = kj.pulse_sum_rows(a, rows, first, phase, off)
    np.testing.assert_allclose(got, naive.pulse_sum_jitter(a, p, m, phase, off, n_ui),
                               atol=1e-12)


def test_each_lane_of_the_lane_sum_is_the_one_lane_sum_to_the_bit():
    """serdes.kernels.adc_ti.lane_pulse_sum_rows shares the exact kernel's steps with
    lane l = (lane0 + k) mod N's rows: its outputs on lane l are pulse_sum_rows with that
    lane's rows, bit for bit (offsets beyond the rows held clip alike)."""
    from serdes.kernels.adc_ti import lane_pulse_sum_rows

    rng = np.random.default_rng(4)
    n_ui, n_lanes, first, count = 6, 3, 2, 30
    rows = rng.normal(size=(n_lanes, count, n_ui))
    a = rng.choice(LEVELS, size=80)
    off = rng.uniform(-20.0, 20.0, size=len(a) - n_ui + 1)
    got = lane_pulse_sum_rows(a, rows, first, 16.5, off, 2)
    for lane in range(n_lanes):
        k = np.arange((lane - 2) % n_lanes, got.shape[0], n_lanes)
        want = kj.pulse_sum_rows(a, rows[lane], first, 16.5, off)[k]
        np.testing.assert_array_equal(got[k], want)


@pytest.mark.parametrize("n_ui", [1, 5, 64, 77])
def test_pulse_sum_taylor_is_its_definition_and_chunk_invariant(n_ui):
    rng = np.random.default_rng(n_ui)
    n = 301
    a = rng.normal(size=n + n_ui - 1)
    taps = rng.normal(size=(3, 3, n_ui))
    seg = np.array([0, 37, 38, 301])
    delta = rng.normal(size=n)
    got = kj.pulse_sum_taylor(a, taps, seg, delta)
    np.testing.assert_allclose(got, naive.pulse_sum_taylor(a, taps, seg, delta),
                               rtol=1e-12, atol=1e-12)
    # an output's value does not depend on where the call starts (chunked runs)
    for s in (1, 2, 3, 5, 38):
        sub_seg = np.clip(seg - s, 0, n - s)
        keep = np.r_[True, np.diff(sub_seg) > 0]
        part = kj.pulse_sum_taylor(a[s:], taps[keep[1:]], np.r_[0, sub_seg[1:][keep[1:]]],
                                   delta[s:])
        np.testing.assert_array_equal(part, got[s:])


def test_taylor_taps_resample_the_derivatives():
    rng = np.random.default_rng(3)
    d = rng.normal(size=(3, 200))
    slow = np.array([0.0, 1.25, -2.5])
    taps = kj.taylor_taps(d, 40.0, 16, 8, slow)
    for s, off in enumerate(slow):
        for r in range(3):
            want = [naive.lagrange4(d[r], 40.0 + off + j * 16) for j in range(8)]
            np.testing.assert_allclose(taps[s, r, ::-1], want, atol=1e-13)


def _cubic_formula(p, pos):
    """The 4-point Lagrange formula in the operation order of the compiled kernels
    (before the Taylor taps were taken from interp_cubic), in Python floats."""
    i = int(np.floor(pos))
    t = pos - i
    y = [float(p[k]) if 0 <= k < len(p) else 0.0 for k in (i - 1, i, i + 1, i + 2)]
    return (-t * (t - 1.0) * (t - 2.0) / 6.0 * y[0] + (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0
            * y[1] - (t + 1.0) * t * (t - 2.0) / 2.0 * y[2] + (t + 1.0) * t * (t - 1.0) / 6.0
            * y[3])


def test_taylor_taps_are_the_lagrange_formula_to_the_bit():
    """The taps (and so every jittered sample) are those of the former per-tap kernel:
    same positions (phase + slow, then + j m) and the same formula, to the bit."""
    rng = np.random.default_rng(8)
    d = rng.normal(size=(3, 300))
    slow = np.r_[0.0, rng.normal(size=6) * 7.3]
    phase, m, n_ui = 61.37, 16, 14
    taps = kj.taylor_taps(d, phase, m, n_ui, slow)
    for s, off in enumerate(slow):
        for r in range(3):
            want = [_cubic_formula(d[r], phase + off + j * m) for j in range(n_ui)]
            np.testing.assert_array_equal(taps[s, r, ::-1], want)


def test_derivatives_of_a_smooth_pulse():
    """Central differences against the analytic derivatives of a Gaussian pulse, within
    their truncation bound h^4 max|p^(5)| / 30 (h = 1 fine sample, width 12 samples)."""
    x = np.arange(200.0) - 100
    w = 12.0
    p = np.exp(-0.5 * (x / w) ** 2)
    d = kj.derivatives(p)
    d1 = -x / w ** 2 * p
    d2 = (x ** 2 / w ** 4 - 1 / w ** 2) * p
    inner = slice(2, -2)
    assert np.max(np.abs(d[1] - d1)[inner]) < 3.0 / w ** 5 / 30 * 2
    assert np.max(np.abs(d[2] - d2)[inner]) < 6.0 / w ** 6 / 90 * 4
    np.testing.assert_array_equal(d[0], p)


def _link_pulse(extra=()):
    link = build(Config.default().with_overrides(list(extra))).link
    m, pad = link.pulse.m, 4 * link.pulse.m
    p = np.concatenate([np.zeros(pad), link.pulse.fine, np.zeros(pad)])
    return p, m, float(link.pulse.phase + pad), link.pulse.n_ui


def _exact(a, p, m, phase, n_ui, off, reach):
    first = int(np.floor(phase - reach)) - 1
    rows = kj.pulse_rows(p, m, n_ui, first, int(np.floor(phase + reach)) + 3 - first)
    return kj.pulse_sum_rows(a, rows, first, phase, off)


@pytest.mark.parametrize("rj_ui,slow_ui", [(0.01, 0.0), (0.02, 0.0), (0.04, 0.0),
                                           (0.01, 0.15)])
def test_the_taylor_error_bound_holds_against_the_exact_kernel(rj_ui, slow_ui):
    """|Taylor-2 - exact| <= bound for random symbols and offsets up to the clip, and for
    the worst alignment the bound assumes (symbols of the sign of p''' at every tap, the
    offset at the clip); there the error reaches a fair part of the bound (it is not
    vacuous)."""
    p, m, phase, n_ui = _link_pulse()
    dmax = 8 * rj_ui * m
    smax = slow_ui * m
    bound = kj.taylor_error_bound(p, m, phase, n_ui, dmax, smax, 1.0)
    rng = np.random.default_rng(7)
    derivs = kj.derivatives(p)
    n = 4000
    worst = 0.0
    for slow in (0.0, smax, -smax / 3):
        taps = kj.taylor_taps(derivs, phase, m, n_ui, np.array([slow]))
        a = rng.choice(LEVELS, size=n + n_ui - 1)
        delta = np.clip(rng.normal(scale=rj_ui * m, size=n), -dmax, dmax)
        delta[::7] = rng.choice([-dmax, dmax], size=delta[::7].shape)
        # adversarial: sign of the third derivative at each tap, offset at the clip
        p3 = np.diff(p, 3)[(phase + slow + m * np.arange(n_ui)).astype(int) - 1]
        a[: n_ui] = np.sign(p3)[::-1]
        delta[0] = dmax
        got = kj.pulse_sum_taylor(a, taps, np.array([0, n]), delta)
        ref = _exact(a, p, m, phase, n_ui, delta + slow, dmax + smax + 1)
        err = np.abs(got - ref)
        assert np.all(err <= bound), (err.max(), bound)
        worst = max(worst, err[0])
    assert worst >= 0.1 * bound, (worst, bound)


def test_wrong_inputs_are_one_line_config_errors():
    with pytest.raises(ConfigError, match="seg: expected 2 rising bounds from 0 to 5"):
        kj.pulse_sum_taylor(np.zeros(8), np.zeros((1, 3, 4)), [0, 4], np.zeros(5))
    with pytest.raises(ConfigError, match="delta: needs one value per output"):
        kj.pulse_sum_taylor(np.zeros(8), np.zeros((1, 3, 4)), [0, 5], np.zeros(4))
    with pytest.raises(ConfigError, match="rows: need at least 4"):
        kj.pulse_sum_rows(np.zeros(8), np.zeros((3, 4)), 0, 1.0, np.zeros(5))
    with pytest.raises(ConfigError, match="pulse_rows: rows"):
        kj.pulse_rows(np.zeros(20), 8, 4, 0, 6)


@pytest.mark.parametrize("neg", [0, 7])
def test_rj_offsets_are_the_numpy_form_to_the_bit(neg):
    """The compiled random-jitter offsets equal zeros, += clip(rj z, +-8 rj), times m."""
    rng = np.random.default_rng(neg)
    z = rng.normal(size=5000) * 3.0  # some beyond the 8-sigma clip
    z[:3] = [9.0, -9.0, -0.0]
    rj, m = 0.013, 32
    want = np.zeros(neg + z.shape[0])
    want[neg:] += np.clip(rj * z, -8 * rj, 8 * rj)
    want = want * m
    got = kj.rj_offsets(z, rj, m, neg)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("extra", [[], ["noise.sj_ui=0.05"]])
def test_pulse_front_end_fine_offsets_unchanged(extra, monkeypatch):
    """The pulse engine's jittered samples with the compiled offsets are those of the
    NumPy offsets (offsets_ui times m), chunk by chunk across an RNG block boundary."""
    from serdes.engines import pulse as pe

    system = build(Config.default().with_overrides(extra))
    rng = np.random.default_rng(5)
    chunks = [(0, 300), (300, 70000), (70300, 1000)]
    a = [rng.choice(LEVELS, size=n) for _, n in chunks]
    fast = pe.PulseFrontEnd(system.link, 11)
    got = [fast(x, k0) for x, (k0, _) in zip(a, chunks)]
    monkeypatch.setattr(pe.Jitter, "offsets_fine",
                        lambda self, k0, n, m: self.offsets_ui(k0, n) * m)
    slow = pe.PulseFrontEnd(system.link, 11)
    want = [slow(x, k0) for x, (k0, _) in zip(a, chunks)]
    assert fast.path == "taylor"
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
