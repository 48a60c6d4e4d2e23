"""Streams: targets recomputed row by row from the papers' equations, change points, seeds,
chunking, and file streams (CSV, gzip, Parquet, ARFF) with their error messages."""

import gzip
import json
import math

import numpy as np
import pytest

from streamforest import streams as S

# ------------------------------------------------------------------------------------------------
# reference equations, written out per row from the JMLR paper's appendix A.2 (independently of
# streamforest.streams.friedman's vectorised code)


def friedman1_concepts(x):
    x1, x2, x3, x4, x5 = x[:5]
    sin, cos, exp, pi = math.sin, math.cos, math.exp, math.pi
    return {
        "orig": 10 * sin(pi * x1 * x2) + 20 * (x3 - 0.5) ** 2 + 10 * x4 + 5 * x5,
        "R1": 10 * x1 * x2 + 20 * (x3 - 0.5) + 10 * x4 + 5 * x5,
        "R2": 10 * cos(x1 * x2) + 20 * (x3 - 0.5) + exp(x4) + 5 * x5**2,
        "y2": 10 * sin(pi * x4 * x5) + 20 * (x2 - 0.5) ** 2 + 10 * x1 + 5 * x3,
        "y4": 10 * sin(pi * x2 * x5) + 20 * (x4 - 0.5) ** 2 + 10 * x3 + 5 * x1,
    }


def friedman23_concepts(x, function):
    R, f, L, C = x
    w = 2 * math.pi * f
    if function == 2:
        return {
            "orig": math.sqrt(R**2 + (w * L - 1 / (w * C)) ** 2),
            "R1": math.sqrt(C**2 + (w * R - 1 / (w * L)) ** 2),
            "R2": math.sqrt(R**2 + (R * C - 1 / (R * L)) ** 2),
            "y2": math.sqrt(C**2 + (w * R - 1 / (w * L)) ** 2),
            "y4": math.sqrt(L**2 + (w * C - 1 / (w * R)) ** 2),
        }
    return {
        "orig": math.atan((w * L - 1 / (w * C)) / R),
        "R1": math.atan((R * C - 1 / (w * L)) / w),
        "R2": math.atan((w * C - 1 / (w * R)) / R),
        "y2": math.atan((R * C - 1 / (w * L)) / R),
        "y4": math.atan((w * C - 1 / (w * R)) / R),
    }


def lea_region(x, function, stage):
    """Which region (None, 'R1', 'R2') a row is in at a stage, from the paper's inequalities."""
    if function == 1:
        x1, x2, x3, x4, x5 = x[:5]
    else:  # normalised R, f, L, C; the fifth variable is normalised R again (documented)
        R, f, L, C = x
        x1, x2, x3, x4 = R / 100, (f - 20) / 260, L, (C - 1) / 10
        x5 = x1
    r1 = [x2 < 0.3, x4 > 0.7, x5 < 0.3]
    r2 = [x2 > 0.7, x3 > 0.7, x4 < 0.3, x5 > 0.7]
    keep = {1: 0, 2: 1, 3: 2}[stage]  # inequalities removed from the end
    if all(r1[: len(r1) - keep]):
        return "R1"
    if all(r2[: len(r2) - keep]):
        return "R2"
    return None


def allowed(function, drift, i, n, x):
    """Concept names allowed at index i (two for a gradual transition)."""
    c = friedman1_concepts(x) if function == 1 else friedman23_concepts(x, function)
    if drift is None:
        names = ["orig"]
    elif drift == "gra":
        names = ["y2"] if n // 2 <= i < 3 * n // 4 else ["orig"]
    elif drift == "permute":  # the thesis: permuted concept in the 2nd and last quarters
        names = ["y2"] if n // 4 <= i < n // 2 or i >= 3 * n // 4 else ["orig"]
    elif drift == "lea":
        stage = sum(i >= cp for cp in (n // 4, n // 2, 3 * n // 4))
        region = lea_region(x, function, stage) if stage else None
        names = [region or "orig"]
    else:  # gsg
        if i < n // 2:
            names = ["orig"]
        elif i < 3 * n // 4:
            names = ["orig", "y2"] if i < n // 2 + n // 10 else ["y2"]
        else:
            names = ["y2", "y4"] if i < 3 * n // 4 + n // 10 else ["y4"]
    return [c[k] for k in names], names


@pytest.mark.parametrize("function", [1, 2, 3])
@pytest.mark.parametrize("drift", [None, "lea", "gra", "gsg", "permute"])
def test_friedman_targets_follow_the_paper(function, drift):
    n = 4000
    X, y = S.Friedman(function, drift, n=n, noise=0.0, seed=3).arrays()
    if function == 1:
        assert X.min() >= 0 and X.max() < 1
    else:
        lo = [0, 20, 0, 1]  # the paper's ranges: R ohms, f Hz, L henries, C
        hi = [100, 280, 1, 11]
        assert (X.min(axis=0) >= lo).all() and (X.max(axis=0) <= hi).all()
        assert (X[:, 0] > 0).all() and (X[:, 2] > 0).all()
    counts = {}
    for i in range(n):
        values, names = allowed(function, drift, i, n, X[i].tolist())
        hit = [
            k
            for k, v in zip(names, values, strict=True)
            if math.isclose(y[i], v, rel_tol=1e-9, abs_tol=1e-9)
        ]
        assert hit, (i, y[i], dict(zip(names, values, strict=True)))
        counts[(i // 100, hit[0])] = counts.get((i // 100, hit[0]), 0) + 1
    if drift is not None:
        # the concept does change: after the first change point some rows follow a new concept
        cp = n // 4 if drift in ("lea", "permute") else n // 2
        changed = sum(v for (b, k), v in counts.items() if b * 100 >= cp and k != "orig")
        assert changed > 0


def test_thesis_friedman_permutes_the_2nd_and_4th_quarters():
    """Seah's thesis §4.4.1: y1 = 10 sin(pi x1 x2) + 20 (x3 - .5)^2 + 10 x4 + 5 x5 in the first
    and third quarters, y2 = 10 sin(pi x4 x5) + 20 (x2 - .5)^2 + 10 x1 + 5 x3 in the second and
    last; noise N(0, 1); the concept is a function of the row index only (any chunking)."""
    n = 2 * S.BLOCK + 4001  # quarters cross block boundaries and n is not a multiple of 4
    s = S.Friedman.thesis(n=n, seed=7)
    assert s.change_points == [n // 4, n // 2, 3 * n // 4]
    assert (s.function, s.drift, s.noise) == (1, "permute", 1.0)
    X, y = S.Friedman(1, "permute", n=n, noise=0.0, seed=7).arrays()
    Xs, ys = s.arrays()
    assert np.array_equal(X, Xs)
    x1, x2, x3, x4, x5 = X[:, :5].T
    y1_ref = 10 * np.sin(np.pi * x1 * x2) + 20 * (x3 - 0.5) ** 2 + 10 * x4 + 5 * x5
    y2_ref = 10 * np.sin(np.pi * x4 * x5) + 20 * (x2 - 0.5) ** 2 + 10 * x1 + 5 * x3
    i = np.arange(n)
    q = (i >= n // 4).astype(int) + (i >= n // 2) + (i >= 3 * n // 4)  # quarter 0..3
    permuted = (q == 1) | (q == 3)
    assert np.allclose(y[permuted], y2_ref[permuted], rtol=0, atol=1e-12)
    assert np.allclose(y[~permuted], y1_ref[~permuted], rtol=0, atol=1e-12)
    for k in range(4):  # each quarter follows one concept and not the other
        other = (y1_ref if k in (1, 3) else y2_ref)[q == k]
        assert np.mean(np.abs(y[q == k] - other)) > 2.0
    # the first row of each quarter already follows that quarter's concept
    for c, ref in zip(s.change_points, (y2_ref, y1_ref, y2_ref), strict=True):
        assert y[c] == pytest.approx(ref[c]) and y[c - 1] != pytest.approx(ref[c - 1])
    noise = ys - y
    assert abs(noise.std() - 1) < 0.02 and abs(noise.mean()) < 0.02
    # chunk-independent, and a longer stream moves the change points (they are fractions of n)
    parts = list(s.chunks(9973))
    assert np.array_equal(np.concatenate([p[1] for p in parts]), ys)
    assert S.Friedman.thesis(n=1000).change_points == [250, 500, 750]


def test_gradual_drift_mixes_linearly():
    n = 200_000
    s = S.Friedman(1, "gsg", n=n, noise=0.0, seed=5)
    X, y = s.arrays()
    c1, width = n // 2, n // 10
    idx = np.arange(c1, c1 + width)
    orig = np.array([friedman1_concepts(x)["orig"] for x in X[idx].tolist()])
    new_frac = (~np.isclose(y[idx], orig)).reshape(10, -1).mean(axis=1)
    expect = (np.arange(10) + 0.5) / 10
    sd = np.sqrt(expect * (1 - expect) / (width / 10))
    assert np.all(np.abs(new_frac - expect) < 4 * sd + 1e-3)


def test_change_points_and_noise():
    for drift, cps in [
        ("lea", [250, 500, 750]),
        ("gra", [500, 750]),
        ("gsg", [500, 750]),
        ("permute", [250, 500, 750]),
    ]:
        assert S.Friedman(1, drift, n=1000).change_points == cps
    assert S.Friedman(1, None, n=1000).change_points == []
    X, y = S.Friedman(1, None, n=50_000, seed=1).arrays()
    clean = np.array([friedman1_concepts(x)["orig"] for x in X[:5000].tolist()])
    noise = y[:5000] - clean
    assert abs(noise.std() - 1) < 0.05 and abs(noise.mean()) < 0.05


def test_hyperplane_rotation_and_noise():
    n = 10_000
    s = S.Hyperplane(n=n, noise=0.0, seed=2)
    X, y = s.arrays()
    W = np.array([[1, 1, 1, 1, 1], [-1, 1, -1, 1, -1], [-1, -1, -1, -1, 1], [1, -1, 1, -1, 1]])
    for i in range(0, n, 7):
        w = W[0].astype(float)
        for k, c in enumerate((n // 4, n // 2, 3 * n // 4)):
            if i >= c:
                p = min(1.0, (i - c) / (n // 10))
                w = (1 - p) * W[k] + p * W[k + 1]
        d = sum((X[i, j] - 0.5) * w[j] for j in range(5)) / math.sqrt(sum(v * v for v in w))
        assert math.isclose(y[i], 10 * d * d, rel_tol=1e-9, abs_tol=1e-12)
    # sigma_y of the noiseless target under w1 matches its closed form; noise is sigma_y / 4
    Xs, ys = S.Hyperplane(n=400_000, noise=0.0, drift=False, seed=4).arrays()
    assert abs(ys.std() / S.hyperplane.target_sd(W[0]) - 1) < 0.01
    Xn, yn = S.Hyperplane(n=400_000, drift=False, seed=4).arrays()
    assert abs((yn - ys).std() / (ys.std() / 4) - 1) < 0.01
    assert S.Hyperplane(n=n).change_points == [2500, 5000, 7500]


def test_2dplanes_and_mv_follow_their_definitions():
    X, y = S.TwoDPlanes(n=3000, noise=0.0, seed=1).arrays()
    assert set(np.unique(X[:, 0])) == {-1.0, 1.0}
    assert set(np.unique(X[:, 1:])) == {-1.0, 0.0, 1.0}
    for row, t in zip(X.tolist(), y.tolist(), strict=True):
        x = row
        ref = 3 + 3 * x[1] + 2 * x[2] + x[3] if x[0] == 1 else -3 + 3 * x[4] + 2 * x[5] + x[6]
        assert t == ref
    X, y = S.MV(n=3000, seed=1).arrays()
    assert X.dtype == object
    for x, t in zip(X.tolist(), y.tolist(), strict=True):
        x1, x2, x3, x4, x5, x6, x7, x8, x9, x10 = x
        assert -5 <= x1 <= 5 and -15 <= x2 <= -10 and -1 <= x5 <= 1
        assert 100 <= x9 <= 500 and 1000 <= x10 <= 1200
        assert x3 == "green" if x1 > 0 else x3 in ("red", "brown")
        if x3 == "green":
            assert math.isclose(x4, x1 + 2 * x2)
        else:
            assert math.isclose(x4, x1 / 2) or math.isclose(x4, x2 / 2)
        assert x8 == ("normal" if x5 < 0.5 else "large") and x7 in ("yes", "no")
        assert 0 <= x6 / x4 <= 5
        if -2 <= x4 <= 2:
            ref = 10 - 2 * x1
        elif x7 == "yes":
            ref = 3 - x1 / x4
        elif x8 == "normal":
            ref = x6 + x1
        else:
            ref = x1 / 2
        assert math.isclose(t, ref)
    frac_green = np.mean(X[:, 2] == "green")
    assert abs(frac_green - 0.5) < 0.04


@pytest.mark.parametrize("name", list(S.BUILTIN))
def test_seeded_and_chunk_independent(name):
    a = S.make(name, n=S.BLOCK + 5000, seed=11)
    X1, y1 = a.arrays()
    parts = list(a.chunks(9999))
    assert [len(p[1]) for p in parts][:-1] == [9999] * (len(parts) - 1)
    assert np.array_equal(np.concatenate([p[1] for p in parts]), y1)
    assert np.array_equal(np.concatenate([p[0] for p in parts]), X1)
    X2, y2 = S.make(name, n=S.BLOCK + 5000, seed=11).arrays()
    assert np.array_equal(y1, y2)
    _, y3 = S.make(name, n=S.BLOCK + 5000, seed=12).arrays()
    assert not np.array_equal(y1, y3)
    assert np.isfinite(y1.astype(float)).all()
    x, t = next(iter(a))
    assert list(x) == a.feature_names and t == y1[0]


def test_unbounded_streams_and_bad_parameters():
    s = S.Friedman(1, None, n=None, seed=0)
    X, y = s.arrays(200_000)
    assert len(y) == 200_000 and np.array_equal(
        y[:1000], S.Friedman(1, None, 1000, seed=0).arrays()[1]
    )
    with pytest.raises(ValueError, match="unbounded"):
        s.arrays()
    with pytest.raises(ValueError, match="needs a length"):
        S.Friedman(1, "gra", n=None)
    with pytest.raises(ValueError, match="needs a length"):
        S.Friedman(1, "permute", n=None)
    for bad in [dict(function=4), dict(drift="abc"), dict(n=0), dict(n=1.5), dict(noise=-1)]:
        with pytest.raises(ValueError):
            S.Friedman(**{"n": 100, **bad})
    with pytest.raises(ValueError, match="unknown stream"):
        S.make("friedman4")


# ------------------------------------------------------------------------------------------------
# file streams

CSV = "a,colour,b,y\n1.5,red,2,10\n2.5,blue,,11\n3.5,,4,12\n4.5,red,5,13\n"


def _expect_rows(s):
    X, y = s.arrays()
    assert s.feature_names == ["a", "colour", "b"] and s.nominal == ("colour",)
    assert list(y) == [10, 11, 12, 13]
    assert X[:, 0].tolist() == [1.5, 2.5, 3.5, 4.5]
    assert X[:, 1].tolist() == ["red", "blue", None, "red"]
    assert X[0, 2] == 2 and math.isnan(X[1, 2])
    return X, y


def test_csv_gzip_tsv_streams(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text(CSV)
    _expect_rows(S.from_file(p))
    assert S.from_file(p).n == 4
    g = tmp_path / "d.csv.gz"
    with gzip.open(g, "wt") as fh:
        fh.write(CSV)
    _expect_rows(S.from_file(g, target="y"))
    t = tmp_path / "d.tsv"
    t.write_text(CSV.replace(",", "\t"))
    _expect_rows(S.from_file(t))
    # chunks of 3 give the same rows; another target column
    parts = list(S.from_file(p).chunks(3))
    assert [len(c[1]) for c in parts] == [3, 1]
    s = S.from_file(p, target="a")
    assert s.feature_names == ["colour", "b", "y"] and list(s.arrays()[1]) == [1.5, 2.5, 3.5, 4.5]


def test_parquet_and_arff_streams(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    df = pd.DataFrame(
        {
            "a": [1.5, 2.5, 3.5, 4.5],
            "colour": ["red", "blue", None, "red"],
            "b": [2, np.nan, 4, 5],
            "y": [10, 11, 12, 13],
        }
    )
    df.to_parquet(tmp_path / "d.parquet")
    _expect_rows(S.from_file(tmp_path / "d.parquet"))
    assert S.from_file(tmp_path / "d.parquet").n == 4
    pytest.importorskip("scipy")
    arff = (
        "@relation d\n@attribute a numeric\n@attribute colour {red,blue}\n@attribute b numeric\n"
        "@attribute y numeric\n@data\n1.5,red,2,10\n2.5,blue,?,11\n3.5,?,4,12\n4.5,red,5,13\n"
    )
    (tmp_path / "d.arff").write_text(arff)
    _expect_rows(S.from_file(tmp_path / "d.arff"))


def test_file_stream_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        S.from_file(tmp_path / "missing.csv")
    p = tmp_path / "d.csv"
    p.write_text(CSV)
    with pytest.raises(ValueError, match="no column named 'z'"):
        S.from_file(p, target="z")
    (tmp_path / "d.xlsx").write_text("x")
    with pytest.raises(ValueError, match="cannot tell the format"):
        S.from_file(tmp_path / "d.xlsx")
    with pytest.raises(
        ValueError, match="target 'colour' has a non-numeric value 'red' at data row 0"
    ):
        S.from_file(p, target="colour").arrays()
    q = tmp_path / "late.csv"
    # column kinds come from the first 10,000 rows; text after them is an error naming the row
    q.write_text("a,y\n" + "".join(f"{i},{i}\n" for i in range(10_020)) + "oops,3\n")
    with pytest.raises(
        ValueError, match="column 'a' has a non-numeric value 'oops' at data row 10020"
    ):
        list(S.from_file(q).chunks(5000))
    m = tmp_path / "miss.csv"
    m.write_text("a,y\n1,2\n2,\n")
    with pytest.raises(ValueError, match="target 'y' is missing or not finite at data row 1"):
        S.from_file(m).arrays()
    with pytest.raises(ValueError, match="nominal columns not among"):
        S.from_file(p, nominal=["nope"])


def test_shared_dataset_loader(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    with gzip.open(folder / "toy.csv.gz", "wt") as fh:
        fh.write("f1,f2,target\n" + "".join(f"{i},{2 * i},{3 * i}\n" for i in range(10)))
    (folder / "manifest.json").write_text(json.dumps({"toy": {"rows": 10, "file": "toy.csv.gz"}}))
    assert S.list_datasets(folder) == ["toy"]
    X, y = S.dataset("toy", root=folder).arrays()
    assert X.shape == (10, 2) and list(y) == [3 * i for i in range(10)]
    monkeypatch.setenv("STREAMFOREST_DATA", str(folder))
    assert S.data_root() == str(folder)
    with pytest.raises(ValueError, match="no dataset 'nope'; available: toy"):
        S.dataset("nope")
    with pytest.raises(FileNotFoundError, match="no datasets folder"):
        S.data_root(tmp_path / "elsewhere")
