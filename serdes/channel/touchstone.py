"""Channel stages from S-parameters: a Touchstone file or any in-memory ``skrf.Network``.

* :class:`TouchstoneChannel` reads a ``.s4p``/``.s2p`` file with the strict text
  parser of :mod:`serdes.channel.touchstone_io` (never ``skrf.Network(path)``, which
  may unpickle a crafted file).
* :class:`NetworkChannel` takes a ``skrf.Network`` already in memory (2- or 4-port),
  e.g. built with ``skrf.media`` or read by the user's own trusted code.  Reference
  impedances other than 50 ohm are renormalized to 50 ohm with scikit-rf first.

Both take the differential thru ``SDD21`` (``S21`` for a 2-port) with the explicit
formula of :func:`serdes.channel.touchstone_io.thru_response` and share all the
resampling code of :mod:`serdes.channel.resample` (grid, taper above the last
frequency, minimum-phase bulk delay).

Mixed mode: scikit-rf's ``se2gmm(p=2)`` gives the same ``SDD21`` (to rounding,
checked on a real file in the tests; :func:`skrf_sdd21` renumbers the ports first,
since ``se2gmm`` pairs ports 1->3 and 2->4 while the IEEE files use 1->2 and 3->4).
Production uses the explicit formula: it is one line on four S entries, while
``se2gmm`` copies the network, renumbers it and transforms all 16 entries at every
frequency; the formula is the same for a file and a network, and it states the
port pairing in the code instead of leaving it to a renumbering step.
"""

from __future__ import annotations

import warnings

import numpy as np

from serdes.channel.resample import (
    DEFAULT_TAPER_FACTOR,
    estimate_bulk_delay,
    insertion_loss_db,
    transfer_on_grid,
)
from serdes.channel.touchstone_io import load_touchstone, parse_ports, read_sdd21, thru_response
from serdes.errors import ConfigError, FileFormatError

__all__ = [
    "NetworkChannel",
    "TouchstoneChannel",
    "read_sdd21",
    "skrf_sdd21",
]

#: ``passivity_max()`` above this warns on load (files slightly above 1 load silently).
PASSIVITY_WARN_LIMIT = 1.01
#: ... and above this the file is refused: no channel has 40 dB of gain (S scaled by 1e200
#: overflowed into "ffe: taps must be finite"; COM's packages made nonsense of it from 10)
PASSIVITY_MAX = 100.0


def checked_sigma_max(source, s: np.ndarray) -> np.ndarray:
    """The largest singular value of S (nf x n x n) per frequency, after the passivity
    rule of every Touchstone reader (the link's and COM's): a warning above
    PASSIVITY_WARN_LIMIT, a one-line error above PASSIVITY_MAX."""
    sig = np.linalg.svd(s, compute_uv=False)[:, 0]
    pm = float(sig.max())
    if not pm <= PASSIVITY_MAX:
        raise FileFormatError(f"{source}: not a passive channel: the largest singular "
                              f"value of S is {pm:.4g}, at most {PASSIVITY_MAX:g} is "
                              "taken (measured files reach about 1.0005)")
    if pm > PASSIVITY_WARN_LIMIT:
        warnings.warn(f"{source}: not passive, largest singular value of S is {pm:.4f}",
                      RuntimeWarning, stacklevel=4)
    return sig


#: A thru whose |H| at the lowest frequency is below this is refused.
THRU_MIN_LOW_FREQ_DB = -10.0

Z_REF_OHM = 50.0


class _SParameterChannel:
    """Shared checks and resampling for an S matrix ``s[nf, n, n]`` at ``f_hz`` (50 ohm).

    Attributes: ``ports``, ``nports``, ``f_hz`` and ``sdd21`` (the data), ``bulk_delay_s``
    (see :func:`~serdes.channel.resample.estimate_bulk_delay`, computed on first use).

    Checks, each a one-line error (``_error``) naming the source:

    * ``thru=True`` (default; used as the link's channel): ``|SDD21|`` (or ``|S21|``)
      at the lowest frequency must be at least ``THRU_MIN_LOW_FREQ_DB`` (-10 dB).  A
      real interconnect loses well under 1 dB at low frequency (0.1-0.5 dB in the IEEE
      files), while a wrong port mapping or a crosstalk file gives -30 dB or less.
      Pass ``thru=False`` for coupling paths (NEXT/FEXT), whose ``SDD21`` is tiny.
    * ``f_needed_hz``: the data must reach it.  The link passes its Nyquist frequency
      (symbol rate / 2): the measured data must cover the whole first Nyquist zone;
      above the last point the response is the tapered continuation of
      :func:`~serdes.channel.resample.transfer_on_grid`, an extrapolation only
      acceptable beyond Nyquist.
    """

    _error = ConfigError
    _what = "data"
    _ports_key = "ports"

    def _setup(self, source: str, f, s, ports: str, thru: bool, f_needed_hz) -> None:
        prt = parse_ports(ports)
        self._source = source
        self.ports = ports
        self.nports = s.shape[1]
        self.f_hz = f
        self.sdd21 = thru_response(s, prt)
        self._s = s
        self._prt = prt
        if f_needed_hz is not None:
            self.check_reach(f_needed_hz)
        if thru:
            low_db = 20.0 * np.log10(max(float(np.abs(self.sdd21[0])), 1e-300))
            if low_db < THRU_MIN_LOW_FREQ_DB:
                what = "S21" if self.nports == 2 else f"SDD21 with ports={ports!r}"
                raise self._error(
                    f"{source}: not a thru: |{what}| is {low_db:.1f} dB at {f[0] / 1e9:g} GHz "
                    f"(the lowest {self._what} frequency), a thru needs at least "
                    f"{THRU_MIN_LOW_FREQ_DB:g} dB there; check {self._ports_key} "
                    "(IEEE 802.3 files use '12,34')"
                )
        self._sigma_max = checked_sigma_max(source, s)
        self._bulk_delay: float | None = None

    def check_reach(self, f_needed_hz: float) -> None:
        """A one-line error unless the data reach ``f_needed_hz`` (a link's Nyquist
        frequency: :class:`serdes.link.Link` asks each of its channel stages)."""
        f = self.f_hz
        if f[-1] < float(f_needed_hz):
            raise self._error(
                f"{self._source}: data end at {f[-1] / 1e9:g} GHz, below the "
                f"{float(f_needed_hz) / 1e9:g} GHz the link needs (its Nyquist frequency, "
                f"symbol rate / 2); use {'a file that reaches' if self._what == 'file' else 'data that reach'} "
                "at least that frequency"
            )

    @property
    def bulk_delay_s(self) -> float:
        """Pure-delay part of the thru response (s), with the default taper factor."""
        if self._bulk_delay is None:
            self._bulk_delay = estimate_bulk_delay(self.f_hz, self.sdd21)
        return self._bulk_delay

    def response(self, f_grid_hz, *, taper_factor: float = DEFAULT_TAPER_FACTOR) -> np.ndarray:
        """The thru response on the FFT grid ``f_grid_hz``, see
        :func:`~serdes.channel.resample.transfer_on_grid`."""
        return transfer_on_grid(self.f_hz, self.sdd21, f_grid_hz, taper_factor=taper_factor)

    def mixed_mode(self) -> np.ndarray:
        """The differential 2-port (nf, 2, 2) of the data: [[SDD11, SDD12], [SDD21, SDD22]]
        (S of a 2-port file). For ``ports="ab,cd"`` (pairs (a, c) in, (b, d) out),
        ``SDDxy = (S[x+, y+] - S[x+, y-] - S[x-, y+] + S[x-, y-]) / 2``."""
        s = self._s
        if s.shape[1] == 2:
            return s.astype(np.complex128, copy=True)
        a, b, c, d = self._prt
        pairs = ((a, c), (b, d))
        out = np.empty((s.shape[0], 2, 2), dtype=np.complex128)
        for i, (ip, im) in enumerate(pairs):
            for j, (jp, jm) in enumerate(pairs):
                out[:, i, j] = 0.5 * (s[:, ip, jp] - s[:, ip, jm] - s[:, im, jp] + s[:, im, jm])
        return out

    def s_matrix(self, f_grid_hz, *, taper_factor: float = DEFAULT_TAPER_FACTOR) -> np.ndarray:
        """The differential 2-port on the FFT grid (50 ohm single-ended reference): each
        entry put on the grid like the thru (:func:`~serdes.channel.resample.transfer_on_grid`;
        above the data the reflections taper to 0 with the thru). Used when the channel
        sits between packages (:func:`serdes.stage.cascade`)."""
        mm = self.mixed_mode()
        g = np.asarray(f_grid_hz, dtype=np.float64)
        out = np.empty((g.shape[0], 2, 2), dtype=np.complex128)
        out[:, 1, 0] = self.response(g, taper_factor=taper_factor)
        for i, j in ((0, 0), (0, 1), (1, 1)):
            out[:, i, j] = transfer_on_grid(self.f_hz, mm[:, i, j], g, taper_factor=taper_factor)
        return out

    def il_db(self, f0_hz) -> float:
        """Insertion loss ``-20 log10 |SDD21(f0)|`` in dB (interpolated between data points)."""
        return insertion_loss_db(self.f_hz, self.sdd21, f0_hz)

    def passivity_max(self) -> float:
        """Largest singular value of the single-ended S matrix over all frequencies."""
        return float(self._sigma_max.max())

    def _span(self) -> str:
        thru = "S21" if self.nports == 2 else f"SDD21 ports={self.ports}"
        return (f"{self.nports}-port, {thru}, {self.f_hz.size} points "
                f"{self.f_hz[0] / 1e9:g}..{self.f_hz[-1] / 1e9:g} GHz")


class TouchstoneChannel(_SParameterChannel):
    """A measured channel read from a .s4p (differential thru) or .s2p (S21) file.

    Errors are one-line :class:`FileFormatError` naming the file (a bad ``ports`` a
    :class:`ConfigError`); see :class:`_SParameterChannel` for the checks.
    """

    _error = FileFormatError
    _what = "file"
    _ports_key = "channel.ports"

    def __init__(self, path, ports: str = "12,34", *, thru: bool = True,
                 f_needed_hz: float | None = None):
        parse_ports(ports)
        p, f, s = load_touchstone(path)
        self.path = p
        self._setup(str(p), f, s, ports, thru, f_needed_hz)

    @classmethod
    def from_network(cls, network, ports: str = "12,34", *, thru: bool = True,
                     f_needed_hz: float | None = None) -> "NetworkChannel":
        """The same channel from an in-memory ``skrf.Network``: :class:`NetworkChannel`."""
        return NetworkChannel(network, ports, thru=thru, f_needed_hz=f_needed_hz)

    def __repr__(self) -> str:
        return f"TouchstoneChannel({str(self.path)!r}, ports={self.ports!r}: {self._span()})"

    def describe(self) -> str:
        return f"touchstone {self.path} ({self._span()})"


class NetworkChannel(_SParameterChannel):
    """A channel from an in-memory ``skrf.Network`` (2-port: S21; 4-port: SDD21).

    ``network`` needs ``f`` (Hz, >= 0, increasing), ``s`` (nf x n x n, n = 2 or 4) and
    ``z0``; if any reference impedance is not 50 ohm the network is renormalized to
    50 ohm (a copy, with scikit-rf's ``renormalize``) so the thru is the one a 50 ohm
    link sees.  Errors are one-line :class:`ConfigError` naming the network.
    """

    def __init__(self, network, ports: str = "12,34", *, thru: bool = True,
                 f_needed_hz: float | None = None):
        parse_ports(ports)
        name = getattr(network, "name", None)
        source = f"network {name!r}" if name else "network"
        try:
            f = np.array(network.f, dtype=np.float64)
            s = np.array(network.s, dtype=np.complex128)
            z0 = np.asarray(network.z0)
        except (AttributeError, TypeError, ValueError):
            raise ConfigError(f"{network!r}: not a scikit-rf Network (needs f, s and z0 "
                              "arrays)") from None
        if s.ndim != 3 or s.shape[1] != s.shape[2] or s.shape[1] not in (2, 4):
            raise ConfigError(f"{source}: has S of shape {s.shape}; a channel needs a 2-port "
                              "or a 4-port network")
        if f.ndim != 1 or f.size != s.shape[0] or f.size < 2:
            raise ConfigError(f"{source}: needs at least 2 frequencies, one per S matrix")
        if not (np.all(np.isfinite(f)) and np.all(np.isfinite(s))):
            raise ConfigError(f"{source}: contains non-finite (NaN/inf) values")
        if f[0] < 0 or np.any(np.diff(f) <= 0):
            raise ConfigError(f"{source}: frequencies must be >= 0 and strictly increasing")
        if not np.allclose(z0, Z_REF_OHM, rtol=0.0, atol=1e-9):
            net = network.copy()
            net.renormalize(Z_REF_OHM)
            s = np.array(net.s, dtype=np.complex128)
        self.network = network
        self._setup(source, f, s, ports, thru, f_needed_hz)

    def __repr__(self) -> str:
        return f"NetworkChannel({self._source}: {self._span()})"

    def describe(self) -> str:
        return f"{self._source} ({self._span()})"


def skrf_sdd21(network, ports: str = "12,34") -> np.ndarray:
    """``SDD21`` of a 4-port ``skrf.Network`` by scikit-rf's mixed-mode conversion.

    ``se2gmm(p=2)`` pairs single-ended ports 1->3 and 2->4 (thru), with the
    differential pairs (1, 2) in and (3, 4) out; for ``ports="ab,cd"`` (thru a->b and
    c->d, pairs (a, c) in and (b, d) out) the ports are renumbered to that order first.
    Used to check :func:`~serdes.channel.touchstone_io.thru_response`, which the
    channels use (see the module docstring for why).
    """
    a, b, c, d = parse_ports(ports)
    net = network.renumbered([a, c, b, d], [0, 1, 2, 3])
    net.se2gmm(p=2)
    return np.array(net.s[:, 1, 0], dtype=np.complex128)
