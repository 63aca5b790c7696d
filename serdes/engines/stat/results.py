"""What the statistical engine returns: error rates at one phase, bathtubs, the
statistical eye and eye openings (plain data; the computations are in
:mod:`serdes.engines.stat.engine` and :mod:`serdes.engines.stat.views`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_TARGETS = (1e-6, 1e-12, 1e-15)
MAP_FLOOR = 1e-30


@dataclass
class StatBer:
    """Error rates at one sampling phase, averaged over the jitter distribution."""

    offset_ui: float
    ber: float
    ser: float
    ber_per_eye: np.ndarray
    eye_names: tuple
    sndr_db: float
    sigma: np.ndarray        # Gaussian std per level (at the centre of the jitter)
    isi_rms: float
    rel_error: float = float("nan")  # estimate from a grid twice as coarse

    def to_dict(self) -> dict:
        return {"offset_ui": self.offset_ui, "ber": self.ber, "ser": self.ser,
                "ber_per_eye": {n: float(v) for n, v in zip(self.eye_names, self.ber_per_eye)},
                "sndr_db": self.sndr_db, "noise_sigma": [float(s) for s in self.sigma],
                "isi_rms": self.isi_rms, "grid_rel_error": self.rel_error}


@dataclass
class Bathtub:
    x: np.ndarray             # phase offsets (UI) or threshold offsets (normalised)
    ber_per_eye: np.ndarray   # (n_eyes, n)
    ber: np.ndarray | None    # total BER (horizontal bathtub) or None
    eye_names: tuple
    kind: str                 # "horizontal" or "vertical"
    ui_s: float
    volts_per_unit: float


@dataclass
class StatEye:
    """Statistical eye: the eye map over sampling phase x slicer voltage."""

    phases_ui: np.ndarray     # (n_phases,) offsets from the nominal phase
    y: np.ndarray             # (n_bins,) slicer voltages (normalised)
    ber: np.ndarray           # (n_phases, n_bins)
    means: np.ndarray         # (n_phases, M) level positions f_d(phi) a_i
    thresholds: np.ndarray
    eye_names: tuple
    ui_s: float
    volts_per_unit: float     # ADC-input volts of one normalised unit (the main cursor)
    elapsed_s: float = 0.0


@dataclass
class EyeOpening:
    """Height and width of each eye at each target BER (statistical)."""

    targets: tuple
    eye_names: tuple
    height: np.ndarray        # (n_targets, n_eyes), normalised units
    width_ui: np.ndarray      # (n_targets, n_eyes)
    volts_per_unit: float
    ui_s: float
    offset_ui: float = 0.0

    def to_dict(self) -> dict:
        eyes = {}
        for e, name in enumerate(self.eye_names):
            eyes[name] = {
                "height": [float(v) for v in self.height[:, e]],
                "height_mv": [float(v * self.volts_per_unit * 1e3) for v in self.height[:, e]],
                "width_ui": [float(v) for v in self.width_ui[:, e]],
                "width_ps": [float(v * self.ui_s * 1e12) for v in self.width_ui[:, e]],
            }
        veo = self.height.min(axis=1)
        return {"targets": list(self.targets), "phase_ui": self.offset_ui, "eyes": eyes,
                "vertical_eye_opening": [float(v) for v in veo],
                "vertical_eye_opening_mv": [float(v * self.volts_per_unit * 1e3) for v in veo]}
