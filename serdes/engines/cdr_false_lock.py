"""False lock and hopping of the clock-recovery loop: every stable zero of the detector's
S-curve, how much of the time the loop spends at each, and the statistical BER weighted
by that occupancy.

The statistical engine's loop model (:mod:`serdes.engines.cdr_stat`) takes one lock point.
The S-curve can have more: on the default link with a 64-lane ADC of 1 ps rms skew the
automatic CTLE picks -15 dB, and the lanes' mean S-curve (measured, bias removed) falls
through zero at -0.016 UI from the lock, rises again through an unstable zero at -0.124
and falls through a second stable zero at -0.249 UI. The hump between them is low (at most
0.011 in PD units against a detector noise of 0.53 rms per sample), so the loop's noise
carries it over, and the deeper well holds it longer.

The loop as a Markov chain in its phase: the loop of :mod:`serdes.cdr` (PI filter,
latency, interpolator) is replaced by the first-order loop of the same noise bandwidth,
c' = c + g (S(c) + sqrt(V(c)) n) with g = 2 sum h^2 / Kpd (sum h^2: the PI loop's noise
gain, :func:`serdes.cdr.noise_gain`; a first-order loop of gain a = g Kpd has
sum h^2 = a / (2 - a)), V the detector noise's long-run variance at c (its low-frequency
density, which is what the narrow loop passes), n white Gaussian. The two loops then
have the same phase variance at a lock point, i.e. the same "temperature" that sets how
often the noise climbs a hump. The chain's stationary density is computed on a phase
grid (:func:`stationary_density`: the transition matrix of the chain on cells finer
than its step, solved directly; exact for that chain, checked against a long simulation
and against the continuum limit p ~ exp(2/g int S/V) / V, tests/test_cdr_false_lock.py).
A lock point's occupancy is the density's mass in its basin (between the unstable zeros
on either side). What the reduction leaves out, measured on the example above: the PI
loop itself run in the phase domain (:func:`serdes.kernels.cdr_phase.phase_loop`, its
integrator, 32-UI latency and 1/64-UI rounding, 268 M UI) spends 0.873 of the time in
the far well against 0.936 here, counted runs (64 M symbols, seeds 3 and 4) 0.85-0.86
of their chunks; the counted BER there is 9.9e-2 against the engine's 7.2e-2 at that
offset, so the weighted BER, 6.7e-2, is 1.3x below the counted 8.6e-2 [7.9e-2, 9.3e-2]
(before: 9.5e-6; benchmarks/cdr_false_lock_vs_counted.py).

The hump's height, ``hump_sigma``: the rise of the potential -log p from a lock point to
the lower of its basin's two edges (unstable zeros or the ends of the S-curve's measured
span), as the N of a
Gaussian whose N-sigma point lies that high (N = sqrt(2 dPhi)): the loop escapes about
once per exp(N^2 / 2) loop time constants. The run reports a warning when the loop has
more than one stable zero or its hump is below :data:`N_WARN`.

The statistical BER: the occupancy-weighted mean over the lock points of the engine's
BER at each point (its zero under the loop's dither, :func:`serdes.engines.cdr_stat.wander`
there as the Gaussian wander); the main point (the one the loop model of
:mod:`serdes.engines.cdr_stat` describes) keeps its BER. Only without SJ at the sampler
(with SJ the loop's shift and swing at the other points are not modelled: the warning
says so and the BER stays the main point's); a single stable zero leaves the BER as it
was. SER, per-eye BER and the statistical eye stay the main point's. The jitter
tolerance weighs the points under SJ (:mod:`serdes.engines.cdr_stat_points`).
"""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np

N_WARN = 6.0        # warn below this hump height (sigma)
# The chain's moves out of a deep well underflow to exactly 0: the chain falls apart into
# closed classes (a deep well; the trap past the last unstable zero, where the grid's end
# holds the phase), and the direct solve is singular, or puts the mass in either class
# by rounding (a well 10 x 0.2^3 / 6 deep against the end trap, gain 0.002: the solve
# gave the well 1.0 where the continuum gives it 2e-145). The continuum density
# exp(-potential) is the same law without the underflow; it is used where the solve
# fails or where the two put masses more than this apart in a region between unstable
# zeros (their O(gain) difference is below 5e-3 where the solve holds:
# tests/test_cdr_false_lock.py). The 12 dB IEEE C2C thru with the MM loop: the solve
# singular, and the run's statistical BER was NaN.
MAX_REGION_GAP = 0.1
CELLS_PER_STEP = 4  # density grid: cells per rms step of the chain (the smallest)
REACH_SIGMA = 8.0   # transitions kept out to this many rms steps
MAX_BAND = 4_000_000  # the chain's band at most: cells x reachable cells (~200 MB)
GH = 9              # Gauss-Hermite points of the dither that smooths the S-curve


def crossings(x, y):
    """(stable, unstable) zeros of ``y`` on the increasing grid ``x``, linearly
    interpolated: stable where y falls through zero (the loop's phase is pushed back from
    either side), unstable where it rises. A grid value exactly zero counts once."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    stable, unstable = [], []
    sgn = np.sign(y)
    i = 0
    while i < x.shape[0] - 1:
        if sgn[i] == 0:
            i += 1
            continue
        j = i + 1
        while j < x.shape[0] - 1 and sgn[j] == 0:
            j += 1
        if sgn[j] != 0 and sgn[j] != sgn[i]:
            z = x[i] + (x[j] - x[i]) * y[i] / (y[i] - y[j])
            (stable if sgn[i] > 0 else unstable).append(float(z))
        i = j
    return stable, unstable


def equivalent_gain(kpd: float, kp: float, ki: float, latency: int) -> float:
    """g of the first-order phase loop with the PI loop's noise bandwidth (module notes)."""
    from serdes import cdr as loop

    return 2.0 * loop.noise_gain(kpd, kp, ki, latency) / kpd


def potential(c, s, v, gain):
    """-log of the continuum stationary density of the chain c' = c + gain (S + sqrt(V) n)
    on the grid ``c`` (Fokker-Planck, zero flux: p ~ exp(2/gain int S/V) / V), up to a
    constant."""
    c, s, v = (np.asarray(a, dtype=np.float64) for a in (c, s, v))
    f = s / v
    integ = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(c))])
    return -2.0 / gain * integ + np.log(v)


def stationary_density(c, s, v, gain):
    """Stationary probabilities of the chain c' = c + gain (S(c) + sqrt(V(c)) n) on the
    cells of the uniform grid ``c`` (each cell's mass moved from its centre; mass beyond
    an end stays in the end cell), by one sparse direct solve of p P = p with p fixed at
    the continuum density's peak cell (its balance equation is the redundant one), then
    normalised; the continuum density where the solve fails (:data:`MAX_REGION_GAP`).
    Fixing one cell keeps the system banded: a normalisation row (sum p = 1) in its place
    made the factorisation fill the band's whole width, 26.5 s against 1.1 s on a
    16,272-cell chain for the same p (to 2e-16)."""
    import warnings

    from scipy import sparse
    from scipy.sparse.linalg import MatrixRankWarning, spsolve
    from scipy.special import ndtr

    c, s, v = (np.asarray(a, dtype=np.float64) for a in (c, s, v))
    n, h = c.shape[0], float(c[1] - c[0])
    m, sd = gain * s, gain * np.sqrt(v)
    reach = int(math.ceil((np.abs(m).max() + REACH_SIGMA * sd.max()) / h)) + 1
    off = np.arange(-reach, reach + 1)
    hi = ndtr(((off + 0.5) * h - m[:, None]) / sd[:, None])
    lo = ndtr(((off - 0.5) * h - m[:, None]) / sd[:, None])
    pr = hi - lo
    pr[:, 0] = hi[:, 0]            # the lower tail goes to the lowest reachable cell
    pr[:, -1] = 1.0 - lo[:, -1]     # and the upper one to the highest
    rows = np.repeat(np.arange(n), off.shape[0])
    cols = np.clip(np.arange(n)[:, None] + off[None, :], 0, n - 1).ravel()
    p_t = sparse.csr_matrix((pr.ravel(), (cols, rows)), shape=(n, n))  # P transposed
    q = _continuum(potential(c, s, v, gain))
    k = int(np.argmax(q))      # a cell the stationary density surely holds
    a = (p_t - sparse.identity(n, format="csr")).tolil()
    a[k, :] = 0.0              # one balance equation is redundant: p[k] = 1 instead
    a[k, k] = 1.0
    b = np.zeros(n)
    b[k] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MatrixRankWarning)
        p = spsolve(a.tocsc(), b)
    p = np.maximum(p, 0.0)
    if not (np.all(np.isfinite(p)) and p.sum() > 0):   # singular
        return q
    p = p / p.sum()
    starts = np.unique(np.r_[0, np.searchsorted(c, crossings(c, s)[1])])  # unstable zeros
    starts = starts[starts < n]
    mass_p, mass_q = (np.add.reduceat(x, starts) for x in (p, q))
    return q if float(np.max(np.abs(mass_p - mass_q))) > MAX_REGION_GAP else p


def _continuum(phi) -> np.ndarray:
    """The continuum density exp(-potential) on the cells, normalised."""
    p = np.exp(-(phi - phi.min()))
    return p / p.sum()


@dataclasses.dataclass
class LockPoints:
    """The loop's stable zeros (UI from the calibrated lock point), each with its basin
    (lo, hi), occupancy and hump height (sigma); ``main``: the index of the one the
    statistical loop model describes."""

    zeros: list
    basins: list
    occupancy: list
    hump_sigma: list
    main: int
    gain: float

    @property
    def several(self) -> bool:
        return len(self.zeros) > 1

    def warning(self) -> str | None:
        """One line when the loop can leave its main lock point (None: it holds)."""
        if not self.zeros:
            return ("the CDR's detector S-curve has no stable zero over its measured span: "
                    "the loop does not lock")
        hs = self.hump_sigma[self.main]
        if not self.several and hs >= N_WARN:
            return None
        if self.several:
            pts = ", ".join(f"{z:+.3f} UI ({o:.2g} of the time)"
                            for z, o in zip(self.zeros, self.occupancy))
            head = (f"the CDR's detector has {len(self.zeros)} stable lock points ({pts}, "
                    "from the lock point); ")
            if hs < N_WARN:
                return head + (f"the hump between them is {hs:.1f} sigma of the loop's "
                               "noise: the loop hops between them")
            others = ", ".join(f"{h:.1f}" for i, h in enumerate(self.hump_sigma)
                               if i != self.main)
            return head + (f"the main one's hump is {hs:.1f} sigma of the loop's noise, "
                           f"so the loop holds it once there; the others' humps ({others} "
                           "sigma) hold it only for a while (a false lock as it acquires)")
        return (f"the CDR's detector S-curve rises only {hs:.1f} sigma of the loop's noise "
                f"from its lock point (below {N_WARN:g}): cycle slips are likely")


def bounded_cell(h: float, grid, s, v, gain: float) -> float:
    """The density grid's cell width: ``h``, widened (x1.25 at a time) until the band that
    :func:`stationary_density` builds (cells x reachable cells) holds at most
    :data:`MAX_BAND` entries. A loop whose noise is small against its pull (a steep
    S-curve, a quiet link) would otherwise ask for gigabytes; wider cells resolve the
    density more coarsely (fewer than CELLS_PER_STEP cells per rms step)."""
    span = float(grid[-1] - grid[0])
    pull = gain * (float(np.abs(s).max()) + REACH_SIGMA * math.sqrt(float(np.max(v))))
    if not h > 0:   # no noise at all: start from a fine grid of the span
        h = span / 4096
    while (span / h + 2) * (2 * (pull / h + 2) + 1) > MAX_BAND:
        h *= 1.25
    return h


def analyse(resp, kpd: float, kp: float, ki: float, latency: int, mu: float = 0.0):
    """:class:`LockPoints` of a measured detector ``resp``
    (:class:`serdes.engines.cdr_stat.LoopResponse`) under the loop of these gains;
    ``mu``: the main lock point's phase (its basin is the main one)."""
    grid, s = resp.grid, resp.s
    stable, unstable = crossings(grid, s)
    gain = equivalent_gain(kpd, kp, ki, latency)
    if not stable:
        return LockPoints([], [], [], [0.0], 0, gain)
    edges = [float(grid[0])] + unstable + [float(grid[-1])]
    basins = []
    for z in stable:
        lo = max([e for e in edges if e < z], default=float(grid[0]))
        hi = min([e for e in edges if e > z], default=float(grid[-1]))
        basins.append((lo, hi))
    # the density's grid: CELLS_PER_STEP cells per smallest rms step of the chain
    v_grid = resp.lr_at(grid)
    h = bounded_cell(gain * math.sqrt(float(v_grid.min())) / CELLS_PER_STEP, grid, s,
                     v_grid, gain)
    c = np.arange(grid[0], grid[-1] + h / 2, h)
    sc, vc = np.interp(c, grid, s), resp.lr_at(c)
    phi = potential(c, sc, vc, gain)
    humps = []
    for z, (lo, hi) in zip(stable, basins):
        inb = (c >= lo) & (c <= hi)   # may hold no cell: a basin narrower than a cell
        bottom = min(float(phi[inb].min()) if inb.any() else math.inf,
                     float(np.interp(z, c, phi)))
        rise = min(float(np.interp(lo, c, phi)), float(np.interp(hi, c, phi))) - bottom
        humps.append(math.sqrt(2.0 * max(rise, 0.0)))
    main = min(range(len(stable)), key=lambda i: (not basins[i][0] <= mu <= basins[i][1],
                                                  abs(stable[i] - mu)))
    if len(stable) == 1:
        occ = [1.0]
    else:
        p = stationary_density(c, sc, vc, gain)
        occ = [float(p[(c >= lo) & (c < hi)].sum()) for lo, hi in basins]
    return LockPoints(stable, basins, occ, humps, main, gain)


def _smoothed_zero(resp, lo: float, hi: float, z: float, dither: float) -> float:
    """The zero of the S-curve averaged over a Gaussian dither, inside (lo, hi), nearest
    ``z`` (``z`` itself when the smoothing removes the sign change)."""
    x, w = np.polynomial.hermite_e.hermegauss(GH)
    w = w / w.sum()

    def sd(p):
        return float(np.interp(p + dither * x, resp.grid, resp.s) @ w)

    a, b = lo + 1e-4, hi - 1e-4
    if not (sd(a) > 0 > sd(b)):
        return z
    for _ in range(50):
        m = 0.5 * (a + b)
        if sd(m) > 0:
            a = m
        else:
            b = m
        if b - a < 1e-6:
            break
    return 0.5 * (a + b)


def weigh(system, taps, sb, model):
    """(the statistical BER result, what goes into the run's ``"cdr"``) of a run with
    the CDR on: ``sb`` weighted over the loop's lock points (module notes). ``system``:
    the statistical engine's system (its link's offset and wander are the main lock
    point's); ``model``: the run's :class:`serdes.engines.cdr_stat_model.CdrStatModel`."""
    from serdes.engines import cdr_stat
    from serdes.engines.cdr_lanes import lanes_response
    from serdes.tiadc.stat import statistical_engine

    front = getattr(model, "front", None)
    if front is None:
        return sb, {}
    imp = system.link.impairments
    resp = cdr_stat.response_for(system, front)
    if np.any(getattr(system.link.adc, "skews_s", 0.0)):
        resp = lanes_response(resp, system.link.adc.skews_s / system.link.ui_s)
    lp = analyse(resp, front.cal.kpd, front.kp, front.ki, system.cdr.latency_ui,
                 mu=imp.offset_ui - front.cal.lock_ui)
    lock = front.cal.lock_ui
    out = {"lock_points": [{"phase_ui": lock + z, "basin_ui": [lock + b[0], lock + b[1]],
                            "occupancy": o, "hump_sigma": hs}
                           for z, b, o, hs in zip(lp.zeros, lp.basins, lp.occupancy,
                                                  lp.hump_sigma)]}
    warn = lp.warning()
    zero = getattr(front.cal, "mm_zero_ui", float("nan"))
    if (warn and system.cdr.lock == "peak" and np.isfinite(zero)
            and (not lp.zeros or lp.hump_sigma[lp.main] < N_WARN)):
        warn += (f"; the detector's own zero is {zero:+.3f} UI from the peak: cdr.lock = "
                 "'mm' locks there (the equalizer is then designed there)")
    weighted = lp.several and imp.sj_ui == 0 and model.name == "linear"
    if lp.several and not weighted:
        warn += ("; the statistical BER is the main lock point's (with SJ the other "
                 "points' loop state is not modelled)")
    if warn:
        out["lock_warning"] = warn
    if not weighted:
        return sb, out
    total = 0.0
    for i, (z, (lo, hi), o) in enumerate(zip(lp.zeros, lp.basins, lp.occupancy)):
        if i == lp.main:
            ber = float(sb.ber)
        else:
            dither = imp.wander_ui
            for _ in range(3):
                zz = _smoothed_zero(resp, lo, hi, z, dither)
                dither = cdr_stat.wander(front, resp, zz, 0.0, dither)
            lk = copy.copy(system.link)
            lk.impairments = dataclasses.replace(imp, offset_ui=front.cal.lock_ui + zz,
                                                 wander_ui=dither)
            sys_i = dataclasses.replace(system, link=lk)
            ber = float(statistical_engine(sys_i, taps).ber(0.0).ber)
            out["lock_points"][i].update(stat_offset_ui=front.cal.lock_ui + zz,
                                         wander_ui=dither)
        out["lock_points"][i]["ber"] = ber
        total += o * ber
    out["main_point_ber"] = float(sb.ber)
    return dataclasses.replace(sb, ber=float(total)), out


def report_model(system, taps):
    """The lock points and the occupancy-weighted statistical BER of ``system`` (the
    CDR on) as ``serdes run`` computes them: ``{"ber", "main_point_ber", "lock_ui",
    "warning", "points": [...]}`` (the points as in :func:`weigh`; for benchmarks)."""
    from serdes.engines.cdr_stat_model import stat_system
    from serdes.tiadc.stat import statistical_engine

    sys2, model = stat_system(system, taps)
    sb = model.apply(statistical_engine(sys2, taps).ber(0.0))
    sb2, out = weigh(sys2, taps, sb, model)
    return {"ber": float(sb2.ber), "main_point_ber": float(sb.ber),
            "lock_ui": model.front.cal.lock_ui, "warning": out.get("lock_warning"),
            "points": out.get("lock_points", [])}
