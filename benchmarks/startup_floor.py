"""The floor under a short ``serdes run``: CPU time of processes that only start Python,
import NumPy, numba, scipy.linalg (numba's BLAS check imports it at its first kernel) and
call one cached one-line kernel (numba's start-up: its typing and target registries).

    python3 benchmarks/startup_floor.py [--rounds 3] [--cpu 1]

Each step is its own process pinned with ``taskset -c CPU``, the steps interleaved per
round; the medians (CPU = user + system) and the load average are printed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

KERNEL = "from numba import njit\n\n\n@njit(cache=True)\ndef f(x):\n    return x + 1.0\n"
STEPS = {"python": "pass", "+numpy": "import numpy", "+numba": "import numpy, numba",
         "+scipy.linalg": "import numpy, numba, scipy.linalg",
         "+first cached kernel (the floor)": "import numpy, numba, kfloor; kfloor.f(1.0)"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1)
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    res = {k: [] for k in STEPS}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "kfloor.py").write_text(KERNEL)
        subprocess.run([sys.executable, "-c", STEPS["+first cached kernel (the floor)"]],
                       cwd=tmp, check=True)  # compiles and caches the kernel
        for _ in range(args.rounds):
            for name, code in STEPS.items():
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run(["taskset", "-c", str(args.cpu), sys.executable, "-c", code],
                               cwd=tmp, check=True)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                res[name].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    print(f"CPU s, median of {args.rounds} (load average {load0:.1f} -> "
          f"{os.getloadavg()[0]:.1f}): "
          + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in res.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
