"""Combinations one front end would silently leave out are refused with one line and
exit code 2: the clock-recovery / TX-jitter front end forms interleaved-ADC lanes (every
detector, with or without the calibration) and takes aggressors with TX RJ/DCD/BUJ/SJ and a ppm offset, and the waveform engine does not form an
interleaved ADC's per-lane sampling instants."""

from __future__ import annotations

import pytest

from serdes.cli import main


def _run(capsys, *argv):
    rc = main(["run", "--set", "link.symbols=2000", "--no-progress", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    return rc, err


def test_tx_sj_with_aggressor_runs(tmp_path, capsys):
    cfg = tmp_path / "x.toml"
    cfg.write_text('[cdr]\nmode = "mm"\n\n[[aggressor]]\nmodel = "copy"\ncoupling_db = -25\n')
    assert _run(capsys, str(cfg), "--set", "tx_jitter.sj_ui=0.05")[0] == 0
    rc, err = _run(capsys, str(cfg), "--set", "tx_jitter.sj_ui=3")
    assert rc == 2 and len(err) == 1 and "aggressor[0].tx_sj_ui" in err[0]
    assert _run(capsys, str(cfg), "--set", "tx_jitter.ppm=100")[0] == 0
    assert _run(capsys, str(cfg), "--set", "tx_jitter.rj_ui=0.01",
                "--set", "tx_jitter.dcd_ui=0.02")[0] == 0


def test_tx_jitter_and_bb_with_interleaved_adc_run(capsys):
    lanes = ("--set", "adc.lanes=4", "--set", "adc.offset_rms_v=1e-3")
    assert _run(capsys, "--set", "tx_jitter.rj_ui=0.01", *lanes)[0] == 0
    assert _run(capsys, "--set", "cdr.mode=bb", *lanes)[0] == 0


@pytest.mark.parametrize("sets, named", [
    (("adc.lanes=4", "adc.skew_rms_s=1e-12"), "adc.skew_rms_s"),
    (("adc.aperture_jitter_s=1e-13",), "adc.aperture_jitter_s = 1e-13"),
    (("supply.ripple_mv=[10]", "supply.ripple_hz=[1e6]", "supply.delay_ps_per_mv=0.1"),
     "supply.delay_ps_per_mv"),
    (("adc.lanes=4", "adc_cal.enabled=true"), "adc_cal.enabled = true")])
def test_waveform_engine_refuses_per_sample_instants(capsys, sets, named):
    """The refusal names the setting that moves the sampling instants (it named an
    "interleaved ADC" also for one converter with supply jitter or aperture jitter)."""
    argv = [a for s in sets for a in ("--set", s)]
    rc, err = _run(capsys, "--engine", "waveform", *argv)
    assert rc == 2 and len(err) == 1 and "pulse engine" in err[0]
    assert named in err[0] and "interleaved" not in err[0]
