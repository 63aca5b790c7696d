"""The IEEE 802.3 Annex 93A device package as a 2-port stage (S-parameters, reflections).

Model (Annex 93A.1.2, with the die ladder and bump of 802.3ck/dj, Annex 178A)
-----------------------------------------------------------------------------
Between the die and the channel, the TX package is the cascade (die side first)::

    C_d[0] shunt, L_s[0] series, C_d[1] shunt, L_s[1] series, ...   (die ladder)
    C_b shunt                                                       (bump)
    line segments (Z_c[i], z_p[i]) with the 93A propagation constant
    C_p shunt                                                       (ball, toward the channel)

and the RX package is the same cascade mirrored (channel side first). Each element is
a differential 2-port referenced to ``2 R_0`` (R_0 = 50 ohm single-ended), written
as in 93A with the single-ended values:

* shunt C (eq. 93A-8): ``S11 = -j w C R0 / (2 + j w C R0)``, ``S21 = 2 / (2 + j w C R0)``;
* series L: ``S11 = (j w L / R0) / (2 + j w L / R0)``, ``S21 = 2 / (2 + j w L / R0)``;
* line (eqs. 93A-9..93A-14): ``rho = (Z_c - 2 R0) / (Z_c + 2 R0)`` (``Z_c`` differential),
  ``S11 = rho (1 - e^{-2 g z}) / (1 - rho^2 e^{-2 g z})``,
  ``S21 = (1 - rho^2) e^{-g z} / (1 - rho^2 e^{-2 g z})``, ``g`` the propagation
  constant of :func:`serdes.channel.loss._gamma` (gamma0, a1, a2, tau; f in GHz).

These are the single-ended elements (C, L, Z_c / 2) between R0 ports, so the cascade
is done here with ABCD matrices of the single-ended equivalent and converted to S once.
Each line's matrix is kept divided by ``e^{g z}`` (finite however long and lossy the
line, up to the top of a link's fine grid), the factors restored in S21; every element
is reciprocal (A D - B C = 1), so S12 = S21.

The die termination R_d (single-ended) terminates the die port: the voltage transfer of
a cascade from a source of reflection ``G1 = (R_d - R0)/(R_d + R0)`` into a load ``G2``
is eq. 93A-18,

    H = S21 (1 - G1)(1 + G2) / (1 - S11 G1 - S22 G2 - S12 S21 G1 G2 + S11 S22 G1 G2),

normalised so that a matched ideal thru gives 1 (:func:`terminated_transfer`).
:class:`Package` exposes ``s_matrix(f)`` and ``terminations`` so that
:func:`serdes.stage.cascade` joins it with the channel's own S-parameters (the
reflections between package and channel included); alone, ``response(f)`` is the
package between its die termination and a matched R0 channel.

C_d only (no L_s, C_b, line, C_p), TX side: the die is a source R_d with C_d across it,
driving R0: ``H = (2 R0 / (R_d + R0)) / (1 + j f / f_p)``, ``f_p = 1 / (2 pi C_d (R_d || R0))``
(a test checks it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from serdes.channel.loss import _coefficients, _gamma
from serdes.errors import ConfigError

__all__ = ["Package", "PackageParams", "abcd_to_s", "cascade_s", "terminated_transfer"]


@dataclass(frozen=True)
class PackageParams:
    """Package values in the units of the IEEE COM tables (single-ended C in nF, L in nH,
    lengths in mm, Z_c differential in ohm). ``c_d_nf`` and ``l_s_nh`` are the die ladder
    (one entry per section, die first); ``z_c_ohm`` and ``z_p_mm`` the line segments
    (die side first)."""

    c_d_nf: tuple = (1.2e-4,)
    l_s_nh: tuple = (0.12,)
    c_b_nf: float = 0.3e-4
    c_p_nf: float = 0.87e-4
    r_d_ohm: float = 50.0
    z_c_ohm: tuple = (87.5, 92.5)
    z_p_mm: tuple = (12.0, 1.8)
    gamma0_per_mm: float = 0.0
    a1: float = 1.734e-3
    a2: float = 1.455e-4
    tau_ns_per_mm: float = 6.141e-3
    r0_ohm: float = 50.0

    def __post_init__(self):
        for k in ("c_d_nf", "l_s_nh", "z_c_ohm", "z_p_mm"):
            v = getattr(self, k)
            object.__setattr__(self, k, tuple(float(x) for x in np.atleast_1d(v)))
        if len(self.c_d_nf) != len(self.l_s_nh):
            raise ConfigError(f"package: c_d_nf has {len(self.c_d_nf)} sections and l_s_nh "
                              f"{len(self.l_s_nh)}; give one L_s per C_d section")
        if len(self.z_c_ohm) != len(self.z_p_mm):
            raise ConfigError(f"package: z_c_ohm has {len(self.z_c_ohm)} segments and z_p_mm "
                              f"{len(self.z_p_mm)}; give one Z_c per line segment")
        for k in ("c_d_nf", "l_s_nh", "z_p_mm"):
            if any(x < 0 or not math.isfinite(x) for x in getattr(self, k)):
                raise ConfigError(f"package: {k} = {list(getattr(self, k))} must be >= 0")
        for k in ("c_b_nf", "c_p_nf"):
            v = getattr(self, k)
            if not (math.isfinite(v) and 0 <= v <= 1e-2):
                raise ConfigError(f"package: {k} = {v!r} must be in [0, 0.01] nF")
        for k in ("r_d_ohm", "r0_ohm"):
            v = getattr(self, k)
            if not (math.isfinite(v) and 1.0 <= v <= 1000.0):
                raise ConfigError(f"package: {k} = {v!r} must be in [1, 1000] ohm")
        if any(not (1.0 <= z <= 1000.0) for z in self.z_c_ohm):
            raise ConfigError(f"package: z_c_ohm = {list(self.z_c_ohm)} must be in [1, 1000] ohm")
        _coefficients(self.gamma0_per_mm, self.a1, self.a2, self.tau_ns_per_mm)


# ------------------------------------------------------------------ 2-port algebra
def _shunt(y: np.ndarray) -> np.ndarray:
    m = np.zeros(y.shape + (2, 2), dtype=np.complex128)
    m[:, 0, 0] = 1.0
    m[:, 1, 1] = 1.0
    m[:, 1, 0] = y
    return m


def _series(z: np.ndarray) -> np.ndarray:
    m = np.zeros(z.shape + (2, 2), dtype=np.complex128)
    m[:, 0, 0] = 1.0
    m[:, 1, 1] = 1.0
    m[:, 0, 1] = z
    return m


def _line(gl: np.ndarray, z0: float) -> np.ndarray:
    """The line's ABCD matrix divided by exp(g l): [[1 + E, z0 (1 - E)], [(1 - E) / z0,
    1 + E]] / 2 with E = exp(-2 g l), finite however long and lossy the line (cosh and
    sinh overflow, and A D - B C = 1 cancels to nothing long before)."""
    m = np.empty(gl.shape + (2, 2), dtype=np.complex128)
    e = np.exp(-2.0 * gl)
    c, s = 0.5 * (1.0 + e), 0.5 * (1.0 - e)
    m[:, 0, 0] = c
    m[:, 0, 1] = z0 * s
    m[:, 1, 0] = s / z0
    m[:, 1, 1] = c
    return m


def abcd_to_s(m: np.ndarray, r0: float, log_scale=0.0) -> np.ndarray:
    """S (nf, 2, 2) referenced to r0 at both ports from the ABCD matrices (nf, 2, 2) of a
    reciprocal 2-port (A D - B C = 1), given as ``m`` = ABCD exp(-log_scale) (the lines'
    factors exp(g l) taken out, :func:`_line`); S12 = S21."""
    a, b, c, d = m[:, 0, 0], m[:, 0, 1], m[:, 1, 0], m[:, 1, 1]
    den = a + b / r0 + c * r0 + d
    s = np.empty_like(m)
    s[:, 0, 0] = (a + b / r0 - c * r0 - d) / den
    s[:, 1, 0] = 2.0 * np.exp(-np.asarray(log_scale)) / den
    s[:, 0, 1] = s[:, 1, 0]
    s[:, 1, 1] = (-a + b / r0 - c * r0 + d) / den
    return s


def cascade_s(sa: np.ndarray, sb: np.ndarray) -> np.ndarray:
    """Two 2-ports in series (port 2 of ``sa`` to port 1 of ``sb``), same reference."""
    d = 1.0 - sa[:, 1, 1] * sb[:, 0, 0]
    out = np.empty_like(sa)
    out[:, 0, 0] = sa[:, 0, 0] + sa[:, 0, 1] * sb[:, 0, 0] * sa[:, 1, 0] / d
    out[:, 0, 1] = sa[:, 0, 1] * sb[:, 0, 1] / d
    out[:, 1, 0] = sa[:, 1, 0] * sb[:, 1, 0] / d
    out[:, 1, 1] = sb[:, 1, 1] + sb[:, 1, 0] * sa[:, 1, 1] * sb[:, 0, 1] / d
    return out


def terminated_transfer(s: np.ndarray, g1, g2) -> np.ndarray:
    """Eq. 93A-18: voltage transfer of 2-port ``s`` from a source of reflection ``g1``
    into a load ``g2`` (both relative to the S reference), 1 for a matched ideal thru."""
    s11, s12, s21, s22 = s[:, 0, 0], s[:, 0, 1], s[:, 1, 0], s[:, 1, 1]
    den = 1.0 - s11 * g1 - s22 * g2 - s12 * s21 * g1 * g2 + s11 * s22 * g1 * g2
    return s21 * (1.0 - g1) * (1.0 + g2) / den


# ------------------------------------------------------------------ the stage
class Package:
    """One device package (``side`` "tx": die -> channel; "rx": channel -> die) as a
    differential 2-port referenced to R0 (see the module docstring)."""

    def __init__(self, params: PackageParams, side: str, name: str = ""):
        if side not in ("tx", "rx"):
            raise ConfigError(f"package side = {side!r}: expected 'tx' or 'rx'")
        self.params = params
        self.side = side
        self.name = name
        self.z_ref_ohm = float(params.r0_ohm)
        # the die port carries the termination R_d; the channel side is open to the cascade
        self.terminations = (params.r_d_ohm, None) if side == "tx" else (None, params.r_d_ohm)

    @property
    def die_reflection(self) -> float:
        p = self.params
        return (p.r_d_ohm - p.r0_ohm) / (p.r_d_ohm + p.r0_ohm)

    def _abcd_die_to_ball(self, f: np.ndarray):
        """(the ABCD matrices die -> ball divided by exp(log_scale), log_scale): the
        lines' exp(g l) factors are kept apart (:func:`_line`)."""
        p = self.params
        log_scale = np.zeros(f.shape, dtype=np.complex128)
        w = 2.0 * np.pi * f
        jw = 1j * w
        mats = []
        for cd, ls in zip(p.c_d_nf, p.l_s_nh):
            if cd > 0:
                mats.append(_shunt(jw * cd * 1e-9))
            if ls > 0:
                mats.append(_series(jw * ls * 1e-9))
        if p.c_b_nf > 0:
            mats.append(_shunt(jw * p.c_b_nf * 1e-9))
        if any(z > 0 for z in p.z_p_mm):
            g = _gamma(f, p.gamma0_per_mm, p.a1, p.a2, p.tau_ns_per_mm, True)
            for zc, zp in zip(p.z_c_ohm, p.z_p_mm):
                if zp > 0:
                    mats.append(_line(g * zp, zc / 2.0))  # single-ended equivalent Z_c / 2
                    log_scale = log_scale + g * zp
        if p.c_p_nf > 0:
            mats.append(_shunt(jw * p.c_p_nf * 1e-9))
        out = np.zeros(f.shape + (2, 2), dtype=np.complex128)
        out[:, 0, 0] = out[:, 1, 1] = 1.0
        for m in mats:
            out = out @ m
        return out, log_scale

    def s_matrix(self, f_hz) -> np.ndarray:
        """S (nf, 2, 2), port 1 toward the TX (the die for "tx", the channel for "rx")."""
        f = np.ascontiguousarray(f_hz, dtype=np.float64)
        if f.ndim != 1 or np.any(~np.isfinite(f)) or np.any(f < 0):
            raise ConfigError("package: frequencies must be a 1-D array of finite values >= 0")
        abcd, log_scale = self._abcd_die_to_ball(f)
        s = abcd_to_s(abcd, self.z_ref_ohm, log_scale)
        if self.side == "rx":  # mirrored: channel side is port 1
            s = s[:, ::-1, ::-1].copy()
        return s

    def response(self, f_hz) -> np.ndarray:
        """The package alone between its die termination and a matched R0 channel."""
        s = self.s_matrix(f_hz)
        g = self.die_reflection
        return (terminated_transfer(s, g, 0.0) if self.side == "tx"
                else terminated_transfer(s, 0.0, g))

    def il_db(self, f_hz) -> float:
        h = self.s_matrix(np.array([0.0, float(f_hz)]))[1, 1, 0]
        return float(-20.0 * np.log10(max(abs(h), 1e-300)))

    def describe(self) -> str:
        p = self.params
        cd = "/".join(f"{c * 1e6:g}" for c in p.c_d_nf)
        zp = "+".join(f"{z:g}" for z in p.z_p_mm)
        label = f"{self.name} " if self.name else ""
        return (f"{label}{self.side.upper()} package (C_d {cd} fF, z_p {zp} mm, "
                f"R_d {p.r_d_ohm:g} ohm)")
