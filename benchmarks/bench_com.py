"""serdes com on the full official grid of a preset, beside PyChOpMarg 3.4's cost for the
same channel set (its time per equalizer candidate times the grid: a lower bound, since
its own search cannot run the 802.3ck DFE-only reference receiver, see
benchmarks/com_pychopmarg.py).

Run: pytest benchmarks/bench_com.py --benchmark-only -s  (needs ../shared/channels;
the PyChOpMarg baseline needs pychopmarg).
"""

import pytest

CH_SETS = ("dpo", "ca", "ex2")


@pytest.mark.parametrize("key", CH_SETS)
def test_com_full_grid(benchmark, key):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    cp = pytest.importorskip("com_pychopmarg")
    name, thru, fext, nxt = cp.SETS[key]
    if not (cp.CH / thru).exists():
        pytest.skip(f"channel data not found at {cp.CH}")
    from serdes.com.core import compute_com

    args = (str(cp.CH / thru), [str(cp.CH / f) for f in fext], [str(cp.CH / f) for f in nxt], name)
    res = benchmark.pedantic(compute_com, args=args, rounds=1, iterations=1)
    n = sum(c.n_fom for c in res.cases)
    com = cp._com(res.params, *args[:3], 0)
    per = cp.candidate_seconds(com)
    benchmark.extra_info.update(preset=name, com_db=res.com_db, fom_evaluations=n,
                                ours_s=res.elapsed_s, pychopmarg_s_per_candidate=per,
                                pychopmarg_grid_s_lower_bound=per * n,
                                speedup_lower_bound=per * n / res.elapsed_s)
    print(f"\n{key} ({name}): serdes com {res.elapsed_s:.1f} s for {n} FOM evaluations; "
          f"PyChOpMarg {per:.3f} s per candidate -> >= {per * n / 3600:.1f} h "
          f"({per * n / res.elapsed_s:.0f}x)")
