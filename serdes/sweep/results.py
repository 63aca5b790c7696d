"""Result files of a sweep: one row per point, written as points finish.

CSV (``.csv``): the header is written when the file is created, then each finished
point is appended as one complete line with a single ``write`` (no torn rows: a line
without its newline, which only a hard kill in the middle of a write could leave, is
dropped when the file is opened again). Rewrites (a new column, the final ordering)
go to a temporary file that replaces the old one atomically. Values are written so
that they read back exactly (floats with ``repr``).

Parquet (``.parquet``, needs pyarrow): the rows are kept in memory and the whole file
is rewritten atomically every few seconds (5 s, or ten times the last rewrite's time
when that is longer: a rewrite takes 0.9 s at 1e5 rows, so it stays a tenth of the
sweep's time) and when the sweep ends or is interrupted.

When a sweep completes, its rows are put in grid order, so a sweep interrupted and
resumed leaves the same file as one run without interruption (except ``elapsed_s``).

Columns: the swept keys (``section.key``), ``status`` (``ok`` or ``error``), the
counted results (``ber``, ``ber_ci_lo``, ``ber_ci_hi``, ``ser``, ``bit_errors``,
``symbol_errors``, ``bits``, ``symbols``, ``snr_db``), the eye heights (``eye_*_mv``,
``veo_mv``), with ``--stat`` the statistical ``stat_ber`` and ``stat_veo_mv_<rate>``,
with ``fec.mode = "kp4"`` the post-FEC columns (:data:`FEC_COLUMNS`),
then ``elapsed_s`` (wall time of the point), the point's ``seed``, its ``point`` id,
the ``sweep`` id and the ``message``: the error of a failed point, or the warning of
a point shorter than its warm-up (status ok, counted during it: serdes run's warning).
"""

from __future__ import annotations

import csv
import io
import math
import os
import time
from pathlib import Path
from typing import Any, Iterable

from serdes.config import SCHEMA, parse_value
from serdes.sweep.grid import SweepError, canonical_value

COUNTED = ("status", "ber", "ber_ci_lo", "ber_ci_hi", "ser", "bit_errors", "symbol_errors",
           "bits", "symbols", "snr_db")
FIXED = COUNTED + ("eye_lower_mv", "eye_middle_mv", "eye_upper_mv", "eye_mv", "veo_mv",
                   "stat_ber")
# with fec.mode = "kp4": counted and modelled post-FEC results
FEC_COLUMNS = ("fec_codewords", "fec_uncorrectable", "rs_ser", "flr", "flr_model",
               "flr_binomial", "post_fec_ber", "post_fec_ber_model")
FIXED = FIXED + FEC_COLUMNS
TAIL = ("elapsed_s", "seed", "point", "sweep", "message")
INT_COLUMNS = {"bit_errors", "symbol_errors", "bits", "symbols", "seed", "fec_codewords",
               "fec_uncorrectable", "com_case"}
TEXT_COLUMNS = {"status", "point", "sweep", "message"}
PARQUET_FLUSH_S = 5.0
# a Parquet rewrite takes at most this share of the time: the file is rewritten whole
# (0.9 s at 1e5 rows), so a long sweep flushes less often as it grows
PARQUET_FLUSH_SHARE = 0.1


def is_config_column(name: str) -> bool:
    s, _, k = name.partition(".")
    return s in SCHEMA and k in SCHEMA[s]


def order_columns(keys: Iterable[str], columns: Iterable[str]) -> list[str]:
    """Swept keys first (grid order), then the fixed results, then other result columns
    in the order they were first seen, then the tail."""
    keys = list(keys)
    cols = list(dict.fromkeys(columns))
    extra_keys = [c for c in cols if is_config_column(c) and c not in keys]
    head = keys + extra_keys
    fixed = [c for c in FIXED if c in cols]
    tail = [c for c in TAIL if c in cols]
    rest = [c for c in cols if c not in head and c not in fixed and c not in tail]
    return head + fixed + rest + tail


# -- value encoding -------------------------------------------------------------------
def encode(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (bool, int, list, tuple)):
        return canonical_value(value)
    text = str(value)
    return text.replace("\r", " ").replace("\n", " ")


def decode(column: str, text: str) -> Any:
    if text == "":
        return None
    if column in TEXT_COLUMNS:
        return text
    if is_config_column(column):
        s, k = column.split(".")
        if SCHEMA[s][k].kind is str:
            return text
        return parse_value(text)
    if column in INT_COLUMNS:
        try:
            return int(text)
        except ValueError:
            pass
    try:
        return float(text)
    except ValueError:
        return text


# -- reading ----------------------------------------------------------------------------
def read_results(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The rows of a result file (CSV or Parquet) as dicts of plain Python values
    (missing values are None)."""
    path = Path(path)
    if not path.exists():
        raise SweepError(f"no result file {path}")
    if _kind(path) == "parquet":
        pq = _pyarrow(path)
        try:
            return pq.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow raises several types for a bad file
            raise SweepError(f"{path} is not a readable Parquet file: {exc}") from None
    header, rows, _ = _read_csv(path)
    return [{c: decode(c, r.get(c, "")) for c in header} for r in rows]


def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]], int]:
    """(header, rows as text, length of the complete part of the file in bytes)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SweepError(f"cannot read {path}: {exc.strerror}") from None
    good = data.rfind(b"\n") + 1  # a last line without its newline is a torn row
    if good == 0:
        return [], [], 0
    text = data[:good].decode("utf-8")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
        rows = []
        for n, rec in enumerate(reader, start=2):
            if len(rec) != len(header):
                raise SweepError(f"{path}, line {n}: {len(rec)} fields where the header has "
                                 f"{len(header)}; this is not a serdes result file")
            rows.append(dict(zip(header, rec)))
    except csv.Error as exc:
        raise SweepError(f"{path} is not a valid CSV file: {exc}") from None
    return header, rows, good


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise SweepError(f"result file {path}: the name must end in .csv or .parquet")


def _pyarrow(path: Path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise SweepError(f"{path}: Parquet files need pyarrow (pip install 'serdes[parquet]'),"
                         " or write .csv") from None
    return pq


# -- writing ----------------------------------------------------------------------------
class ResultFile:
    """A result file open for a sweep: existing rows, appends, final ordering.

    ``rows`` are dicts of encoded text (CSV) or of values (Parquet), keyed by column.
    Use as a context manager; the file is locked against a second sweep meanwhile.
    """

    def __init__(self, path: str | os.PathLike, keys: Iterable[str]):
        # the resolved path: a symlink (or another spelling) of the same file takes the
        # same lock, and rewrites replace the file, not the link
        self.path = Path(os.path.realpath(path))
        self.kind = _kind(self.path)
        self.keys = list(keys)
        self._lock_fd = None
        self.columns: list[str] = []
        self.rows: list[dict[str, Any]] = []

    # -- open / close -----------------------------------------------------------------
    def __enter__(self) -> "ResultFile":
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def open(self) -> None:
        if self.path.parent and not self.path.parent.exists():
            raise SweepError(f"cannot write {self.path}: folder {self.path.parent} does "
                             "not exist")
        self._lock()
        try:
            self._load()
        except BaseException:
            self._unlock()
            raise

    def close(self) -> None:
        try:
            self.flush(force=True)
        finally:
            self._unlock()

    def _lock(self) -> None:
        lock = self.path.with_name(self.path.name + ".lock")
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise SweepError(f"cannot write {self.path}: {exc.strerror}") from None
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - no flock on this platform
            pass
        except OSError:
            os.close(fd)
            raise SweepError(f"{self.path} is being written by another sweep") from None
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            try:
                os.unlink(self.path.with_name(self.path.name + ".lock"))
            except OSError:
                pass
            os.close(self._lock_fd)
            self._lock_fd = None

    def _load(self) -> None:
        if self.kind == "parquet":
            pq = _pyarrow(self.path)
            self._dirty = False
            self._last_flush = time.monotonic()
            self._flush_cost = 0.0
            if self.path.exists():
                self.rows = read_results(self.path)
                self.columns = list(pq.read_schema(self.path).names)
            self._check_header()
            return
        if self.path.exists():
            header, rows, good = _read_csv(self.path)
            self.columns, self.rows = header, rows
            if header and good < self.path.stat().st_size:
                with open(self.path, "r+b") as f:  # drop a torn last row
                    f.truncate(good)
        self._check_header()

    def _check_header(self) -> None:
        if not self.columns:
            self.rows = []
            return
        if "point" not in self.columns or "sweep" not in self.columns:
            raise SweepError(f"{self.path} exists and is not a serdes sweep result file "
                             "(no point and sweep columns); choose another --out")

    # -- rows -------------------------------------------------------------------------
    def start(self, columns: Iterable[str]) -> None:
        """Make sure the file exists with at least these columns."""
        want = order_columns(self.keys, list(self.columns) + list(columns))
        if want != self.columns or not self.path.exists():
            self.columns = want
            self._rewrite()

    def append(self, row: dict[str, Any]) -> None:
        new = [c for c in row if c not in self.columns]
        if self.kind == "parquet":
            if new:
                self.columns = order_columns(self.keys, self.columns + new)
            self.rows.append(dict(row))
            self._dirty = True
            self.flush()
            return
        enc = {c: encode(v) for c, v in row.items()}
        self.rows.append(enc)
        if new:
            self.columns = order_columns(self.keys, self.columns + new)
            self._rewrite()
            return
        line = _csv_line([enc.get(c, "") for c in self.columns])
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            data = line.encode("utf-8")
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)

    def values(self, row: dict[str, Any]) -> dict[str, Any]:
        """A row of ``self.rows`` as plain values, every column present."""
        if self.kind == "csv":
            return {c: decode(c, row.get(c, "")) for c in self.columns}
        return {c: row.get(c) for c in self.columns}

    def replace_rows(self, rows: list[dict[str, Any]]) -> None:
        """Rewrite the file with these rows (same representation as ``self.rows``)."""
        self.rows = list(rows)
        self._rewrite()

    def flush(self, force: bool = False) -> None:
        if self.kind != "parquet" or not self._dirty:
            return
        wait = max(PARQUET_FLUSH_S, self._flush_cost / PARQUET_FLUSH_SHARE)
        if force or time.monotonic() - self._last_flush >= wait:
            self._rewrite()

    def _rewrite(self) -> None:
        tmp = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")
        try:
            if self.kind == "parquet":
                t0 = time.monotonic()
                self._write_parquet(tmp)
                self._dirty = False
                self._last_flush = time.monotonic()
                self._flush_cost = self._last_flush - t0
            else:
                with open(tmp, "w", newline="", encoding="utf-8") as f:
                    f.write(_csv_line(self.columns))
                    for r in self.rows:
                        f.write(_csv_line([r.get(c, "") for c in self.columns]))
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, self.path)
        finally:
            if tmp.exists():
                tmp.unlink()

    def _write_parquet(self, tmp: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        cols = {c: [r.get(c) for r in self.rows] for c in self.columns}
        arrays = {}
        for c, vals in cols.items():
            if c in TEXT_COLUMNS:
                arrays[c] = pa.array(vals, type=pa.string())
            elif c in INT_COLUMNS:
                arrays[c] = pa.array(vals, type=pa.int64())
            elif not is_config_column(c) and all(v is None or isinstance(v, (int, float))
                                                 and not isinstance(v, bool) for v in vals):
                arrays[c] = pa.array([None if v is None else float(v) for v in vals],
                                     type=pa.float64())
            else:
                arrays[c] = pa.array(vals)
        pq.write_table(pa.table(arrays), tmp)


def _csv_line(fields: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    return buf.getvalue()
