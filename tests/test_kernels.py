"""Every numba kernel of the core link against its slow NumPy reference (tests/naive.py)."""

import numpy as np
import pytest

import naive
from pulse_cases import jittered_case
from serdes.kernels import adc as kadc
from serdes.kernels import fir as kfir
from serdes.kernels import slicer as ksl

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])
THRESH = np.array([-2 / 3, 0.0, 2 / 3])


@pytest.mark.parametrize("seed", range(5))
def test_fir_valid(seed):
    rng = np.random.default_rng(seed)
    taps = rng.normal(size=rng.integers(1, 40))
    x = rng.normal(size=rng.integers(len(taps), 500))
    np.testing.assert_allclose(kfir.fir_valid(x, taps), naive.fir_valid(x, taps), atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_pulse_sum_jitter(seed):
    m, n_ui = 8, 6
    p, a, off, pad = jittered_case(seed, m, n_ui)
    got = kfir.pulse_sum_jitter(a, p, m, float(pad + 3), off, n_ui)
    ref = naive.pulse_sum_jitter(a, p, m, pad + 3, off, n_ui)
    np.testing.assert_allclose(got, ref, atol=1e-12)


def test_pulse_sum_jitter_without_offsets_is_the_fir():
    rng = np.random.default_rng(1)
    m, n_ui = 16, 10
    p = np.concatenate([np.zeros(2 * m), rng.normal(size=n_ui * m), np.zeros(2 * m)])
    a = rng.choice(LEVELS, size=200)
    phase = 2 * m + 5
    taps = p[phase::m][:n_ui]
    got = kfir.pulse_sum_jitter(a, p, m, float(phase), np.zeros(len(a) - n_ui + 1), n_ui)
    np.testing.assert_allclose(got, naive.fir_valid(a, taps), atol=1e-12)


def test_interp_cubic_is_exact_for_cubics():
    x = np.arange(40, dtype=float)
    p = 0.3 * x ** 3 - 2 * x ** 2 + x - 4
    pos = np.random.default_rng(0).uniform(2, 36, size=100)
    np.testing.assert_allclose(kfir.interp_cubic(p, pos),
                               0.3 * pos ** 3 - 2 * pos ** 2 + pos - 4, rtol=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_upsample_pulse_sum(seed):
    rng = np.random.default_rng(seed)
    m, n_ui = 8, 5
    p = rng.normal(size=n_ui * m)
    a = rng.choice(LEVELS, size=50)
    np.testing.assert_allclose(kfir.upsample_pulse_sum(a, p, m, n_ui),
                               naive.upsample_pulse_sum(a, p, m, n_ui), atol=1e-12)


@pytest.mark.parametrize("bits", [1, 4, 7, 10])
def test_quantize(bits):
    rng = np.random.default_rng(bits)
    x = rng.normal(scale=0.4, size=1000)
    lsb = 1.0 / 2 ** bits
    np.testing.assert_array_equal(kadc.quantize(x, lsb, bits), naive.quantize(x, lsb, bits))


@pytest.mark.parametrize("ntaps", [0, 1, 3])
def test_dfe_run(ntaps):
    rng = np.random.default_rng(ntaps)
    taps = rng.uniform(-0.5, 0.5, size=ntaps)
    z = rng.choice(LEVELS, size=500) + rng.normal(scale=0.3, size=500)
    hist = rng.choice(LEVELS, size=ntaps)
    ref_dec, ref_v, ref_hist = naive.dfe_run(z, taps, LEVELS, THRESH, hist)
    h = hist.copy()
    dec, v = ksl.dfe_run(z, taps, LEVELS, THRESH, h)
    np.testing.assert_array_equal(dec, ref_dec)
    np.testing.assert_allclose(v, ref_v, atol=1e-12)
    np.testing.assert_allclose(h, ref_hist)


@pytest.mark.parametrize("nb", [0, 2])
def test_ffe_dfe_lms(nb):
    rng = np.random.default_rng(10 + nb)
    x = rng.normal(size=400)
    w = rng.normal(scale=0.1, size=5)
    b = rng.normal(scale=0.1, size=nb)
    hist = rng.choice(LEVELS, size=nb)
    ref = rng.choice(LEVELS, size=396)
    args = (LEVELS, THRESH)
    r_dec, r_v, r_w, r_b = naive.ffe_dfe_lms(x, w, b, *args, hist, ref, 200, 1e-2, 0.3)
    w2, b2, h2 = w.copy(), b.copy(), hist.copy()
    dec, v = ksl.ffe_dfe_lms(x, w2, b2, *args, h2, ref, 200, 1e-2, 1e-2, 0.3)
    np.testing.assert_array_equal(dec, r_dec)
    np.testing.assert_allclose(v, r_v, atol=1e-10)
    np.testing.assert_allclose(w2, r_w, atol=1e-10)
    np.testing.assert_allclose(b2, r_b, atol=1e-10)


def test_interp_cubic_matches_reference():
    rng = np.random.default_rng(4)
    p = rng.normal(size=30)
    pos = rng.uniform(-3, 33, size=200)
    np.testing.assert_allclose(kfir.interp_cubic(p, pos),
                               [naive.lagrange4(p, q) for q in pos], atol=1e-12)


@pytest.mark.parametrize("nb", [0, 1, 3])
def test_lms_kernel_equals_the_canceller_kernel_without_taps(nb):
    """The LMS FFE + DFE and the FFE + DFE + RC kernel with no canceller taps decide the
    same and adapt to the same taps (they are kept as two kernels for speed)."""
    rng = np.random.default_rng(20 + nb)
    a = rng.choice(LEVELS, size=3000)
    x = a + 0.3 * np.roll(a, 1) + 0.1 * rng.normal(size=a.size)
    w0 = np.r_[1.0, rng.normal(scale=0.05, size=6)]
    b0 = rng.normal(scale=0.1, size=nb)
    w1, b1, h1 = w0.copy(), b0.copy(), np.zeros(nb)
    d1, v1 = ksl.ffe_dfe_lms(x, w1, b1, LEVELS, THRESH, h1, a, 1000, 1e-3, 2e-3, 0.5)
    eq = ksl.eq_state(w0, b0)
    rc = ksl.rc_state([], [], 1, 0, False)
    d2, v2 = ksl.ffe_dfe_rc(x, a, eq, rc, ksl.slicer(LEVELS, THRESH),
                            ksl.Adapt(1000, 1e-3, 2e-3, 0.0, 0.5, True, 0, 0, 1, 1.0))
    np.testing.assert_array_equal(d1, d2)
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(w1, eq.w)
    np.testing.assert_array_equal(b1, eq.b)
    np.testing.assert_array_equal(h1, eq.hist)


# --------------------------------------------------- the wrappers: input kinds and errors
from serdes.errors import ConfigError  # noqa: E402
from serdes.kernels import precode as kpre  # noqa: E402
from serdes.kernels import prbs as kprbs  # noqa: E402
from serdes.kernels import stat as kstat  # noqa: E402
from serdes.kernels import stat_batch as kstat_batch  # noqa: E402
from serdes.kernels import viterbi as kvit  # noqa: E402


def _as_list(a):
    return a.tolist()


def _narrow(a):
    return a.astype(np.float32) if a.dtype.kind == "f" else a.astype(np.int32)


def _strided(a):
    wide = np.repeat(a, 2, axis=-1)
    return wide[..., ::2]


def _read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


VARIANTS = {"list": _as_list, "narrow": _narrow, "strided": _strided, "read-only": _read_only}


def _cases():
    """name -> (wrapper, private kernel, args builder, indices of the data arguments).
    The builder makes fresh state arrays on every call."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=300)
    taps = rng.normal(size=7)
    p = np.concatenate([np.zeros(24), rng.normal(size=6 * 8), np.zeros(24)])
    a = rng.choice(LEVELS, size=60)
    off = rng.uniform(-8, 8, size=55)
    z = rng.choice(LEVELS, size=200) + rng.normal(scale=0.2, size=200)
    values = rng.normal(size=(5, 4))
    probs = np.full((5, 4), 0.25)
    pmf, k0 = kstat.isi_pmf(values, probs, 0.01)
    ygrid = np.linspace(-2, 2, 50)
    ref = rng.choice(LEVELS, size=294)
    sym = rng.integers(0, 4, 500).astype(np.uint8)
    return {
        "fir_valid": (kfir.fir_valid, kfir._fir_valid, lambda: [x, taps], [0, 1]),
        "pulse_sum_jitter": (kfir.pulse_sum_jitter, kfir._pulse_sum_jitter,
                             lambda: [a, p, 8, 27.5, off, 6], [0, 1, 4]),
        "interp_cubic": (kfir.interp_cubic, kfir._interp_cubic,
                         lambda: [taps, np.linspace(-1, 8, 40)], [0, 1]),
        "upsample_pulse_sum": (kfir.upsample_pulse_sum, kfir._upsample_pulse_sum,
                               lambda: [a, p[:48], 8, 6], [0, 1]),
        "quantize": (kadc.quantize, kadc._quantize, lambda: [x, 0.01, 6], [0]),
        "dfe_run": (ksl.dfe_run, ksl._dfe_run,
                    lambda: [z, taps[:2], LEVELS, THRESH, np.zeros(2)], [0, 1, 2, 3]),
        "ffe_dfe_lms": (ksl.ffe_dfe_lms, ksl._ffe_dfe_lms,
                        lambda: [x, np.r_[1.0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0], np.zeros(2),
                                 LEVELS, THRESH, np.zeros(2), ref, 100, 1e-3, 1e-3, 1.0],
                        [0, 3, 4, 6]),
        "ffe_dfe_rc": (ksl.ffe_dfe_rc, ksl._ffe_dfe_rc,
                       lambda: [x, ref, ksl.eq_state(np.r_[1.0, np.zeros(6)], [0.1, 0.0]),
                                ksl.rc_state([0.1], [40], 64, 50, True),
                                ksl.slicer(LEVELS, THRESH),
                                ksl.Adapt(100, 1e-3, 1e-3, 1e-3, 1.0, True, 3, 10, 100, 5 / 9)],
                       [0, 1]),
        "isi_pmf": (kstat.isi_pmf, kstat_batch._isi_pmf, lambda: [values, probs, 0.01], [0, 1]),
        "tail_points": (kstat.tail_points, kstat._tail_points,
                        lambda: [pmf, k0, 0.01, ygrid, 0.05, True], [0, 3]),
        "tail_grid": (kstat.tail_grid, kstat._tail_grid,
                      lambda: [pmf, k0, 0.01, -200, 3, 100, 0.25, 0.05, False], [0]),
        "precode": (kpre.precode, kpre._precode, lambda: [sym, 4, 1], [0]),
        "lfsr_bits": (kprbs.lfsr_bits, kprbs._lfsr_fill,
                      lambda: [1000, 77, 13, np.array([13, 12, 2, 1])], [3]),
    }


CASES = _cases()


def _same(got, want):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrappers_accept_lists_narrow_strided_and_read_only_inputs(name):
    """Every input kind gives what the same values as contiguous float64 (int64) give, and
    the kernel keeps one compiled specialization."""
    wrapper, kernel, build, data = CASES[name]
    for vname, variant in VARIANTS.items():
        args, canon = build(), build()
        for i in data:
            args[i] = variant(args[i])
            base = np.asarray(args[i])
            canon[i] = np.ascontiguousarray(base, dtype=np.asarray(canon[i]).dtype)
        _same(wrapper(*args), wrapper(*canon))
    assert len(kernel.signatures) == 1, kernel.signatures


def _mlse():
    levels = LEVELS
    g = np.array([1.0, 0.5])
    from serdes.dsp.mlse import branch_table

    tr = kvit.Trellis(np.array([1.0, 0.2]), np.array([0.1]), np.array([20]),
                      branch_table(levels, g), g, levels, 4, 4, 2, 12)
    return tr, kvit.mlse_state(kvit.check_trellis(tr), 32, 16)


def test_mlse_wrapper_input_kinds():
    rng = np.random.default_rng(6)
    z = rng.choice(LEVELS, size=400) + rng.normal(scale=0.1, size=400)
    for vname, variant in VARIANTS.items():
        tr, st = _mlse()
        canon_tr, canon_st = _mlse()
        changed = {}
        for f in ("wh", "ev", "lags"):
            changed[f] = variant(getattr(tr, f))
            canon_tr = canon_tr._replace(
                **{f: np.asarray(changed[f], dtype=getattr(tr, f).dtype)})
        zv = variant(z)
        _same(kvit.mlse_run(zv, tr._replace(**changed), st),
              kvit.mlse_run(np.asarray(zv, dtype=np.float64), canon_tr, canon_st))
    assert len(kvit._mlse_run.signatures) == 1


@pytest.mark.parametrize("call,needle", [
    (lambda: kfir.fir_valid(np.zeros((4, 4)), [1.0]), "x: expected a 1-D array"),
    (lambda: kfir.fir_valid(np.zeros(10), []), "taps: needs at least 1"),
    (lambda: kfir.fir_valid(["a", "b"], [1.0]), "x: expected numbers"),
    (lambda: kfir.fir_valid(np.zeros(10), [1.0, np.nan]), "taps: values must be finite"),
    (lambda: kfir.pulse_sum_jitter(np.zeros(20), np.zeros(80), 8, 10.0, np.zeros(3), 6),
     "offsets: needs one value per output (15)"),
    (lambda: kfir.pulse_sum_jitter(np.zeros(20), np.zeros(20), 8, 10.0, np.zeros(15), 6),
     "p_fine: 20 samples cannot hold"),
    (lambda: kadc.quantize(np.zeros(3), 0.0, 4), "lsb: must be > 0"),
    (lambda: ksl.dfe_run(np.zeros(5), [0.1, 0.2], LEVELS, THRESH, np.zeros(1)),
     "hist: state needs 2 values"),
    (lambda: ksl.dfe_run(np.zeros(5), [0.1], LEVELS, THRESH[:2], np.zeros(1)),
     "thresholds: need 3 for 4 levels"),
    (lambda: ksl.ffe_dfe_lms(np.zeros(9), [1.0], np.zeros(0), LEVELS, THRESH, np.zeros(0),
                             None, 0, 0.1, 0.1, 1.0), "w: state must be a writeable"),
    (lambda: ksl.ffe_dfe_lms(np.zeros(9), np.ones(2), np.zeros(0), LEVELS, THRESH,
                             np.zeros(0), np.zeros(3), 5, 0.1, 0.1, 1.0),
     "ref: needs 5 training levels, got 3"),
    (lambda: ksl.rc_state([0.1], [70], 64, 50, False), "rc lags: must be in 1..63"),
    (lambda: kstat.isi_pmf(np.zeros(4), np.zeros(4), 0.1), "values: expected a 2-D array"),
    (lambda: kstat.isi_pmf(np.zeros((2, 4)), np.zeros((2, 3)), 0.1),
     "probs: shape (2, 3) differs from values (2, 4)"),
    (lambda: kstat.tail_points([1.0], 0, 0.1, [0.0], -1.0, True), "sigma: must be > 0"),
    (lambda: kvit.mlse_run(np.zeros(5), _mlse()[0], _mlse()[1]._replace(pm=np.zeros(3))),
     "pm: state needs 4 values, got 3"),
    (lambda: kvit.mlse_run(np.zeros(5), _mlse()[0]._replace(delay=40), _mlse()[1]),
     "delay: must be in 1..32, got 40"),
    (lambda: kpre.precode([0, 1, 7], 4, 0), "g: expected integer symbols in 0..3"),
    (lambda: kprbs.lfsr_bits(10, 1, 7, [7, 9]), "taps: delays must be in 1..7"),
])
def test_wrong_input_is_a_one_line_config_error(call, needle):
    with pytest.raises(ConfigError) as err:
        call()
    msg = str(err.value)
    assert needle in msg and "\n" not in msg


# ------------------------------------------------------------------ Gaussian blocks
@pytest.mark.parametrize("seed,key", [(0, (1, 0)), (7, (2, 5)), (2**40 + 3, (4, 123456))])
def test_numba_normals_are_numpys_to_the_bit(seed, key):
    """The numba PCG64 + ziggurat draws exactly Generator(PCG64(ss)).standard_normal, the
    rare wedge and tail branches included (1e6 draws reach both), and leaves the bit
    generator in the same state."""
    from serdes.kernels import gauss

    bg = np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key))
    st = gauss.pcg64_state(bg)
    got = np.concatenate([gauss.pcg64_normals(st, 1000), gauss.pcg64_normals(st, 999_000)])
    want = np.random.Generator(bg).standard_normal(1_000_000)
    np.testing.assert_array_equal(got, want)
    assert np.abs(want).max() > 3.6541528853610088  # the tail branch was taken
    np.testing.assert_array_equal(st, gauss.pcg64_state(bg))


def test_numba_normals_in_chained_calls_keep_numpys_order_and_state():
    """Calls of 0, 1 and a few thousand draws, chained on one state, draw NumPy's
    sequence and leave NumPy's state after each call."""
    from serdes.kernels import gauss

    bg = np.random.PCG64(np.random.SeedSequence(3, spawn_key=(9, 1)))
    st = gauss.pcg64_state(bg)
    gen = np.random.Generator(bg)
    for n in (1, 0, 2047, 2048, 2049, 1, 4096, 3, 10_000):
        got = gauss.pcg64_normals(st, n)
        np.testing.assert_array_equal(got, gen.standard_normal(n))
        np.testing.assert_array_equal(st, gauss.pcg64_state(bg))


def test_block_streams_are_chunk_independent_and_the_numpy_values():
    from serdes import rng

    r = rng.BlockRNG(11, rng.RJ)
    whole = r.normal(60_000, 20_000)
    parts = np.concatenate([rng.BlockRNG(11, rng.RJ).normal(60_000 + s, e - s)
                            for s, e in ((0, 5536), (5536, 5537), (5537, 20_000))])
    np.testing.assert_array_equal(whole, parts)
    ref = [np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        11, spawn_key=(rng.RJ, b)))).standard_normal(rng.BLOCK) for b in (0, 1)]
    np.testing.assert_array_equal(whole, np.concatenate(ref)[60_000:80_000])


def test_normal_state_must_be_a_uint64_array_of_four():
    from serdes.kernels import gauss

    with pytest.raises(ConfigError, match="state: state needs 4 values, got 3"):
        gauss.pcg64_normals(np.zeros(3, dtype=np.uint64), 5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_isi_pmf_and_the_batched_rows_convolve_alike_to_the_bit(seed):
    """kernels.stat.isi_pmf and every row of kernels.stat_batch.gauss_rows run one
    convolution kernel: the same cursors give the same PMF and offset to the bit (equal
    widths included, whose order is the stable one)."""
    rng = np.random.default_rng(seed)
    c = rng.normal(scale=0.05, size=12)
    c[6:9] = c[0], -c[0], c[1]                    # ties in the components' widths
    c[10] = 1e-7                                   # at or below ``tiny``: left out
    resid = np.vstack([c, np.roll(c, 3) * 1.7])
    delta = np.array([1e-3, 2.5e-3])
    levels = np.array(LEVELS, dtype=float)
    pmfs, lengths, k0s = kstat_batch.gauss_rows(
        resid, [1e-6, 1e-6], delta, levels, THRESH, [], [1.0, 1.0], [1e-4, 1e-4],
        [1e-3, 1e-3])[:3]
    for r in range(2):
        keep = resid[r][np.abs(resid[r]) > 1e-6]
        pmf, k0 = kstat.isi_pmf(keep[:, None] * levels, np.full((keep.size, 4), 0.25),
                                delta[r])
        assert k0 == k0s[r]
        np.testing.assert_array_equal(pmfs[r, :lengths[r]], pmf)
