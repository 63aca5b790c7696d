"""Keep freed memory in the process for reuse (glibc's malloc), for ``serdes run``.

A streamed run allocates the same few arrays of ``link.chunk_symbols`` values (512 KB at
the default 65536) for every chunk and every noise block. With glibc's default, dynamic
thresholds, many of them are served by fresh ``mmap`` pages or from the top of a heap
that was just trimmed back to the system, so each chunk touches new pages: about 220
page faults per chunk of the default link in one thread, and twice as many per symbol
in a split run, whose ranges each start a pipeline of their own (measured 76k faults
and 0.33 s system CPU for a 1e7-symbol run's 14 ranges, 35k and 0.2 s in one piece).
Fixed thresholds (arrays below 32 MB from the heap, the heap trimmed only above 256 MB
free) let every chunk reuse the pages of the one before: the faults and the system CPU
all but vanish (``benchmarks/threads_timeline.py``). The run's memory stays bounded by
the chunk size as before; what is kept is at most the largest chunk's working set.

Process-wide, so only the CLI calls it: ``run`` (its forked worker processes inherit
it), ``sweep``, and each spawned sweep worker (``serdes.sweep.local``), which with the
precompiled kernels never imports numba - numba's import happens to raise glibc's dynamic
thresholds, and without it a sweep point faults in each chunk array afresh (points ran
1.5x slower). A library caller can call :func:`keep_freed_memory` itself. A no-op where
the C library is not glibc.
"""

from __future__ import annotations

M_TRIM_THRESHOLD = -1    # mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20    # glibc's largest allowed value (HEAP_MAX_SIZE / 2 on 64-bit)
TRIM_THRESHOLD = 256 << 20


def keep_freed_memory() -> bool:
    """Set glibc's malloc to serve arrays below 32 MB from its heap and to return freed
    memory to the system only when more than 256 MB are free. True when both took."""
    import ctypes
    import ctypes.util
    import platform

    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
