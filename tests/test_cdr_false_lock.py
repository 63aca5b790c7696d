"""The CDR's lock points and their occupancy (serdes/engines/cdr_false_lock.py): the zero
search on synthetic S-curves, the stationary density of the phase chain against a long
simulation of that chain (the phase-domain loop kernel) and against the continuum closed
form, the hump height against a Gaussian well, and the weighting left alone with one zero."""

import dataclasses
import math

import numpy as np
import pytest

from serdes.engines import cdr_false_lock as fl
from serdes.engines.cdr_stat import LoopResponse
from serdes.kernels.cdr_phase import phase_loop

GRID = np.arange(-0.45, 0.4501, 0.01)


def cubic(a=-0.25, b=-0.12, d=0.0, k=40.0):
    """S with stable zeros a and d and the unstable zero b between them."""
    return -k * (GRID - a) * (GRID - b) * (GRID - d)


def _interp_zero(s, lo, hi):
    """Bisection on np.interp: the zero of the piecewise-linear S between lo and hi."""
    f_lo = np.interp(lo, GRID, s)
    for _ in range(60):
        m = 0.5 * (lo + hi)
        if np.sign(np.interp(m, GRID, s)) == np.sign(f_lo):
            lo = m
        else:
            hi = m
    return 0.5 * (lo + hi)


def test_crossings_of_synthetic_curves():
    zeros = (-0.253, -0.117, 0.031)
    s = cubic(*zeros)
    st, un = fl.crossings(GRID, s)
    # the zeros of the linear interpolant, and within its curvature error of the true ones
    # (h^2 / 8 max|S''| / |S'(z)| on the cubic -40 prod(c - z_i))
    assert np.allclose(st + un, [_interp_zero(s, -0.3, -0.2), _interp_zero(s, 0.0, 0.1),
                                 _interp_zero(s, -0.15, -0.1)], atol=1e-9)
    for z in st + un:
        i = int(np.argmin([abs(z - t) for t in zeros]))
        others = [t for j, t in enumerate(zeros) if j != i]
        slope = 40 * abs(np.prod([zeros[i] - t for t in others]))
        curv = 40 * 2 * (abs(zeros[i] - others[0]) + abs(zeros[i] - others[1]) + 0.02)
        assert abs(z - zeros[i]) < 0.01 ** 2 / 8 * curv / slope * 1.01
    assert len(st) == 2 and len(un) == 1
    st, un = fl.crossings(GRID, -np.sin(2 * np.pi * (GRID - 0.013)))
    assert np.allclose(st, [0.013], atol=1e-4) and un == []
    # a zero exactly on a grid point counts once; a touch without a sign change is no zero
    st, un = fl.crossings(GRID, -(GRID - GRID[40]))
    assert len(st) == 1 and un == [] and abs(st[0] - GRID[40]) < 1e-12
    st, un = fl.crossings(GRID, 1e-3 + (GRID + 0.1) ** 2)
    assert st == [] and un == []


def test_stationary_density_against_a_long_simulation():
    """The chain c' = c + g (S(c) + sqrt(V(c)) n) with two stable zeros: the numerical
    occupancy of the far well against 32 M steps of the phase-domain loop kernel (first
    order: ki = 0, no latency, no rounding), 32 batches of 1 M steps each much longer than
    the time between hops, so the batch means are independent; 4.5 standard errors
    (t with 31 degrees of freedom: two-sided 1e-4)."""
    g = 0.02
    s = cubic()
    v = 0.3 + 0.5 * GRID ** 2
    h = g * math.sqrt(v.min()) / fl.CELLS_PER_STEP
    c = np.arange(GRID[0], GRID[-1] + h / 2, h)
    p = fl.stationary_density(c, np.interp(c, GRID, s), np.interp(c, GRID, v), g)
    want = float(p[c < -0.12].sum())
    assert 0.3 < want < 0.7  # both wells matter
    rng = np.random.default_rng(5)
    state, ring = np.zeros(3), np.zeros(1)
    share = []
    for _ in range(32):
        n = 1 << 20
        x = phase_loop(np.zeros(n), rng.standard_normal(n), s, v, GRID[0], 0.01, g, 0.0, 0,
                       state, ring)
        share.append(float(np.mean(x < -0.12)))
    share = np.array(share)
    se = share.std(ddof=1) / math.sqrt(share.size)
    assert abs(share.mean() - want) < 4.5 * se, (share.mean(), want, se)


def _chain_and_continuum(s, v, g, cells, grid_gain=None):
    """(cells c, the chain's stationary density, the continuum density exp(-potential))
    for S and V on GRID at gain ``g``, on cells of (grid_gain or g) sqrt(min V) / cells."""
    h = (grid_gain or g) * math.sqrt(v.min()) / cells
    c = np.arange(GRID[0], GRID[-1] + h / 2, h)
    sc, vc = np.interp(c, GRID, s), np.interp(c, GRID, v)
    p = fl.stationary_density(c, sc, vc, g)
    phi = fl.potential(c, sc, vc, g)
    q = np.exp(-(phi - phi.min()))
    return c, p, q / q.sum()


@pytest.mark.parametrize("g", [0.01, 0.004])
def test_stationary_density_tends_to_the_continuum_one(g):
    """Cells much finer than the chain's step: its density tends to the Fokker-Planck one,
    exp(2/g int S/V) / V. The basins' masses: the gap to the continuum shrinks from 4 to
    8 cells per step (the rest is the chain's own O(g) difference from the diffusion)
    and is then below 5e-4."""
    s = cubic()
    v = 0.3 + 0.5 * GRID ** 2
    gaps = []
    for cells in (4, 8):
        c, p, q = _chain_and_continuum(s, v, g, cells)
        gaps.append(abs(p[c < -0.12].sum() - q[c < -0.12].sum()))
    assert gaps[1] < gaps[0] and gaps[1] < 5e-4, gaps


def test_equivalent_gain_of_a_first_order_loop():
    """A first-order loop (ki = 0, no latency) of gain a = kp Kpd has sum h^2 = a / (2 - a):
    its equivalent gain is 2 kp / (2 - a), i.e. itself up to O(a)."""
    kpd, kp = 0.6, 1e-3
    a = kp * kpd
    assert fl.equivalent_gain(kpd, kp, 0.0, 0) == pytest.approx(2 * kp / (2 - a), rel=1e-6)


def _resp(s, lr=0.3):
    return LoopResponse(grid=GRID, s=s, noise_lr=lr)


def test_hump_height_of_a_linear_well():
    """One zero with S = -K c (V constant): the density is Gaussian with variance
    g V / (2 K), so the rise to the grid's end at c = 0.45 is (0.45 / sigma)^2 / 2 in -log
    p: hump_sigma = 0.45 / sigma (the nearer end, both are 0.45 away)."""
    k, lr = 0.05, 0.3
    lp = fl.analyse(_resp(-k * GRID, lr), kpd=k, kp=1e-3, ki=0.0, latency=0)
    sigma = math.sqrt(lp.gain * lr / (2 * k))
    assert lp.zeros == pytest.approx([0.0], abs=1e-12) and lp.occupancy == [1.0]
    assert lp.hump_sigma[0] == pytest.approx(0.45 / sigma, rel=1e-3)
    assert lp.warning() is None  # 0.45 UI is many sigma here
    weak = fl.analyse(_resp(-1e-3 * GRID, lr), kpd=k, kp=1e-3, ki=0.0, latency=0)
    assert weak.hump_sigma[0] < fl.N_WARN and "cycle slips" in weak.warning()
    none = fl.analyse(_resp(0.01 + 0 * GRID, lr), kpd=k, kp=1e-3, ki=0.0, latency=0)
    assert none.zeros == [] and "no stable zero" in none.warning()


def test_two_zeros_occupancy_and_warning():
    lp = fl.analyse(_resp(0.05 * cubic()), kpd=0.5, kp=2e-3, ki=0.0, latency=0, mu=0.0)
    assert lp.several and len(lp.zeros) == 2
    assert lp.main == 1  # the basin holding mu = 0
    assert sum(lp.occupancy) == pytest.approx(1.0, abs=1e-9)
    assert lp.basins[0][1] == lp.basins[1][0] == pytest.approx(-0.12, abs=2e-4)
    assert "2 stable lock points" in lp.warning()


def test_one_zero_leaves_the_ber_alone():
    """weigh() returns the engine's own result when the loop has one stable zero (the
    default link): the statistical BER stays bit for bit what it was."""

    class Front:
        class cal:
            kpd, lock_ui = 0.6, 0.0
        kp, ki = 5e-4, 8e-8
        _loop_response = ((0.0, 0.0), _resp(-0.3 * GRID))

    class Model:
        name = "linear"
        front = Front()

    from types import SimpleNamespace

    from serdes.cdr import CdrSettings
    from serdes.impairments import Impairments

    link = SimpleNamespace(impairments=Impairments(rj_ui=0.0, offset_ui=0.0, wander_ui=0.01),
                           adc=SimpleNamespace(), ui_s=1 / 56.25e9)
    system = SimpleNamespace(link=link, cdr=CdrSettings(mode="mm"),
                             tx_jitter=SimpleNamespace(rj_ui=0.0, buj_ui=0.0))
    sb = object()
    out, info = fl.weigh(system, None, sb, Model())
    assert out is sb
    assert len(info["lock_points"]) == 1 and "lock_warning" not in info


def test_quiet_steep_loop_stays_within_the_memory_bound():
    """A steep S-curve and little noise asked for a band of ~1e8 entries (gigabytes): the
    cell widens until cells x reachable cells <= MAX_BAND, ordinary cases keep their cell,
    and the occupancy still comes out (the deeper, wider well holds nearly all of it)."""
    s, kp, lr = 60 * cubic(), 1e-3, 0.002
    span, pull = 0.9, kp * (np.abs(s).max() + fl.REACH_SIGMA * math.sqrt(lr))
    h0 = kp * math.sqrt(lr) / fl.CELLS_PER_STEP
    assert (span / h0) * (2 * pull / h0) > 20 * fl.MAX_BAND   # the unbounded band
    h = fl.bounded_cell(h0, GRID, s, np.full(GRID.shape, lr), kp)
    assert (span / h + 2) * (2 * (pull / h + 2) + 1) <= fl.MAX_BAND < (
        (span / (h / 1.25) + 2) * (2 * (pull / (h / 1.25) + 2) + 1))
    h_ok = 2e-3 * math.sqrt(0.3) / fl.CELLS_PER_STEP   # the cases above: unchanged
    assert fl.bounded_cell(h_ok, GRID, 0.05 * cubic(), np.full(GRID.shape, 0.3),
                           2e-3) == h_ok
    lp = fl.analyse(_resp(s, lr), kpd=1.0, kp=kp, ki=0.0, latency=0, mu=0.0)
    assert len(lp.zeros) == 2 and sum(lp.occupancy) == pytest.approx(1.0, abs=1e-9)
    assert max(lp.occupancy) > 0.99


def test_a_basin_narrower_than_a_cell_still_has_its_hump():
    """A noisy, fast loop widens the density's cells past a narrow basin (here 0.05 UI
    between unstable zeros at -0.15 and -0.10 UI, cells of about 0.4 UI): no cell lies in
    it, and the basin's bottom was the minimum of an empty array (a ValueError that ended
    `serdes run` with cdr.mode = 'ssmm' and cdr.latency_ui = 4096). The bottom is then
    the potential at the zero, and the hump of a basin no cell resolves is small."""
    roots = (-0.3, -0.15, -0.12, -0.10, 0.1)   # stable, unstable, stable, unstable, stable
    s = -40.0 * np.prod([GRID - r for r in roots], axis=0)
    lp = fl.analyse(_resp(s, 30.0), kpd=0.05, kp=0.3, ki=0.0, latency=0, mu=0.0)
    assert lp.zeros == pytest.approx([-0.3, -0.12, 0.1], abs=1e-9)
    assert lp.basins[1] == pytest.approx((-0.15, -0.10), abs=1e-9)
    assert all(math.isfinite(h) and h >= 0 for h in lp.hump_sigma)
    assert sum(lp.occupancy) == pytest.approx(1.0, abs=1e-9)
    assert lp.warning() is not None


def test_a_chain_that_falls_apart_takes_the_continuum_density(monkeypatch):
    """A deep well at 0 and, past the unstable zero at 0.2, the trap where the grid's end
    holds the phase: the chain's moves out of either underflow to 0, so it has two closed
    classes. The direct solve with a normalisation row put all the mass in the well (1.0)
    where the continuum density gives it 2e-145. The solve now fixes the continuum's peak
    cell, in the trap, and gives the well 4e-152; a solve that puts the mass in the other
    class (the old one's answer, put in its place here) takes the continuum density, while
    a chain that holds (the cubic of the tests above) keeps its own solution."""
    import scipy.sparse.linalg as sla

    s = -10.0 * GRID * (0.2 - GRID)
    c, p, q = _chain_and_continuum(s, 0.3 + 0 * GRID, 0.002, fl.CELLS_PER_STEP)
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0, abs=1e-12)
    assert p[c < 0.2].sum() < 1e-100 and q[c < 0.2].sum() < 1e-100
    real = sla.spsolve

    def in_the_well(a, b):
        x = np.zeros(b.shape[0])
        x[np.argmin(np.abs(c))] = 1.0        # every bit of mass at the well's bottom
        return x

    monkeypatch.setattr(sla, "spsolve", in_the_well)
    _, p_wrong, q_wrong = _chain_and_continuum(s, 0.3 + 0 * GRID, 0.002, fl.CELLS_PER_STEP)
    assert np.allclose(p_wrong, q_wrong, rtol=0, atol=1e-15)
    monkeypatch.setattr(sla, "spsolve", real)
    # a chain that holds: its own solution, within the O(gain) gap of the continuum
    c, p, q = _chain_and_continuum(cubic(), 0.3 + 0.5 * GRID ** 2, 0.01, fl.CELLS_PER_STEP,
                                   grid_gain=0.002)
    assert 0 < abs(p[c < -0.12].sum() - q[c < -0.12].sum()) < 5e-3


def test_the_warning_says_the_loop_holds_a_deep_main_point():
    """Two stable zeros, the main one many sigma deep: the loop does not hop, and the
    warning says so (it said "the loop hops between them" at any depth)."""
    lp = fl.LockPoints(zeros=[-0.25, 0.0], basins=[(-0.45, -0.12), (-0.12, 0.45)],
                       occupancy=[1e-12, 1.0], hump_sigma=[2.0, 13.2], main=1, gain=0.01)
    w = lp.warning()
    assert "hops" not in w and "13.2 sigma" in w and "holds it" in w and "2.0" in w
    low = dataclasses.replace(lp, hump_sigma=[2.0, 3.0])
    assert "hops between them" in low.warning()


def test_the_ieee_c2c_thru_with_the_mm_loop_has_a_statistical_ber(channels_dir, capsys):
    """Real data: the 12 dB C2C thru with the MM loop has two stable zeros, the main one
    13.2 sigma deep. Its chain fell apart (a singular solve): the run printed "stat BER
    nan" and "nan of the time". Now the occupancies are finite and sum to 1 (but for the
    mass past the last unstable zero), and the statistical BER is the weighted one."""
    import json

    from serdes.cli import main

    f = channels_dir / "ieee8023ck_C2C_gore_3ck_02_0519/C2C_PCB_SYSVIA_12dB_thru.s4p"
    rc = main(["run", "--json", "--threads", "1", "--set", "channel.model=touchstone",
               "--set", f"channel.file={f}", "--set", "cdr.mode=mm",
               "--set", "link.symbols=200000"])
    out = capsys.readouterr()
    assert rc == 0 and "singular" not in out.err
    d = json.loads(out.out)
    pts = d["cdr"]["lock_points"]
    occ = [p["occupancy"] for p in pts]
    assert len(pts) == 2 and all(o is not None and 0 <= o <= 1 for o in occ)
    assert sum(occ) == pytest.approx(1.0, abs=1e-5)
    assert d["stat_ber"] == pytest.approx(sum(o * p["ber"] for o, p in zip(occ, pts)),
                                          rel=1e-6)
    assert "hops" not in d["cdr"]["lock_warning"]
