"""Counted post-FEC results of simulated links (fec.mode = "kp4"): the binomial limit
with independent errors, a bursty DFE link against the binomial and the burst model,
precoding, and the interface of `serdes run`."""

import json

import pytest
from scipy import stats

from conftest import earlier_default
from fec_stats import assert_binomial_histogram
from serdes.build import build
from serdes.cli import main as cli_main
from serdes.metrics.ber import clopper_pearson
from serdes.report import run_report

# a 39 dB line behind the 24-tap FFE and a 1-tap DFE: b1 = 0.90, DFE bursts
BURSTY = ("channel.loss_db=39", "adc.enob=6", "noise.eta0_v2_per_ghz=1e-8",
          "fec.interleave=1", "link.symbols=2000000")


def _fec(*overrides) -> dict:
    cfg = earlier_default("fec.mode=kp4", "link.target_errors=0", *overrides)
    return run_report(build(cfg), stat=False, eye=False).to_dict()["fec"]


def test_independent_errors_give_the_binomial():
    """No DFE, white RX noise: the counted errors-per-codeword histogram is the binomial
    of the counted RS symbol error ratio (chi-square over bins pooled to >= 5 expected),
    and the counted FLR's 99.9 % interval holds the binomial and the model."""
    f = _fec("dfe.taps=0", "noise.eta0_v2_per_ghz=2e-7", "fec.interleave=1",
             "link.symbols=1000000")
    n = f["codewords"]
    assert n > 350 and f["miscorrected"] == 0
    assert_binomial_histogram(f, n)


@pytest.fixture(scope="module")
def bursty():
    return {pre: _fec(*BURSTY, f"link.precoding={str(pre).lower()}") for pre in (False, True)}


def test_dfe_bursts_break_the_binomial_and_the_burst_model_follows(bursty):
    """Without precoding: counted FLR several times the binomial of the same RS symbol
    error ratio (99 % interval above 2x it), and the burst model inside the counted 99 %
    interval."""
    f = bursty[False]
    assert f["error_propagation"] > 0.7
    lo, hi = clopper_pearson(f["uncorrectable"], f["codewords"], 0.99)
    assert lo > 2 * f["flr_binomial"]
    assert lo <= f["flr_model"] <= hi


def test_precoding_lowers_the_frame_loss(bursty):
    """1/(1+D) precoding turns each burst into the errors at its two ends: fewer RS
    symbols per event, and fewer lost codewords (one-sided Fisher exact test on the two
    counts, p < 1e-3); the burst model stays inside the counted 99 % interval."""
    off, on = bursty[False], bursty[True]
    table = [[off["uncorrectable"], off["codewords"] - off["uncorrectable"]],
             [on["uncorrectable"], on["codewords"] - on["uncorrectable"]]]
    assert stats.fisher_exact(table, alternative="greater")[1] < 1e-3
    lo_on, hi_on = clopper_pearson(on["uncorrectable"], on["codewords"], 0.99)
    assert lo_on <= on["flr_model"] <= hi_on


def test_run_json_fec_interface(capsys):
    assert cli_main(["run", "--json", "--no-stat", "--set", "link.symbols=60000",
                     "--set", "fec.mode=kp4"]) == 0
    f = json.loads(capsys.readouterr().out)["fec"]
    for key in ("codewords", "uncorrectable", "flr", "post_fec_ber", "symbol_error_ratio",
                "errors_per_codeword", "flr_model"):
        assert key in f
    assert f["codewords"] >= 10 and isinstance(f["errors_per_codeword"], dict)
    assert cli_main(["run", "--json", "--no-stat", "--set", "link.symbols=20000"]) == 0
    assert json.loads(capsys.readouterr().out)["fec"] is None


def test_text_report_and_sweep_columns(capsys):
    """The text summary's post-FEC lines and the sweep row's columns."""
    from serdes.sweep.point import report_columns

    cfg = earlier_default("fec.mode=kp4", "link.symbols=60000")
    rep = run_report(build(cfg), stat=False, eye=False, threads=1).to_dict()
    cols = report_columns(rep)
    assert cols["fec_codewords"] == rep["fec"]["codewords"] > 0
    assert {"rs_ser", "flr", "flr_model", "flr_binomial", "post_fec_ber",
            "post_fec_ber_model", "fec_uncorrectable"} <= set(cols)
    assert cli_main(["run", "--no-stat", "--threads", "1", "--set", "link.symbols=60000",
                     "--set", "fec.mode=kp4"]) == 0
    text = capsys.readouterr().out
    assert "RS(544,514)" in text and "FLR       counted" in text and "post-FEC" in text


@pytest.mark.parametrize("threads, sets", [
    (2, ("channel.loss_db=33", "noise.eta0_v2_per_ghz=1e-8")),            # precoded, x2
    (3, ("channel.loss_db=33", "noise.eta0_v2_per_ghz=1.5e-8", "fec.interleave=1",
         "link.precoding=false", "dfe.taps=2", "link.seed=4")),
])
def test_a_split_run_counts_the_codewords_of_one_pass(threads, sets):
    """Without a stop rule a FEC run is split like any other: each range counts the
    interleave groups that start in it (finished past its end) and keeps its error
    positions; merged in order they give one pass's whole "fec" object, histogram,
    events, model and margin included (it was counted in one thread only)."""
    cfg = earlier_default("fec.mode=kp4", "link.target_errors=0", "link.symbols=2500000",
                          *sets)
    system = build(cfg)
    one = run_report(system, stat=False, eye=False, threads=1).to_dict()
    many = run_report(system, stat=False, eye=False, threads=threads).to_dict()
    assert many["threads"] == threads and "threads_note" not in many
    assert one["fec"]["codewords"] > 800 and one["fec"]["symbol_errors"] > 500
    assert 0 < one["fec"]["uncorrectable"] < one["fec"]["codewords"]
    assert json.dumps(many["fec"], sort_keys=True) == json.dumps(one["fec"], sort_keys=True)
    assert many["bit_errors"] == one["bit_errors"]


@pytest.mark.parametrize("sets", [
    ("channel.loss_db=34", "link.target_errors=3000", "link.seed=3"),     # in range 0
    ("channel.loss_db=32", "link.target_errors=3000", "link.seed=7",      # in range 1
     "link.chunk_symbols=9000"),
    ("channel.loss_db=33", "link.target_errors=20000", "link.seed=4",     # not reached
     "eq.detector=mlse", "mlse.memory=2"),
])
def test_a_split_run_with_a_stop_rule_counts_the_codewords_of_one_pass(sets):
    """With link.target_errors a FEC run is split too (it ran in one thread): the range
    where the stop rule fires is counted again up to the stop block, so its codewords
    are the whole groups one pass has there, not those finished past the range's end."""
    from serdes.engines.blocks_run import simulate_split
    from serdes.engines.run import simulate
    from serdes.fec.counter import counter_for

    system = build(earlier_default("fec.mode=kp4", "link.symbols=5000000", *sets))
    fec = counter_for(system)
    one = simulate(system, observers=[fec])
    many, _, how = simulate_split(system, threads=2)
    assert how.threads == 2 and how.note is None and how.tasks > 2
    assert (many.symbols, many.bit_errors, many.stopped_by) == (
        one.symbols, one.bit_errors, one.stopped_by)
    want = fec.result()
    assert want["codewords"] > 50
    assert json.dumps(how.fec, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_fec_needs_a_payload_pattern(capsys):
    assert cli_main(["run", "--set", "fec.mode=kp4", "--set", "link.pattern=qprbs13"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "link.pattern" in err[0] and "qprbs13" in err[0]


if __name__ == "__main__":  # the numbers behind the tests
    for pre in (False, True):
        f = _fec(*BURSTY, f"link.precoding={str(pre).lower()}")
        print(f"precoding={pre}: codewords {f['codewords']} lost {f['uncorrectable']} "
              f"flr {f['flr']:.3e} {f['flr_ci']} model {f['flr_model']:.3e} binomial "
              f"{f['flr_binomial']:.3e} rs_ser {f['symbol_error_ratio']:.3e} pre-FEC BER "
              f"{f['pre_fec_ber']:.3e} post-FEC BER {f['post_fec_ber']:.3e} model "
              f"{f['post_fec_ber_model']:.3e} propagation {f['error_propagation']:.3f}")


def test_margin_to_the_target_is_the_model_against_the_objective():
    """The margin is log10(target / modelled post-FEC BER), judged on the model; a run
    whose model leaves nothing after decoding has an infinite margin."""
    import math

    from serdes.fec.counter import _margin

    m = _margin(1e-15, 1e-13, 10)
    assert m["meets_target"] and math.isclose(m["margin_decades"], 2.0)
    m = _margin(1e-11, 1e-13, 10)
    assert not m["meets_target"] and math.isclose(m["margin_decades"], -2.0)
    assert _margin(0.0, 1e-13, 10)["margin_decades"] == math.inf
    assert _margin(0.0, 1e-13, 0)["meets_target"] is None   # nothing counted: not known
    f = _fec("link.symbols=60000", "fec.target_post_fec_ber=1e-9")
    assert f["target_post_fec_ber"] == 1e-9
    assert f["error_events"] > 0 and f["post_fec_ber_model"] > 0
    assert math.isclose(f["margin_decades"], math.log10(1e-9 / f["post_fec_ber_model"]))
