"""Touchstone channel loader: mixed-mode thru, FFT-grid resampling, causality, errors.

Real-data tests read ../shared/channels (beside the repository checkout) and skip
when that folder is absent; the synthetic tests write small files to tmp_path.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from serdes.channel.resample import (
    DEFAULT_TAPER_FACTOR,
    causality_ratio,
    estimate_bulk_delay,
    impulse_response,
    insertion_loss_db,
    transfer_on_grid,
)
from serdes.channel.touchstone import TouchstoneChannel
from serdes.channel.touchstone_io import read_sdd21
from serdes.errors import ConfigError, FileFormatError

CHANNELS = Path(__file__).resolve().parents[1].parent / "shared" / "channels"
F_NYQ = 26.5625e9  # Nyquist of 53.125 GBd
DF = 10e6  # grid step = the file step, so file frequencies lie on the grid
F_GRID = np.arange(int(round(16 * 53.125e9 / DF)) + 1) * DF  # 0 .. 850 GHz

# label (dB at 26.56 GHz) from the authors, per the README table of ../shared/channels
IL_LABELS = {
    "CA_19p75dB_thru.s4p": 19.75,
    "Tp0_Tp5_28p5db_FQSFP_thru.s4p": 28.5,
    "DPO_4in_Meg7_THRU.s4p": 12.0,
    "DPO_12in_Meg7_THRU.s4p": 28.0,
    "C2C_PCB_SYSVIA_12dB_thru.s4p": 12.0,
    "C2M__Z100_IL14_WC_BOR_H_L_H_THRU.s4p": 14.0,
}
IL_TOL_DB = 2.5

THRU_FILES = sorted(CHANNELS.glob("*/*.s4p")) if CHANNELS.is_dir() else []
THRU_FILES = [p for p in THRU_FILES if "thru" in p.name.lower()]
NO_DATA = f"real channel data not found at {CHANNELS} (expected beside the repository)"


def _data_params():
    if not THRU_FILES:
        return [pytest.param(None, marks=pytest.mark.skip(reason=NO_DATA), id="no-data")]
    return [pytest.param(p, id=p.stem) for p in THRU_FILES]


def _find(name: str) -> Path:
    hits = [p for p in THRU_FILES if p.name == name]
    if not hits:
        pytest.skip(f"{name} not found under {CHANNELS}")
    return hits[0]


_cache: dict = {}


def _raw(path: Path):
    """(f, s) straight from scikit-rf, cached: the reference for the formula tests."""
    key = ("raw", path)
    if key not in _cache:
        import skrf

        net = skrf.Network(str(path))
        _cache[key] = (net.f, net.s)
    return _cache[key]


def _channel(path: Path) -> TouchstoneChannel:
    key = ("ch", path)
    if key not in _cache:
        _cache[key] = TouchstoneChannel(path)
    return _cache[key]


def _grid_response(path: Path):
    key = ("H", path)
    if key not in _cache:
        _cache[key] = _channel(path).response(F_GRID)
    return _cache[key]


# ----------------------------------------------------------------- real data


@pytest.mark.parametrize("path", _data_params())
def test_sdd21_equals_direct_formula(path):
    f_raw, s = _raw(path)
    f, sdd21 = read_sdd21(path)
    np.testing.assert_array_equal(f, f_raw)
    assert sdd21.dtype == np.complex128 and f.dtype == np.float64
    # IEEE 802.3 convention: thru 1->2, 3->4; differential in (1,3), out (2,4)
    direct = (s[:, 1, 0] - s[:, 1, 2] - s[:, 3, 0] + s[:, 3, 2]) / 2
    np.testing.assert_allclose(sdd21, direct, rtol=0, atol=1e-12)
    # the other convention: thru 1->3, 2->4; differential in (1,2), out (3,4)
    _, sdd21_b = read_sdd21(path, ports="13,24")
    direct_b = (s[:, 2, 0] - s[:, 2, 1] - s[:, 3, 0] + s[:, 3, 1]) / 2
    np.testing.assert_allclose(sdd21_b, direct_b, rtol=0, atol=1e-12)
    # a real thru: the default convention is the low-loss one at low frequency
    i = np.argmin(np.abs(f - 100e6))
    assert abs(sdd21[i]) > 0.8 > abs(sdd21_b[i])


def test_sdd21_equals_scikit_rf_mixed_mode():
    """Cross-check of the explicit formula against scikit-rf's se2gmm (ports 1<->2 swapped)."""
    if not THRU_FILES:
        pytest.skip(NO_DATA)
    import skrf

    path = THRU_FILES[0]
    net = skrf.Network(str(path))
    _, sdd21_b = read_sdd21(path, ports="13,24")
    mm = net.copy()
    mm.se2gmm(p=2)  # skrf pairs (1,2) -> d0 and (3,4) -> d1: the "13,24" convention
    np.testing.assert_allclose(sdd21_b, mm.s[:, 1, 0], rtol=0, atol=1e-12)
    mm = net.copy()
    mm.renumber([0, 1, 2, 3], [0, 2, 1, 3])
    mm.se2gmm(p=2)
    np.testing.assert_allclose(read_sdd21(path)[1], mm.s[:, 1, 0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("path", _data_params())
def test_insertion_loss_at_nyquist_matches_label(path):
    ch = _channel(path)
    il = ch.il_db(F_NYQ)
    assert il == pytest.approx(insertion_loss_db(ch.f_hz, ch.sdd21, F_NYQ))
    assert 0 < il < 120
    label = IL_LABELS.get(path.name)
    if label is None:
        pytest.skip(f"{path.name}: no IL label in the README (measured {il:.2f} dB)")
    assert abs(il - label) <= IL_TOL_DB, f"{path.name}: IL {il:.2f} dB vs label {label} dB"


@pytest.mark.parametrize("path", _data_params())
def test_passivity_loads_slightly_non_passive_files(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # files up to ~1.0005 must load without warnings
        ch = TouchstoneChannel(path)
    pm = ch.passivity_max()
    assert 0.2 < pm < 1.001
    f, s = _raw(path)
    assert pm == pytest.approx(np.linalg.norm(s, ord=2, axis=(1, 2)).max(), rel=1e-12)


@pytest.mark.parametrize("path", _data_params())
def test_transfer_on_grid(path):
    ch = _channel(path)
    H = _grid_response(path)
    f, h = ch.f_hz, ch.sdd21
    assert H.dtype == np.complex128 and H.shape == F_GRID.shape
    assert np.all(np.isfinite(H))
    # DC: real, and equal to |H(0)| of the file or a sane extrapolation of it
    assert H[0].imag == 0.0 and H[0].real > 0
    if f[0] == 0:
        assert H[0].real == pytest.approx(abs(h[0]), rel=1e-12)
    else:
        assert abs(H[0].real - abs(h[0])) < 0.02 * abs(h[0])
    # interpolation is exact at the file frequencies (they lie on the 10 MHz grid)
    idx = np.rint(f / DF).astype(int)
    assert np.allclose(F_GRID[idx], f, rtol=1e-12, atol=1e-3)
    pos = f > 0
    np.testing.assert_allclose(H[idx[pos]], h[pos], rtol=0, atol=1e-9)
    # between file points: |H| between its neighbours (linear interpolation)
    g_mid = 0.5 * (f[1:] + f[:-1])
    Hm = ch.response(np.concatenate(([0.0], g_mid)))[1:]
    lo = np.minimum(abs(h[1:]), abs(h[:-1])) - 1e-12
    hi = np.maximum(abs(h[1:]), abs(h[:-1])) + 1e-12
    assert np.all((abs(Hm) >= lo) & (abs(Hm) <= hi))
    # above f_max: no growth, and exactly 0 from taper_factor * f_max to the top (850 GHz)
    above = F_GRID > f[-1]
    assert np.all(abs(H[above]) <= abs(h[-1]) * (1 + 1e-12))
    assert np.all(H[F_GRID >= DEFAULT_TAPER_FACTOR * f[-1]] == 0)
    assert H[-1] == 0


@pytest.mark.parametrize(
    "name",
    ["C2C_PCB_SYSVIA_12dB_thru.s4p", "example2_THRU.s4p"],
    ids=["C2C-noDC", "example2-40GHz"],
)
def test_impulse_response_is_causal(name):
    path = _find(name)
    ch = _channel(path)
    H = _grid_response(path)
    t, h = impulse_response(F_GRID, H)
    assert h.dtype == np.float64 and t.shape == h.shape == (2 * (F_GRID.size - 1),)
    dt = t[1]
    assert dt == pytest.approx(1 / (2 * F_GRID[-1]), rel=1e-12)
    # bulk delay preserved: starts after t=0, before the peak, within 100 ps of it
    tau = ch.bulk_delay_s
    t_peak = t[np.argmax(np.abs(h))]
    assert 0 < tau < t_peak < tau + 100e-12
    ratio = causality_ratio(h, np.floor(tau / dt))
    assert ratio < 1e-3, f"{name}: energy before the bulk delay is {ratio:.2e} of total"
    # DC gain: sum(h) (discrete response) = integral of h/dt over t = H(0) = ~|H| at low f
    assert np.sum(h) == pytest.approx(H[0].real, rel=1e-9)
    assert np.sum(h / dt) * dt == pytest.approx(H[0].real, rel=1e-9)
    assert np.sum(h) == pytest.approx(abs(ch.sdd21[0]), rel=0.02)
    # the response has died out well before the record wraps (1/df = 100 ns)
    e = h * h
    assert e[-len(e) // 4 :].sum() < 1e-6 * e.sum()


# ------------------------------------------------------------------ synthetic


def _write_s2p(path: Path, f_ghz, s21, s11=0.0):
    lines = ["! synthetic matched attenuator", "# GHz S RI R 50"]
    shape = np.shape(f_ghz)
    for fg, a, r in zip(f_ghz, np.broadcast_to(s21, shape), np.broadcast_to(s11, shape)):
        a, r = complex(a), complex(r)
        # Touchstone v1 2-port row order: S11 S21 S12 S22
        lines.append(
            f"{fg:.9g} {r.real:.17g} {r.imag:.17g} {a.real:.17g} {a.imag:.17g} "
            f"{a.real:.17g} {a.imag:.17g} {r.real:.17g} {r.imag:.17g}"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def test_s2p_matched_attenuator(tmp_path):
    f_ghz = np.linspace(0.0, 20.0, 201)
    path = _write_s2p(tmp_path / "atten6db.s2p", f_ghz, 0.5)
    f, s21 = read_sdd21(path)
    np.testing.assert_allclose(f, f_ghz * 1e9, rtol=1e-15)
    np.testing.assert_allclose(s21, 0.5, rtol=0, atol=1e-15)
    ch = TouchstoneChannel(path)
    assert ch.nports == 2
    assert ch.il_db(10e9) == pytest.approx(20 * np.log10(2), abs=1e-12)
    assert ch.passivity_max() == pytest.approx(0.5, abs=1e-15)
    assert ch.bulk_delay_s == 0.0  # flat: nothing to delay
    g = np.arange(0, 85001) * 10e6
    H = ch.response(g)
    assert H[0] == 0.5
    in_band = g <= 20e9
    np.testing.assert_allclose(H[in_band], 0.5, rtol=0, atol=1e-12)
    assert np.all(H[g >= 30e9] == 0) and np.all(np.isfinite(H))
    _, h = impulse_response(g, H)
    assert np.sum(h) == pytest.approx(0.5, rel=1e-12)


def test_s2p_delayed_attenuator_without_dc(tmp_path):
    """0.5 with a 200 ps delay, no DC point: DC real 0.5, delay found, peak at 200 ps."""
    tau = 200e-12
    f_ghz = np.linspace(0.05, 30.0, 600)
    path = _write_s2p(tmp_path / "delay.s2p", f_ghz, 0.5 * np.exp(-2j * np.pi * f_ghz * 1e9 * tau))
    f, s21 = read_sdd21(path)
    g = np.arange(0, 2**14 + 1) * 50e6
    H = transfer_on_grid(f, s21, g)
    assert H[0].imag == 0 and H[0].real == pytest.approx(0.5, abs=1e-12)
    k = np.rint(f / 50e6).astype(int)
    np.testing.assert_allclose(H[k], s21, rtol=0, atol=1e-9)
    est = estimate_bulk_delay(f, s21)
    assert tau - 60e-12 < est <= tau  # errs early: the roll-off adds minimum-phase delay
    t, h = impulse_response(g, H)
    assert t[np.argmax(h)] == pytest.approx(tau, abs=t[1])


def test_s4p_port_conventions_synthetic(tmp_path):
    """Ideal thru 1->2 and 3->4: SDD21 = 0.9 with '12,34', 0 with '13,24'."""
    s = np.zeros((4, 4), complex)
    s[1, 0] = s[0, 1] = s[3, 2] = s[2, 3] = 0.9
    lines = ["# Hz S RI R 50"]
    for fr in (0.0, 1e9, 2e9):
        vals = []
        for i in range(4):  # v1 4-port: one matrix row per line, row-major
            vals.append(" ".join(f"{x.real:g} {x.imag:g}" for x in s[i]))
        lines.append(f"{fr:g} " + "\n".join(vals))
    path = tmp_path / "ideal.s4p"
    path.write_text("\n".join(lines) + "\n")
    _, d = read_sdd21(path)
    np.testing.assert_allclose(d, 0.9, atol=1e-15)
    _, d2 = read_sdd21(path, ports="13,24")
    np.testing.assert_allclose(d2, 0.0, atol=1e-15)
    _, d3 = read_sdd21(path, ports=" 21 , 43 ")  # reverse direction, spaces allowed
    np.testing.assert_allclose(d3, 0.9, atol=1e-15)


def test_causality_ratio_basics():
    assert causality_ratio([0.0, 0.0, 1.0, 0.5], 2) == 0.0
    assert causality_ratio([1.0, 1.0], 1) == pytest.approx(0.5)
    assert causality_ratio([1.0, 1.0], 5) == pytest.approx(1.0)
    with pytest.raises(ConfigError):
        causality_ratio([1.0, 1.0], -1)
    with pytest.raises(ConfigError):
        causality_ratio([0.0, 0.0], 1)


# --------------------------------------------------------------------- errors


def _one_line(exc_info, *needles):
    msg = str(exc_info.value)
    assert "\n" not in msg and "Traceback" not in msg, msg
    for n in needles:
        assert n in msg, msg
    return msg


def test_missing_file():
    missing = Path("/nonexistent/dir/nochannel.s4p")
    with pytest.raises(FileFormatError) as ei:
        read_sdd21(missing)
    _one_line(ei, "nochannel.s4p", "not found")
    with pytest.raises(FileFormatError) as ei:
        TouchstoneChannel(missing)
    _one_line(ei, "nochannel.s4p")


@pytest.mark.parametrize(
    "name, text, why",
    [
        ("garbage.s4p", "hello world\nthis is not a touchstone file\n", "non-numeric text 'hello'"),
        ("short_rows.s2p", "# Hz S RI R 50\n1e9 0.1 0.2 0.3\n", "2-port records"),
        ("one_point.s2p", "# GHz S MA R 50\n1 0 0 0.5 0 0.5 0 0 0\n", "at least 2"),
        # (in an .s2p a frequency step back starts the noise data, so use an .s4p)
        ("backwards.s4p", "# GHz S MA R 50\n2" + " 1 0" * 16 + "\n1" + " 1 0" * 16, "increasing"),
        ("empty.s4p", "", "no data"),
        ("channel.txt", "# GHz S MA R 50\n1 0 0 0.5 0 0.5 0 0 0\n", "extension"),
    ],
)
def test_malformed_file(tmp_path, name, text, why):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(FileFormatError) as ei:
        read_sdd21(path)
    _one_line(ei, name, why)
    assert ei.value.__cause__ is None  # scikit-rf's exception is not chained into the report
    with pytest.raises(FileFormatError):
        TouchstoneChannel(path)


@pytest.mark.parametrize("ports", ["1234", "12,3", "11,34", "12,35", "ab,cd", "", 1234, None])
def test_bad_ports(tmp_path, ports):
    path = _write_s2p(tmp_path / "ok.s2p", [0.0, 1.0], 0.5)
    with pytest.raises(ConfigError) as ei:
        read_sdd21(path, ports=ports)
    _one_line(ei, "ports")
    with pytest.raises(ConfigError):
        TouchstoneChannel(path, ports=ports)


def test_bad_arguments():
    f = np.array([0.0, 1e9, 2e9])
    h = np.array([1.0, 0.9, 0.8], complex)
    with pytest.raises(ConfigError) as ei:
        transfer_on_grid(f, h, np.array([1e6, 2e6]))  # grid must start at 0 Hz
    _one_line(ei, "f_grid_hz")
    with pytest.raises(ConfigError) as ei:
        transfer_on_grid(f, h, np.array([0.0, 1e9]), taper_factor=1.0)
    _one_line(ei, "taper_factor")
    with pytest.raises(ConfigError):
        transfer_on_grid(f[::-1], h, np.array([0.0, 1e9]))
    with pytest.raises(ConfigError) as ei:
        insertion_loss_db(f, h, 5e9)
    _one_line(ei, "f0_hz")
    with pytest.raises(ConfigError):
        impulse_response(np.array([0.0, 1.0, 3.0]), np.ones(3))


# ------------------------------------------------- own parser, strictness, checks


ALL_S4P = sorted(CHANNELS.glob("*/*.s4p")) if CHANNELS.is_dir() else []


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=p.stem) for p in ALL_S4P]
    or [pytest.param(None, marks=pytest.mark.skip(reason=NO_DATA), id="no-data")],
)
def test_parser_matches_scikit_rf_on_real_files(path):
    """Our text parser reads every real file (thru and crosstalk) as scikit-rf does."""
    from serdes.channel.touchstone_io import load_touchstone

    _, f, s = load_touchstone(path)
    f_ref, s_ref = _raw(path) if path in THRU_FILES else _skrf(path)
    np.testing.assert_array_equal(f, f_ref)
    np.testing.assert_allclose(s, s_ref, rtol=0, atol=1e-12)


def _skrf(path):
    import skrf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = skrf.Network(str(path))
    return net.f, net.s


@pytest.mark.parametrize("unit, scale", [("Hz", 1.0), ("kHz", 1e3), ("MHz", 1e6), ("GHz", 1e9)])
@pytest.mark.parametrize("fmt", ["RI", "MA", "DB"])
@pytest.mark.parametrize("nports", [2, 4])
def test_options_line_formats_and_units(tmp_path, unit, scale, fmt, nports):
    """Options line in any order and case, comments, records split across lines, no DC
    point: the values are the ones written (and the ones scikit-rf reads)."""
    rng = np.random.default_rng(nports)
    f = np.array([0.05, 1.0, 2.5, 7.0])  # in GHz, no DC point
    s = (rng.uniform(0.05, 1.0, (4, nports, nports))
         * np.exp(1j * rng.uniform(-3.0, 3.0, (4, nports, nports))))
    lines = ["! header comment", f"# {unit.lower()} s {fmt.lower()} R 75  ! options"]
    for fi, si in zip(f, s):
        m = si.T if nports == 2 else si  # v1 2-port order: S11 S21 S12 S22
        pairs = []
        for x in m.ravel():
            if fmt == "RI":
                pairs.append(f"{x.real:.17g} {x.imag:.17g}")
            elif fmt == "MA":
                pairs.append(f"{abs(x):.17g} {np.degrees(np.angle(x)):.17g}")
            else:
                pairs.append(f"{20 * np.log10(abs(x)):.17g} {np.degrees(np.angle(x)):.17g}")
        head = f"{fi * 1e9 / scale:.17g}"
        if nports == 2:
            lines.append(head + " " + " ".join(pairs) + " ! trailing comment")
        else:  # one matrix row per line, the frequency on the first
            rows = [" ".join(pairs[4 * r: 4 * r + 4]) for r in range(4)]
            lines += [head + " " + rows[0], "! a comment inside a record", *rows[1:]]
    path = tmp_path / f"syn.s{nports}p"
    path.write_text("\n".join(lines) + "\n")
    from serdes.channel.touchstone_io import load_touchstone

    _, f_read, s_read = load_touchstone(path)
    np.testing.assert_allclose(f_read, f * 1e9, rtol=1e-15)
    np.testing.assert_allclose(s_read, s, rtol=1e-12, atol=1e-15)
    f_ref, s_ref = _skrf(path)
    np.testing.assert_allclose(f_read, f_ref, rtol=1e-15)
    np.testing.assert_allclose(s_read, s_ref, rtol=0, atol=1e-12)
    # the options may come in any order
    lines[1] = f"# R 75 {fmt} S {unit}"
    path.write_text("\n".join(lines) + "\n")
    _, f2, s2 = load_touchstone(path)
    np.testing.assert_array_equal(f2, f_read)
    np.testing.assert_array_equal(s2, s_read)


def _flat_lines(nports, f_ghz, value=0.9):
    """Data lines of a flat thru (0.9) for a 2-port or a '12,34' 4-port, MA format."""
    out = []
    for fg in f_ghz:
        if nports == 2:
            out.append(f"{fg:g} 0 0 {value} 0 {value} 0 0 0")
        else:
            m = np.zeros((4, 4))
            m[1, 0] = m[0, 1] = m[3, 2] = m[2, 3] = value
            rows = [" ".join(f"{x:g} 0" for x in m[r]) for r in range(4)]
            out.append(f"{fg:g} " + "\n".join(rows))
    return out


@pytest.mark.parametrize("nports", [2, 4])
def test_frequency_stepping_back_is_refused(tmp_path, nports):
    """Two data records swapped at 30 GHz: refused with the line, not cut silently."""
    f_ghz = list(np.arange(0.0, 60.01, 1.0))
    i = f_ghz.index(30.0)
    f_ghz[i], f_ghz[i + 1] = f_ghz[i + 1], f_ghz[i]
    path = tmp_path / f"swapped.s{nports}p"
    path.write_text("# GHz S MA R 50\n" + "\n".join(_flat_lines(nports, f_ghz)) + "\n")
    with pytest.raises(FileFormatError) as ei:
        read_sdd21(path)
    _one_line(ei, path.name, "3e+10 Hz", "strictly increasing")
    with pytest.raises(FileFormatError):
        TouchstoneChannel(path)


@pytest.mark.parametrize("text, why", [
    ("# GHz Y RI R 50\n0 0 0 1 0 1 0 0 0\n1 0 0 1 0 1 0 0 0\n", "only S-parameters"),
    ("# GHz S XY R 50\n0 0 0 1 0 1 0 0 0\n1 0 0 1 0 1 0 0 0\n", "unknown option"),
    ("# GHz S MA R -5\n0 0 0 1 0 1 0 0 0\n1 0 0 1 0 1 0 0 0\n", "reference resistance"),
    ("0 0 0 1 0 1 0 0 0\n# GHz S MA R 50\n1 0 0 1 0 1 0 0 0\n", "option line"),
    ("[Version] 2.0\n# GHz S MA R 50\n", "Touchstone v2"),
    # 2-port noise data (5 numbers a line) after the S-parameters
    ("# GHz S MA R 50\n0 0 0 1 0 1 0 0 0\n1 0 0 1 0 1 0 0 0\n0.5 1 0.5 10 0.3\n",
     "strictly increasing"),
    ("# GHz S MA R 50\n0 0 0 1 0 1 0 0\n0 1 0 1 0 1 0 0 0\n", "more than 9 numbers"),
])
def test_strict_parser_refusals(tmp_path, text, why):
    path = tmp_path / "bad.s2p"
    path.write_text(text)
    with pytest.raises(FileFormatError) as ei:
        read_sdd21(path)
    _one_line(ei, "bad.s2p", why)


def test_binary_and_non_utf8_files_are_refused(tmp_path):
    p1 = tmp_path / "nul.s2p"
    p1.write_bytes(b"# GHz S MA R 50\n0 0 0 1 0 1 0 0 0\x00\n")
    with pytest.raises(FileFormatError) as ei:
        read_sdd21(p1)
    _one_line(ei, "nul.s2p", "binary")
    p2 = tmp_path / "latin.s2p"
    p2.write_bytes(b"! \xb5m\n# GHz S MA R 50\n0 0 0 1 0 1 0 0 0\n1 0 0 1 0 1 0 0 0\n")
    with pytest.raises(FileFormatError) as ei:
        read_sdd21(p2)
    _one_line(ei, "latin.s2p", "not UTF-8")


def test_thru_check_refuses_a_port_mapping_that_is_not_a_thru(tmp_path):
    lines = _flat_lines(4, [0.0, 1.0, 2.0])
    path = tmp_path / "ideal.s4p"
    path.write_text("# GHz S MA R 50\n" + "\n".join(lines) + "\n")
    TouchstoneChannel(path, ports="12,34")
    with pytest.raises(FileFormatError) as ei:
        TouchstoneChannel(path, ports="13,24")
    _one_line(ei, "ideal.s4p", "not a thru", "'13,24'", "-6000.0 dB", "0 GHz")
    # a coupling path: the check is skipped on request
    assert np.all(TouchstoneChannel(path, ports="13,24", thru=False).sdd21 == 0)


def test_thru_check_on_real_files(channels_dir):
    thru = channels_dir / "ieee8023ck_KR_ortho_tracy_3ck_02_0119" / "DPO_4in_Meg7_THRU.s4p"
    with pytest.raises(FileFormatError) as ei:
        TouchstoneChannel(thru, ports="13,24")
    _one_line(ei, "DPO_4in_Meg7_THRU.s4p", "not a thru", "-49.5 dB")
    # crosstalk files are couplings, not thrus: loadable with thru=False
    for xt in sorted(channels_dir.glob("*/*[NF]EXT*.s4p")) + sorted(
            channels_dir.glob("*/*[nf]ext*.s4p")):
        ch = TouchstoneChannel(xt, thru=False)
        assert 20 * np.log10(abs(ch.sdd21[0]) + 1e-300) < -40
        with pytest.raises(FileFormatError):
            TouchstoneChannel(xt)


def test_band_check(tmp_path):
    path = _write_s2p(tmp_path / "short.s2p", np.linspace(0.0, 10.0, 101), 0.9)
    TouchstoneChannel(path, f_needed_hz=10e9)
    with pytest.raises(FileFormatError) as ei:
        TouchstoneChannel(path, f_needed_hz=26.5625e9)
    _one_line(ei, "short.s2p", "10 GHz", "26.5625 GHz", "Nyquist")


def test_a_file_read_again_is_parsed_once_and_each_caller_gets_its_own_copy(
        tmp_path, monkeypatch):
    """The parse of the last few files is kept by their text: the same text is parsed
    once, a caller changing its arrays changes nobody else's, a file rewritten in place
    (same path, same size, same second) is read anew, and a bad file fails every time."""
    from serdes.channel import touchstone_io

    calls = []
    parse = touchstone_io._parse_touchstone
    monkeypatch.setattr(touchstone_io, "_parse_touchstone",
                        lambda *a: calls.append(a[0]) or parse(*a))
    f_ghz = np.linspace(0.0, 20.0, 201)
    path = _write_s2p(tmp_path / "a.s2p", f_ghz, 0.5)
    _, f1, s1 = touchstone_io.load_touchstone(path)
    s1[:] = 7.0
    _, f2, s2 = touchstone_io.load_touchstone(path)
    assert len(calls) == 1
    np.testing.assert_array_equal(f2, f1)
    assert np.all(s2[:, 1, 0] == 0.5)
    _write_s2p(path, f_ghz, 0.25)   # same size: only the values differ
    _, _, s3 = touchstone_io.load_touchstone(path)
    assert len(calls) == 2 and np.all(s3[:, 1, 0] == 0.25)
    path.write_text(path.read_text().replace("0.25", "0.2x", 1))
    for _ in range(2):
        with pytest.raises(FileFormatError):
            touchstone_io.load_touchstone(path)
    assert len(calls) == 4


def _flat_s2p(path, fmax_ghz, gain):
    """A 2-port thru: S21 = S12 = gain x 0.1 dB/GHz of loss x 1 ns, no reflections."""
    f = np.arange(0.0, fmax_ghz + 1e-3, 0.05)
    h = gain * np.exp(-2j * np.pi * f * 1.0) * 10 ** (-0.1 * f / 20)
    rows = [f"{x:.4f} 0 0 {v.real:.12g} {v.imag:.12g} {v.real:.12g} {v.imag:.12g} 0 0"
            for x, v in zip(f, h)]
    path.write_text("# GHz S RI R 50\n" + "\n".join(rows) + "\n")
    return path


def test_a_warning_on_the_command_line_is_one_line(tmp_path, capsys):
    """A non-passive file (|S21| = 1.2) warns; on the command line that is one line in
    the CLI's own form, not Python's (our source file and line, then the code that
    warned)."""
    from serdes.cli import main

    f = _flat_s2p(tmp_path / "gain.s2p", 60, 1.2)
    assert main(["run", "--threads", "1", "--json", "--set", "link.symbols=20000",
                 "--set", "channel.model=touchstone", "--set", f"channel.file={f}"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"serdes: warning: {f}: not passive, largest singular value of S is 1.2000"]


@pytest.mark.parametrize("command", ["run", "com"])
def test_a_file_with_gain_is_refused_in_one_line(tmp_path, capsys, command):
    """A channel with more than 40 dB of gain is no channel: scaled by 1e200 the link's
    run ended in "ffe: taps must be finite" after overflow warnings and COM in an
    IndexError traceback (scaled by 10 .. 1e100 COM gave -31 to -37 dB for a thru it
    rates at about -4 dB scaled by 2). Both loaders refuse it naming the file; COM
    warns as the link does below that."""
    from serdes.cli import main

    tiny = ["--set", "g_dc=-6", "--set", "g_dc2=-2", "--set", "f_step_ghz=0.1"] + [
        a for k in ("tx_min", "tx_max", "tx_step") for a in ("--set", f"{k}=0,0,0,0,0")]
    for gain, rc in ((1e200, 2), (101.0, 2), (1.2, 0)):
        f = _flat_s2p(tmp_path / "gain.s2p", 60, gain)
        args = (["run", "--threads", "1", "--set", "link.symbols=20000", "--set",
                 "channel.model=touchstone", "--set", f"channel.file={f}"] if command == "run"
                else ["com", str(f), "--preset", "802.3ck-kr", *tiny])
        assert main(args + ["--json"]) == rc
        err = capsys.readouterr().err.strip().splitlines()
        if rc:
            assert err == [f"serdes: error: {f}: not a passive channel: the largest singular "
                           f"value of S is {gain:.4g}, at most 100 is taken (measured files "
                           "reach about 1.0005)"]
        else:
            assert err == [f"serdes: warning: {f}: not passive, largest singular value of S "
                           "is 1.2000"]


def test_com_warns_when_a_file_ends_below_half_the_symbol_rate(tmp_path):
    """COM extrapolates a file's data past their end (the IEEE code's rule); data ending
    below f_b / 2 (here 10 GHz at 25.78 GBd) leave the result to that guess, and COM says
    so (it ran silently on a file ending at 2 GHz); data to 60 GHz raise nothing."""
    from serdes.com.core import compute_com

    short = _flat_s2p(tmp_path / "short.s2p", 10, 0.9)
    with pytest.warns(RuntimeWarning, match="data end at 10 GHz, below the 12.89 GHz"):
        compute_com(short, preset="100gbase-kr4")
    full = _flat_s2p(tmp_path / "full.s2p", 60, 0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compute_com(full, preset="100gbase-kr4")
