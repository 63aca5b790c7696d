"""Touchstone v1 text reader (our own, strict) and the differential thru of an S matrix.

Why not scikit-rf's reader: ``skrf.Network(path)`` picks a loader from the file and
may unpickle it, i.e. a crafted "channel file" could run arbitrary code.  This module
only ever reads a size-capped UTF-8 text file and parses numbers.  Once the data are in
memory, scikit-rf is used freely (see :class:`serdes.channel.touchstone.NetworkChannel`).

Reading
-------
:func:`read_sdd21` reads a 4-port single-ended ``.s4p`` file and returns the
differential-mode thru ``SDD21``, or a 2-port ``.s2p`` file and returns its ``S21``.
The file is read as text only (at most ``MAX_FILE_BYTES`` = 200 MB, UTF-8, no NUL
bytes) and parsed by the strict Touchstone v1 parser here: the ``#`` options line
(Hz/kHz/MHz/GHz; S parameters only; RI/MA/DB; ``R`` ohms; defaults GHz S MA R 50),
``!`` comments, records spread over several lines (4-port), with or without a DC
point.  It never hands the path to ``skrf.Network``, which tries to unpickle a file
(arbitrary code execution from a crafted "channel file").  Every failure (missing,
too large or binary file, garbage text, wrong number of ports, a frequency that
does not increase anywhere in the file, Touchstone v2 keywords, noise data, NaNs)
is reported as one :class:`~serdes.errors.FileFormatError` line naming the file,
and a bad ``ports`` argument as a :class:`~serdes.errors.ConfigError`.
:class:`TouchstoneChannel` adds the thru and Nyquist-band checks the link uses.

Mixed-mode conversion (explicit formula).  For ``ports="ab,cd"`` the single-ended
thru paths are ``a->b`` and ``c->d``, the differential input pair is ``(a, c)`` (``a``
positive) and the output pair is ``(b, d)``.  With equal real reference impedances
on all four ports (50 ohm here) the differential-to-differential thru is::

    SDD21 = ( S[b,a] - S[b,c] - S[d,a] + S[d,c] ) / 2

* ``"12,34"`` (default, IEEE 802.3 channel files): ``SDD21 = (S21 - S23 - S41 + S43) / 2``
* ``"13,24"`` (scikit-rf ``se2gmm(p=2)`` ordering): ``SDD21 = (S31 - S32 - S41 + S42) / 2``

Any other ``"ab,cd"`` with ``{a,b,c,d} = {1,2,3,4}`` is accepted as well.  For an
``.s2p`` file ``ports`` is still validated but ignored: the result is ``S21``.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np

from serdes.errors import ConfigError, FileFormatError

__all__ = ["MAX_FILE_BYTES", "load_touchstone", "parse_ports", "read_sdd21", "thru_response"]

_NPORTS_BY_SUFFIX = {".s2p": 2, ".s4p": 4}
_PORTS_RE = re.compile(r"^\s*([1-4])([1-4])\s*,\s*([1-4])([1-4])\s*$")


def parse_ports(ports: str) -> tuple[int, int, int, int]:
    """Parse ``"ab,cd"`` into 0-based ``(a, b, c, d)``: thru a->b and c->d.

    Raises :class:`ConfigError` unless it is two pairs of digits 1-4 using each port once.
    """
    m = _PORTS_RE.match(ports) if isinstance(ports, str) else None
    if m is None or sorted(m.groups()) != ["1", "2", "3", "4"]:
        raise ConfigError(
            f"ports={ports!r}: expected 'ab,cd' = thru a->b and c->d using ports 1-4 once each, "
            "e.g. '12,34' (IEEE 802.3 files) or '13,24'"
        )
    a, b, c, d = (int(g) - 1 for g in m.groups())
    return a, b, c, d


#: Larger files are refused before they are read (the IEEE files are 2-5 MB).
MAX_FILE_BYTES = 200 * 1024 * 1024

_FREQ_UNITS = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
_FORMATS = ("ri", "ma", "db")


def _read_text(p: Path) -> str:
    """The file's text: size-capped, refused if binary or not UTF-8 (never unpickled)."""
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise FileFormatError(f"{p}: cannot read ({exc.strerror})") from None
    if len(data) > MAX_FILE_BYTES:
        raise FileFormatError(
            f"{p}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MB, too large for a "
            "Touchstone channel file"
        )
    nul = data.find(b"\x00")
    if nul >= 0:
        raise FileFormatError(f"{p}: binary data (NUL byte at offset {nul}), not a Touchstone text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileFormatError(
            f"{p}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}), "
            "not a Touchstone text file"
        ) from None


def _parse_options(p: Path, lineno: int, body: str) -> tuple[float, str]:
    """Touchstone v1 option line ``# <unit> <parameter> <format> R <ohms>`` (any order,
    each optional; defaults GHz, S, MA, R 50) -> (Hz per frequency unit, format)."""
    scale, fmt = 1e9, "ma"
    toks = body[1:].split()
    i = 0
    while i < len(toks):
        t = toks[i].lower()
        if t in _FREQ_UNITS:
            scale = _FREQ_UNITS[t]
        elif t in _FORMATS:
            fmt = t
        elif t == "s":
            pass
        elif t in ("y", "z", "h", "g"):
            raise FileFormatError(
                f"{p}, line {lineno}: {toks[i]}-parameters are not supported, only S-parameters"
            )
        elif t == "r":
            try:
                r = float(toks[i + 1])
            except (IndexError, ValueError):
                r = float("nan")
            if not (np.isfinite(r) and r > 0):
                raise FileFormatError(
                    f"{p}, line {lineno}: option 'R' needs a reference resistance > 0 ohm"
                )
            i += 1
        else:
            tok = toks[i] if len(toks[i]) <= 20 else toks[i][:17] + "..."
            raise FileFormatError(
                f"{p}, line {lineno}: unknown option {tok!r} (allowed: Hz/kHz/MHz/GHz, S, "
                "RI/MA/DB, R <ohms>)"
            )
        i += 1
    return scale, fmt


def _parse_touchstone(p: Path, text: str, nports: int) -> tuple[np.ndarray, np.ndarray]:
    """Strict Touchstone v1 parser -> (f_hz, s[nf, n, n]).

    ``!`` starts a comment; the first ``#`` line sets the options (later ones are
    ignored, as the format says); a record is the frequency and ``n*n`` value pairs and
    may span several lines but must end at the end of a line; every record's frequency
    must be above the previous one.  Touchstone v2 keywords (``[...]``) and 2-port
    noise data are refused.
    """
    per_rec = 1 + 2 * nports * nports
    options = None
    records: list[list[float]] = []
    cur: list[float] = []
    cur_line = 0
    last_f = -np.inf
    for lineno, line in enumerate(text.splitlines(), start=1):
        body = line.split("!", 1)[0].strip()
        if not body:
            continue
        if body.startswith("#"):
            if options is None:
                options = _parse_options(p, lineno, body)
            continue
        if body.startswith("["):
            raise FileFormatError(
                f"{p}, line {lineno}: Touchstone v2 keyword {body.split()[0]!r}; only "
                "Touchstone v1 files are read (save the file as version 1)"
            )
        vals = []
        for tok in body.split():
            try:
                vals.append(float(tok))
            except ValueError:
                tok = tok if len(tok) <= 20 else tok[:17] + "..."
                raise FileFormatError(
                    f"{p}: not a readable Touchstone file (non-numeric text {tok!r} on "
                    f"line {lineno})"
                ) from None
        if not cur:
            cur_line = lineno
            if options is None:
                raise FileFormatError(
                    f"{p}, line {lineno}: data before the '#' option line "
                    "(e.g. '# GHz S MA R 50')"
                )
            f_rec = vals[0] * options[0]
            if not f_rec > last_f:  # also where 2-port noise data would start
                raise FileFormatError(
                    f"{p}, line {lineno}: frequency {f_rec:g} Hz does not follow "
                    f"{last_f:g} Hz; frequencies must be >= 0 and strictly increasing"
                    + (" (2-port noise-parameter data are not supported either)"
                       if nports == 2 else "")
                )
        cur.extend(vals)
        if len(cur) > per_rec:
            raise FileFormatError(
                f"{p}: not a readable Touchstone file (the record starting on line "
                f"{cur_line} has more than {per_rec} numbers; {nports}-port records are "
                f"frequency + {2 * nports * nports} values, ending at the end of a line)"
            )
        if len(cur) == per_rec:
            last_f = cur[0] * options[0]
            records.append(cur)
            cur = []
    if cur:
        raise FileFormatError(
            f"{p}: not a readable Touchstone file (the record starting on line {cur_line} "
            f"has {len(cur)} numbers, not whole {nports}-port records of {per_rec} numbers: "
            f"frequency + {2 * nports * nports} values)"
        )
    if not records:
        raise FileFormatError(f"{p}: not a readable Touchstone file (no data lines)")
    scale, fmt = options
    arr = np.asarray(records, dtype=np.float64)
    f = arr[:, 0] * scale
    a, b = arr[:, 1::2], arr[:, 2::2]
    if fmt == "ri":
        v = a + 1j * b
    else:
        mag = a if fmt == "ma" else 10.0 ** (a / 20.0)
        v = mag * np.exp(1j * np.deg2rad(b))
    s = v.reshape(-1, nports, nports)
    if nports == 2:
        s = s.transpose(0, 2, 1)  # v1 2-port order is S11 S21 S12 S22
    return f, np.ascontiguousarray(s, dtype=np.complex128)


#: The last few files parsed, by the SHA-256 of their text and the port count: a link
#: read again (a sweep's points, each crosstalk aggressor's file, the COM and the link
#: of the same channel) skips the parse, 0.15-0.2 s of a 2-4 MB IEEE file against 0.01 s
#: for the hash. Only whole successful parses are kept; each caller gets its own copy.
_PARSED: dict = {}
_PARSED_MAX = 8


def _parsed(p: Path, text: str, nports: int) -> tuple[np.ndarray, np.ndarray]:
    key = (hashlib.sha256(text.encode("utf-8")).digest(), nports)
    got = _PARSED.pop(key, None)
    if got is None:
        got = _parse_touchstone(p, text, nports)
        while len(_PARSED) >= _PARSED_MAX:
            _PARSED.pop(next(iter(_PARSED)))
    _PARSED[key] = got   # the newest last
    return got[0].copy(), got[1].copy()


def load_touchstone(path) -> tuple[Path, np.ndarray, np.ndarray]:
    """Read a .s2p/.s4p file as text with our own parser; return (path, f_hz, s[nf, n, n]).

    The file is only ever read as size-capped UTF-8 text and parsed as numbers: no
    loader that could unpickle or execute anything is involved.
    """
    try:
        p = Path(path)
    except TypeError:
        raise FileFormatError(f"{path!r}: not a file path") from None
    if not p.exists():
        raise FileFormatError(f"{p}: file not found")
    if not p.is_file():
        raise FileFormatError(f"{p}: not a regular file")
    nports = _NPORTS_BY_SUFFIX.get(p.suffix.lower())
    if nports is None:
        raise FileFormatError(
            f"{p}: unsupported extension {p.suffix!r}, expected a Touchstone .s2p or .s4p file"
        )
    f, s = _parsed(p, _read_text(p), nports)
    if f.size < 2:
        raise FileFormatError(f"{p}: needs at least 2 frequency points, found {f.size}")
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(s))):
        raise FileFormatError(f"{p}: contains non-finite (NaN/inf) values")
    if f[0] < 0 or np.any(np.diff(f) <= 0):
        raise FileFormatError(f"{p}: frequencies must be >= 0 and strictly increasing")
    return p, f, s


def thru_response(s: np.ndarray, ports: tuple[int, int, int, int]) -> np.ndarray:
    """Differential thru from single-ended S (nf, n, n); S21 for a 2-port."""
    if s.shape[1] == 2:
        return s[:, 1, 0].astype(np.complex128, copy=True)
    a, b, c, d = ports
    return 0.5 * (s[:, b, a] - s[:, b, c] - s[:, d, a] + s[:, d, c])


def read_sdd21(path, ports: str = "12,34") -> tuple[np.ndarray, np.ndarray]:
    """Read a Touchstone file and return ``(f_hz, sdd21)``.

    ``.s4p``: ``SDD21 = (S[b,a] - S[b,c] - S[d,a] + S[d,c]) / 2`` for ``ports="ab,cd"``
    (default ``"12,34"``: ``(S21 - S23 - S41 + S43)/2``; ``"13,24"``:
    ``(S31 - S32 - S41 + S42)/2``).  ``.s2p``: ``S21`` (``ports`` validated, ignored).

    Raises :class:`FileFormatError` (missing/unreadable/malformed file) or
    :class:`ConfigError` (bad ``ports``), each with a one-line message.
    """
    prt = parse_ports(ports)
    _, f, s = load_touchstone(path)
    return f, thru_response(s, prt)
