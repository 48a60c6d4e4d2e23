"""Streams read from files: CSV (optionally gzipped), Parquet and ARFF.

Rules (the same for every format):

- The first row of a CSV is its header; the target is the column named ``target=`` (default:
  the last column).  It must be numeric with no missing values; a row that breaks this stops the
  stream with an error naming the row.
- A feature column is **nominal** when it is listed in ``nominal=``, or, when ``nominal`` is not
  given, when it is a text column: in Parquet a string/dictionary column, in ARFF a nominal or
  string attribute (the file declares it), and in a CSV a column whose non-empty cells in the
  first 10,000 rows are *text throughout*: at most 10% of them read as numbers (a category such
  as ``"3"`` among words is fine).  Any other column is numeric.  Nominal values reach models as
  ``str`` in an object array, so every streamforest model treats them as categories (coded in
  order of first appearance, see :mod:`streamforest.features`).  Booleans are numeric 0/1.
- Empty cells are missing values (NaN, or ``None`` in a nominal column).
- A cell of a numeric column that is not a number (a typo such as ``"oops"``, wherever it is,
  also among the first 10,000 rows) is an error naming the column, the row and the value; list
  the column in ``nominal=`` to read it as categories, or pass ``bad_numbers="missing"`` to read
  such cells as missing values.  The target must be numeric in every row, whatever
  ``bad_numbers``.
- For classification (``labels=True``) the target holds class labels, read as strings, and
  must not be missing; ``missing_values`` lists more cells read as missing (e.g. ``"?"``) and
  ``drop`` feature columns to leave out (identifiers).
- Files are read chunk by chunk (CSV with pandas, Parquet with pyarrow), so memory stays bounded;
  ARFF files are read whole (scipy.io.arff), then served in chunks.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator

import numpy as np

from .base import Stream, check_n

BAD_NUMBERS = ("error", "missing")
#: A CSV column is text (nominal) when at most this share of its non-empty cells (first chunk)
#: read as numbers; otherwise it is numeric and its other cells are bad numbers.
TEXT_MAX_NUMBER_SHARE = 0.1

FORMATS = {".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet", ".arff": "arff"}


def _format(path: str) -> tuple[str, bool]:
    name = path.lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    for suffix, fmt in FORMATS.items():
        if name.endswith(suffix):
            if gz and fmt == "parquet":
                break
            return fmt, gz
    raise ValueError(
        f"cannot tell the format of {path!r}: expected .csv, .csv.gz, .tsv, .parquet or .arff"
    )


def _need(module: str, purpose: str):
    """``module``, or an ImportError naming the extra that installs it."""
    from .._extras import need

    return need(module, purpose)


def _pandas():
    return _need("pandas", "reading data files")


class FileStream(Stream):
    """A stream over the rows of a CSV, Parquet or ARFF file (see the module docstring).

    Parameters
    ----------
    path
        The file; the format comes from its name (``.csv``, ``.csv.gz``, ``.tsv``, ``.parquet``,
        ``.arff``).
    target
        Name of the target column (default: the last column).
    nominal
        Names of the nominal feature columns; ``None`` infers them from the first chunk.
    bad_numbers
        What a cell of a numeric feature column that is not a number is: ``"error"`` (default:
        a ``ValueError`` naming the column, row and value) or ``"missing"`` (NaN).
    """

    def __init__(
        self,
        path,
        target: str | None = None,
        nominal=None,
        bad_numbers: str = "error",
        labels: bool = False,
        missing_values=(),
        drop=(),
    ):
        self.labels = bool(labels)
        self.missing_values = tuple(missing_values)
        self.drop = tuple(drop)
        if bad_numbers not in BAD_NUMBERS:
            raise ValueError(f"bad_numbers must be one of {BAD_NUMBERS}, got {bad_numbers!r}")
        self.bad_numbers = bad_numbers
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"no such file: {self.path}")
        self.format, self._gz = _format(self.path)
        self._arff = None
        columns = self._columns()
        if not columns:
            raise ValueError(f"{self.path}: no columns")
        if target is None:
            target = columns[-1]
        if target not in columns:
            shown = ", ".join(map(str, columns[:20])) + (" ..." if len(columns) > 20 else "")
            raise ValueError(f"{self.path}: no column named {target!r} (columns: {shown})")
        self.target = target
        unknown = [c for c in self.drop if c not in columns or c == target]
        if unknown:
            raise ValueError(f"{self.path}: cannot drop {unknown}: not feature columns")
        self.feature_names = [c for c in columns if c != target and c not in self.drop]
        if nominal is not None:
            nominal = tuple(nominal)
            unknown = [c for c in nominal if c not in self.feature_names]
            if unknown:
                raise ValueError(f"{self.path}: nominal columns not among the features: {unknown}")
        self._given_nominal = nominal
        self._nominal = None
        self._n = None
        self.change_points = []

    # ---------------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"FileStream({self.path!r}, target={self.target!r})"

    @property
    def nominal(self) -> tuple:
        if self._nominal is None:
            if self._given_nominal is not None:
                self._nominal = self._given_nominal
            else:
                first = next(self._frames(10_000), None)
                self._nominal = () if first is None else self._infer_nominal(first)
        return self._nominal

    @property
    def n(self) -> int:
        """Number of rows (counted on first use for CSV files)."""
        if self._n is None:
            if self.format == "parquet":
                pq = _need("pyarrow.parquet", "reading Parquet")
                self._n = pq.ParquetFile(self.path).metadata.num_rows
            elif self.format == "arff":
                self._n = len(self._load_arff())
            else:
                opener = gzip.open if self._gz else open
                with opener(self.path, "rb") as fh:
                    self._n = max(0, sum(1 for _ in fh) - 1)
        return self._n

    # ---------------------------------------------------------------------------------------------
    def _columns(self) -> list:
        if self.format == "csv":
            pd = _pandas()

            try:
                head = pd.read_csv(self.path, nrows=0, sep=self._sep())
            except Exception as e:
                raise ValueError(f"{self.path}: cannot read a CSV header ({e})") from None
            return list(head.columns)
        if self.format == "parquet":
            pq = _need("pyarrow.parquet", "reading Parquet")
            try:
                return list(pq.ParquetFile(self.path).schema_arrow.names)
            except Exception as e:
                raise ValueError(f"{self.path}: not a readable Parquet file ({e})") from None
        return list(self._load_arff().columns)

    def _sep(self) -> str:
        return "\t" if self.path.lower().removesuffix(".gz").endswith(".tsv") else ","

    def _load_arff(self):
        if self._arff is None:
            arff = _need("scipy.io.arff", "reading ARFF")
            pd = _pandas()

            try:
                if self._gz:
                    import io

                    with gzip.open(self.path, "rt") as fh:
                        data, _ = arff.loadarff(io.StringIO(fh.read()))
                else:
                    data, _ = arff.loadarff(self.path)
            except Exception as e:
                raise ValueError(f"{self.path}: not a readable ARFF file ({e})") from None
            df = pd.DataFrame(data)
            for c in df.columns:  # nominal attributes come as bytes; b'?' is missing
                if df[c].dtype == object:
                    df[c] = [
                        None if v in (b"?", "?") else v.decode() if isinstance(v, bytes) else v
                        for v in df[c]
                    ]
            self._arff = df
        return self._arff

    def _frames(self, size: int):
        """pandas DataFrames of ``size`` rows."""
        if self.format == "csv":
            pd = _pandas()

            na = list(self.missing_values) or None
            yield from pd.read_csv(
                self.path, chunksize=size, sep=self._sep(), na_values=na,
                dtype={self.target: str} if self.labels else None,
            )  # fmt: skip
        elif self.format == "parquet":
            pq = _need("pyarrow.parquet", "reading Parquet")
            for batch in pq.ParquetFile(self.path).iter_batches(batch_size=size):
                yield batch.to_pandas()
        else:
            df = self._load_arff()
            for start in range(0, len(df), size):
                yield df.iloc[start : start + size]

    def _infer_nominal(self, df) -> tuple:
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        def text(col) -> bool:
            if is_numeric_dtype(col.dtype) or is_bool_dtype(col.dtype):
                return False
            if self.format != "csv":  # the file declares its text columns
                return True
            import pandas as pd

            present = col.notna()
            numbers = int((pd.to_numeric(col, errors="coerce").notna() & present).sum())
            return numbers <= TEXT_MAX_NUMBER_SHARE * int(present.sum())

        return tuple(c for c in self.feature_names if text(df[c]))

    def chunks(self, size: int = 10_000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        pd = _pandas()

        size = check_n(size)
        nominal = set(self.nominal)
        start = 0
        for df in self._frames(size):
            if self.labels:
                y = self._labels(df[self.target], start)
            else:
                y = self._numeric(df[self.target], self.target, start, target=True)
            if nominal:
                X = np.empty((len(df), len(self.feature_names)), dtype=object)
            else:
                X = np.empty((len(df), len(self.feature_names)))
            for j, c in enumerate(self.feature_names):
                if c in nominal:
                    col = df[c]
                    X[:, j] = [None if v is None or v is pd.NA or v != v else str(v) for v in col]
                else:
                    X[:, j] = self._numeric(df[c], c, start)
            yield X, y
            start += len(df)

    def _labels(self, col, start: int) -> np.ndarray:
        """The target column as class labels (``str``, an object array); a missing label is an
        error naming the row."""
        missing = np.flatnonzero(col.isna().to_numpy())
        if len(missing):
            row = start + int(missing[0])
            raise ValueError(f"{self.path}: label {self.target!r} is missing at data row {row}")
        out = np.empty(len(col), dtype=object)
        out[:] = [str(v) for v in col.tolist()]
        return out

    def _numeric(self, col, name, start: int, target: bool = False) -> np.ndarray:
        pd = _pandas()

        try:
            a = pd.to_numeric(col, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
        except (ValueError, TypeError):
            a = pd.to_numeric(col, errors="coerce")
            if self.bad_numbers == "missing" and not target:
                return a.to_numpy(dtype=np.float64, na_value=np.nan)
            bad = a.isna() & col.notna()
            row = start + int(np.flatnonzero(bad.to_numpy())[0])
            value = col.iloc[row - start]
            hint = (
                ""
                if target
                else " (list it in nominal= to read it as categories, or pass "
                "bad_numbers='missing' (--bad-numbers missing) to read such cells as missing)"
            )
            what = "target" if target else "numeric column"
            raise ValueError(
                f"{self.path}: {what} {name!r} has a non-numeric value {value!r} at data row "
                f"{row}{hint}"
            ) from None
        if target:
            missing = np.flatnonzero(~np.isfinite(a))
            if len(missing):
                row = start + int(missing[0])
                raise ValueError(
                    f"{self.path}: target {name!r} is missing or not finite at data row {row}"
                )
        return a


def from_file(
    path,
    target: str | None = None,
    nominal=None,
    bad_numbers: str = "error",
    labels: bool = False,
    missing_values=(),
    drop=(),
) -> FileStream:
    """A :class:`FileStream` over a CSV (optionally gzipped), Parquet or ARFF file (the module
    docstring gives the rules: target, nominal columns, missing values, ``bad_numbers``; and, for
    classification, ``labels``, ``missing_values`` and ``drop``)."""
    return FileStream(path, target=target, nominal=nominal, bad_numbers=bad_numbers,
                      labels=labels, missing_values=missing_values, drop=drop)  # fmt: skip


#: Feature columns of the classification datasets that are identifiers, not features.
CLASSIFICATION_DROP = {"wisdm_ar_v1.1_transformed": ("UNIQUE_ID",)}
#: Cells read as missing values in the classification datasets (WISDM marks them ``?``).
CLASSIFICATION_MISSING = ("?",)


def classification_datasets(root=None) -> dict:
    """The classification datasets folder's manifest entries (``classification/`` under the
    datasets folder of :func:`streamforest.streams.data_root`): name -> rows, classes, ..."""
    import json

    from .data_folder import data_root

    folder = os.path.join(data_root(root), "classification")
    path = os.path.join(folder, "manifest.json")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no classification datasets folder ({path} not found)")
    with open(path) as fh:
        info = json.load(fh)
    info = info.get("datasets", info)
    return {k: {**v, "path": os.path.join(folder, v.get("file", f"{k}.csv.gz"))}
            for k, v in info.items()}  # fmt: skip


def classification_dataset(name: str, root=None) -> FileStream:
    """The classification dataset ``name`` as a stream of labelled rows: labels (``target``)
    kept as strings, the manifest's nominal features as categories, ``?`` cells missing, and
    identifier columns (:data:`CLASSIFICATION_DROP`) left out."""
    info = classification_datasets(root)
    if name not in info:
        raise ValueError(f"no classification dataset {name!r}; available: {', '.join(info)}")
    d = info[name]
    return FileStream(d["path"], target="target", nominal=d.get("nominal_features") or (),
                      labels=True, missing_values=CLASSIFICATION_MISSING,
                      drop=CLASSIFICATION_DROP.get(name, ()))  # fmt: skip
