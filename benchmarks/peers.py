"""The same link in serdes, serdespy and PyBERT: symbols/s (CPU time, warm) and memory.

    python3 benchmarks/peers.py [--serdespy-symbols 1e6] [--pybert-symbols 1e5]
                                [--rounds 2] [--pybert-rounds 1] [--cpu 1]
                                [--peers serdespy pybert] [--json]

The link: the IEEE 802.3ck thru channel DPO_4in_Meg7_THRU.s4p (/work/shared/channels or
$SERDES_CHANNELS; the script says so and stops when it is absent), PAM4 at 53.125 GBd,
CTLE, 24-tap FFE (4 pre-cursor taps) and a 1-tap DFE, Gaussian noise. Each measurement
runs in its own fresh process (``--one NAME``), so its memory is its own; tools run in
paired, interleaved rounds (serdes, peer, serdes, peer, ...; 2 for serdespy, 1 for
PyBERT by default), each process pinned to one core with ``taskset -c CPU`` when taskset
exists, and the best CPU time (time.process_time) of the rounds is kept. Ratios compare
numbers of the same run.

What is timed: the per-symbol work of a warm process - data, channel, noise, equalizer,
decisions, error count - at the same symbol count for both tools of a pair; set-up
(imports, Touchstone reading, pulse response, equalizer design, serdes' kernel
compilation, PyBERT's object) is not. Memory: the peak resident set of the timed call
above the resident set just before it (Linux VmHWM, reset through /proc/self/clear_refs),
and the whole process' peak.

What differs (the peers cannot do exactly the same thing):

* serdespy (``Transmitter``, ``Receiver.noise``, ``slice_signal``, ``FFE_BR``,
  ``pam4_DFE_BR``: its baud-rate path) gets the symbol-spaced pulse response, FFE and DFE
  taps that serdes designed for this link (serdespy's channel helpers build a pulse the
  user then samples; serdespy designs no MMSE equalizer), convolved with
  scipy.signal.fftconvolve as its examples do. Its noise is white with the total rms of
  serdes' noise at the FFE input (serdes: coloured RX noise, TX noise through the pulse,
  ADC noise; its ADC also quantises, which serdespy has no model of). serdespy's
  baud-rate path has no jitter, so it is paired with serdes without RJ (``serdes``);
  serdes with its default 0.01 UI RJ (``serdes-rj``) is printed beside it. Both should
  count the same (here: no) errors and about the same slicer SNR - printed, as the
  check that the peer did the work.
* PyBERT has no baud-rate mode: it simulates the oversampled waveform (``nspui``
  samples per UI, default 32) through its own channel model of the same file, its own
  native CTLE (peaking set near Nyquist), an RX FFE of 24 taps with serdes' tap shape,
  an adaptive 1-tap DFE with its bang-bang CDR, and then its jitter decomposition and eye
  (these cannot be switched off; PyBERT's own split of the time is printed). PyBERT has
  no random-jitter input (it analyses jitter only), so it is paired with serdes without
  RJ, and serdes' oversampled waveform engine (``serdes-waveform``) is printed beside
  it: the like-for-like engine. PyBERT's noise (``rn``, white, at the RX input) and
  equalizer settings are not tuned to this link, so its error count is not comparable;
  the work per symbol does not depend on those values.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHANNEL = "ieee8023ck_KR_ortho_tracy_3ck_02_0119/DPO_4in_Meg7_THRU.s4p"
CHANNELS = Path(os.environ.get("SERDES_CHANNELS", "/work/shared/channels"))
SEED = 1


def _mem_kb() -> dict:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmHWM", "VmRSS")):
                out[line.split(":")[0]] = int(line.split()[1])
    return out


def _timed(fn) -> dict:
    """CPU and wall time of ``fn()`` and the peak resident memory it added."""
    before = _mem_kb()["VmRSS"]
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the peak (VmHWM) to the current resident set
        reset = True
    except OSError:
        reset = False
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    peak = _mem_kb()["VmHWM"]
    return dict(out, cpu_s=cpu, wall_s=wall,
                run_peak_mb=(peak - before) / 1024 if reset else float("nan"),
                process_peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def _serdes_system(rj: bool, symbols: int):
    sys.path.insert(0, str(ROOT))
    from serdes.build import build
    from serdes.config import Config

    sets = ["channel.model=touchstone", f"channel.file={CHANNELS / CHANNEL}",
            "ffe.taps=24", "ffe.pre=4", "dfe.taps=1", "link.target_errors=0",
            f"link.symbols={symbols}", f"link.seed={SEED}"]
    if not rj:
        sets.append("noise.rj_ui=0")
    return build(Config.default().with_overrides(sets))


def one_serdes(symbols: int, rj: bool, engine: str = "pulse") -> dict:
    from serdes.engines.run import simulate

    system = _serdes_system(rj, symbols)
    simulate(system, engine=engine, symbols=20_000)  # compile / load the kernels
    r = {}

    def run():
        res = simulate(system, engine=engine, symbols=symbols)
        r.update(symbols=res.symbols, bit_errors=res.bit_errors, ber=res.ber,
                 snr_db=res.snr_db)
        return r

    return _timed(run)


def one_serdespy(symbols: int) -> dict:
    import numpy as np
    import scipy.signal
    import serdespy as sdp

    from serdes.engines.run import design_equalizer

    system = _serdes_system(False, symbols)
    link = system.link
    taps = design_equalizer(system)
    levels = np.asarray(link.levels, dtype=float)
    pulse = np.asarray(link.pulse.taps, dtype=float)
    sigma = float(np.sqrt(link.noise.variance + link.tx_noise_sigma ** 2 * np.sum(pulse ** 2)
                          + link.adc.noise_v2))
    ffe, dfe = np.asarray(taps.ffe, dtype=float), np.asarray(taps.dfe, dtype=float)
    # serdes decides symbol k - delay at FFE output k (full convolution); serdespy's FFE_BR
    # keeps the centred ("same") part, (len - 1) // 2 samples later
    lag = int(taps.delay) - (ffe.shape[0] - 1) // 2
    assert lag >= 0
    gray = np.array([0, 1, 3, 2])  # PAM4 symbol index -> Gray-coded bit pair, as serdes
    popcount = np.array([0, 1, 1, 2])

    def run(symbols):
        np.random.seed(SEED)
        data = np.random.randint(0, 4, symbols)
        tx = sdp.Transmitter(data, levels, 2 * link.symbol_rate_hz)
        rx_in = scipy.signal.fftconvolve(tx.signal_BR, pulse)[:symbols]
        rx = sdp.Receiver(rx_in, 1, link.symbol_rate_hz / 2, levels, shift=False,
                          main_cursor=1)
        rx.noise(sigma)
        rx.slice_signal()
        rx.FFE_BR(ffe, 4)
        z = rx.signal_BR.copy()
        rx.pam4_DFE_BR(dfe)
        # from 1000 UI on (serdes skips its start-up too) to the last FFE output that
        # saw all its inputs ("same" mode pads the end with zeros)
        end = symbols - (ffe.shape[0] - 1) // 2 - 1
        got = rx.symbols_out[lag + 1000:end]
        sent = data[1000:end - lag]
        bit_errors = int(popcount[gray[got] ^ gray[sent]].sum())
        err = z[lag + 1000:end] - dfe[0] * levels[rx.symbols_out[lag + 999:end - 1]] \
            - levels[sent]
        snr = 10 * np.log10(float(np.mean(levels ** 2)) / float(np.mean(err ** 2)))
        return dict(symbols=int(sent.shape[0]), bit_errors=bit_errors,
                    ber=bit_errors / (2 * sent.shape[0]), snr_db=snr)

    run(20_000)  # warm
    return _timed(lambda: run(symbols))


def one_pybert(symbols: int) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import numpy as np
    from pybert.pybert import PyBERT

    from serdes.engines.run import design_equalizer

    system = _serdes_system(False, symbols)
    taps = design_equalizer(system)
    ffe = np.asarray(taps.ffe, dtype=float)
    ffe = ffe / np.sum(np.abs(ffe))  # PyBERT sets the cursor to 1 - sum |other taps|

    def make(n):
        pb = PyBERT(run_simulation=False, gui=False)
        pb.mod_type = "PAM-4"
        pb.bit_rate = 2 * system.link.symbol_rate_hz / 1e9  # Gb/s
        pb.nbits = 2 * n
        pb.eye_bits = min(2 * n // 5, 20_000)
        pb.seed = SEED
        pb.use_ch_file = True
        pb.ch_file = str(CHANNELS / CHANNEL)
        pb.pn_mag = 0.0  # no periodic noise (serdes has none here)
        pb.peak_freq = system.link.symbol_rate_hz / 2e9
        pb.rx_bw = system.link.symbol_rate_hz / 1e9
        pb.peak_mag = 10.0
        pb.rx_n_taps = 24
        pb.rx_n_pre = 4
        for i, tuner in enumerate(pb.rx_taps):
            if i < 24 and i != 4:
                tuner.value = float(ffe[i])
        for i, tuner in enumerate(pb.dfe_tap_tuners):
            tuner.enabled = i < 1
        return pb

    make(10_000).simulate(initial_run=True, update_plots=False)  # warm
    pb = make(symbols)

    def run():
        pb.simulate(initial_run=True, update_plots=False)
        errs = int(pb.n_errs_dfe)  # PyBERT counts bit errors after its DFE
        # PyBERT times each step as samples per second from the step's start; as shares
        # of its total time (they need not add to 1: a few steps are not timed)
        total = float(pb.total_perf)
        split = {k[:-5]: total / float(getattr(pb, k)) for k in
                 ("channel_perf", "tx_perf", "ctle_perf", "ffe_perf", "dfe_perf",
                  "jitter_perf") if float(getattr(pb, k, 0.0)) > 0}
        return dict(symbols=symbols, bit_errors=errs, nspui=int(pb.nspui),
                    pybert_time_shares=split)

    return _timed(run)


ONE = {
    "serdes": lambda n: one_serdes(n, rj=False),
    "serdes-rj": lambda n: one_serdes(n, rj=True),
    "serdes-waveform": lambda n: one_serdes(n, rj=False, engine="waveform"),
    "serdespy": one_serdespy,
    "pybert": one_pybert,
}
PEER_MODULE = {"serdespy": "serdespy", "pybert": "pybert"}


def available(name: str) -> str | None:
    """None when the tool can run, else the reason it cannot."""
    if not (CHANNELS / CHANNEL).exists():
        return f"channel file {CHANNELS / CHANNEL} not found (set SERDES_CHANNELS)"
    mod = PEER_MODULE.get(name)
    if mod is None:
        return None
    import importlib.util

    if importlib.util.find_spec(mod) is None:
        return f"{mod} is not installed (pip install {'pipbert' if mod == 'pybert' else mod})"
    return None


def measure(name: str, symbols: int, cpu: int | None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", name,
           "--symbols", str(symbols)]
    if cpu is not None and shutil.which("taskset"):
        cmd = ["taskset", "-c", str(cpu)] + cmd
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=str(ROOT))
    if out.returncode != 0:
        raise RuntimeError(f"{name}: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(pairs, cpu: int | None) -> list[dict]:
    """``pairs``: (peer, serdes variants, symbols, rounds). Best of ``rounds`` interleaved
    runs."""
    rows = []
    for peer, ours, symbols, rounds in pairs:
        why = available(peer)
        if why:
            rows.append(dict(peer=peer, skipped=why))
            continue
        best: dict[str, dict] = {}
        for _ in range(rounds):
            for name in (*ours, peer):
                r = measure(name, symbols, cpu)
                if name not in best or r["cpu_s"] < best[name]["cpu_s"]:
                    best[name] = r
        for r in best.values():
            r["symbols_per_s"] = r["symbols"] / r["cpu_s"]
        rows.append(dict(peer=peer, symbols=symbols, results=best,
                         ratio=best[ours[0]]["symbols_per_s"] / best[peer]["symbols_per_s"],
                         memory_ratio=best[peer]["run_peak_mb"] / best[ours[0]]["run_peak_mb"],
                         load=os.getloadavg()[0]))
    return rows


PAIRS = (("serdespy", ("serdes", "serdes-rj")),
         ("pybert", ("serdes", "serdes-waveform")))


def run_pairs(serdespy_symbols: int, pybert_symbols: int, rounds: int = 2,
              pybert_rounds: int = 1, cpu: int | None = 1,
              peers=("serdespy", "pybert")) -> list[dict]:
    n = {"serdespy": serdespy_symbols, "pybert": pybert_symbols}
    r = {"serdespy": rounds, "pybert": pybert_rounds}
    return compare([(p, ours, n[p], r[p]) for p, ours in PAIRS if p in peers], cpu)


def describe(rows) -> list[str]:
    lines = []
    for row in rows:
        if "skipped" in row:
            lines.append(f"{row['peer']}: skipped - {row['skipped']}")
            continue
        lines.append(f"{row['peer']} at {row['symbols']:.0e} symbols (load {row['load']:.1f}):")
        for name, r in row["results"].items():
            lines.append(f"  {name:16s} {r['symbols_per_s'] / 1e3:10.1f} k symbols/s CPU "
                         f"({r['cpu_s']:.2f} s CPU, {r['wall_s']:.2f} s wall), run peak "
                         f"{r['run_peak_mb']:.0f} MB, process peak {r['process_peak_mb']:.0f}"
                         f" MB, {r['bit_errors']} bit errors"
                         + (f", slicer SNR {r['snr_db']:.2f} dB" if "snr_db" in r else ""))
            if "pybert_time_shares" in r:
                lines.append("    PyBERT's own split of its time: " + ", ".join(
                    f"{k} {100 * v:.0f} %" for k, v in r["pybert_time_shares"].items()))
        peer = row["results"][row["peer"]]
        for name, r in row["results"].items():
            if name != row["peer"]:
                lines.append(f"  ratio {name} / {row['peer']}: "
                             f"{r['symbols_per_s'] / peer['symbols_per_s']:.1f}x symbols/s, "
                             f"{peer['run_peak_mb'] / r['run_peak_mb']:.1f}x less run memory")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--serdespy-symbols", type=float, default=1e6)
    ap.add_argument("--pybert-symbols", type=float, default=1e5)
    ap.add_argument("--rounds", type=int, default=2, help="rounds of the serdespy pair")
    ap.add_argument("--pybert-rounds", type=int, default=1,
                    help="rounds of the PyBERT pair (one PyBERT run takes ~40 s CPU)")
    ap.add_argument("--peers", nargs="+", default=["serdespy", "pybert"],
                    choices=["serdespy", "pybert"])
    ap.add_argument("--cpu", type=int, default=1, help="core for taskset (-1: no pinning)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", choices=sorted(ONE), help=argparse.SUPPRESS)
    ap.add_argument("--symbols", type=float, default=1e6, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(ONE[args.one](int(args.symbols))))
        return 0
    why = available("serdes")
    if why:
        print(f"peers: skipped - {why}")
        return 0
    rows = run_pairs(int(args.serdespy_symbols), int(args.pybert_symbols), args.rounds,
                     args.pybert_rounds, None if args.cpu < 0 else args.cpu, args.peers)
    print(json.dumps(rows, indent=1) if args.json else "\n".join(describe(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
