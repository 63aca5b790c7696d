"""The default link's noise budget at the slicer and the CTLE search.

The budget (serdes.impairments.slicer_shares, "noise_budget" in ``serdes run --json``)
is checked against the pulse engine itself: with the taps fixed and the VGA gain pinned,
turning one impairment off lowers the counted slicer error variance by that
contribution's share. The CTLE search is checked against the exhaustive grid and
against links built the ordinary way with the chosen gains."""


import numpy as np
import pytest

from serdes.build import build, build_link, build_receiver
from serdes.config import Config
from serdes.dsp.ctle_search import predicted_snr_db, search_ctle
from serdes.engines.run import design_equalizer, simulate
from serdes.report import ctle_summary, noise_budget

KEYS = {"rx_thermal", "tx", "adc", "jitter", "residual_isi"}
SYMBOLS = 1 << 18
# what turns each contribution off (the VGA gain is pinned, so nothing else moves)
OFF = {"rx_thermal": ["noise.eta0_v2_per_ghz=0"], "tx": ["tx.snr_db=200"],
       "adc": ["adc.bits=0", "adc.enob=0"], "jitter": ["noise.rj_ui=0"]}


def _fixed_ctle_default(extra=()):
    """The default link with the CTLE the search picks for it, fixed (auto off)."""
    c = ctle_summary(build_link(Config.default()))
    return Config.default().with_overrides(
        ["ctle.auto=false", f"ctle.g_dc_db={c['g_dc_db']}", f"ctle.g_dc2_db={c['g_dc2_db']}",
         # precoding fixed: "auto" designs the receiver while building, which would
         # derive the pulse before _pinned can fix the VGA gain
         "link.precoding=false", f"link.symbols={SYMBOLS}", "link.target_errors=0", *extra])


def _pinned(cfg, vga_gain):
    system = build(cfg)
    system.link.__dict__["vga_gain"] = vga_gain  # before the pulse and noise are derived
    return system


def _err_var(res, levels):
    """Slicer error variance from the counted slicer SNR (the same data in every run)."""
    return float(np.mean(np.asarray(levels) ** 2)) * 10 ** (-res.snr_db / 10)


def test_json_noise_budget_keys_and_sum():
    from serdes.commands.run import run_link

    r = run_link(Config.default().with_overrides(["link.symbols=20000"]), stat=False)
    nb = r["noise_budget"]
    assert set(nb) == KEYS
    assert all(0.0 <= v <= 1.0 for v in nb.values())
    assert sum(nb.values()) == pytest.approx(1.0, abs=1e-12)
    assert r["ctle"]["auto"] is True


def test_shares_match_turning_each_impairment_off():
    """share_p = 1 - E_without_p / E_all (counted slicer error variances, same seed and
    taps). Statistical tolerance: the difference of two runs with common random numbers
    has a std of about 2 sqrt(s (1 - s) / N) (the cross term) plus sqrt(2/N) s (the
    part's own variance estimate); 5 of those, plus 0.01 for what the budget leaves out
    by design (the DFE's wrong feedback after a decision error at a SER near 1e-4,
    clipping, quantization treated as LSB^2/12, jitter to first order)."""
    cfg = _fixed_ctle_default()
    ref = build(cfg)
    taps = design_equalizer(ref)
    shares = noise_budget(ref)
    levels = ref.link.levels
    e_all = _err_var(simulate(ref, taps=taps), levels)
    gain = ref.link.vga_gain
    for name, overrides in OFF.items():
        sys_off = _pinned(cfg.with_overrides(overrides), gain)
        np.testing.assert_allclose(sys_off.link.pulse.taps, ref.link.pulse.taps, rtol=1e-12)
        e_off = _err_var(simulate(sys_off, taps=taps), levels)
        measured = 1.0 - e_off / e_all
        s = shares[name]
        sigma = 2 * np.sqrt(max(s * (1 - s), 1e-6) / SYMBOLS) + np.sqrt(2 / SYMBOLS) * s
        assert measured == pytest.approx(s, abs=5 * sigma + 0.01), (name, measured, s)
    # everything off: what is left is the residual ISI
    all_off = sum(OFF.values(), [])
    e_isi = _err_var(simulate(_pinned(cfg.with_overrides(all_off), gain), taps=taps), levels)
    assert e_isi / e_all == pytest.approx(shares["residual_isi"], abs=0.01)


@pytest.mark.parametrize("overrides", [[], ["channel.loss_db=10"], ["channel.loss_db=35"],
                                       ["dfe.taps=0", "channel.loss_db=20"]])
def test_ctle_search_finds_the_grid_maximum(overrides):
    cfg = Config.default().with_overrides(["ctle.auto=false", *overrides])
    link, spec = build_link(cfg), build_receiver(cfg)
    fast = search_ctle(link, spec)
    full = search_ctle(link, spec, exhaustive=True)
    assert np.all(np.isfinite(full.snr_db))
    assert (fast.g_dc_db, fast.g_dc2_db) == (full.g_dc_db, full.g_dc2_db)
    assert fast.predicted_snr_db == full.predicted_snr_db == np.max(full.snr_db)
    # the reused stage responses: an ordinary link with the chosen gains predicts the same
    plain = build_link(cfg.with_overrides([f"ctle.g_dc_db={full.g_dc_db}",
                                           f"ctle.g_dc2_db={full.g_dc2_db}"]))
    assert predicted_snr_db(plain, spec) == pytest.approx(full.predicted_snr_db, abs=1e-9)
    i = full.grid_g_dc_db.index(-8.0)
    assert full.predicted_snr_db >= full.snr_db[i, 0]


def test_ctle_auto_in_the_build():
    auto = build_link(Config.default())
    c = ctle_summary(auto)
    assert c["auto"] and "auto" in auto.describe()["rx"]
    fixed = build_link(Config.default().with_overrides(["ctle.auto=false", "ctle.g_dc_db=-5"]))
    assert ctle_summary(fixed) == {"g_dc_db": -5.0, "g_dc2_db": 0.0, "auto": False}
    # more loss asks for at least as much boost
    gains = [ctle_summary(build_link(Config.default().with_overrides(
        [f"channel.loss_db={x}"])))["g_dc_db"] for x in (5, 20, 35)]
    assert gains[0] >= gains[1] >= gains[2]
