"""The kernels a default short ``serdes run`` calls (its text summary or its ``--json``
report), compiled ahead of time into one extension module (``serdes precompile``), so
that such a run does not start numba.

:data:`KERNELS` names each kernel (``module.name`` in serdes.kernels) with the one
signature its checking wrapper gives it (contiguous, writeable arrays; int64 / float64 /
boolean scalars). :func:`serdes.kernels.aot_build.build` compiles them with numba.pycc, each with its own @njit options
(fastmath, error_model) and for the host CPU, as the JIT compiles them, so the results
are the same to the bit (``tests/test_aot.py``). :mod:`serdes.kernels.jit` loads the
module (without numba) and calls an AOT kernel only when the arguments have exactly
these types; anything else, and every other kernel, goes to numba's JIT.

This module is the table only; it imports neither numba nor the loader.
"""

from __future__ import annotations

F1, F2, F3 = "float64[::1]", "float64[:, ::1]", "float64[:, :, ::1]"
I1, I2, U1, U81 = "int64[::1]", "int64[:, ::1]", "uint64[::1]", "uint8[::1]"
F, I = "float64", "int64"

# module.name -> (return type, argument types), in numba's signature syntax
KERNELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "fir._interp_cubic": (F1, (F1, F1)),
    "fir._fir_valid": (F1, (F1, F1)),
    "prbs._lfsr_fill": (I, (U81, I, I, I1)),
    "gauss._pcg64_normals": (F1, (U1, I)),
    "jitter._rj_offsets": (F1, (F1, F, I, I)),
    "jitter._pulse_sum_taylor": (F1, (F1, F1, F1, F1, F1)),
    "adc._quantize": (F1, (F1, F, I)),
    "slicer._dfe_run": (f"Tuple(({U81}, {F1}))", (F1, F1, F1, F1, F1)),
    "tally._snr_sums": ("UniTuple(float64, 2)", (F1, U81, F1, I, I)),
    "stat_batch._isi_pmf": (f"Tuple(({F1}, {I}))", (F2, F2, F)),
    "stat_rows._rj_samples": (f"Tuple(({F1}, {F1}, {I1}))",
                              (F1, I1, F2, I, I, F1, F1, F1, I)),
    "stat_joint._rj_joint_classes": (f"Tuple(({F1}, {F3}, {F3}, {F3}, {F1}))",
                                     (F1, F1, F1, I1, I, F1, F1, F1, I1, I1, F1, I, I)),
    "stat_joint._merge_close": ("none", (F2, F2, F2, I2, F, F2, F2, F2)),
    "stat_tails._mixture_tails": (F1, (F1, I, F, F1, U81, I1, F2, F2, F2)),
    # the report's eye openings and clip probability (`--json`, and the sections a text
    # summary prints when asked)
    "stat_tails._rows_wrong_side": (F2, (F1, I1, I1, F1, F2, F3, F3, F3, F1, I1, I1, F1, F1,
                                         F)),
    "stat._tail_points": (F1, (F1, I, F, F1, F, "boolean", F)),
}
MODULE_NAME = "serdes_aot"


def export_name(key: str) -> str:
    """The name of kernel ``module.name`` in the extension module."""
    return key.replace(".", "__")
