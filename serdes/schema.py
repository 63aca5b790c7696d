"""The configuration schema: every key of every section, declared once with its type,
default, allowed range and meaning (:data:`SCHEMA`), and the nested-table aliases.
:mod:`serdes.config` validates against it; ``serdes config --keys`` lists it."""

from __future__ import annotations

from serdes.config_field import Field

PATTERNS = ("prbs7", "prbs9", "prbs11", "prbs13", "prbs15", "prbs23", "prbs31",
            "qprbs13", "random")


F = Field
# the names of serdes.presets.PACKAGE_PRESETS (a test keeps them equal)
PACKAGE_PRESETS = ("none", "802.3ck-kr", "802.3ck-cr", "802.3ck-c2c", "802.3ck-c2m",
                   "802.3dj-kr")
SCHEMA: dict[str, dict[str, Field]] = {
    "link": {
        "symbol_rate_hz": F(float, 53.125e9, "symbol rate (Bd)", 1e8, 500e9),
        "modulation": F(str, "pam4", "line code", choices=("pam4", "nrz")),
        "pattern": F(str, "prbs31", "transmitted data pattern", choices=PATTERNS),
        "precoding": F(bool, "auto", "1/(1+D) mod M precoding at the TX, decoded at the RX; "
                       "'auto': on for a DFE receiver whose first MMSE DFE tap is at least "
                       "0.55 (the receiver asks for it, as in 802.3ck link training)",
                       choices=("auto",)),
        "symbols": F(int, 4_000_000, "symbols to simulate at most", 1_000, 10**13),
        "target_errors": F(int, 1000, "stop once this many bit errors are counted (0: never)",
                           0, 10**12),
        "seed": F(int, 1, "seed of every random stream", 0, 2**63 - 1),
        "samples_per_ui": F(int, 32, "oversampling of the fine time grid", 8, 256),
        "pulse_ui": F(int, 64, "pulse response kept (UI); longer where a reflection "
                     "reaches past it (up to window_ui / 2)", 8, 4096),
        "window_ui": F(int, 1024, "FFT window of the linear model (UI); doubled while the "
                      "response reaches past it (up to 16384)", 64, 16384),
        "chunk_symbols": F(int, 1 << 16, "symbols per streamed chunk (the counts do "
                           "not depend on it, except with adc_cal: its skew loop trims "
                           "once per chunk)", 256, 1 << 24),
    },
    "tx": {
        "ffe": F(list, [0.0, 0.0, -0.05, 0.9, -0.05],
                 "TX FFE taps c(-3), c(-2), c(-1), c(0), c(1); sum of |c| at most 1",
                 length=(1, 16)),
        "main": F(int, 3, "index of the main tap c(0) in tx.ffe", 0, 15),
        "swing_v": F(float, 0.4, "peak differential amplitude: outer PAM levels at +-swing_v",
                     1e-3, 5.0),
        "rise_time_s": F(float, 6e-12, "20-80% rise time of the driver (Gaussian edge)",
                         0.0, 1e-9),
        "snr_db": F(float, 33.0, "TX signal-to-noise ratio SNR_TX", 0.0, 200.0),
        "rlm": F(float, 1.0, "PAM4 ratio of level mismatch (inner levels at +-rlm/3)", 0.5, 1.0),
    },
    "channel": {
        "model": F(str, "loss", "channel model", choices=("ideal", "loss", "touchstone")),
        "loss_db": F(float, 25.0, "loss model: insertion loss at Nyquist (dB)", 0.0, 60.0),
        "skin_fraction": F(float, 0.24, "loss model: share of the Nyquist loss that is skin "
                           "effect (sqrt f), the rest dielectric (f); 0.24 is fitted to the "
                           "IEEE 802.3ck thru channels", 0.0, 1.0),
        "file": F(str, "", "touchstone model: path of a .s4p or .s2p file"),
        "ports": F(str, "12,34", "touchstone port convention: thru pairs",
                   choices=("12,34", "13,24")),
    },
    "ctle": {
        "model": F(str, "ieee", "CTLE form", choices=("ieee", "zpk", "none")),
        "auto": F(bool, True, "IEEE CTLE: choose g_DC (-20..0 dB) and g_DC2 (-6..0 dB), 1 dB "
                  "steps, for the best MMSE-predicted slicer SNR of the receiver; "
                  "g_dc_db and g_dc2_db apply only when false"),
        "g_dc_db": F(float, -8.0, "IEEE CTLE DC gain g_DC (dB; with ctle.auto = false)",
                     -20.0, 0.0),
        "g_dc2_db": F(float, 0.0, "IEEE CTLE low-frequency gain g_DC2 (dB; with "
                      "ctle.auto = false)", -6.0, 0.0),
        "f_z_hz": F(float, 0.0, "zero (0: f_b/2.5)", 0.0, 1e12),
        "f_p1_hz": F(float, 0.0, "first pole (0: f_b/2.5)", 0.0, 1e12),
        "f_p2_hz": F(float, 0.0, "second pole (0: f_b)", 0.0, 1e12),
        "f_lf_hz": F(float, 0.0, "low-frequency pole/zero (0: f_b/80)", 0.0, 1e12),
        "zeros_hz": F(list, [], "zpk model: zeros (Hz, s/2pi; real, <= 0)", length=(0, 16)),
        "poles_hz": F(list, [], "zpk model: poles (Hz, s/2pi; real, negative)", length=(0, 16)),
        "gain": F(float, 1.0, "zpk model: gain", 1e-6, 1e6),
    },
    "afe": {
        "model": F(str, "shunt", "RX front-end filter: the shunt-peaked AFE, the COM reference "
                   "4th-order Butterworth at f_r x symbol rate, or both in series",
                   choices=("shunt", "butterworth", "both")),
        "f_r": F(float, 0.75, "Butterworth -3 dB frequency in units of the symbol rate "
                 "(802.3ck: 0.75)", 0.05, 4.0),
        "peaking_m": F(float, 2.0, "shunt-peaking factor m = R^2 C / L (0: no inductor)",
                       0.0, 10.0),
        "bandwidth_hz": F(float, 40e9, "-3 dB bandwidth of the peaked AFE stage (0: no limit)",
                          0.0, 1e12),
    },
    "package": {
        # IEEE 802.3 Annex 93A device packages at both ends of the channel (serdes.presets)
        "preset": F(str, "none", "TX and RX device package model (serdes/presets.py); none: "
                    "ideal pads", choices=PACKAGE_PRESETS),
        "c_d_nf": F(list, [], "die capacitance per ladder section, single-ended (nF; "
                    "empty: the preset's)", length=(0, 8)),
        "l_s_nh": F(list, [], "die ladder series inductance per section (nH; empty: the "
                    "preset's)", length=(0, 8)),
        "c_b_nf": F(float, -1.0, "bump capacitance (nF; -1: the preset's)", -1.0, 0.01),
        "c_p_nf": F(float, -1.0, "ball/pad capacitance (nF; -1: the preset's)", -1.0, 0.01),
        "r_d_ohm": F(float, -1.0, "die termination, single-ended (ohm; -1: the preset's)",
                     -1.0, 1000.0),
        "z_c_ohm": F(list, [], "package line impedances, differential, per segment (ohm; "
                     "empty: the preset's)", length=(0, 4)),
        "z_p_tx_mm": F(float, -1.0, "TX package main line length (mm; -1: the preset's)",
                       -1.0, 1000.0),
        "z_p_rx_mm": F(float, -1.0, "RX package main line length (mm; -1: the preset's)",
                       -1.0, 1000.0),
        "z_p_next_mm": F(float, -1.0, "TX package main line length of a NEXT aggressor (the "
                         "local transmitter, on the victim receiver's device; mm; -1: as "
                         "z_p_rx_mm)", -1.0, 1000.0),
    },
    "crosstalk": {
        # defaults of the [[aggressor]] tables (serdes/crosstalk.py); sweepable
        "a_fe_v": F(float, -1.0, "swing of FEXT aggressors, IEEE A_fe (V, outer levels at "
                    "+-a_fe_v; -1: tx.swing_v)", -1.0, 5.0),
        "a_ne_v": F(float, -1.0, "swing of NEXT aggressors, IEEE A_ne (V; -1: tx.swing_v)",
                    -1.0, 5.0),
        "icn_f1_hz": F(float, 0.05e9, "ICN: lowest frequency of the integral (Hz)", 0.0, 1e11),
        "icn_f2_hz": F(float, 0.0, "ICN: highest frequency of the integral (Hz; 0: the "
                       "symbol rate)", 0.0, 1e12),
    },
    "noise": {
        "eta0_v2_per_ghz": F(float, 8.2e-9, "RX input one-sided noise PSD (V^2/GHz)", 0.0, 1e-3),
        "rj_ui": F(float, 0.01, "random sampling jitter (rms UI)", 0.0, 0.2),
        "sj_ui": F(float, 0.0, "sinusoidal sampling (RX) jitter amplitude (UI); with "
                   "cdr.mode = off applied untracked, so even slow SJ moves every sample "
                   "(0.1 UI at 1 MHz takes the default link from no error in 4 M symbols "
                   "to BER 1e-6); a CDR follows its slow part", 0.0, 2.0),
        "sj_hz": F(float, 1e6, "sinusoidal sampling jitter frequency; below "
                   "link.symbol_rate_hz / 2 and not a fraction p/q (q < 32) of the symbol "
                   "rate (it would alias)", 0.0, 1e11),
        "dd_ui": F(float, 0.0, "dual-Dirac jitter: sampling instants moved by +-dd_ui UI, "
                   "equiprobable, the sign held for 4096 UI", 0.0, 0.5),
    },
    "tx_jitter": {
        # jitter of the transmitted edges: it goes through the channel (serdes/txjitter.py)
        "rj_ui": F(float, 0.0, "TX random jitter (rms UI, per transmitted edge)", 0.0, 0.2),
        "sj_ui": F(float, 0.0, "TX sinusoidal jitter amplitude (UI, peak)", 0.0, 1000.0),
        "sj_hz": F(float, 1e6, "TX sinusoidal jitter frequency (below symbol_rate / 4)",
                   0.0, 1e11),
        "dcd_ui": F(float, 0.0, "duty-cycle distortion / even-odd jitter, peak to peak: "
                    "even symbols +dcd/2, odd -dcd/2 (UI)", 0.0, 0.5),
        "buj_ui": F(float, 0.0, "bounded uncorrelated jitter: uniform in +-buj_ui per "
                    "symbol (UI)", 0.0, 0.5),
        "ppm": F(float, 0.0, "TX clock minus RX clock frequency (ppm; > 0: TX faster); "
                 "without a CDR the phase runs away", -1000.0, 1000.0),
    },
    "cdr": {
        # clock recovery: serdes/cdr.py (loop model), serdes/engines/cdr.py (front end)
        "mode": F(str, "off", "clock recovery: off (fixed sampling phase at the pulse "
                  "peak), mm (Mueller-Muller baud-rate phase detector on ADC samples and "
                  "slicer decisions), ssmm (its sign), bb (2x sampling: bang-bang "
                  "Alexander detector on the edge sample half a UI before each data "
                  "sample)", choices=("off", "mm", "ssmm", "bb")),
        "bandwidth_hz": F(float, 4e6, "-3 dB jitter-transfer bandwidth of the loop; with "
                          "damping it sets the PI gains (kp, ki = 0)", 1e3, 1e9),
        "damping": F(float, 0.7, "loop damping factor zeta", 0.1, 10.0),
        "kp": F(float, 0.0, "proportional gain (UI per unit PD output); > 0: kp and ki "
                "are used instead of bandwidth_hz/damping (ki = 0: first-order loop)",
                0.0, 1.0),
        "ki": F(float, 0.0, "integral gain (UI per UI per unit PD output), with kp > 0",
                0.0, 1.0),
        "latency_ui": F(int, 32, "loop latency: a PD output moves the phase this many UI "
                        "later", 0, 4096),
        "pi_steps": F(int, 64, "phase interpolator steps per UI", 2, 4096),
        "lock": F(str, "peak", "lock point: peak (MM output biased so the loop locks at "
                  "the pulse peak, where the equalizer is designed) or mm (MM zero: "
                  "pre-cursor = post-cursor; with mode bb the bang-bang zero)",
                  choices=("peak", "mm")),
        "initial_phase_ui": F(float, 0.0, "sampling phase at the start, relative to the "
                              "pulse peak (UI)", -0.5, 0.5),
        "acquire_gear": F(float, 4.0, "acquisition: the loop bandwidth is this many times "
                          "larger (kp x g, ki x g^2) for the first acquire_symbols (gear "
                          "shifting; 1: off); the default pulls in 200 ppm without a "
                          "cycle slip", 1.0, 64.0),
        "acquire_symbols": F(int, 65536, "symbols at the acquisition bandwidth", 0, 10**9),
        "warmup_symbols": F(int, 131072, "symbols left uncounted while the loop locks (the "
                            "default loop pulls in 200 ppm within about 80000)",
                            0, 10**9),
    },
    "adc": {
        "bits": F(int, 7, "ADC resolution (0: no quantizer; adc.enob noise still applies)", 0, 16),
        "fullscale_v": F(float, 0.5, "ADC full-scale range, peak to peak (V)", 1e-3, 10.0),
        "enob": F(float, 6.0, "effective bits; extra noise reaches it (0: no ENOB noise); "
                  "6, as in published 7-bit 112G ADC-DSP receivers", 0.0, 16.0),
        "clip_sigma": F(float, 4.0, "VGA target: ADC full scale = +-clip_sigma x rms input",
                        1.0, 20.0),
        # time-interleaving (serdes.tiadc): lane l takes samples l, l + lanes, ...
        "lanes": F(int, 1, "time-interleaved sub-ADCs (1: one converter)", 1, 1024),
        "offset_rms_v": F(float, 0.0, "lane offset mismatch, rms (V; drawn, centred)", 0.0, 1.0),
        "gain_rms": F(float, 0.0, "lane gain mismatch, rms (fraction; drawn, centred)", 0.0, 0.5),
        "skew_rms_s": F(float, 0.0, "lane timing skew, rms (s; drawn, centred)", 0.0, 1e-10),
        "bw_hz": F(float, 0.0, "nominal track-and-hold bandwidth, first order (Hz; 0: none); "
                   "an RX stage the equalizer is designed for", 0.0, 1e12),
        "bw_rms_rel": F(float, 0.0, "lane T/H bandwidth mismatch, rms relative to adc.bw_hz "
                        "(drawn, centred)", 0.0, 0.5),
        "aperture_jitter_s": F(float, 0.0, "sampler aperture jitter plus ADC clock random "
                               "jitter, rms (s), independent of noise.rj_ui", 0.0, 1e-11),
        "mismatch_seed": F(int, 1, "seed of the drawn lane mismatch (one chip)", 0, 2**63 - 1),
        "offsets_v": F(list, [], "lane offsets given per lane (V; overrides the draw)",
                       length=(0, 1024)),
        "gains": F(list, [], "lane gains given per lane (1: ideal; overrides the draw)",
                   length=(0, 1024)),
        "skews_s": F(list, [], "lane skews given per lane (s; overrides the draw)",
                     length=(0, 1024)),
    },
    "adc_cal": {
        # background calibration of the interleaved ADC's lanes (serdes.dsp.ti_cal)
        "enabled": F(bool, False, "blind background calibration of lane offset, gain and "
                     "skew, running on the data (needs adc.lanes >= 2)"),
        "mu_offset": F(float, 5e-4, "offset LMS step (per lane sample)", 0.0, 0.1),
        "mu_gain": F(float, 5e-4, "gain LMS step (normalised)", 0.0, 0.1),
        "skew_gain": F(float, 1.0, "fraction of the detected lane skew trimmed in the "
                       "lanes' clock delay lines after each chunk", 0.0, 1.0),
        "mu_average": F(float, 1e-3, "step of the running power and slope averages",
                        1e-7, 0.5),
        "deriv_taps": F(int, 8, "differentiator taps each side for the skew detector's "
                        "slope estimate R'(T)", 1, 64),
        "settle_symbols": F(int, 0, "decisions not counted while it converges; the "
                            "steps and the trim gain shift down 8x halfway (0: 75,000 per "
                            "lane, as each lane sees 1/lanes of the samples)", 0, 10**9),
    },
    "supply": {
        # the rail of the ADC clock and front end through an LDO (serdes.tiadc.supply)
        "ripple_mv": F(list, [], "ripple tones at the regulator input: amplitudes (mV)",
                       length=(0, 16)),
        "ripple_hz": F(list, [], "ripple tones: frequencies (Hz)", length=(0, 16)),
        "noise_uv_per_rthz": F(float, 0.0, "broadband supply noise at the regulator input, "
                               "flat one-sided (uV/rtHz)", 0.0, 1e6),
        "noise_bw_hz": F(float, 1e9, "broadband supply noise bandwidth (Hz)", 1.0, 1e12),
        "psrr_db": F(float, 40.0, "regulator PSRR at low frequency (dB)", 0.0, 200.0),
        "psrr_pole_hz": F(float, 1e6, "regulator PSRR corner: above it PSRR falls "
                          "20 dB/decade (Hz)", 1.0, 1e12),
        "delay_ps_per_mv": F(float, 0.0, "sampling-clock delay sensitivity to the regulated "
                             "rail (ps/mV)", 0.0, 100.0),
        "gain_pct_per_mv": F(float, 0.0, "front-end gain sensitivity to the regulated rail "
                             "(%/mV)", 0.0, 10.0),
    },
    "ffe": {
        "taps": F(int, 24, "RX FFE taps", 1, 256),
        "pre": F(int, 4, "RX FFE pre-cursor taps", 0, 255),
    },
    "dfe": {
        "taps": F(int, 1, "DFE taps", 0, 64),
        "limit": F(float, 1.0, "largest |DFE tap| relative to the cursor", 0.0, 10.0),
    },
    "eq": {
        "mode": F(str, "mmse", "tap computation", choices=("mmse", "lms")),
        "mu": F(float, 1e-2, "normalised LMS step size", 1e-7, 0.5),
        "train_symbols": F(int, 200_000, "LMS training symbols (known data, not counted)",
                           0, 10**9),
        "detector": F(str, "dfe", "after the FFE (and RC): DFE + slicer, or noise "
                      "whitening + MLSE (Viterbi)", choices=("dfe", "mlse")),
    },
    "reflections": {
        # a T-line cascade in series with the channel model (serdes.channel.reflections)
        "segment_lengths_mm": F(list, [], "cascaded line segments: lengths (mm)",
                                length=(0, 32)),
        "segment_z0_ohm": F(list, [], "segments: characteristic impedances (ohm)",
                            length=(0, 32)),
        "segment_eps_r": F(list, [4.0], "segments: effective permittivity (one value: all)",
                           length=(1, 32)),
        "segment_loss_db_per_mm": F(list, [0.0], "segments: loss at loss_ref_hz (dB/mm; "
                                    "one value: all)", length=(1, 32)),
        "stub_positions": F(list, [], "open stubs (vias): junction of each, 0 = before the "
                            "first segment, n = after segment n", length=(0, 16)),
        "stub_lengths_mm": F(list, [], "stubs: lengths (mm)", length=(0, 16)),
        "stub_z0_ohm": F(list, [50.0], "stubs: characteristic impedances (ohm; one value: all)",
                         length=(1, 16)),
        "stub_eps_r": F(list, [4.0], "stubs: effective permittivity (one value: all)",
                        length=(1, 16)),
        "stub_loss_db_per_mm": F(list, [0.0], "stubs: loss at loss_ref_hz (dB/mm; one value: "
                                 "all)", length=(1, 16)),
        "z_ref_ohm": F(float, 50.0, "source and load impedance of the cascade", 1.0, 1000.0),
        "loss_ref_hz": F(float, 26.5625e9, "frequency of the segment/stub dB/mm values",
                         1e6, 1e12),
        "echo_delay_ui": F(float, 0.0, "simple echo: delay after the main pulse (UI; 0: none)",
                           0.0, 2000.0),
        "echo_db": F(float, -20.0, "simple echo: amplitude relative to the main pulse (dB)",
                     -100.0, -0.1),
        "echo_polarity": F(str, "positive", "simple echo: sign",
                           choices=("positive", "negative")),
    },
    "rc": {
        "taps": F(int, 0, "reflection canceller: floating taps (0: off)", 0, 64),
        "span_ui": F(int, 200, "latest echo the canceller reaches (UI after the cursor)",
                     2, 4096),
        "mode": F(str, "pulse", "tap placement: from the equalized pulse response (pulse) "
                  "or by error/decision correlation, then LMS (adaptive)",
                  choices=("pulse", "adaptive")),
        "mu": F(float, 2e-3, "normalised LMS step of the canceller taps (0: frozen)", 0.0, 0.5),
        "search_symbols": F(int, 16384, "adaptive mode: symbols of error/decision "
                            "correlation before the taps are placed", 256, 10**8),
    },
    "mlse": {
        "memory": F(int, 1, "channel memory L of the Viterbi target (4**L PAM4 states)", 1, 3),
        "whitening": F(str, "target", "noise whitening: an MMSE FFE for the best monic "
                       "1 + g1 D + .. target (target), or a linear MMSE FFE followed by the "
                       "order-L linear noise predictor (predictor)",
                       choices=("target", "predictor")),
        "traceback": F(int, 24, "decision delay of the Viterbi detector (symbols)", 1, 32),
    },
    "fec": {
        "mode": F(str, "off", "forward error correction: off, or kp4 (RS(544,514) over "
                  "GF(2^10), 802.3 Clause 91): the payload is encoded, sent and decoded, and "
                  "the run reports FLR and post-FEC BER", choices=("off", "kp4")),
        "interleave": F(int, 2, "codewords interleaved on 10-bit symbols: 1 (Clause 91, "
                        "one codeword after another) or 2 (Clause 119/161 2-way interleave)",
                        1, 2),
        "target_post_fec_ber": F(float, 1e-13, "the PHY's post-FEC BER objective the report "
                                 "measures its margin against (1e-13: the MAC/PLS BER "
                                 "objective of the 802.3bs/cd/ck PHYs)", 1e-30, 1e-3),
    },
}


# the keys of one [[aggressor]] table (a TOML array of tables, any number of them);
# -1 / empty: the default named in the text
AGGRESSOR: dict[str, Field] = {
    "kind": F(str, "fext", "fext (a far-end transmitter) or next (the local transmitter)",
              choices=("fext", "next")),
    "model": F(str, "file", "coupling path: a Touchstone file (uses the thru's port layout) "
               "or a scaled, delayed copy of the thru (for tests)", choices=("file", "copy")),
    "file": F(str, "", "file model: path of the aggressor's .s4p (relative to the TOML file)"),
    "ports": F(str, "", "file model: port convention (empty: channel.ports)",
               choices=("", "12,34", "13,24")),
    "coupling_db": F(float, -30.0, "copy model: coupling relative to the thru (dB)",
                     -200.0, 0.0),
    "delay_ui": F(float, 0.0, "copy model: extra delay after the thru (UI)", 0.0, 256.0),
    "swing_v": F(float, -1.0, "aggressor swing (V; -1: crosstalk.a_fe_v or a_ne_v)",
                 -1.0, 5.0),
    "rise_time_s": F(float, -1.0, "20-80% rise time (s; -1: tx.rise_time_s)", -1.0, 1e-9),
    "ffe": F(list, [], "TX FFE taps (empty: tx.ffe and tx.main)", length=(0, 16)),
    "main": F(int, -1, "index of the main tap in ffe (-1: tx.main)", -1, 15),
    "pattern": F(str, "random", "data pattern (its own stream)", choices=PATTERNS),
    "seed": F(int, -1, "seed of its data (-1: from link.seed and its position)", -1,
              2**63 - 1),
    "phase_ui": F(float, -1.0, "symbol phase against the victim's (UI in [0, 1); -1: "
                  "random, fixed, from the seed)", -1.0, 0.999999),
    "ppm": F(float, 0.0, "frequency offset against the victim (ppm): the phase walks",
             -1000.0, 1000.0),
    # its own clock's TX jitter, independent of the victim's (its own seed's streams)
    "tx_rj_ui": F(float, -1.0, "its TX random jitter (rms UI; -1: tx_jitter.rj_ui)", -1.0, 0.2),
    "tx_dcd_ui": F(float, -1.0, "its TX duty-cycle distortion (pk-pk UI; -1: "
                   "tx_jitter.dcd_ui)", -1.0, 0.5),
    "tx_buj_ui": F(float, -1.0, "its TX bounded uncorrelated jitter (+-UI; -1: "
                   "tx_jitter.buj_ui)", -1.0, 0.5),
    "tx_sj_ui": F(float, -1.0, "its TX sinusoidal jitter (peak UI, first order, its own "
                  "start phase; -1: tx_jitter.sj_ui)", -1.0, 0.5),
    "tx_sj_hz": F(float, -1.0, "its TX SJ frequency (Hz, below symbol_rate / 4; -1: "
                  "tx_jitter.sj_hz)", -1.0, 1e11),
}

# nested TOML tables accepted as another name of a section: [channel.reflections]
ALIASES = {"channel.reflections": "reflections"}
