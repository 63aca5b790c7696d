"""Fair MLSE, DFE and precoding numbers: counted BER with 95 % Clopper-Pearson intervals
and each BER as an equivalent SNR.

    PYTHONPATH=. python3 benchmarks/mlse_fair.py [--symbols 2000000] [--loss 35]

Equivalent SNR: the slicer SNR s2 / sigma^2 (s2 = 5/9, levels +-1, +-1/3) at which
Gray PAM4 in Gaussian noise has the counted BER (closed form
``serdes.metrics.ber.pam4_gray_ber_awgn``, inverted). A gain in dB is the difference
of two equivalent SNRs: how much more SNR the baseline would need to reach the same
BER, if its errors came from Gaussian noise at a slicer. For the genie-fed DFE (no
error propagation) this is checked against its measured slicer SNR (printed beside).

Baselines, with the same FFE design freedom (post-cursor lags removed = DFE taps =
MLSE memory):
* "DFE n": the MMSE FFE + n-tap DFE, decisions fed back (error propagation counted);
* "DFE n, precoded": the same with 1/(1+D) precoding (802.3ck) at TX and RX;
* "DFE n, genie": the same FFE and taps, fed back with the symbols sent
  (``serdes.dsp.blocks.GenieDfe``): the DFE without error propagation, which isolates
  what the Viterbi decision rule gains;
* "MLSE L=n (target)": FFE for the monic target 1 + g_1 D + .. (default whitening);
  "(predictor)": linear FFE + order-n noise predictor as target.

Also prints the error-propagation model's ratio and mean burst length beside the
counted ones (counted/genie, mean burst of the decision-fed run).
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.optimize import brentq

from serdes.build import build
from serdes.config import Config
from serdes.dsp.blocks import GenieDfe
from serdes.dsp.receiver import build_chain
from serdes.engines.run import design_equalizer, simulate
from serdes.metrics.ber import pam4_gray_ber_awgn

S2 = 5.0 / 9.0


def equivalent_snr_db(ber: float) -> float:
    """SNR (dB) at which a Gray PAM4 slicer in Gaussian noise has bit error rate ``ber``."""
    if not 0.0 < ber < 0.3:
        return float("nan") if ber > 0 else float("inf")
    f = lambda snr_db: np.log(pam4_gray_ber_awgn(np.sqrt(S2 / 10 ** (snr_db / 10)))) - np.log(ber)  # noqa: E731
    return float(brentq(f, -5.0, 30.0))


# the front end these numbers are quoted for (README): the loss line with the COM
# package-trace loss split, the IEEE CTLE fixed at -8 dB, a 7-bit ADC with ENOB 5 (the
# default link before the CTLE search and the fitted loss split)
FRONT_END = ["channel.skin_fraction=0.6980985932251722", "ctle.auto=false",
             "ctle.g_dc_db=-8", "adc.enob=5"]


def count(overrides, symbols: int, *, genie: bool = False):
    system = build(Config.default().with_overrides(FRONT_END + list(overrides)))
    taps = design_equalizer(system)
    rx = None
    if genie:
        rx = build_chain(system.link, taps, system.receiver, seed=system.run.seed)
        rx.blocks[-1] = GenieDfe(taps.dfe, system.link.levels)
    return simulate(system, symbols=symbols, taps=taps, receiver=rx), taps, system


def mean_burst(bursts: dict) -> float:
    n = sum(bursts.values())
    return sum(L * c for L, c in bursts.items()) / n if n else float("nan")


def row(name, r, taps=None):
    lo, hi = r.ber_ci
    e, elo, ehi = (equivalent_snr_db(x) for x in (r.ber, hi, lo))
    pred = f"{taps.predicted_snr_db:6.2f}" if taps is not None else "   -  "
    print(f"{name:30s} {r.ber:.3e} [{lo:.3e}, {hi:.3e}] {r.bit_errors:7d}  "
          f"{e:6.2f} [{elo:5.2f}, {ehi:5.2f}]  slicer {r.snr_db:6.2f}  design {pred}")
    return e


def receivers(loss: float, symbols: int) -> dict:
    base = [f"channel.loss_db={loss}", "noise.rj_ui=0", "link.target_errors=0",
            "link.precoding=false"]
    cases = {
        "DFE 1": ([], False), "DFE 1, precoded": (["link.precoding=true"], False),
        "DFE 1, genie": ([], True),
        "DFE 2": (["dfe.taps=2"], False),
        "DFE 2, precoded": (["dfe.taps=2", "link.precoding=true"], False),
        "DFE 2, genie": (["dfe.taps=2"], True),
        "MLSE L=1 (target)": (["eq.detector=mlse"], False),
        "MLSE L=1 (predictor)": (["eq.detector=mlse", "mlse.whitening=predictor"], False),
        "MLSE L=2 (target)": (["eq.detector=mlse", "mlse.memory=2"], False),
        "MLSE L=2 (predictor)": (["eq.detector=mlse", "mlse.memory=2",
                                  "mlse.whitening=predictor"], False),
        "MLSE L=2 (target), precoded": (["eq.detector=mlse", "mlse.memory=2",
                                         "link.precoding=true"], False),
    }
    print(f"\n{loss} dB, RJ 0, {symbols} symbols; BER [95% CI] errors; equivalent SNR dB "
          "[from the CI]; measured slicer SNR; design SNR")
    eq, res = {}, {}
    for name, (ov, genie) in cases.items():
        r, taps, _ = count(base + ov, symbols, genie=genie)
        eq[name], res[name] = row(name, r, taps), r
    print("\nMLSE gain as equivalent SNR (dB), same number of post-cursor lags:")
    for L in (1, 2):
        for kind in ("target", "predictor"):
            m = eq[f"MLSE L={L} ({kind})"]
            print(f"  MLSE L={L} ({kind:9s}) vs DFE {L}: {m - eq[f'DFE {L}']:+.2f}, "
                  f"vs DFE {L} precoded: {m - eq[f'DFE {L}, precoded']:+.2f}, "
                  f"vs DFE {L} genie: {m - eq[f'DFE {L}, genie']:+.2f}")
    m = eq["MLSE L=2 (target), precoded"]
    print(f"  MLSE L=2 (target) precoded vs DFE 2 precoded: {m - eq['DFE 2, precoded']:+.2f}")
    return res


def precoding(symbols: int) -> None:
    print(f"\nPrecoding on/off, {symbols} symbols (RJ as in the default link)")
    for loss in (None, 30, 35):
        for n_dfe in (1, 2):
            out = []
            for pre in ("false", "true"):
                ov = ["link.target_errors=0", f"dfe.taps={n_dfe}", f"link.precoding={pre}"]
                ov += [f"channel.loss_db={loss}"] if loss is not None else []
                r, taps, _ = count(ov, symbols)
                out.append(r)
            (a, b) = out
            tag = "default" if loss is None else f"{loss} dB"
            print(f"  {tag:8s} DFE {n_dfe} b={np.round(a.dfe_taps, 3)}: off {a.ber:.3e} "
                  f"[{a.ber_ci[0]:.3e}, {a.ber_ci[1]:.3e}] ({a.bit_errors}), on {b.ber:.3e} "
                  f"[{b.ber_ci[0]:.3e}, {b.ber_ci[1]:.3e}] ({b.bit_errors}); "
                  f"on - off {equivalent_snr_db(b.ber) - equivalent_snr_db(a.ber):+.2f} dB")


def propagation(symbols: int) -> None:
    from serdes.engines.stat import StatisticalEngine, dfe_error_propagation

    print(f"\nDFE error-propagation model against the count ({symbols} symbols, RJ 0)")
    for loss, n_dfe in ((28, 1), (30, 1), (33, 1), (35, 1), (35, 2)):
        ov = [f"channel.loss_db={loss}", "noise.rj_ui=0", "link.target_errors=0",
              f"dfe.taps={n_dfe}", "link.precoding=false"]
        r, taps, system = count(ov, symbols)
        g, _, _ = count(ov, symbols, genie=True)
        prop = dfe_error_propagation(StatisticalEngine(system, taps))
        ratio = r.ber / g.ber
        print(f"  {loss} dB DFE {n_dfe}: counted/genie {ratio:.3f} (decision-fed {r.bit_errors}, "
              f"genie {g.bit_errors} errors), model {prop['ratio']:.3f} "
              f"(model/counted {prop['ratio'] / ratio:.3f}); mean burst counted "
              f"{mean_burst(r.bursts):.2f}, genie {mean_burst(g.bursts):.2f}, model "
              f"{prop['mean_burst_length']:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--symbols", type=int, default=2_000_000)
    ap.add_argument("--loss", type=float, default=35.0)
    ap.add_argument("--only", choices=("receivers", "precoding", "propagation"))
    a = ap.parse_args()
    if a.only in (None, "receivers"):
        receivers(a.loss, a.symbols)
    if a.only in (None, "precoding"):
        precoding(a.symbols)
    if a.only in (None, "propagation"):
        propagation(a.symbols)


if __name__ == "__main__":
    main()
