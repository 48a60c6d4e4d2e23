"""Hostile model files refused before they cost anything (issue #48).

Each case of the issue, made from a good file (``tests/hostile_files.py`` edits the archive;
others edit the model before saving it, which save writes with valid checksums): a class index
outside its table, a dropped or repeated label, a zip-bomb array, a padded manifest, a served log
of 2e7 rows, a big-endian array, an array of another dtype, negative parameters, duplicate
entries.  Each is a ``ValueError`` naming the file and the field.  The cases that cost memory
on a loader that reads first run in a child process whose address space is capped at 1.5 GB
(a loader that allocated what the file declares fails there).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import streamforest as sf
from streamforest import persistence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import hostile_files as H  # noqa: E402
import model_file_fuzzer as F  # noqa: E402


def _load(blob: bytes, name: str = "hostile.sfm"):
    buf = io.BytesIO(blob)
    buf.name = name
    return sf.load(buf)


def _refused(blob: bytes, *words: str) -> str:
    with pytest.raises(ValueError) as info:
        _load(blob)
    text = str(info.value)
    assert "hostile.sfm" in text, text
    for w in words:
        assert w in text, text
    return text


def _capped_child(code: str) -> subprocess.CompletedProcess:
    """``code`` in a child whose address space is capped at 1.5 GB (under AddressSanitizer,
    whose shadow memory needs terabytes of address space, its resident memory instead: the
    sanitizer's ``hard_rss_limit_mb``, see docs/development.md)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    sanitized = "libasan" in env.get("LD_PRELOAD", "")
    cap = "" if sanitized else "resource.setrlimit(resource.RLIMIT_AS, (3 * 2**29, 3 * 2**29))"
    if sanitized:
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":hard_rss_limit_mb=1536"
    prelude = f"""
        import resource, sys
        {cap}
        sys.path.insert(0, {str(ROOT / "tests")!r})
    """
    source = textwrap.dedent(prelude) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          timeout=600, env=env, cwd=ROOT)  # fmt: skip


@pytest.fixture(scope="module")
def classifier_blob():
    return persistence._dumps(F.build("ht-classifier"))


@pytest.fixture(scope="module")
def qrf_blob():
    return persistence._dumps(F.build("qrf"))


# --- indices -------------------------------------------------------------------------------------
@pytest.mark.parametrize("index", [10**9, 3, -1])
def test_a_class_index_outside_its_table_is_refused(classifier_blob, index):
    """A label mapped to 1e9 loaded and segfaulted at the next learn_one; 3 or -1 gave other
    labels silently."""
    model = _load(classifier_blob)
    label = model.classes_[1]
    model._class_index[label] = index
    _refused(persistence._dumps(model), "_class_index", "outside [0, 3)")


@pytest.mark.parametrize("edit", ["dropped", "repeated"])
def test_a_dropped_or_repeated_label_is_refused(classifier_blob, edit):
    model = _load(classifier_blob)
    if edit == "dropped":
        model.classes_.pop()
        _refused(persistence._dumps(model), "_class_index")
    else:
        model.classes_.append(model.classes_[0])
        _refused(persistence._dumps(model), "classes_", "twice")


def test_the_engines_class_count_must_be_the_labels(classifier_blob):
    model = _load(classifier_blob)
    model.engine_.n_classes = 2
    _refused(persistence._dumps(model), "n_classes")


# --- sizes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("level", [9, 1])
def test_a_zip_bomb_array_is_refused_before_decompressing(level):
    """A 2 MB file whose tree arena declares 2 GiB (deflate 9: ratio 1,000; deflate 1, as save
    writes: over the budget): peak 5.8 GB and 38 s, then a ValueError; now refused before any
    array is read, in a child that could not hold it."""
    proc = _capped_child(f"""
        import io, hostile_files as H, model_file_fuzzer as F, streamforest as sf
        from streamforest import persistence
        base = persistence._dumps(F.build("qrf"))
        name = max(H.array_entries(base), key=lambda a: a[2])[0]
        buf = io.BytesIO(H.inflate_array(base, name, 2 * 2**30, {level}))
        buf.name = "bomb.sfm"
        try:
            sf.load(buf)
        except ValueError as e:
            print("REFUSED", e)
        else:
            print("LOADED")
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "REFUSED" in out and "bomb.sfm" in out and "arena.fa" in out, out
    assert "refused before decompressing" in out, out


def test_an_inflated_arena_is_refused_before_it_is_read(qrf_blob):
    """Within the budget and the ratio (50 MiB, deflate 1): the arena's rows checked against
    its layout before the array is read."""
    name = max(H.array_entries(qrf_blob), key=lambda a: a[2])[0]
    _refused(H.inflate_array(qrf_blob, name, 50 * 2**20, 1), "arena.fa", "for a layout of 3 trees")


def test_a_padded_manifest_is_refused_before_it_is_read():
    """1 GiB of spaces after the manifest loaded (2.05 GB peak); 5 MiB deflate 100+ times."""
    proc = _capped_child("""
        import io, hostile_files as H, model_file_fuzzer as F, streamforest as sf
        from streamforest import persistence
        base = persistence._dumps(F.build("tree"))
        for n, level in ((2**30, 9), (5 * 2**20, 1)):
            buf = io.BytesIO(H.pad_manifest(base, n, level))
            buf.name = "padded.sfm"
            try:
                sf.load(buf)
            except ValueError as e:
                print("REFUSED", e)
            else:
                print("LOADED")
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 2 and all("REFUSED" in x and "padded.sfm" in x for x in lines), lines
    assert all("manifest.json declares" in x and "before reading it" in x for x in lines), lines


def test_a_served_log_size_is_checked_before_the_log_is_built():
    """AdaptiveConformal's log_size of 2e7 took 31 s to load (2e8: 1.74 GB and still loading
    at 45 s): the log is built from it when the state is set."""
    proc = _capped_child("""
        import io, model_file_fuzzer as F, streamforest as sf
        from streamforest import persistence
        model = F.build("adaptive-cp-approx")
        model.log_size = 2 * 10**8
        buf = io.BytesIO(persistence._dumps(model))
        buf.name = "log.sfm"
        try:
            sf.load(buf)
        except ValueError as e:
            print("REFUSED", e)
        else:
            print("LOADED")
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "REFUSED" in proc.stdout and "log.sfm" in proc.stdout, proc.stdout
    assert "log_size must be an integer" in proc.stdout, proc.stdout


# --- types ---------------------------------------------------------------------------------------
def _entry_of(blob: bytes, field: str) -> str:
    """The array entry of the first array whose attribute path ends with ``field``."""
    import json

    manifest = json.loads(dict(H.read_entries(blob))["manifest.json"])
    from streamforest.persistence._limits import _Walk

    walk = _Walk()
    walk.walk(manifest["state"], "model")
    return next(n for n, p in walk.paths.items() if p.endswith(field))


@pytest.mark.parametrize("keep_values", [True, False])
def test_a_big_endian_array_is_refused_not_converted(qrf_blob, keep_values):
    """A '>f8' array loaded and the next learn raised (numba's TypingError then; nanobind's
    TypeError now)."""
    blob = H.swap_byte_order(qrf_blob, _entry_of(qrf_blob, ".arena.fa"), keep_values)
    _refused(blob, "arena.fa", "'>f8'", "byte order", "not converted")


def test_an_array_of_another_dtype_is_refused():
    blob = persistence._dumps(F.build("cp-approx"))
    name = _entry_of(blob, ".cal_y_")
    data = dict(H.read_entries(blob))[name]
    header, start = H.npy_header(data)
    values = np.frombuffer(data[start:], np.float64).astype(np.float32)
    head = H._header_bytes(dict(header, descr="<f4"))
    blob = H.rebuild(blob, {name: H.plain(name, head + values.tobytes())})
    _refused(blob, "cal_y_", "float32")


def test_the_field_types_cover_every_registry_model():
    """The table of array fields (``persistence._field_types``) holds every array attribute of a
    learnt model of each registry entry, with its dtype and dimensions."""
    from streamforest import registry
    from streamforest.persistence._field_types import _ANY_NDIM, FIELD_TYPES
    from streamforest.persistence._validation import _objects

    for name in registry.names():
        model = _load(persistence._dumps(F.build(name)))
        for path, obj in _objects(model, name):
            for k, v in obj.__dict__.items():
                if isinstance(v, np.ndarray) and type(obj).__name__ not in (
                    "KLLSketch",
                    "ServedLog",
                ):
                    assert k in FIELD_TYPES, f"{path}.{k} ({v.dtype}) is not in FIELD_TYPES"
                    dtype, ndim = FIELD_TYPES[k]
                    assert v.dtype == dtype and (k in _ANY_NDIM or v.ndim == ndim), (path, k)


# --- parameters ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, attribute, value, words",
    [
        ("adaptive-cp-approx", None, -1, ("gamma must be",)),
        ("conformal-ht-classifier", None, -1, ("calibration_size must be",)),
        ("cp-approx", "_forest", -1, ("n_trees must be",)),
        ("adaptive-cp-approx", None, float("nan"), ("gamma must be",)),
    ],
)
def test_parameters_are_checked_by_the_constructors_rules(name, attribute, value, words):
    model = F.build(name)
    target = getattr(model, attribute) if attribute else model
    param = {"adaptive-cp-approx": "gamma", "conformal-ht-classifier": "calibration_size",
             "cp-approx": "n_trees"}[name]  # fmt: skip
    setattr(target, param, value)
    _refused(persistence._dumps(model), *words)


# --- the archive ---------------------------------------------------------------------------------
def test_two_manifests_are_refused(qrf_blob):
    """Two manifest.json entries: the last one won."""

    def other(data: bytes) -> bytes:
        return data.replace(b'"n_trees",3', b'"n_trees",4')

    _refused(H.duplicate_entry(qrf_blob, "manifest.json", other), "two entries", "manifest.json")
    name = H.array_entries(qrf_blob)[0][0]
    _refused(H.duplicate_entry(qrf_blob, name), "two entries", name)


def test_a_good_file_rewritten_loads_and_predicts_as_before(qrf_blob):
    """No false alarm: the same entries written again (another archive writer, another deflate
    level) load, and predict bit for bit as the original."""
    X, _ = F.data(50, seed=3, nominal=True)
    expected = _load(qrf_blob).predict_interval(X, alpha=0.1)
    for level in (0, 1, 6, 9):
        got = _load(H.rebuild(qrf_blob, level=level)).predict_interval(X, alpha=0.1)
        assert np.array_equal(got, expected)


# --- the fuzzer -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["qrf", "ht-classifier", "adaptive-cp-approx", "amf"])
def test_the_file_fuzzer_finds_nothing(name, tmp_path):
    """A few dozen mutants of each kind of ``benchmarks/file_fuzz.py`` (forked children, 5 s
    each): no crash, hang, memory past the limit, exception other than ValueError, or refusal
    not naming the file (``python benchmarks/file_fuzz.py`` runs every registry model)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import file_fuzz

    result = file_fuzz.fuzz_model(name, 30, seed=11, timeout=30.0, folder=str(tmp_path))
    assert result["findings"] == [], result["findings"]
    assert sum(result["counts"].values()) >= 30 and result["counts"].get("refused", 0) >= 10
