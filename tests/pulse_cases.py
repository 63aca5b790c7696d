"""The random jittered pulse sum that the kernel tests (tests/test_kernels.py,
tests/test_jitter_kernels.py) compare against tests/naive.py."""

import numpy as np

LEVELS = np.array([-1.0, -1 / 3, 1 / 3, 1.0])


def jittered_case(seed, m=8, n_ui=6):
    """(p, a, off, pad): a random pulse of n_ui UI at m samples per UI between pad = 3 m
    zeros on each side, 60 random PAM4 symbols and one offset per output in +-1.5 UI
    (fine samples)."""
    rng = np.random.default_rng(seed)
    pad = 3 * m
    p = np.concatenate([np.zeros(pad), rng.normal(size=n_ui * m), np.zeros(pad)])
    a = rng.choice(LEVELS, size=60)
    off = rng.uniform(-1.5 * m, 1.5 * m, size=len(a) - n_ui + 1)
    return p, a, off, pad
