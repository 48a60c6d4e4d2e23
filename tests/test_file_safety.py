"""Model files that are damaged or tampered with, and saves that are interrupted (issue #33).

- ``load`` validates: every index, count and size in a loaded model's arrays is checked before
  any compiled code runs, so a tampered file is a ``ValueError`` naming it, never a crash; the
  processes that load tampered files here are children whose exit code is checked.
- Every damaged file (bit flips, a lying ``.npy`` header) is a ``ValueError`` naming the file.
- Saves remove their temporary files on every way out and earlier saves' orphans, keep an
  existing file's mode (a new one gets the umask's), and write a symbolic link's target.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

import streamforest as sf
from streamforest import persistence
from streamforest.persistence import _atomic_file

ROOT = Path(__file__).resolve().parents[1]
FUZZER = ROOT / "tests" / "model_file_fuzzer.py"


def _child(code: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)  # fmt: skip


def small_sketch():
    s = sf.KLLSketch(k=8, seed=0)
    s.update_many(np.arange(100.0))
    return s


# --- validation ----------------------------------------------------------------------------------
def test_a_tampered_root_child_is_refused_before_any_kernel_runs(tmp_path):
    """The issue's case: an OnlineQRF whose first tree's root has a child 10**12 (the file's
    checksums valid) loaded, then segfaulted in predict_interval; now load refuses it."""
    path = tmp_path / "tampered.streamforest"
    proc = _child(f"""
        import numpy as np, streamforest as sf
        from streamforest.tree_kinds import arena
        rng = np.random.default_rng(0)
        X = rng.random((2000, 4)); y = X @ [3, -2, 1, 0] + rng.normal(0, 0.1, 2000)
        qrf = sf.OnlineQRF(seed=0).learn_many(X, y)
        e = qrf.forest_.engine_
        st = arena.load(e.arena, 0)
        assert st.nd_feat[0] >= 0, "the root must be a split node"
        st.nd_left[0] = 10**12
        sf.save(qrf, {str(path)!r})
        try:
            sf.load({str(path)!r})
        except ValueError as err:
            print("REFUSED", err)
        else:
            sf.load({str(path)!r}).predict_interval(X[:10], alpha=0.1)
            print("LOADED")
    """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "REFUSED" in proc.stdout, proc.stdout
    assert "tampered.streamforest" in proc.stdout and "tree 0" in proc.stdout
    assert "child" in proc.stdout


@pytest.mark.parametrize(
    "name", ["qrf", "cp-exact", "normalized-cp", "tree", "atser", "aborf", "conformal-actser"]
)
def test_structure_aware_mutations_are_refused_or_run(name):
    """Mutated arrays (indices, counts, shapes, NaN, huge values), saved with valid checksums:
    each file is refused with a ValueError or the model runs every call cleanly; the child
    processes never crash (``drive`` reports a crash as ``crash:<exit code>``)."""
    proc = _child(f"""
        import sys; sys.path.insert(0, {str(FUZZER.parent)!r})
        import json, model_file_fuzzer as F
        print(json.dumps(F.drive({name!r}, 40, seed=7)))
    """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    counts = result["counts"]
    assert sum(counts.values()) == 40, result
    assert set(counts) <= {"rejected", "ran", "unsaved"}, result
    assert counts.get("rejected", 0) >= 5, result  # the mutations do reach the validator


def test_what_the_fuzzer_found_is_refused():
    """The findings of 1,000 mutations per model (issue #33): a nominal split's category count or
    offset of 2**63 - 1 (their sum with the others wrapped in int64 and passed: a crash), a tree's
    category room count of 10**12 (learning then asked for 14.6 TiB) and a tree specification's
    sketch accuracy of 10**12 (a reset tree raised in learning): each refused at load, naming the
    file (in a child: were one to load, its first prediction could crash the process)."""
    proc = _child(f"""
        import sys; sys.path.insert(0, {str(FUZZER.parent)!r})
        import io
        import model_file_fuzzer as F
        from streamforest import persistence
        from streamforest.tree_kinds import arena, state
        base = persistence._dumps(F.build("qrf"))

        def nominal_split(e):
            for t in range(e.n_trees):
                st = arena.load(e.arena, t)
                for n in range(int(st.ints[state.I_NNODES])):
                    f = st.nd_feat[n]
                    if f >= 0 and st.ft_nominal[f] and st.nd_cat_len[n] > 0:
                        return st, n
            raise AssertionError("no nominal split to edit")

        def edit_split(field):
            def edit(e):
                st, n = nominal_split(e)
                getattr(st, field)[n] = 2**63 - 1
            return edit

        def edit_room(e):
            arena.load(e.arena, 1).ints[state.I_MAXCAT] = 10**12

        def edit_spec(e):
            e.specs[0].leaf_quantile_k = 10**12

        for name, edit in [("cat_len", edit_split("nd_cat_len")),
                           ("cat_off", edit_split("nd_cat_off")),
                           ("room", edit_room), ("spec", edit_spec)]:
            model = persistence.load(io.BytesIO(base))
            edit(model.forest_.engine_)
            buf = io.BytesIO(persistence._dumps(model))
            buf.name = "edited.sfm"
            try:
                persistence.load(buf)
            except ValueError as err:
                print(name, "REFUSED", err)
            else:
                print(name, "LOADED")
    """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 4 and all("REFUSED" in x and "edited.sfm" in x for x in lines), lines
    assert "category offset or count" in lines[0] and "category offset or count" in lines[1]
    assert "more categories than the model knows" in lines[2]
    assert "specs[0]" in lines[3] and "leaf_quantile_k" in lines[3]


def test_validation_accepts_every_kind_of_learnt_model():
    """No false alarm: a learnt model of every registry entry (regression and classification)
    passes the validator, after learning per example and in batches."""
    proc = _child(f"""
        import sys; sys.path.insert(0, {str(FUZZER.parent)!r})
        import io
        from streamforest import registry, persistence
        import model_file_fuzzer as F
        for name in registry.names(task="regression") + registry.names(task="classification"):
            model = F.build(name)
            persistence.load(io.BytesIO(persistence._dumps(model)))
        print("OK")
    """)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stderr[-3000:]


# --- damaged files -------------------------------------------------------------------------------
def test_every_bit_flip_is_a_value_error_naming_the_file(tmp_path):
    path = tmp_path / "m.sfm"
    sf.save(small_sketch(), path, compress=True)
    good = path.read_bytes()
    rng = np.random.default_rng(0)
    outcomes = {"refused": 0, "same": 0}
    for i in range(400):
        bad = bytearray(good)
        bit = int(rng.integers(len(bad) * 8))
        bad[bit // 8] ^= 1 << (bit % 8)
        target = tmp_path / f"flip{i}.sfm"
        target.write_bytes(bytes(bad))
        try:
            model = sf.load(target)
        except ValueError as e:
            assert f"flip{i}.sfm" in str(e)
            outcomes["refused"] += 1
        else:  # a bit no check reads (e.g. a zip header's time field): the same model
            assert model.quantile(0.5) == small_sketch().quantile(0.5)
            outcomes["same"] += 1
    assert outcomes["refused"] > 300, outcomes


def test_a_npy_header_claiming_terabytes_is_refused_without_allocating(tmp_path):
    path = tmp_path / "big.sfm"
    sf.save(small_sketch(), path, compress=False)
    with zipfile.ZipFile(path) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    name = next(n for n in entries if n.startswith("arrays/"))
    raw = entries[name]
    header_end = raw.index(b"\n") + 1
    header = raw[:header_end].decode("latin1")
    shape_start = header.index("'shape': (") + len("'shape': (")
    shape_end = header.index(")", shape_start)
    new = header[:shape_start] + "1000000, 1000000" + header[shape_end:]
    new = new[: header_end - 1].ljust(header_end - 1) + "\n"  # the same header length
    entries[name] = new.encode("latin1") + raw[header_end:]
    with zipfile.ZipFile(path, "w") as zf:
        for n, b in entries.items():
            zf.writestr(n, b)
    with pytest.raises(ValueError, match=r"big\.sfm.*needs 8000000000000 bytes"):
        sf.load(path)


# --- saves ----------------------------------------------------------------------------------------
def _listing(folder) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_save_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch,
                                                                       error):  # fmt: skip
    path = tmp_path / "m.sfm"
    sf.save(small_sketch(), path)
    old = path.read_bytes()
    real = persistence._write_zip

    def interrupted(f, manifest, entries, compress):
        real(f, manifest, entries[:1], compress)  # half the file written, then
        raise error("interrupted mid-write")

    monkeypatch.setattr(persistence, "_write_zip", interrupted)
    s = small_sketch()
    s.update(5.0)
    with pytest.raises(error):
        sf.save(s, path)
    assert path.read_bytes() == old
    assert _listing(tmp_path) == ["m.sfm"]


def test_orphans_of_killed_saves_are_removed_by_the_next_save(tmp_path):
    path = tmp_path / "m.sfm"
    orphans = [tmp_path / f".m.sfm.{h}.tmp" for h in ("0123456789ab", "ba9876543210")]
    for o in orphans:
        o.write_bytes(b"half a model")
    other = tmp_path / ".other.sfm.0123456789ab.tmp"  # another target's: not ours to remove
    other.write_bytes(b"x")
    sf.save(small_sketch(), path)
    assert _listing(tmp_path) == [other.name, "m.sfm"]


def test_a_save_still_writing_keeps_its_temporary_file(tmp_path):
    """A temporary file whose writer is alive (it holds its flock) is not an orphan."""
    if _atomic_file.fcntl is None:
        pytest.skip("no flock on this platform")
    path = tmp_path / "m.sfm"
    busy = tmp_path / ".m.sfm.00000000abcd.tmp"
    with open(busy, "wb") as f:
        _atomic_file.fcntl.flock(f.fileno(), _atomic_file.fcntl.LOCK_EX)
        sf.save(small_sketch(), path)
        assert busy.exists()
    sf.save(small_sketch(), path)  # its writer is gone now
    assert not busy.exists()


def test_a_new_file_gets_the_umask_mode_and_an_existing_one_keeps_its_mode(tmp_path):
    old_mask = os.umask(0o027)
    try:
        sf.save(small_sketch(), tmp_path / "new.sfm")
    finally:
        os.umask(old_mask)
    assert stat.S_IMODE(os.stat(tmp_path / "new.sfm").st_mode) == 0o640
    path = tmp_path / "kept.sfm"
    sf.save(small_sketch(), path)
    os.chmod(path, 0o600)
    sf.save(small_sketch(), path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_saving_to_a_symbolic_link_writes_its_target(tmp_path):
    real = tmp_path / "models" / "real.sfm"
    real.parent.mkdir()
    sf.save(small_sketch(), real)
    link = tmp_path / "link.sfm"
    link.symlink_to(Path("models") / "real.sfm")
    s = small_sketch()
    s.update(1000.0)
    sf.save(s, link)
    assert link.is_symlink()
    assert sf.load(real).n == 101
    assert _listing(tmp_path) == ["link.sfm", "models"]
    assert _listing(real.parent) == ["real.sfm"]
    dangling = tmp_path / "dangling.sfm"
    dangling.symlink_to(Path("models") / "later.sfm")
    sf.save(s, dangling)
    assert dangling.is_symlink() and sf.load(real.parent / "later.sfm").n == 101


def test_io_errors_pass_as_they_are(tmp_path):
    with pytest.raises(FileNotFoundError):
        sf.load(tmp_path / "missing.sfm")
    payload = persistence._dumps(small_sketch())
    assert sf.load(io.BytesIO(payload)).n == 100
