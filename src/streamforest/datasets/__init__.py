"""Real regression datasets: small ones bundled with streamforest, larger ones downloaded on demand.

Every dataset is a CSV (gzip-compressed) with a header row, the numeric features first and the
target last, named ``target``; rows keep their original order, so a prequential run replays the
data as it was recorded.  Reading one needs numpy only.

- **Bundled** (:data:`BUNDLED`, inside the package, no download): ``concrete``,
  ``energy_efficiency``, ``wine_quality_red``.  Sources and licences are recorded in
  :data:`BUNDLED` and in ``datasets/data/README.md``; a dataset is bundled only when its licence
  allows redistribution.
- **Remote** (:data:`REMOTE`): downloaded from their original source the first time they are
  asked for, checked against a sha256 recorded here, converted to the CSV form above and cached.
- **Cached**: any ``NAME.csv.gz`` (in the form above) in the data folder: the remote datasets
  once downloaded, or files put there by hand.

The data folder (:func:`data_home`) is the ``STREAMFOREST_DATA`` environment variable if set,
else the user's cache folder (``$XDG_CACHE_HOME/streamforest`` or ``~/.cache/streamforest`` on
Linux, ``~/Library/Caches/streamforest`` on macOS, ``%LOCALAPPDATA%\\streamforest\\Cache`` on
Windows).  A folder with a ``manifest.json`` naming its files (as the project's shared data
folder has) is read through it.

>>> from streamforest import datasets
>>> X, y = datasets.load("concrete")
>>> X.shape, y.shape
((1030, 8), (1030,))
>>> print(", ".join(datasets.feature_names("concrete")[:3]))
cement, blast_furnace_slag, fly_ash

Without a network, :func:`fetch` fails with a :class:`DownloadError` saying where to put the
file by hand (the downloaded file, checked by its sha256 as if downloaded, in
``data_home()/downloads``).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from ..streams.arrays import ArrayStream
from ..streams.datasets import register_fallback

ENV = "STREAMFOREST_DATA"
TIMEOUT = 60.0  # seconds without an answer before a download gives up


# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Bundled:
    """A dataset shipped inside the package."""

    name: str
    rows: int
    features: int
    description: str
    source: str
    licence: str


@dataclass(frozen=True)
class Remote:
    """A dataset downloaded from its original source.

    Attributes
    ----------
    name
        Its name (``--dataset NAME``).
    urls
        Where to download it, tried in order (the original source first, then mirrors of the
        same file).
    filename
        The downloaded file's name in ``data_home()/downloads``.
    sha256
        Checksum of the downloaded file; a file that does not match is refused.
    convert
        ``convert(raw_bytes) -> (feature_names, X, y)``.
    rows, features, description, source, licence
        What :func:`describe` and ``streamforest list`` show.
    """

    name: str
    urls: tuple[str, ...]
    filename: str
    sha256: str
    convert: Callable[[bytes], tuple[list[str], np.ndarray, np.ndarray]] = field(repr=False)
    rows: int | None = None
    features: int | None = None
    description: str = ""
    source: str = ""
    licence: str = ""


class DownloadError(ConnectionError):
    """A remote dataset could not be downloaded (offline, server error, wrong checksum)."""


# ------------------------------------------------------------------------------------------------
# converters of the original files
def _csv_rows(text: str, sep: str | None) -> np.ndarray:
    rows = [line.split(sep) for line in text.splitlines() if line.strip()]
    return np.array(rows, dtype=np.float64)


def _california_housing(raw: bytes):
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
        member = tar.extractfile("CaliforniaHousing/cal_housing.data")
        if member is None:
            raise ValueError("no CaliforniaHousing/cal_housing.data in the archive")
        data = _csv_rows(member.read().decode("ascii"), ",")
    names = ["longitude", "latitude", "housingMedianAge", "totalRooms", "totalBedrooms",
             "population", "households", "medianIncome"]  # fmt: skip
    return names, data[:, :8], data[:, 8]


def _yacht(raw: bytes):
    data = _csv_rows(raw.decode("ascii"), None)
    names = ["longitudinal_position", "prismatic_coefficient", "length_displacement_ratio",
             "beam_draught_ratio", "length_beam_ratio", "froude_number"]  # fmt: skip
    return names, data[:, :6], data[:, 6]


# ------------------------------------------------------------------------------------------------
#: Datasets inside the package (licence permitting redistribution; see ``data/README.md``).
BUNDLED: dict[str, Bundled] = {
    "concrete": Bundled(
        "concrete",
        rows=1030,
        features=8,
        description="compressive strength (MPa) of concrete from its mixture and age",
        source="I-Cheng Yeh, UCI Machine Learning Repository, "
        "https://archive.ics.uci.edu/dataset/165/concrete+compressive+strength",
        licence="CC BY 4.0",
    ),
    "energy_efficiency": Bundled(
        "energy_efficiency",
        rows=768,
        features=8,
        description="heating load of simulated residential buildings from their shape and glazing",
        source="A. Tsanas and A. Xifara, UCI Machine Learning Repository, "
        "https://archive.ics.uci.edu/dataset/242/energy+efficiency",
        licence="CC BY 4.0",
    ),
    "wine_quality_red": Bundled(
        "wine_quality_red",
        rows=1599,
        features=11,
        description="sensory quality (0-10) of red vinho verde from physicochemical tests",
        source="P. Cortez et al. (2009), UCI Machine Learning Repository, "
        "https://archive.ics.uci.edu/dataset/186/wine+quality",
        licence="CC BY 4.0",
    ),
}

_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"

#: Datasets downloaded from their original source on first use.  The checksums are those other
#: projects publish for the same files: scikit-learn's ``fetch_california_housing`` (whose figshare
#: copy is the mirror below) and UCIData.jl's registry for the UCI files.
REMOTE: dict[str, Remote] = {
    r.name: r
    for r in (
        Remote(
            "california_housing",
            urls=(
                "https://www.dcc.fc.up.pt/~ltorgo/Regression/cal_housing.tgz",
                "https://ndownloader.figshare.com/files/5976036",
            ),
            filename="cal_housing.tgz",
            sha256="aaa5c9a6afe2225cc2aed2723682ae403280c4a3695a2ddda4ffb5d8215ea681",
            convert=_california_housing,
            rows=20640,
            features=8,
            description="median house value of California block groups (1990 census)",
            source="Pace and Barry (1997), StatLib; L. Torgo's regression datasets",
            licence="not stated by the source (downloaded, not redistributed)",
        ),
        Remote(
            "yacht",
            urls=(f"{_UCI}/00243/yacht_hydrodynamics.data",),
            filename="yacht_hydrodynamics.data",
            sha256="00dfecc0fc01ddd4c90b558a3ac11b246df8ebcfea130724223475a9a67f0ea1",
            convert=_yacht,
            rows=308,
            features=6,
            description="residuary resistance of sailing yachts (Delft hull series)",
            source="J. Gerritsma et al., TU Delft; UCI Machine Learning Repository",
            licence="as stated by the UCI repository (downloaded, not redistributed)",
        ),
    )
}


# ------------------------------------------------------------------------------------------------
def data_home(create: bool = False) -> str:
    """The data folder: ``$STREAMFOREST_DATA``, else the user's cache folder (module docstring)."""
    path = os.environ.get(ENV)
    if not path:
        if sys.platform == "win32":
            base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
            path = os.path.join(base, "streamforest", "Cache")
        elif sys.platform == "darwin":
            path = os.path.expanduser("~/Library/Caches/streamforest")
        else:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
            path = os.path.join(base, "streamforest")
    path = os.path.abspath(os.path.expanduser(path))
    if create:
        os.makedirs(path, exist_ok=True)
    return path


def _manifest_files(folder: str) -> dict[str, str]:
    """name -> file of a folder's ``manifest.json`` (the project's shared data layout)."""
    try:
        with open(os.path.join(folder, "manifest.json")) as fh:
            info = json.load(fh)
    except (OSError, ValueError):
        return {}
    return {k: os.path.join(folder, v.get("file", f"{k}.csv.gz")) for k, v in info.items()}


def cached() -> dict[str, str]:
    """name -> path of the datasets in the data folder (``NAME.csv.gz`` files, and those its
    ``manifest.json`` names)."""
    home = data_home()
    out: dict[str, str] = {}
    if os.path.isdir(home):
        for f in sorted(os.listdir(home)):
            if f.endswith(".csv.gz") and os.path.isfile(os.path.join(home, f)):
                out[f[: -len(".csv.gz")]] = os.path.join(home, f)
    for k, p in _manifest_files(home).items():
        if os.path.isfile(p):
            out.setdefault(k, p)
    return out


def names() -> list[str]:
    """Every dataset name :func:`load` accepts: bundled, remote and cached."""
    return sorted(set(BUNDLED) | set(REMOTE) | set(cached()))


list_datasets = names


def describe(name: str) -> dict:
    """What is known of dataset ``name``: ``kind`` (bundled / remote / cached), rows, features,
    description, source, licence, and ``path`` once it is on disk."""
    if name in BUNDLED:
        b = BUNDLED[name]
        return {"kind": "bundled", "path": _bundled_path(name), **_fields(b)}
    local = cached().get(name)
    if name in REMOTE:
        r = REMOTE[name]
        d = {"kind": "remote", "path": local, "urls": list(r.urls), "sha256": r.sha256}
        return {**d, **_fields(r)}
    if local is not None:
        return {"kind": "cached", "path": local}
    raise ValueError(_unknown(name))


def _fields(d) -> dict:
    keys = ("rows", "features", "description", "source", "licence")
    return {k: getattr(d, k) for k in keys}


def _unknown(name: str) -> str:
    return (
        f"unknown dataset {name!r}: not a bundled ({', '.join(BUNDLED)}), downloadable "
        f"({', '.join(REMOTE)}) or cached (in {data_home()}) dataset"
    )


def _bundled_path(name: str) -> str:
    return str(resources.files(__package__).joinpath("data", f"{name}.csv.gz"))


def path(name: str, download: bool = True) -> str:
    """Path of dataset ``name``'s CSV: bundled, cached, or (``download``) fetched now."""
    if name in BUNDLED:
        return _bundled_path(name)
    local = cached().get(name)
    if local is not None:
        return local
    if name in REMOTE:
        if not download:
            raise FileNotFoundError(f"dataset {name!r} is not downloaded yet (fetch({name!r}))")
        return fetch(name)
    raise ValueError(_unknown(name))


# ------------------------------------------------------------------------------------------------
def fetch(name: str, force: bool = False, quiet: bool = True) -> str:
    """Download remote dataset ``name`` (unless cached; ``force`` downloads again), check its
    sha256, convert it and store it as ``data_home()/NAME.csv.gz``; returns that path.

    A file already in ``data_home()/downloads`` under the dataset's ``filename`` is used
    instead of downloading (checked the same way), so a machine without a network can be given
    the file by hand.  Raises :class:`DownloadError` when no source gives the right file.
    """
    if name not in REMOTE:
        if name in BUNDLED:
            return _bundled_path(name)
        raise ValueError(f"no remote dataset {name!r}; remote datasets: {', '.join(REMOTE)}")
    r = REMOTE[name]
    home = data_home()
    target = os.path.join(home, f"{name}.csv.gz")
    if os.path.isfile(target) and not force:
        return target
    downloads = os.path.join(home, "downloads")
    raw_path = os.path.join(downloads, r.filename)
    raw = None
    if os.path.isfile(raw_path) and not force:
        with open(raw_path, "rb") as fh:
            raw = fh.read()
        if _sha256(raw) != r.sha256:
            raise DownloadError(
                f"{raw_path} is not the expected file (sha256 {_sha256(raw)}, expected "
                f"{r.sha256}); delete it to download again"
            )
    if raw is None:
        raw = _download(r, quiet)
        os.makedirs(downloads, exist_ok=True)
        _write_atomic(raw_path, raw)
    names_, X, y = r.convert(raw)
    _write_atomic(target, _to_csv_gz(names_, X, y))
    return target


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download(r: Remote, quiet: bool) -> bytes:
    failures = []
    for url in r.urls:
        if not quiet:
            print(f"downloading {r.name} from {url}", file=sys.stderr, flush=True)
        try:
            request = urllib.request.Request(url, headers={"User-Agent": "streamforest"})
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                data = response.read()
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", None) or e
            failures.append(f"{url}: {reason}")
            continue
        digest = _sha256(data)
        if digest == r.sha256:
            return data
        failures.append(f"{url}: wrong sha256 {digest} (expected {r.sha256})")
    where = os.path.join(data_home(), "downloads", r.filename)
    raise DownloadError(
        f"cannot download dataset {r.name!r} ({'; '.join(failures)}). Offline? Put the file "
        f"({r.urls[0]}) at {where}, or set {ENV} to a folder holding {r.name}.csv.gz"
    )


def _write_atomic(dest: str, data: bytes) -> None:
    folder = os.path.dirname(dest)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _to_csv_gz(feature_names, X, y) -> bytes:
    out = io.StringIO()
    out.write(",".join([*feature_names, "target"]) + "\n")
    for row, t in zip(X.tolist(), y.tolist(), strict=True):
        out.write(",".join(repr(float(v)) for v in [*row, t]) + "\n")
    return gzip.compress(out.getvalue().encode("ascii"), mtime=0)


# ------------------------------------------------------------------------------------------------
def _read(csv_path: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    opener = gzip.open if csv_path.endswith(".gz") else open
    with opener(csv_path, "rt") as fh:
        header = fh.readline().strip().split(",")
        if not header or header[-1] != "target":
            raise ValueError(
                f"{csv_path}: not a streamforest dataset file (its last column must be "
                f"'target'; read other files with streamforest.streams.from_file)"
            )
        try:
            data = np.loadtxt(fh, delimiter=",", ndmin=2)
        except ValueError as e:
            raise ValueError(f"{csv_path}: non-numeric data ({e})") from None
    if data.shape[0] == 0:
        raise ValueError(f"{csv_path}: no rows")
    if data.shape[1] != len(header):
        raise ValueError(f"{csv_path}: {data.shape[1]} columns but {len(header)} names")
    return header[:-1], np.ascontiguousarray(data[:, :-1]), np.ascontiguousarray(data[:, -1])


def load(name: str, download: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of dataset ``name`` (float arrays, rows in their original order); a remote
    dataset not yet cached is downloaded first (unless ``download=False``)."""
    _, X, y = _read(path(name, download=download))
    return X, y


def feature_names(name: str, download: bool = True) -> list[str]:
    """The feature names of dataset ``name`` (its CSV header, target left out)."""
    p = path(name, download=download)
    with (gzip.open if p.endswith(".gz") else open)(p, "rt") as fh:
        return fh.readline().strip().split(",")[:-1]


class DatasetStream(ArrayStream):
    """The stream of a named dataset (arrays in memory), rows in their original order."""

    def __init__(self, name: str, X, y, feature_names):
        super().__init__(X, y, feature_names=feature_names)
        self.name = name

    def __repr__(self) -> str:
        return f"dataset({self.name!r}, n={self.n})"


def stream(name: str, download: bool = True) -> DatasetStream:
    """Dataset ``name`` as a :class:`~streamforest.streams.Stream` (for ``prequential`` and the
    command line's ``--dataset``)."""
    names_, X, y = _read(path(name, download=download))
    return DatasetStream(name, X, y, names_)


def clear_cache() -> None:
    """Delete the downloaded and converted remote datasets from the data folder (files put
    there by hand under other names are kept)."""
    home = data_home()
    for name, r in REMOTE.items():
        for p in (
            os.path.join(home, f"{name}.csv.gz"),
            os.path.join(home, "downloads", r.filename),
        ):
            if os.path.isfile(p):
                os.unlink(p)
    downloads = os.path.join(home, "downloads")
    if os.path.isdir(downloads) and not os.listdir(downloads):
        shutil.rmtree(downloads)


__all__ = [
    "BUNDLED",
    "REMOTE",
    "Bundled",
    "DatasetStream",
    "DownloadError",
    "Remote",
    "cached",
    "clear_cache",
    "data_home",
    "describe",
    "feature_names",
    "fetch",
    "list_datasets",
    "load",
    "names",
    "path",
    "stream",
]


register_fallback("streamforest.datasets", names, stream)
