"""Reflections: cascaded transmission-line segments with impedance steps and open via
stubs (ABCD matrices), and a simple echo model for studies.

Line segments
-------------
A segment of length ``l`` and (real) characteristic impedance ``Z0`` has the ABCD matrix

    [[cosh(g l),        Z0 sinh(g l)],
     [sinh(g l) / Z0,   cosh(g l)   ]]

with the propagation constant per mm

    g(f) = k * (a1 sqrt(f)(1 + j) + a2 (f - j (2/pi) f ln f)) + j 2 pi f sqrt(eps_r) / c,

f in GHz in the loss terms: the causal Annex 93A loss shape of :mod:`serdes.channel.loss`
(skin and dielectric loss with their Kramers-Kronig phase), scaled by ``k`` so that the
loss at ``loss_ref_hz`` is ``loss_db_per_mm``, and the delay of a TEM wave in a
dielectric of effective permittivity ``eps_r``. ``Z0`` is taken real and constant (the
low-loss approximation; the small imaginary part of a lossy line's impedance at low
frequencies is neglected).

Stubs
-----
An open stub (a via stub) of length ``l_s`` hangs at a junction between segments as a
shunt admittance ``Y = tanh(g_s l_s) / Z_s``: ``[[1, 0], [Y, 1]]``. Lossless, it shorts
the line where ``g_s l_s = j pi/2``, i.e. at the quarter-wave frequency
``f = c / (4 l_s sqrt(eps_r))`` (the notch).

S-parameters
------------
Source and load are ``z_ref_ohm`` (real). For the cascade ``[[A, B], [C, D]]``:

    S21 = 2 / (A + B/Zr + C Zr + D),   S11 = (A + B/Zr - C Zr - D) / (A + B/Zr + C Zr + D).

To stay finite on long lossy lines up to the top of the FFT grid (where cosh and sinh
overflow), each line matrix is kept as ``exp(g l) * M`` with
``M = [[1 + E, Z0 (1 - E)], [(1 - E)/Z0, 1 + E]] / 2``, ``E = exp(-2 g l)``, and the
factors ``exp(-sum g l)`` are applied to S21 at the end.

Closed forms the tests check: a step from ``Z1`` to ``Z2`` reflects
``Gamma = (Z2 - Z1)/(Z2 + Z1)``; a segment of ``Z2`` between ``Zr`` lines passes the main
pulse with ``1 - Gamma^2`` and an echo ``Gamma^2`` times the main pulse, ``2 l sqrt(eps_r)/c``
later.

Echo
----
For studies, ``H(f) = 1 + s 10^(echo_db/20) exp(-j 2 pi f D T)``: a copy of the pulse
``D`` UI later (fractional allowed), ``s = +-1``.

Cascading with the rest of the channel: :class:`Reflections` is a transfer function that
the link multiplies with its channel model (loss line or Touchstone file). That is
exact for a matched channel model (the Touchstone file's 50 ohm ports seeing ``Zr``);
multiple reflections between the cascade and a mismatched file are not modelled.

Why not scikit-rf's ``skrf.media``
----------------------------------
The same cascade can be written with ``skrf.media.DefinedGammaZ0`` (``z0_port = Zr``,
``z0 = Z0``, ``gamma`` = :func:`propagation_constant` per metre): ``line`` for the
segments, ``shunt_delay_open`` for the stubs, ``**`` to cascade.  The test
``test_cascade_equals_scikit_rf_media`` checks that both agree to 1e-9 above 0 Hz (at
0 Hz scikit-rf moves the frequency off zero internally and is 3e-8 off the exact 1).
We keep the ABCD product here because it is on the hot path of every link build:
for the cascade of three segments (20/8/20 mm, 50/40/50 ohm, 0.02 dB/mm) and a 1.2 mm
stub on a link grid of 16385 frequencies (0..850 GHz) it takes 19 ms, scikit-rf 430 ms
(22x; it builds a Network per element, renormalizes each and cascades 2-port S
matrices through a general connect), and ``import skrf`` adds 0.25-0.35 s to a CLI run
that otherwise never imports it.  The propagation constant (causal Annex 93A loss) is
ours in both cases: scikit-rf has no such media.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from serdes.channel.loss import A1_SQRT_NS_PER_MM, A2_NS_PER_MM, _gamma, _loss_db_per_mm
from serdes.errors import ConfigError
from serdes.validate import float_in, whole_number

C0_M_PER_S = 299_792_458.0

__all__ = ["Segment", "Stub", "Reflections", "propagation_constant", "s_parameters",
           "echo_response", "quarter_wave_hz", "reflection_coefficient", "C0_M_PER_S"]


@dataclass(frozen=True)
class Segment:
    """A transmission-line segment."""

    length_mm: float
    z0_ohm: float
    eps_r: float = 4.0
    loss_db_per_mm: float = 0.0  # at the cascade's loss_ref_hz

    def __post_init__(self):
        _check_line(self, "segment")


@dataclass(frozen=True)
class Stub:
    """An open stub at junction ``position`` (0: before the first segment, n: after the
    n-th)."""

    position: int
    length_mm: float
    z0_ohm: float = 50.0
    eps_r: float = 4.0
    loss_db_per_mm: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "position", whole_number("stub position", self.position,
                                                          0, 1 << 30))
        _check_line(self, "stub")


def _check_line(line, what: str) -> None:
    """One ConfigError unless a line's values are physical: length >= 0 mm, Z0 > 0 ohm,
    eps_r >= 1, loss >= 0 dB/mm, each finite (the config's ranges hold them; a line built
    in Python had a negative length run as a line, and Z0 = 0 end in a non-finite
    response and NumPy warnings)."""
    for name, bound, allowed in (("length_mm", dict(at_least=0.0), ">= 0 mm"),
                                 ("z0_ohm", dict(above=0.0), "> 0 ohm"),
                                 ("eps_r", dict(at_least=1.0), ">= 1"),
                                 ("loss_db_per_mm", dict(at_least=0.0), ">= 0 dB/mm")):
        object.__setattr__(line, name, float_in(f"{what} {name}", getattr(line, name),
                                                f"a finite value {allowed}", **bound))


def reflection_coefficient(z1_ohm: float, z2_ohm: float) -> float:
    """Gamma of a step from impedance z1 to z2: (z2 - z1) / (z2 + z1)."""
    return (z2_ohm - z1_ohm) / (z2_ohm + z1_ohm)


def quarter_wave_hz(length_mm: float, eps_r: float) -> float:
    """Notch frequency of an open stub: c / (4 l sqrt(eps_r))."""
    return C0_M_PER_S / (4.0 * length_mm * 1e-3 * np.sqrt(eps_r))


def propagation_constant(f_hz, *, eps_r: float, loss_db_per_mm: float,
                         loss_ref_hz: float) -> np.ndarray:
    """g(f) per mm (nepers + j radians): the scaled Annex 93A loss and the TEM delay."""
    f = np.asarray(f_hz, dtype=np.float64)
    if loss_db_per_mm > 0:
        k = loss_db_per_mm / _loss_db_per_mm(loss_ref_hz, 0.0, A1_SQRT_NS_PER_MM, A2_NS_PER_MM)
        loss = _gamma(f, 0.0, k * A1_SQRT_NS_PER_MM, k * A2_NS_PER_MM, 0.0, False)
    else:
        loss = np.zeros(f.shape, dtype=np.complex128)
    return loss + 1j * 2.0 * np.pi * f * np.sqrt(eps_r) / (C0_M_PER_S * 1e3)


def s_parameters(f_hz, segments, stubs=(), *, z_ref_ohm: float = 50.0,
                 loss_ref_hz: float = 26.5625e9) -> tuple[np.ndarray, np.ndarray]:
    """(S11, S21) of the cascade of ``segments`` with ``stubs`` at their junctions,
    between source and load impedances ``z_ref_ohm``."""
    f = np.asarray(f_hz, dtype=np.float64)
    n = len(segments)
    for s in stubs:
        if not 0 <= s.position <= n:
            raise ConfigError(f"stub position {s.position} is not a junction 0..{n}")
    one = np.ones(f.shape, dtype=np.complex128)
    zero = np.zeros(f.shape, dtype=np.complex128)
    a, b, c, d = one, zero, zero, one  # running product (scaled)
    exponent = zero                       # sum of g l of the lines (the scale)

    def mul(m):
        nonlocal a, b, c, d
        a, b, c, d = (a * m[0] + b * m[2], a * m[1] + b * m[3],
                      c * m[0] + d * m[2], c * m[1] + d * m[3])

    for j in range(n + 1):
        for s in stubs:
            if s.position == j and s.length_mm > 0:
                g = propagation_constant(f, eps_r=s.eps_r, loss_db_per_mm=s.loss_db_per_mm,
                                         loss_ref_hz=loss_ref_hz)
                y = np.tanh(g * s.length_mm) / s.z0_ohm
                mul((one, zero, y, one))
        if j < n:
            seg = segments[j]
            gl = propagation_constant(f, eps_r=seg.eps_r, loss_db_per_mm=seg.loss_db_per_mm,
                                      loss_ref_hz=loss_ref_hz) * seg.length_mm
            e = np.exp(-2.0 * gl)
            z0 = seg.z0_ohm
            mul((0.5 * (1 + e), 0.5 * z0 * (1 - e), 0.5 * (1 - e) / z0, 0.5 * (1 + e)))
            exponent = exponent + gl
    zr = z_ref_ohm
    den = a + b / zr + c * zr + d
    s11 = (a + b / zr - c * zr - d) / den
    s21 = 2.0 * np.exp(-exponent) / den
    return s11, s21


def echo_response(f_hz, *, delay_s: float, amplitude: float) -> np.ndarray:
    """1 + amplitude * exp(-j 2 pi f delay): the pulse plus one delayed copy."""
    f = np.asarray(f_hz, dtype=np.float64)
    return 1.0 + amplitude * np.exp(-2j * np.pi * f * delay_s)


class Reflections:
    """Channel stage: a T-line cascade (segments, open stubs) and/or a simple echo, in
    series with the channel model (:func:`serdes.build.build_reflections` maps the
    [reflections] config section onto it)."""

    def __init__(self, *, segments=(), stubs=(), z_ref_ohm: float = 50.0,
                 loss_ref_hz: float = 26.5625e9, echo_delay_s: float = 0.0,
                 echo_amplitude: float = 0.0, ui_s: float | None = None):
        self.segments = tuple(segments)
        self.stubs = tuple(stubs)
        self.z_ref_ohm = float_in("z_ref_ohm", z_ref_ohm, "a finite impedance > 0 ohm",
                                  above=0.0)
        self.loss_ref_hz = float(loss_ref_hz)
        self.echo_delay_s = float(echo_delay_s)
        self.echo_amplitude = float(echo_amplitude)
        self.ui_s = ui_s  # for describe(): echo delays in UI

    @property
    def active(self) -> bool:
        return bool(self.segments or self.stubs or self.echo_amplitude)

    def s_parameters(self, f_hz) -> tuple[np.ndarray, np.ndarray]:
        """(S11, S21) of the T-line cascade alone (no echo)."""
        return s_parameters(f_hz, self.segments, self.stubs, z_ref_ohm=self.z_ref_ohm,
                            loss_ref_hz=self.loss_ref_hz)

    def response(self, f_hz) -> np.ndarray:
        """Transfer function to multiply with the channel: cascade S21 times the echo."""
        f = np.asarray(f_hz, dtype=np.float64)
        h = np.ones(f.shape, dtype=np.complex128)
        if self.segments or self.stubs:
            h = h * self.s_parameters(f)[1]
        if self.echo_amplitude:
            h = h * echo_response(f, delay_s=self.echo_delay_s, amplitude=self.echo_amplitude)
        return h

    def il_db(self, f_hz) -> float:
        """Insertion loss ``-20 log10 |H(f)|`` of the cascade and the echo at ``f_hz`` (dB)."""
        h = self.response(np.array([0.0, float(f_hz)]))[1]
        return float(-20.0 * np.log10(max(abs(h), 1e-300)))

    def describe(self, ui_s: float | None = None) -> str:
        ui_s = ui_s or self.ui_s
        parts = []
        if self.segments:
            parts.append(f"{len(self.segments)} segments ("
                         + "/".join(f"{s.z0_ohm:g}" for s in self.segments)
                         + f" ohm, Zref {self.z_ref_ohm:g} ohm)")
        if self.stubs:
            parts.append(f"{len(self.stubs)} stubs ("
                         + ", ".join(f"{s.length_mm:g} mm" for s in self.stubs) + ")")
        if self.echo_amplitude:
            at = (f"{self.echo_delay_s / ui_s:g} UI" if ui_s
                  else f"{self.echo_delay_s * 1e12:g} ps")
            parts.append(f"echo {20 * np.log10(abs(self.echo_amplitude)):.1f} dB "
                         f"{'+' if self.echo_amplitude > 0 else '-'} at {at}")
        return ", ".join(parts) if parts else "none"
