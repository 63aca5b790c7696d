"""Compile and cache the COM kernels ahead of the first ``serdes com`` (``serdes precompile
--com``).

The COM kernels (``serdes/kernels/com_mmse_search.py``, ``com_quant.py``,
``com_float.py``, ``com_pmf.py``, ``com_eye_bound.py``) are numba JIT functions with ``cache=True``: the first COM run on a
machine compiles them (about 50 s for ``802.3dj-kr``, 3 s for the 802.3ck presets) and
numba keeps them in its cache (``NUMBA_CACHE_DIR``, or ``__pycache__`` beside the
sources). Numba keys a cached kernel by its argument types, not the arrays' sizes, so
COM on a small synthetic channel with one CTLE setting compiles the same kernels a full
run calls; the presets below cover every kernel signature of every preset
(``tests/test_com_warm.py`` checks that against runs with crosstalk of each preset).
"""

from __future__ import annotations

import time

#: (preset, overrides): a 20 dB loss line at the preset's symbol rate, one CTLE setting.
#: 802.3dj-kr compiles the MMSE search with the floating taps and the quantization
#: noise; 802.3ck-kr the floating DFE taps' kernel the other 802.3ck presets share;
#: 802.3ck-c2m with Min_VEO_Test the eye-height bound of the C2M-mode search.
WORKLOAD = (("802.3dj-kr", ("g_dc=-10", "g_dc2=0")),
            ("802.3ck-kr", ("g_dc=-8",)),
            ("802.3ck-c2m", ("g_dc=-5", "g_dc2=-2.5", "eye_min_veo_test_mv=5")))


def compile_kernels(workload=WORKLOAD) -> list[tuple[str, float]]:
    """Run ``workload`` ((preset, overrides) pairs); returns (preset, seconds) of each."""
    from serdes.com.columns import channel_set
    from serdes.com.core import compute_com
    from serdes.com.params import preset as get_preset

    out = []
    for name, overrides in workload:
        t = time.perf_counter()
        fb = get_preset(name).fb_gbd * 1e9
        thru, _, _ = channel_set("loss", "", "12,34", 20.0, 0.24, fb)
        compute_com(thru, preset=name, overrides=list(overrides))
        out.append((name, time.perf_counter() - t))
    return out


def mmse_kernel_cached() -> bool | None:
    """Whether numba's cache holds the MMSE search kernel (the RX FFE presets', e.g.
    ``802.3dj-kr``) compiled for this machine and these sources: False means the next such
    run compiles it first, for about a minute. None when the cache cannot be read (its
    layout is numba's and may change)."""
    try:
        from serdes.kernels.com_mmse_search import _mmse_block as kernel

        magic = kernel.targetctx.codegen().magic_tuple()
        # the index numba keeps beside the cached code: one key (signature, target
        # machine, ...) per entry, empty when the sources changed since
        return any(key[1] == magic for key in kernel._cache._cache_file._load_index())
    except Exception:  # numba's internals: no answer rather than a wrong one
        return None


def first_run_note(name: str) -> str | None:
    """One line for a terminal when a run of preset ``name`` will first compile the MMSE
    search kernel (a preset with an RX FFE, the kernel not in numba's cache), else None."""
    from serdes.com.params import preset, preset_names

    if name in preset_names() and preset(name).rx_ffe_max and mmse_kernel_cached() is False:
        return (f"serdes: {name} compiles its COM kernels on this first run (about a "
                "minute, once; `serdes precompile --com` does it ahead)")
    return None
