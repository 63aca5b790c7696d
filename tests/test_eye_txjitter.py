"""The analog eye draws the transmitter's jitter: each symbol's pulse moved by its own
offset (RJ, DCD, BUJ, SJ from the seed's TxJitterSource, the draws of the pulse engine).
Before, the waveform engine left the victim's TX jitter out of the analog eye without a
word (and refused the aggressors' copy of it). Checked against a slow NumPy sum of
band-limited pulses, against the pulse engine's own TX-jittered samples at the sampling
instants, for chunk invariance, and for the refusals (a ppm walk, offsets past 0.5 UI)."""

import numpy as np
import pytest

from serdes.build import build
from serdes.cli import main as cli
from serdes.config import Config
from serdes.engines.waveform import WaveformFrontEnd
from serdes.signal.source import Transmitter
from serdes.txjitter import TxJitterSource

QUIET = ["channel.loss_db=10", "noise.eta0_v2_per_ghz=0", "tx.snr_db=200", "noise.rj_ui=0"]
JITTER = ["tx_jitter.rj_ui=0.02", "tx_jitter.dcd_ui=0.04", "tx_jitter.buj_ui=0.02",
          "tx_jitter.sj_ui=0.1", "tx_jitter.sj_hz=2e9"]
SEED, N = 3, 3000


def _waveform(extra, chunks=(N,)):
    s = build(Config.default().with_overrides(QUIET + extra))
    a = Transmitter(s.link, s.source, SEED).next(N)[2]
    fe = WaveformFrontEnd(s.link, SEED, noise=False, tx_jitter=s.tx_jitter)
    k0, parts = 0, []
    for c in chunks:
        parts.append(fe.waveform(a[k0:k0 + c].copy(), k0))
        k0 += c
    return s, a, np.concatenate(parts)


def _band_limited(pf, up=64):
    """The fine pulse interpolated up times by FFT (zero-padded to twice its length:
    it has decayed to 1e-4 of its peak at both ends), for linear interpolation."""
    from scipy.signal import resample

    return resample(np.concatenate([pf, np.zeros(pf.size)]), 2 * pf.size * up)[:pf.size * up]


def _reference(s, a, tau, fine_idx, up=64):
    """sum_j a_j p(t - jT - tau_j) at fine indices, p band-limited (slow, obvious)."""
    link = s.link
    m, nu = link.m, link.pulse.n_ui
    hi = _band_limited(link.pulse.fine, up)
    grid = np.arange(hi.size)
    out = np.empty(len(fine_idx))
    for q, f in enumerate(fine_idx):
        k, r = divmod(int(f), m)
        i = k - np.arange(nu)
        ok = i >= 0
        pos = (np.arange(nu)[ok] * m + r - tau[i[ok]] * m) * up
        out[q] = np.sum(a[i[ok]] * np.interp(pos, grid, hi, left=0.0, right=0.0))
    return out


def test_jittered_waveform_is_the_sum_of_moved_pulses():
    """Every fine sample of 150 UIs against sum_j a_j p(t - jT - tau_j) with p the
    band-limited interpolation of the fine pulse (FFT, 64x, then linear: 5e-7 of the
    peak against 256x): the kernel's 4-point Lagrange on 32 samples per UI is within
    1e-5 of the peak (4e-5 at the pulse window's edges), where the jitter moves samples
    by up to 0.1 of it."""
    s, a, w = _waveform(JITTER)
    m = s.link.m
    tau = TxJitterSource(s.tx_jitter, s.link.ui_s, SEED).offsets(0, N)
    idx = np.arange(400 * m, 550 * m)
    ref = _reference(s, a, tau, idx)
    peak = np.abs(ref).max()
    # the pulse window starts and ends on a step of ~1e-4 of its peak, which no
    # interpolation across the window's edge can follow: allowed twice that per symbol
    pf = s.link.pulse.fine
    edge = max(np.abs(pf[:3]).max(), np.abs(pf[-3:]).max())
    assert np.abs(w[idx] - ref).max() < 1e-5 * peak + 2 * edge * np.abs(a).max()
    _, _, w0 = _waveform([])                       # the jitter moves them visibly
    assert np.abs(w0[idx] - ref).max() > 0.05 * peak


def test_at_the_sampling_instants_it_is_the_pulse_engine():
    """At each UI's sampling instant the jittered waveform is the counted engine's
    TX-jittered sample (the clock-recovery front end at a fixed phase): the same draws,
    the same sign of the offset. That engine reads the pulse from a table of 256 rows per
    UI with a 2nd-order expansion; on 0.01 UI RJ its samples move by 1.0005 times the
    band-limited displacement (rms error 1 % of it); ours by 1.0000 (2e-6 of the peak)."""
    from serdes.engines.cdr import CdrFrontEnd

    s, a, w = _waveform(["tx_jitter.rj_ui=0.01"])
    link = s.link
    fe = CdrFrontEnd(link, SEED, s.cdr, s.tx_jitter)
    x = fe(a.copy(), 0)
    k = np.arange(300, 800)
    tau = TxJitterSource(s.tx_jitter, link.ui_s, SEED).offsets(0, N)
    idx = k * link.m + link.pulse.phase
    moved = _reference(s, a, tau, idx) - _reference(s, a, np.zeros(N), idx)
    assert np.sqrt(np.mean(moved ** 2)) > 2e-3 * np.abs(x).max()   # a visible move
    for got in (w[idx], x[k + fe.latency]):
        d = got - _reference(s, a, np.zeros(N), idx)
        assert np.sqrt(np.mean((d - moved) ** 2)) < 0.03 * np.sqrt(np.mean(moved ** 2))
        assert abs(np.dot(d, moved) / np.dot(moved, moved) - 1) < 0.01


def test_jittered_waveform_does_not_depend_on_the_chunks():
    _, _, one = _waveform(JITTER)
    _, _, many = _waveform(JITTER, chunks=(37, 1000, 963, 1000))
    np.testing.assert_allclose(many, one, rtol=0, atol=1e-15)


def test_analog_eye_closes_with_tx_jitter():
    from serdes.metrics.eye import analog_eye

    base = QUIET[:1]
    clean = analog_eye(build(Config.default().with_overrides(base)), symbols=5000)
    rj = analog_eye(build(Config.default().with_overrides(base + ["tx_jitter.rj_ui=0.03"])),
                    symbols=5000)
    assert np.all(rj.heights_v < clean.heights_v - 1e-3)


@pytest.mark.parametrize("sets, says", [
    (["tx_jitter.ppm=50"], "tx_jitter.ppm = 50"),
    (["tx_jitter.sj_ui=0.6", "tx_jitter.sj_hz=1e6"], "0.5 UI")])
def test_analog_eye_refuses_what_it_cannot_draw(tmp_path, capsys, sets, says):
    argv = [x for v in sets for x in ("--set", v)]
    rc = cli(["eye", "--kind", "analog", "--symbols", "2000", "-o", str(tmp_path / "e.png"),
              "--no-progress", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and says in err[0], err


def _xtalk_system(tx_rj_ui):
    cfg = Config.default().with_overrides(["tx.snr_db=200", "noise.rj_ui=0"]).with_aggressors(
        [{"model": "copy", "coupling_db": -20, "tx_rj_ui": tx_rj_ui, "phase_ui": 0.3}])
    return build(cfg)


def test_aggressor_tx_jitter_is_drawn_as_the_counted_engines_take_it():
    """An aggressor's own TX jitter in the analog eye (it was refused): at the victim's
    sampling instants its fine-grid sum moves like the counted crosstalk front end's,
    which takes the jitter to first order: with 0.005 UI RJ the two displacements agree
    to 0.1 % (fitted ratio 0.9998; the rest is the second-order term)."""
    from serdes.engines.crosstalk import AggressorWaveform, CrosstalkFrontEnd
    from serdes.engines.pulse import Jitter

    still = _xtalk_system(0.0)
    moved = _xtalk_system(0.005)
    link = moved.link
    k = np.arange(300, 6000)
    idx = k * link.m + link.pulse.phase
    w0 = np.concatenate([AggressorWaveform(still.link)(k0, 1000)
                         for k0 in range(0, 6000, 1000)])[idx]
    w = np.concatenate([AggressorWaveform(link)(k0, 1000) for k0 in range(0, 6000, 1000)])[idx]
    xf = CrosstalkFrontEnd(link, Jitter(link, 1))
    x = np.concatenate([xf(k0, 1000) for k0 in range(0, 6000, 1000)])[k]
    ours, counted = w - w0, x - w0
    assert np.sqrt(np.mean(counted ** 2)) > 1e-3 * np.abs(w0).max()     # a visible move
    assert abs(np.dot(ours, counted) / np.dot(counted, counted) - 1) < 1e-3
    assert np.sqrt(np.mean((ours - counted) ** 2)) < 0.03 * np.sqrt(np.mean(counted ** 2))


def test_analog_eye_with_aggressors_and_tx_jitter(tmp_path, capsys):
    """The victim's [tx_jitter] is also its aggressors' default: the analog eye of a link
    with crosstalk and TX RJ is drawn (it was refused in one line); past 0.5 UI it is
    refused, naming the aggressor."""
    cfg = tmp_path / "x.toml"
    cfg.write_text('[[aggressor]]\nmodel = "copy"\ncoupling_db = -25\n')
    out = str(tmp_path / "e.png")
    base = ["eye", str(cfg), "--kind", "analog", "--symbols", "3000", "-o", out,
            "--no-progress", "--dpi", "20"]
    assert cli(base + ["--set", "tx_jitter.rj_ui=0.01"]) == 0
    capsys.readouterr()
    big = tmp_path / "y.toml"
    big.write_text('[[aggressor]]\nmodel = "copy"\ncoupling_db = -25\ntx_rj_ui = 0.1\n')
    rc = cli(["eye", str(big)] + base[2:])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "aggressor[0] TX jitter reaching 0.8 UI" in err[0]
