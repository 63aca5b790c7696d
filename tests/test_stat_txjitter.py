"""Per-symbol TX jitter in the statistical engine (serdes/engines/stat/txjitter.py):
the moved pulses against their first-order closed forms, and the BER against the
counting engine (which moves every transmitted symbol's pulse in the CDR front end),
with the clock recovery off and on."""

import dataclasses

import numpy as np
import pytest

from serdes.build import build
from serdes.config import Config
from serdes.engines.cdr_stat import stat_link, stat_note
from serdes.engines.run import design_equalizer, simulate
from serdes.engines.stat import StatisticalEngine, dfe_error_propagation
from serdes.engines.stat.txjitter import ParityMixture, TxJitterModel
from serdes.metrics.ber import clopper_pearson
from serdes.txjitter import TxJitter

# the CTLE the search picks on the default link (fixed: no search), no DFE (the
# statistics assume correct decisions; a DFE's error propagation is counted, not
# modelled here) and more RX noise, so that ~1e-4 is counted in a few 100 k symbols
BASE = ["ctle.auto=false", "ctle.g_dc_db=-18", "ctle.g_dc2_db=-1", "dfe.taps=0",
        "link.precoding=false"]


def _system(mode: str, eta: float):
    return build(Config.default().with_overrides(
        [*BASE, f"cdr.mode={mode}", f"noise.eta0_v2_per_ghz={eta}"]))


def _slope(link, w, phase=0.0):
    """(w * p')(phase) by a central difference over one fine sample (per UI)."""
    p = link.pulse
    hi = np.convolve(w, p.at_offset(phase * p.m + 1.0))
    lo = np.convolve(w, p.at_offset(phase * p.m - 1.0))
    return (hi - lo) * p.m / 2.0


def test_moved_pulse_matches_first_order():
    """Small RJ: the variance per cursor is rj^2 f'_m^2 (f = w * p) to second order in
    rj; small DCD: parity +1 moves cursor m by -(-1)^m dcd/2, so the mean response
    changes by -(-1)^m f'_m dcd / 2. Tolerances: the reference slope is a central
    difference over one fine sample (relative error ~ h^2 f''' / (6 f'), ~0.2 % here)
    and the neglected orders (rj^2, dcd^2 relative: 1e-5)."""
    s = build(Config.default().with_overrides(BASE))
    w = design_equalizer(s).ffe
    lv = s.link.levels
    fp = _slope(s.link, w)
    rj = 1e-3
    m = TxJitterModel(s.link.pulse, w, 0, lv, rj_ui=rj, dcd_ui=0.0, buj_ui=0.0)
    df, dev = m.terms(0.0, 0)
    var = m.node_w @ dev ** 2
    big = np.abs(fp) > 0.05 * np.abs(fp).max()
    np.testing.assert_allclose(var[big], (rj * fp[big]) ** 2, rtol=1e-2)
    dcd = 2e-3
    m = TxJitterModel(s.link.pulse, w, 0, lv, rj_ui=0.0, dcd_ui=dcd, buj_ui=0.0)
    sign = (-1.0) ** np.arange(fp.shape[0])
    for parity in (1, -1):
        df, dev = m.terms(0.0, parity)
        assert not np.any(dev)
        np.testing.assert_allclose(df[big], -parity * sign[big] * fp[big] * dcd / 2,
                                   rtol=2e-2)


def test_dcd_distribution_is_the_parity_average():
    """With DCD the engine's distribution is the mean of the two parities' (one grid),
    in every view the engine uses (decision matrix, per-eye rates, a moved mean)."""
    s = _system("off", 1.5e-7)
    s = dataclasses.replace(s, tx_jitter=TxJitter(dcd_ui=0.1, rj_ui=0.02))
    eng = StatisticalEngine(s)
    d = eng.distribution(0.0)
    assert isinstance(d, ParityMixture)
    a, b = d.parts
    assert a.delta == b.delta
    np.testing.assert_allclose(d.decision_matrix(), 0.5 * (a.decision_matrix()
                                                            + b.decision_matrix()))
    assert a.ber() != pytest.approx(b.ber(), rel=1e-3)   # the parities differ
    assert eng.ber().ber == pytest.approx(d.ber(), rel=1e-12)
    assert dfe_error_propagation(eng) is None            # no DFE: nothing to propagate


def test_dcd_parities_share_one_response():
    """The parities differ only in the TX jitter's terms (_isi_part): a row with DCD
    forms its response once, and each parity is that response's distribution with its
    own parity's terms, bit for bit."""
    s = _system("off", 1.5e-7)
    s = dataclasses.replace(s, tx_jitter=TxJitter(dcd_ui=0.1, rj_ui=0.02))
    eng = StatisticalEngine(s)
    real, calls = eng.response, []

    def counted(*a, **k):
        calls.append(a)
        return real(*a, **k)

    eng.response = counted
    d = eng.distribution(0.05)
    assert len(calls) == 1
    f, jv = real(0.05)
    for part, parity in zip(d.parts, (1, -1)):
        ref = eng._distribution_of(f, jv, 0.05, None, part.delta, None, parity)
        np.testing.assert_array_equal(part.decision_matrix(), ref.decision_matrix())


CASES = {  # name: (cdr mode, RX noise PSD, TX jitter)
    "rj-off": ("off", 1.5e-7, TxJitter(rj_ui=0.06)),
    "rj-mm": ("mm", 1.5e-7, TxJitter(rj_ui=0.06)),
    "dcd-off": ("off", 2e-7, TxJitter(dcd_ui=0.1)),
    "dcd-mm": ("mm", 2e-7, TxJitter(dcd_ui=0.1)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_stat_matches_counted_with_tx_jitter(name):
    """The statistical BER lies within 1.5x of the counted 95 % interval (>= 100
    errors); the TX jitter itself raises the BER several times, so the test sees it.
    The DCD cases are at 0.1 UI: the counting engine expands each symbol's move to
    second order (kernels/cdr.py), its third-order remainder grows as dcd^3."""
    mode, eta, txj = CASES[name]
    s0 = _system(mode, eta)
    taps = design_equalizer(s0)
    s = dataclasses.replace(s0, tx_jitter=txj)
    assert stat_note(s) is None
    stat = StatisticalEngine(dataclasses.replace(s, link=stat_link(s)), taps).ber().ber
    stat0 = StatisticalEngine(dataclasses.replace(s0, link=stat_link(s0)), taps).ber().ber
    r = simulate(s, symbols=1_500_000, target_errors=150, taps=taps)
    lo, hi = clopper_pearson(r.bit_errors, r.bits, 0.95)
    print(f"\n{name}: counted {r.ber:.3e} [{lo:.3e}, {hi:.3e}] ({r.bit_errors} errors), "
          f"statistical {stat:.3e} (without the TX jitter {stat0:.3e}), "
          f"counted/stat {r.ber / stat:.2f}")
    assert r.bit_errors >= 100
    assert stat > 3 * stat0
    assert lo / 1.5 <= stat <= 1.5 * hi
