"""Host boards between the packages and a channel file (the COM sheets' "Include PCB").

The 802.3ck CR sheet (Clause 162 cable assembly) sets Include PCB = 1: COM is computed
for the cable assembly between two host boards, each 110.3 mm of 100 ohm differential
line with the Annex 93A line model (gamma0, a1, a2, tau = 0, 3.8206e-4, 9.5909e-5,
5.79e-3 ns/mm) and two single-ended shunt capacitances: C_0 (0.29e-4 nF) at the device
end and C_1 (0.19e-4 nF) at the connector end.

Placement, as the IEEE COM code does it (``add_brd``, called where a channel file is
read, before the packages are added):

* TX board: C_0, line, C_1 (device to connector); RX board: C_1, line, C_0;
* S_channel' = TX board . S_channel . RX board, and the packages go outside that:
  TX package . TX board . channel . RX board . RX package;
* board lengths per kind: thru (z_bp TX, z_bp RX); FEXT (z_bp FEXT, z_bp RX); NEXT
  (z_bp RX, z_bp NEXT), the NEXT pair being the code's assignment (all four lengths are
  110.3 mm in the CR sheet, so it makes no difference there);
* every element is the 93A form of :mod:`serdes.analog.package` (shunt C in a 50 ohm
  single-ended reference, eq. 93A-8; line eqs. 93A-9..93A-14 with Z_c differential),
  so a board is a package with C_d = C_0, no L_s or C_b, one segment and C_p = C_1.

ERL (``erl.py``) sees the channel file without boards, as the IEEE code does with the
sheet's SHOW_BRD = 0.
"""

from __future__ import annotations

import numpy as np

from serdes.analog.package import Package, PackageParams, cascade_s

__all__ = ["board_lengths", "board_s", "with_boards"]

_KINDS = ("thru", "next", "fext")


def board_lengths(p, kind: str) -> tuple[float, float]:
    """(TX-side, RX-side) board lengths in mm of a channel of ``kind`` (``p.board_mm`` is
    z_bp TX, NEXT, FEXT, RX of the sheet)."""
    tx, nxt, fxt, rx = (float(x) for x in p.board_mm)
    return {"thru": (tx, rx), "fext": (fxt, rx), "next": (rx, nxt)}[kind]


def board_s(p, length_mm: float, side: str, f: np.ndarray) -> np.ndarray:
    """S (nf, 2, 2) of one board referenced to R_0, port 1 toward the TX; ``side`` "tx"
    puts C_0 at port 1 (the device), "rx" at port 2."""
    g0, a1, a2, tau = (float(x) for x in p.board_line)
    pp = PackageParams(c_d_nf=(float(p.board_c0_nf),), l_s_nh=(0.0,), c_b_nf=0.0,
                       c_p_nf=float(p.board_c1_nf), r_d_ohm=p.r0, z_c_ohm=(float(p.board_z_c),),
                       z_p_mm=(float(length_mm),), gamma0_per_mm=g0, a1=a1, a2=a2,
                       tau_ns_per_mm=tau, r0_ohm=p.r0)
    return Package(pp, side).s_matrix(f)


def with_boards(p, sdd: np.ndarray, kind: str, f: np.ndarray) -> np.ndarray:
    """The channel's differential S (nf, 2, 2) with the host boards on both sides when
    ``p.include_pcb`` is set, else ``sdd`` unchanged."""
    if not p.include_pcb:
        return sdd
    if kind not in _KINDS:
        raise ValueError(f"channel kind {kind!r}: expected one of {_KINDS}")
    l_tx, l_rx = board_lengths(p, kind)
    return cascade_s(cascade_s(board_s(p, l_tx, "tx", f), sdd), board_s(p, l_rx, "rx", f))
