"""streamforest.datasets: the bundled data, and downloads from a real HTTP server on this machine
(``http.server`` in a thread, on 127.0.0.1): checksums, caching, mirrors, the offline error."""

import gzip
import hashlib
import http.server
import io
import json
import os
import socket
import sys
import tarfile
import threading

import numpy as np
import pytest

from streamforest import datasets as D
from streamforest import streams


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """An empty data folder for every test (never the user's cache)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("STREAMFOREST_DATA", str(folder))
    return folder


@pytest.fixture
def server(tmp_path):
    """``(folder it serves, base URL, list of the paths requested)``."""
    root = tmp_path / "www"
    root.mkdir()
    hits = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_request(self, code="-", size="-"):  # one call per request
            hits.append(self.path)

        def log_message(self, format, *args):  # quiet
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{httpd.server_port}", hits
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


def housing_archive(n=50, seed=0):
    """A tarball laid out as the California housing original (9 comma-separated columns)."""
    rng = np.random.default_rng(seed)
    data = np.round(rng.random((n, 9)) * 100, 4)
    text = "\n".join(",".join(f"{v:.4f}" for v in row) for row in data) + "\n"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        raw = text.encode()
        info = tarfile.TarInfo("CaliforniaHousing/cal_housing.data")
        info.size = len(raw)
        tar.addfile(info, io.BytesIO(raw))
    return buf.getvalue(), data


def register(monkeypatch, name, urls, raw, convert=D._california_housing, sha=None):
    r = D.Remote(
        name,
        urls=tuple(urls),
        filename=f"{name}.raw",
        sha256=sha or hashlib.sha256(raw).hexdigest(),
        convert=convert,
        rows=50,
        features=8,
        description="test data",
    )
    monkeypatch.setitem(D.REMOTE, name, r)
    return r


def closed_port_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connection refused, as offline
    return f"http://127.0.0.1:{port}/x.tgz"


# ------------------------------------------------------------------------------------------------
def test_fetch_downloads_checks_converts_and_caches(server, monkeypatch, cache):
    root, base, hits = server
    raw, data = housing_archive()
    (root / "h.tgz").write_bytes(raw)
    register(monkeypatch, "toy", [f"{base}/h.tgz"], raw)
    assert "toy" in D.names() and D.describe("toy")["path"] is None
    X, y = D.load("toy")
    assert hits == ["/h.tgz"]
    np.testing.assert_array_equal(X, data[:, :8])
    np.testing.assert_array_equal(y, data[:, 8])
    assert D.feature_names("toy")[0] == "longitude" and len(D.feature_names("toy")) == 8
    assert os.path.isfile(cache / "toy.csv.gz") and os.path.isfile(cache / "downloads" / "toy.raw")
    assert D.describe("toy")["path"] == str(cache / "toy.csv.gz")
    # cached: no second request
    X2, _ = D.load("toy")
    assert hits == ["/h.tgz"] and np.array_equal(X, X2)
    s = D.stream("toy")
    assert repr(s) == "dataset('toy', n=50)" and s.feature_names[-1] == "medianIncome"
    # force: downloaded again
    D.fetch("toy", force=True)
    assert hits == ["/h.tgz", "/h.tgz"]
    D.clear_cache()
    assert not os.path.exists(cache / "toy.csv.gz") and not os.path.exists(cache / "downloads")


def test_wrong_checksum_is_refused_and_nothing_is_kept(server, monkeypatch, cache):
    root, base, _ = server
    raw, _ = housing_archive()
    (root / "h.tgz").write_bytes(raw)
    register(monkeypatch, "toy", [f"{base}/h.tgz"], raw, sha="0" * 64)
    with pytest.raises(D.DownloadError, match="wrong sha256"):
        D.fetch("toy")
    assert not os.path.exists(cache / "toy.csv.gz")
    assert not os.path.exists(cache / "downloads" / "toy.raw")


def test_mirror_is_tried_after_a_failing_source(server, monkeypatch):
    root, base, hits = server
    raw, data = housing_archive(seed=3)
    (root / "mirror.tgz").write_bytes(raw)
    (root / "other.tgz").write_bytes(b"not the file")
    urls = [f"{base}/gone.tgz", f"{base}/other.tgz", f"{base}/mirror.tgz"]  # 404, bad, good
    register(monkeypatch, "toy", urls, raw)
    X, _ = D.load("toy")
    assert hits == ["/gone.tgz", "/other.tgz", "/mirror.tgz"]
    np.testing.assert_array_equal(X, data[:, :8])


def test_offline_error_says_what_to_do_and_a_file_put_by_hand_works(monkeypatch, cache):
    raw, data = housing_archive(seed=5)
    url = closed_port_url()
    register(monkeypatch, "toy", [url], raw)
    with pytest.raises(D.DownloadError) as e:
        D.fetch("toy")
    msg = str(e.value)
    assert "cannot download dataset 'toy'" in msg and url in msg and "Offline?" in msg
    hand = cache / "downloads" / "toy.raw"
    assert str(hand) in msg and "STREAMFOREST_DATA" in msg
    assert isinstance(e.value, ConnectionError)  # an OSError: the CLI prints it on one line
    # the file given by hand is used (and checked) without a network
    hand.parent.mkdir(parents=True)
    hand.write_bytes(b"tampered")
    with pytest.raises(D.DownloadError, match="is not the expected file"):
        D.fetch("toy")
    hand.write_bytes(raw)
    X, _ = D.load("toy")
    np.testing.assert_array_equal(X, data[:, :8])
    with pytest.raises(FileNotFoundError, match="not downloaded yet"):
        register(monkeypatch, "toy2", [url], raw)
        D.load("toy2", download=False)


def test_command_line_downloads_a_remote_dataset(server, monkeypatch, tmp_path, capsys):
    from streamforest.cli import main

    root, base, hits = server
    raw, _ = housing_archive(n=400)
    (root / "h.tgz").write_bytes(raw)
    register(monkeypatch, "toy", [f"{base}/h.tgz"], raw)
    js = tmp_path / "r.json"
    args = ["run", "--dataset", "toy", "--model", "tree", "--json", str(js), "--no-plot"]
    assert main(args + ["--quiet", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"downloading toy from {base}/h.tgz" in err
    assert json.loads(js.read_text())["n"] == 400 and hits == ["/h.tgz"]
    register(monkeypatch, "offline", [closed_port_url()], raw)
    assert main(["run", "--dataset", "offline", "--quiet", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("streamforest: error: cannot download dataset 'offline'")


def test_converters_of_the_original_formats():
    yacht = b"-2.3 0.568 4.78 3.99 3.17 0.125  0.11\n-2.3 0.568 4.78 3.99 3.17 0.150  0.27\n\n"
    names, X, y = D._yacht(yacht)
    assert len(names) == 6 and X.shape == (2, 6) and y.tolist() == [0.11, 0.27]
    for r in D.REMOTE.values():
        assert r.urls and len(r.sha256) == 64 and int(r.sha256, 16) >= 0
        assert r.urls[0].startswith("https://") and r.source and r.licence


# ------------------------------------------------------------------------------------------------
def test_bundled_datasets_are_recorded_and_load_without_pandas_or_network():
    here = os.path.dirname(D.__file__)
    files = sorted(f for f in os.listdir(os.path.join(here, "data")) if f.endswith(".csv.gz"))
    assert files == sorted(f"{n}.csv.gz" for n in D.BUNDLED)  # every file recorded, and only them
    readme = open(os.path.join(here, "data", "README.md")).read()
    total = 0
    for name, b in D.BUNDLED.items():
        assert f"## {name}" in readme and b.licence in readme and b.source
        path = D.path(name)
        total += os.path.getsize(path)
        with gzip.open(path, "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() in readme  # the recorded checksum
        X, y = D.load(name)
        assert X.shape == (b.rows, b.features) and y.shape == (b.rows,)
        assert np.isfinite(X).all() and np.isfinite(y).all()
        assert D.describe(name)["kind"] == "bundled"
    assert total <= 200_000
    X, y = D.load("concrete")
    assert X[0].tolist() == [540.0, 0.0, 0.0, 162.0, 2.5, 1040.0, 676.0, 28.0] and y[0] == 79.99
    # the first rows of the sources (UCI's files): heating load Y1, red wine quality
    X, y = D.load("energy_efficiency")
    assert X[0].tolist() == [0.98, 514.5, 294.0, 110.25, 7.0, 2.0, 0.0, 0.0] and y[0] == 15.55
    assert D.feature_names("energy_efficiency")[0] == "X1_relative_compactness"
    X, y = D.load("wine_quality_red")
    assert X[0].tolist() == [7.4, 0.7, 0.0, 1.9, 0.076, 11.0, 34.0, 0.9978, 3.51, 0.56, 9.4]
    assert y[0] == 5.0 and set(np.unique(y)) <= set(range(11))
    assert not set(D.BUNDLED) & set(D.REMOTE)  # a bundled set is never downloaded


def test_data_home_and_cached_files(cache, monkeypatch):
    assert D.data_home() == str(cache)
    assert D.cached() == {}
    cache.mkdir()
    with gzip.open(cache / "mine.csv.gz", "wt") as fh:
        fh.write("a,b,target\n1,2,3\n4,5,6\n")
    with gzip.open(cache / "bad.csv.gz", "wt") as fh:
        fh.write("a,b,y\n1,2,3\n")
    assert set(D.cached()) == {"mine", "bad"} and "mine" in D.names()
    X, y = D.load("mine")
    assert X.tolist() == [[1, 2], [4, 5]] and y.tolist() == [3, 6]
    assert D.describe("mine") == {"kind": "cached", "path": str(cache / "mine.csv.gz")}
    with pytest.raises(ValueError, match="last column must be 'target'"):
        D.load("bad")
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        D.load("nope")
    # a folder with a manifest (the project's shared data layout) is read through it
    (cache / "sub").mkdir()
    with gzip.open(cache / "sub" / "x.csv.gz", "wt") as fh:
        fh.write("a,target\n1,2\n")
    (cache / "manifest.json").write_text(json.dumps({"named": {"file": "sub/x.csv.gz"}}))
    assert D.load("named")[1].tolist() == [2.0]
    monkeypatch.delenv("STREAMFOREST_DATA")
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache / "xdg"))
        assert D.data_home() == str(cache / "xdg" / "streamforest")
    assert os.path.isabs(D.data_home())


def test_streams_dataset_keeps_working(tmp_path, cache, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no ../shared/data here
    # the shared folder (a manifest) first, as before; else the datasets of this module
    folder = tmp_path / "shared"
    folder.mkdir()
    with gzip.open(folder / "concrete.csv.gz", "wt") as fh:
        fh.write("a,target\n1,2\n3,4\n")
    (folder / "manifest.json").write_text(json.dumps({"concrete": {"rows": 2}}))
    s = streams.dataset("concrete", root=folder)
    assert isinstance(s, streams.FileStream) and s.n == 2
    assert streams.dataset("concrete").n == 1030  # no shared folder found: the bundled one
    with pytest.raises(ValueError, match="no dataset 'nope'"):
        streams.dataset("nope", root=folder)
