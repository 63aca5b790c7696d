"""Analog models against independent references.

* CTLE (serdes.analog.ctle): polynomial evaluation by scipy.signal.freqs /
  freqs_zpk, a value worked out by hand, asymptotic limits.
* Shunt peaking (serdes.analog.peaking): the -3 dB point and the peak found
  from |H(jw)|^2 polynomials with numpy.roots, not from the module's closed forms.
* Loss line (serdes.channel.loss): exact insertion loss, monotonic loss, and a
  time-domain causality check that a non-causal phase fails.
"""

import math

import numpy as np
import pytest
from scipy import signal

from serdes.analog import ctle, peaking
from serdes.channel import loss
from serdes.errors import ConfigError

FB = 53.125e9            # default symbol rate (Hz)
UI = 1.0 / FB            # 18.82 ps
F_NYQ = FB / 2.0


# =========================================================================== CTLE
def _ctle_params(g_dc, g_dc2=0.0, fb=FB):
    return dict(g_dc_db=g_dc, g_dc2_db=g_dc2, **ctle.ieee_defaults(fb))


CTLE_CASES = [(0.0, 0.0), (-1.0, 0.0), (-9.0, -3.0), (-20.0, -6.0), (-13.0, -1.0), (-20.0, 0.0)]


def test_ieee_defaults_ratios():
    d = ctle.ieee_defaults(FB)
    assert d == {"f_z_hz": 21.25e9, "f_p1_hz": 21.25e9, "f_p2_hz": 53.125e9, "f_lf_hz": 664.0625e6}
    assert ctle.ieee_defaults() == d
    assert ctle.G_DC_RANGE_DB == (-20.0, 0.0)
    assert ctle.G_DC2_RANGE_DB == (-6.0, 0.0)


@pytest.mark.parametrize("g_dc,g_dc2", CTLE_CASES)
def test_ctle_matches_polynomial_form(g_dc, g_dc2):
    """Numerator/denominator multiplied out and evaluated by scipy.signal.freqs."""
    p = _ctle_params(g_dc, g_dc2)
    ghz = 1e9  # polynomials in s/(2*pi*1 GHz) keep the coefficients near 1
    fz, fp1, fp2, flf = (p[k] / ghz for k in ("f_z_hz", "f_p1_hz", "f_p2_hz", "f_lf_hz"))
    g1, g2 = 10 ** (g_dc / 20), 10 ** (g_dc2 / 20)
    b = np.polymul([1 / fz, g1], [1 / flf, g2])
    a = np.polymul(np.polymul([1 / fp1, 1.0], [1 / fp2, 1.0]), [1 / flf, 1.0])
    f = np.concatenate([[0.0], np.geomspace(1e6, 200e9, 801)])
    _, h_ref = signal.freqs(b, a, worN=f / ghz)
    h = ctle.ctle_ieee(f, **p)
    assert h.dtype == np.complex128 and h.shape == f.shape
    np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=0)


@pytest.mark.parametrize("g_dc,g_dc2", CTLE_CASES)
def test_ctle_zpk_round_trip(g_dc, g_dc2):
    p = _ctle_params(g_dc, g_dc2)
    z, pl, k = ctle.ctle_ieee_zpk(**p)
    assert z.shape == (2,) and pl.shape == (3,)
    assert np.all(pl < 0)
    f = np.concatenate([[0.0], np.geomspace(1e5, 500e9, 1001)])
    h = ctle.ctle_ieee(f, **p)
    np.testing.assert_allclose(ctle.zpk_response(f, z, pl, k), h, rtol=1e-12, atol=0)
    # and scipy's own zpk evaluator, with everything in Hz (s = j f)
    _, h_scipy = signal.freqs_zpk(z, pl, k, worN=f)
    np.testing.assert_allclose(h, h_scipy, rtol=1e-12, atol=0)


@pytest.mark.parametrize("g_dc,g_dc2", CTLE_CASES)
def test_ctle_dc_gain_is_real(g_dc, g_dc2):
    h0 = ctle.ctle_ieee(np.array([0.0]), **_ctle_params(g_dc, g_dc2))[0]
    assert h0.imag == 0.0
    assert h0.real == pytest.approx(10 ** ((g_dc + g_dc2) / 20), rel=1e-14)


def test_ctle_value_at_nyquist_by_hand():
    """g_dc = -20 dB (g1 = 0.1), g_dc2 = 20log10(0.8) (g2 = 0.8), 802.3ck frequencies.

    At f = f_b/2: f/f_z = f/f_p1 = 1.25, f/f_p2 = 0.5, f/f_lf = 40.
      stage 1 = (0.1 + 1.25j) / ((1 + 1.25j)(1 + 0.5j)) = (0.1 + 1.25j) / (0.375 + 1.75j)
              = (2.225 + 0.29375j) / 3.203125
      stage 2 = (0.8 + 40j) / (1 + 40j) = (0.8 + 40j)(1 - 40j) / 1601 = (1600.8 + 8j) / 1601
    """
    stage1 = complex(2.225, 0.29375) / 3.203125
    stage2 = complex(1600.8, 8.0) / 1601.0
    assert stage1 == pytest.approx(0.6946341463414634 + 0.0917073170731707j, rel=1e-15)
    h = ctle.ctle_ieee(F_NYQ, **_ctle_params(-20.0, 20 * math.log10(0.8)))
    assert h.shape == ()
    assert complex(h) == pytest.approx(stage1 * stage2, rel=1e-13)


@pytest.mark.parametrize("g_dc", [-20.0, -12.0, -6.0, -1.0])
def test_ctle_high_frequency_plateau(g_dc):
    """g_dc2 = 0 and f_z = f_p1: the first stage tends to 1 above f_z, i.e. -g_dc dB of boost.

    Move f_p2 out of the way (1e6 * f_z) and look at f = 1e3 * f_z:
    |H| = |g1 + jx| / (|1 + jx| |1 + j f/f_p2|) with x = 1e3, so
    1 - |H| <= (1 - g1^2)/(2 x^2) + (f/f_p2)^2 / 2 = 5e-7 + 5e-7: a 1e-6 tolerance.
    """
    fz = 21.25e9
    p = dict(g_dc_db=g_dc, g_dc2_db=0.0, f_z_hz=fz, f_p1_hz=fz, f_p2_hz=1e6 * fz, f_lf_hz=FB / 80)
    h_hf = abs(ctle.ctle_ieee(1e3 * fz, **p))
    assert h_hf == pytest.approx(1.0, abs=1e-6)
    h0 = abs(ctle.ctle_ieee(0.0, **p))
    assert 20 * math.log10(h_hf / h0) == pytest.approx(-g_dc, abs=1e-5)


@pytest.mark.parametrize("g_dc", [-20.0, -15.0, -10.0, -6.0, -3.0, -1.0])
def test_ctle_peaking_reference_frequencies(g_dc):
    """With the 802.3ck frequencies the boost falls short of -g_dc by what the pole spacing takes.

    At the band edge f_b/2: f/f_z = f/f_p1 = 1.25 and f/f_p2 = 0.5, so (g_dc2 = 0)
        |H(f_b/2)|^2 = (g1^2 + 1.25^2) / ((1 + 1.25^2)(1 + 0.5^2)) = (g1^2 + 1.5625) / 3.203125
    and the deficit -g_dc - peaking is at most -20log10|H(f_b/2)|, which is below its
    g1 -> 0 limit 10log10(3.203125/1.5625) = 3.12 dB.  For g_dc <= -6 dB the maximum
    sits at the band edge, so the deficit equals that value.
    """
    g1 = 10 ** (g_dc / 20)
    edge_deficit = -10 * math.log10((g1**2 + 1.5625) / 3.203125)
    p = _ctle_params(g_dc)
    assert -20 * math.log10(abs(ctle.ctle_ieee(F_NYQ, **p))) == pytest.approx(edge_deficit, rel=1e-12)
    deficit = -g_dc - ctle.peaking_db(symbol_rate_hz=FB, **p)
    assert 0.0 < deficit <= edge_deficit + 1e-9 < 10 * math.log10(3.203125 / 1.5625)
    if g_dc <= -6:
        assert deficit == pytest.approx(edge_deficit, abs=1e-6)


@pytest.mark.parametrize("g_dc,g_dc2", CTLE_CASES)
def test_ctle_peaking_against_brute_force(g_dc, g_dc2):
    p = _ctle_params(g_dc, g_dc2)
    f = np.linspace(F_NYQ / 200_000, F_NYQ, 200_000)
    brute = 20 * np.log10(np.max(np.abs(ctle.ctle_ieee(f, **p))) / abs(ctle.ctle_ieee(0.0, **p)))
    pk = ctle.peaking_db(symbol_rate_hz=FB, **p)
    assert pk >= 0.0
    assert pk == pytest.approx(max(brute, 0.0), abs=1e-6)
    if g_dc == 0.0 and g_dc2 == 0.0:   # H = 1/(1 + j f/f_p2): no peaking at all
        assert pk == 0.0


def test_zpk_response_complex_pair_and_dc():
    z = np.array([-1e9 + 3e9j, -1e9 - 3e9j])
    p = np.array([-2e9 + 5e9j, -2e9 - 5e9j, -4e10])
    f = np.concatenate([[0.0], np.geomspace(1e6, 1e11, 200)])
    h = ctle.zpk_response(f, z, p, 7.0)
    _, h_ref = signal.freqs_zpk(z, p, 7.0, worN=f)
    np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=0)
    assert h[0].imag == 0.0


def test_zpk_response_rejects_bad_input():
    f = np.array([0.0, 1e9])
    with pytest.raises(ConfigError, match="poles_hz"):
        ctle.zpk_response(f, [], [1e9], 1.0)            # right half plane
    with pytest.raises(ConfigError, match="poles_hz"):
        ctle.zpk_response(f, [], [1e9j, -1e9j], 1.0)    # on the axis
    with pytest.raises(ConfigError, match="zeros_hz"):
        ctle.zpk_response(f, [-1e9 + 1e9j], [-1e9], 1.0)  # missing conjugate
    with pytest.raises(ConfigError, match="gain"):
        ctle.zpk_response(f, [], [-1e9], 1j)
    with pytest.raises(ConfigError, match="f_hz"):
        ctle.zpk_response([-1.0], [], [-1e9], 1.0)


def test_ctle_validation():
    p = _ctle_params(-6.0)
    for key, bad in [("g_dc_db", -21.0), ("g_dc_db", 0.5), ("g_dc2_db", -7.0), ("g_dc2_db", float("nan")),
                     ("f_z_hz", 0.0), ("f_p2_hz", -1.0), ("f_lf_hz", float("inf"))]:
        with pytest.raises(ConfigError, match=key):
            ctle.ctle_ieee(1e9, **{**p, key: bad})
    with pytest.raises(ConfigError, match="f_hz"):
        ctle.ctle_ieee([1e9, -1.0], **p)
    with pytest.raises(ConfigError, match="f_hz"):
        ctle.ctle_ieee([np.nan], **p)
    with pytest.raises(ConfigError, match="symbol_rate_hz"):
        ctle.ieee_defaults(53.125)  # GBd, not Hz


# =================================================================== shunt peaking
def _mag2_poly(c):
    """|p(jw)|^2 as real polynomial coefficients in w (highest power first)."""
    c = np.asarray(c, dtype=float)
    n = len(c) - 1
    cj = c * (1j ** np.arange(n, -1, -1))     # p(jw) in powers of w
    out = np.polymul(cj, np.conj(cj))
    assert np.allclose(out.imag, 0.0, atol=1e-12)
    return out.real


def _roots_reference(m):
    """-3 dB frequency and peak |H| (linear) of H(s) = (1 + s/m)/(1 + s + s^2/m), tau = 1."""
    B = _mag2_poly([1 / m, 1.0])
    A = _mag2_poly([1 / m, 1.0, 1.0])
    r = np.roots(np.polysub(A, 2 * B))                 # |H|^2 = 1/2
    w3 = [x.real for x in r if abs(x.imag) < 1e-9 and x.real > 0]
    assert len(w3) == 1
    dr = np.roots(np.polysub(np.polymul(np.polyder(B), A), np.polymul(B, np.polyder(A))))
    cands = [x.real for x in dr if abs(x.imag) < 1e-7 and x.real > 0]
    peak2 = max([1.0] + [np.polyval(B, w) / np.polyval(A, w) for w in cands])
    return w3[0], math.sqrt(peak2)


M_VALUES = [1.0, 1.2, math.sqrt(2), 2.0, 1 + math.sqrt(2), 3.1, 5.0, 20.0, 1e4]


@pytest.mark.parametrize("m", M_VALUES)
def test_shunt_peaking_closed_forms_against_roots(m):
    w3, peak = _roots_reference(m)
    assert peaking.bandwidth_extension(m) == pytest.approx(w3, rel=1e-9)
    assert peaking.peaking_db(m) == pytest.approx(20 * math.log10(peak), abs=1e-8)


def test_shunt_peaking_textbook_landmarks():
    # maximally flat magnitude: m = 1 + sqrt(2), no peaking, ~1.72x
    w3, peak = _roots_reference(1 + math.sqrt(2))
    assert w3 == pytest.approx(1.72, abs=0.005)
    assert peak == pytest.approx(1.0, abs=1e-6)
    assert peaking.peaking_db(peaking.M_MAXIMALLY_FLAT) == 0.0
    # largest bandwidth: m = sqrt(2), ~1.85x with 1.19 (1.5 dB) peaking
    w3, peak = _roots_reference(math.sqrt(2))
    assert w3 == pytest.approx(1.85, abs=0.005)
    assert peak == pytest.approx(1.19, abs=0.005)
    assert peaking.peaking_db(math.sqrt(2)) == pytest.approx(1.51, abs=0.01)
    # m = 2: less than the maximum (1.80x) with a quarter dB of peaking
    w3, peak = _roots_reference(2.0)
    assert w3 == pytest.approx(1.80, abs=0.005)
    assert 20 * math.log10(peak) == pytest.approx(0.25, abs=0.01)
    # nearly flat group delay: m = 3.1, ~1.6x
    w3, _ = _roots_reference(3.1)
    assert w3 == pytest.approx(1.6, abs=0.05)
    # m = sqrt(2) is the maximum of the extension over m
    ms = np.linspace(1.0, 10.0, 9001)
    ext = np.array([peaking.bandwidth_extension(x) for x in ms])
    assert ms[np.argmax(ext)] == pytest.approx(math.sqrt(2), abs=2e-3)
    assert peaking.bandwidth_extension(0) == 1.0


def test_shunt_peaking_m0_is_rc_pole():
    bw = 30e9
    f = np.concatenate([[0.0], np.geomspace(1e6, 1e12, 500)])
    h = peaking.shunt_peaking_response(f, m=0, bandwidth_hz=bw)
    np.testing.assert_allclose(h, 1.0 / (1.0 + 1j * f / bw), rtol=1e-15, atol=0)
    np.testing.assert_array_equal(peaking.shunt_peaking_response(f, m=math.inf, bandwidth_hz=bw), h)
    assert peaking.shunt_peaking_tau(m=0, bandwidth_hz=bw) == pytest.approx(1 / (2 * math.pi * bw), rel=1e-15)
    assert peaking.peaking_db(0) == 0.0


@pytest.mark.parametrize("m", [0.0] + M_VALUES)
def test_shunt_peaking_stage_bandwidth(m):
    bw = 37e9
    h = peaking.shunt_peaking_response(np.array([0.0, bw]), m=m, bandwidth_hz=bw)
    assert h[0] == 1.0 + 0.0j
    assert abs(h[1]) == pytest.approx(1 / math.sqrt(2), rel=1e-12)
    # tau from the stage bandwidth: the same tau gives f_3dB(m=0) * extension
    tau = peaking.shunt_peaking_tau(m=m, bandwidth_hz=bw)
    assert 2 * math.pi * tau * bw == pytest.approx(peaking.bandwidth_extension(m), rel=1e-14)
    # formula written out with that tau
    if m > 0:
        f = np.geomspace(1e8, 1e12, 300)
        s = 2j * math.pi * f * tau
        np.testing.assert_allclose(peaking.shunt_peaking_response(f, m=m, bandwidth_hz=bw),
                                   (1 + s / m) / (1 + s + s**2 / m), rtol=1e-13)


@pytest.mark.parametrize("m", [1 + math.sqrt(2), 3.1, 10.0])
def test_shunt_peaking_no_overshoot_when_flat(m):
    f = np.linspace(0, 1e12, 20001)
    mag = np.abs(peaking.shunt_peaking_response(f, m=m, bandwidth_hz=50e9))
    assert mag.max() <= 1.0 + 1e-12
    assert np.all(np.diff(mag) <= 1e-15)


def test_shunt_peaking_validation():
    for bad in (0.5, -1.0, float("nan"), "x"):
        with pytest.raises(ConfigError, match="m="):
            peaking.shunt_peaking_response(1e9, m=bad, bandwidth_hz=1e10)
    for bad in (0.0, -1e9, float("inf")):
        with pytest.raises(ConfigError, match="bandwidth_hz"):
            peaking.shunt_peaking_tau(m=2.0, bandwidth_hz=bad)
    with pytest.raises(ConfigError, match="f_hz"):
        peaking.shunt_peaking_response([-1.0], m=2.0, bandwidth_hz=1e10)


# ======================================================================= loss line
def _il_db(h):
    return -20 * np.log10(np.abs(h))


@pytest.mark.parametrize("loss_db", [0.5, 10.0, 28.0, 60.0])
@pytest.mark.parametrize("f_ref", [F_NYQ, 13.28125e9, 3e9])
def test_loss_exact_at_reference(loss_db, f_ref):
    h = loss.loss_channel_response(np.array([0.0, f_ref]), loss_db=loss_db, f_ref_hz=f_ref)
    assert _il_db(h[1]) == pytest.approx(loss_db, rel=1e-12)
    assert h[0] == 1.0 + 0.0j


def test_length_for_loss_independent():
    """Loss of 1 mm measured from the response, then scaled: the attenuation is linear in length."""
    il_1mm = _il_db(loss.tline_response(F_NYQ, length_mm=1.0))
    # by hand: (20/ln10) * (1.734e-3*sqrt(26.5625) + 1.455e-4*26.5625) dB/mm
    assert il_1mm == pytest.approx(20 / math.log(10) * (1.734e-3 * math.sqrt(26.5625) + 1.455e-4 * 26.5625),
                                   rel=1e-13)
    assert loss.length_for_loss(30.0, F_NYQ) == pytest.approx(30.0 / il_1mm, rel=1e-12)
    assert loss.length_for_loss(0.0, F_NYQ) == 0.0


def test_loss_zero_is_identity_and_no_nan():
    f = np.linspace(0, 500e9, 1001)
    np.testing.assert_array_equal(loss.loss_channel_response(f, loss_db=0.0, f_ref_hz=F_NYQ), np.ones_like(f))
    h = loss.loss_channel_response(f, loss_db=40.0, f_ref_hz=F_NYQ)
    assert np.all(np.isfinite(h))
    assert h.dtype == np.complex128


def test_loss_monotonic_in_frequency():
    f = np.linspace(0, 200e9, 4001)
    il = _il_db(loss.loss_channel_response(f, loss_db=25.0, f_ref_hz=F_NYQ))
    assert il[0] == 0.0
    assert np.all(np.diff(il) > 0)


def test_loss_dc_is_one_and_gamma0():
    h = loss.tline_response(0.0, length_mm=300.0)
    assert complex(h) == 1.0
    h = loss.tline_response(0.0, length_mm=300.0, gamma0_per_mm=5e-4)
    assert complex(h) == pytest.approx(math.exp(-0.15), rel=1e-15)
    assert complex(h).imag == 0.0


def test_loss_delay_term():
    f = np.geomspace(1e8, 1e11, 100)
    L = 123.0
    with_delay = loss.tline_response(f, length_mm=L)
    without = loss.tline_response(f, length_mm=L, include_delay=False)
    np.testing.assert_allclose(with_delay, without * np.exp(-2j * np.pi * f * loss.TAU_NS_PER_MM * 1e-9 * L),
                               rtol=1e-10)


def _pre_arrival_energy(h, f, n, dt):
    """Fraction of the impulse-response energy before the earliest group arrival.

    The time of flight of a band-limited response is the smallest group delay
    over the band (the phase is read from h itself, so the same rule is applied
    to a causal and a non-causal model).
    """
    assert np.all(np.abs(h) > 0)
    phase = np.unwrap(np.angle(h))
    tg = -np.gradient(phase, 2 * np.pi * f)
    t0 = tg[1:].min()
    imp = np.fft.irfft(h, n)
    e = imp**2
    k = int(math.floor(t0 / dt))
    return e[:k].sum() / e.sum(), t0


@pytest.mark.parametrize("loss_db", [10.0, 20.0, 30.0])
def test_loss_causal_impulse_response(loss_db):
    m, n_ui = 32, 1024                      # 32 samples per 18.8 ps UI, 1024 UI window
    n = m * n_ui
    dt = UI / m
    f = np.fft.rfftfreq(n, dt)
    h = loss.loss_channel_response(f, loss_db=loss_db, f_ref_hz=F_NYQ)
    pre, t0 = _pre_arrival_energy(h, f, n, dt)
    length = loss.length_for_loss(loss_db, F_NYQ)
    # arrival close to, and (see the module docstring) slightly before, L*tau
    assert 0 < length * loss.TAU_NS_PER_MM * 1e-9 - t0 < 0.2e-12 * length
    assert pre < 1e-4

    # The same magnitude with the Hilbert partner of the a2*f loss dropped
    # (the -j*(2/pi)*f*ln f phase removed) is not causal: much energy arrives early.
    fg = f / 1e9
    xlnx = np.zeros_like(fg)
    xlnx[1:] = fg[1:] * np.log(fg[1:])
    h_bad = h * np.exp(-1j * length * loss.A2_NS_PER_MM * (2 / np.pi) * xlnx)
    np.testing.assert_allclose(np.abs(h_bad), np.abs(h), rtol=1e-12)
    pre_bad, _ = _pre_arrival_energy(h_bad, f, n, dt)
    assert pre_bad > 1e-2
    assert pre_bad > 1000 * pre


def test_loss_validation():
    for kwargs, name in [
        (dict(loss_db=61.0, f_ref_hz=F_NYQ), "loss_db"),
        (dict(loss_db=-1.0, f_ref_hz=F_NYQ), "loss_db"),
        (dict(loss_db=10.0, f_ref_hz=0.0), "f_ref_hz"),
        (dict(loss_db=10.0, f_ref_hz=F_NYQ, a1=-1e-3), "a1"),
        (dict(loss_db=10.0, f_ref_hz=F_NYQ, tau_ns_per_mm=6.141), "tau_ns_per_mm"),   # ps given as ns
        (dict(loss_db=10.0, f_ref_hz=F_NYQ, tau_ns_per_mm=1e-3), "tau_ns_per_mm"),    # faster than light
        (dict(loss_db=10.0, f_ref_hz=F_NYQ, a1=0.0, a2=0.0), "f_ref_hz"),             # a lossless line
    ]:
        with pytest.raises(ConfigError, match=name):
            loss.loss_channel_response(1e9, **kwargs)
    with pytest.raises(ConfigError, match="length_mm"):
        loss.tline_response(1e9, length_mm=-1.0)
    with pytest.raises(ConfigError, match="f_hz"):
        loss.tline_response([1e9, -1e9], length_mm=1.0)


def test_zpk_right_half_plane_zero_is_refused(capsys):
    """A zero with positive real part (non-minimum-phase CTLE) is refused like an RHP pole;
    zeros on the imaginary axis or at the origin remain allowed."""
    f = np.linspace(0.0, 50e9, 11)
    with pytest.raises(ConfigError, match="zeros_hz") as ei:
        ctle.zpk_response(f, [1e9], [-1e9, -2e10], 1.0)
    assert "\n" not in str(ei.value)
    with pytest.raises(ConfigError, match="zeros_hz"):
        ctle.zpk_response(f, [1e9 + 2e9j, 1e9 - 2e9j], [-1e9, -2e10], 1.0)
    ctle.zpk_response(f, [0.0], [-1e9], 1.0)
    ctle.zpk_response(f, [3e9j, -3e9j], [-1e9, -2e9], 1.0)
    from serdes.cli import main

    assert main(["run", "--set", "ctle.model=zpk", "--set", "ctle.zeros_hz=[5e9]",
                 "--set", "ctle.poles_hz=[-1e10,-3e10]", "--set", "link.symbols=2000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ctle.zeros_hz" in err and "left half plane" in err, err
