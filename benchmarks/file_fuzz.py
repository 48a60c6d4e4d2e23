"""A structure-aware fuzzer of model files (issue #48): hostile files refused before they cost
anything, never a crash, a hang or a multi-GB allocation.

For every registry model (:mod:`streamforest.registry`) it learns a little (600 rows, 3 trees:
``tests/model_file_fuzzer.py``'s ``build``), saves, and makes mutants of the file:

- ``state``: one value or shape of the learnt state changed (indices out of range, counts,
  extremes, NaN; ``tests/model_file_fuzzer.py``'s ``mutate``), saved with valid checksums;
- ``number``: a number of the manifest (a constructor parameter or a scalar of the state) set to
  an extreme, a negative, NaN, infinity, a huge integer or a string;
- ``index``: a classifier's class index (``_class_index``) sent to 1e9, 3, -1, or a label of
  ``classes_`` dropped or repeated (other models: an item of a list dropped or repeated);
- ``inflate``: an array's declared size inflated (its header's first dimension, its data padded
  with zeros and deflated at level 1 as save does, or at level 9: a zip bomb) to 2 GiB, 1,000
  or 20 times its size;
- ``pad``: the manifest followed by 1 GiB, 60 MiB or 1 MiB of spaces;
- ``byteorder``: an array rewritten big-endian (the same values, or the same bytes);
- ``dtype``: an array rewritten in another dtype (float32, int32, int64 <-> float64);
- ``duplicate``: a second ``manifest.json`` (a number changed) or a second array entry;
- ``truncate``: the file cut short; ``flip``: 1 to 8 random bytes flipped.

Each mutant is loaded, then (if it loads) used: every prediction the model has, per row and in
batches, learning, predictions again (``workload``), in a child process forked from this one
(the model code already imported), killed after ``--timeout`` seconds (5).  Reported per model
and in all: refusals (``ValueError`` naming the file), mutants that ran, and the findings:
crashes (the child killed by a signal), hangs, other exceptions (at load or after), refusals
that do not name the file, and peak resident memory past ``2 x (the model's size) + 100 MB``,
the model's size being the bytes the original file's entries hold (its arrays and manifest as
loaded), the growth measured as the child's peak RSS (``wait4``) less this process's RSS when
it forked.

    python benchmarks/file_fuzz.py --mutants 25            # every model, ~10 min on 2 busy cores
    python benchmarks/file_fuzz.py --models qrf,actser --mutants 200 --json /tmp/fuzz.json

Exit status 1 if there is any finding.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import os
import select
import signal
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import hostile_files as H  # noqa: E402
import model_file_fuzzer as F  # noqa: E402

KINDS = {"state": 4, "number": 4, "index": 2, "inflate": 2, "pad": 1, "byteorder": 1,
         "dtype": 1, "duplicate": 1, "truncate": 1, "flip": 2}  # fmt: skip
GROWTH_SLACK = 100 * 2**20


# --- mutants --------------------------------------------------------------------------------------
def _json_nodes(node, out, path="state"):
    """``(path, container, key)`` of every number (and the list nodes, as ``(path, node,
    None)``) under a manifest node."""
    stack = [(node, path)]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            continue
        items = node.get("items")
        t = node.get("$t")
        if t == "dict" and isinstance(items, list):
            for pair in items:
                if isinstance(pair, list) and len(pair) == 2:
                    k, v = pair
                    p = f"{path}.{k}" if isinstance(k, str) else f"{path}[{k!r}]"
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        out["numbers"].append((p, pair, 1))
                    elif isinstance(v, dict) and v.get("$t") == "float":
                        out["numbers"].append((p, pair, 1))
                    if k == "_class_index":
                        out["class_index"].append((p, v))
                    stack.append((v, p))
        elif t in ("object",):
            stack.append(
                (node.get("state"), f"{path}<{node.get('class', '?').rpartition(':')[2]}>")
            )
        elif isinstance(items, list):
            if t == "list":
                out["lists"].append((path, node))
            for i, x in enumerate(items):
                if (
                    isinstance(x, (int, float))
                    and not isinstance(x, bool)
                    and t in ("list", "tuple")
                ):
                    out["numbers"].append((f"{path}[{i}]", items, i))
                stack.append((x, f"{path}[{i}]"))


def _walk(manifest) -> dict:
    out = {"numbers": [], "class_index": [], "lists": []}
    _json_nodes(manifest.get("state"), out, "state")
    _json_nodes({"$t": "dict", "items": [[k, v] for k, v in manifest.get("params", {}).items()]},
                out, "params")  # fmt: skip
    return out


def _extreme(rng, old):
    choices = [-1, 0, -(10**12), 10**12, 2**63, 10**9, 2 * 10**7, 2 * 10**8, -1e300, 1e300,
               {"$t": "float", "v": "nan"}, {"$t": "float", "v": "inf"},
               {"$t": "float", "v": "-inf"}, "x", None, True]  # fmt: skip
    if isinstance(old, (int, float)) and not isinstance(old, bool):
        choices += [old * 1000, -old, old + 1]
    return choices[int(rng.integers(len(choices)))]


def mutant(name: str, base: bytes, kind: str, rng) -> tuple[str, bytes]:
    """``(what, file bytes)`` of one mutant of kind ``kind`` of model file ``base``."""
    from streamforest import persistence

    if kind == "state":
        model = persistence.load(io.BytesIO(base))
        what = F.mutate(model, rng)
        try:
            return what, persistence._dumps(model)
        except Exception as e:  # noqa: BLE001 - unsaveable: fall back to a number mutant
            return mutant(name, base, "number", rng)[0] + f" (state: {type(e).__name__})", mutant(
                name, base, "number", rng
            )[1]
    if kind in ("number", "index", "duplicate"):
        found = {}

        def edit(manifest, found=found):
            nodes = _walk(manifest)
            if kind == "index" and nodes["class_index"]:
                path, node = nodes["class_index"][int(rng.integers(len(nodes["class_index"])))]
                items = node["items"]
                pair = items[int(rng.integers(len(items)))]
                v = [10**9, 3, -1, len(items), 10**12][int(rng.integers(5))]
                found["what"] = f"{path}[{pair[0]!r}] = {v}"
                pair[1] = v
                return
            if kind == "index" and nodes["lists"]:
                # classes_ first when there is one
                named = [x for x in nodes["lists"] if x[0].endswith(("classes_", "_classes"))]
                pool = named if named and rng.random() < 0.7 else nodes["lists"]
                path, node = pool[int(rng.integers(len(pool)))]
                items = node["items"]
                if items:
                    i = int(rng.integers(len(items)))
                    if rng.random() < 0.5:
                        del items[i]
                        found["what"] = f"{path}: item {i} dropped"
                    else:
                        items.insert(i, items[i])
                        found["what"] = f"{path}: item {i} repeated"
                    return
            path, holder, key = nodes["numbers"][int(rng.integers(len(nodes["numbers"])))]
            v = _extreme(rng, holder[key])
            found["what"] = f"{path} = {v!r}"
            holder[key] = v

        if kind == "duplicate" and rng.random() < 0.3:
            arrays = H.array_entries(base)
            entry = arrays[int(rng.integers(len(arrays)))][0]
            return f"a second {entry}", H.duplicate_entry(base, entry)
        if kind == "duplicate":
            edited = H.edit_manifest(base, edit)
            manifest = dict(H.read_entries(edited))["manifest.json"]
            return f"a second manifest.json ({found.get('what')})", H.rebuild(
                base, extra=[H.plain("manifest.json", manifest)]
            )
        blob = H.edit_manifest(base, edit)
        return found.get("what", "?"), blob
    arrays = H.array_entries(base)
    if kind == "inflate":
        by_size = sorted(arrays, key=lambda a: -a[2])
        entry, _, size = (
            by_size[0] if rng.random() < 0.5 else arrays[int(rng.integers(len(arrays)))]
        )
        target = [2 * 2**30, min(2 * 2**30, 1000 * size), 20 * size][int(rng.integers(3))]
        level = [1, 9][int(rng.integers(2))]
        return f"{entry} inflated to {target:,} bytes (deflate {level})", H.inflate_array(
            base, entry, target, level
        )
    if kind == "pad":
        n, level = [(2**30, 9), (60 * 2**20, 1), (2**20, 1)][int(rng.integers(3))]
        return f"manifest padded with {n:,} spaces (deflate {level})", H.pad_manifest(
            base, n, level
        )
    if kind in ("byteorder", "dtype"):
        multi = [a for a in arrays if np.lib.format.descr_to_dtype(a[1]["descr"]).itemsize > 1]
        entry = (multi or arrays)[int(rng.integers(len(multi or arrays)))][0]
        if kind == "byteorder":
            keep = bool(rng.random() < 0.5)
            return f"{entry} big-endian ({'values' if keep else 'bytes'} kept)", \
                H.swap_byte_order(base, entry, keep)  # fmt: skip
        data = dict(H.read_entries(base))[entry]
        d, start = H.npy_header(data)
        a = np.frombuffer(data[start:], np.lib.format.descr_to_dtype(d["descr"]))
        to = {"f": [np.float32, np.int64], "i": [np.int32, np.float64], "u": [np.int64, np.uint32]}
        new = to.get(a.dtype.kind, [np.float64])[int(rng.integers(2 if a.dtype.kind in to else 1))]
        with np.errstate(invalid="ignore", over="ignore"):  # (NaN to an int: any value)
            raw = a.astype(new).tobytes()
        head = H._header_bytes(dict(d, descr=np.lib.format.dtype_to_descr(np.dtype(new))))
        return f"{entry} as {np.dtype(new)}", H.rebuild(base, {entry: H.plain(entry, head + raw)})
    if kind == "truncate":
        cut = int(rng.integers(1, len(base)))
        return f"cut at byte {cut} of {len(base)}", base[:cut]
    blob = bytearray(base)
    flips = int(rng.integers(1, 9))
    for _ in range(flips):
        i = int(rng.integers(len(blob)))
        blob[i] ^= 1 << int(rng.integers(8))
    return f"{flips} bytes flipped", bytes(blob)


# --- running a mutant -----------------------------------------------------------------------------
def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _child(path: str, write_fd: int) -> None:
    """Load ``path`` and use the model; one JSON line to ``write_fd``; never returns."""
    outcome, detail = "ran", ""
    try:
        import streamforest as sf

        X, y = F.data(40, seed=1, nominal=True)
        try:
            model = sf.load(path)
        except ValueError as e:
            outcome = "refused" if os.path.basename(path) in str(e) else "refused-unnamed"
            detail = str(e)
        except BaseException as e:  # noqa: BLE001 - a finding
            outcome, detail = f"load-error:{type(e).__name__}", str(e)
        else:
            try:
                F.workload(model, X, y)
            except ValueError as e:
                outcome, detail = "later-ValueError", str(e)
            except BaseException as e:  # noqa: BLE001 - a finding
                outcome, detail = f"error:{type(e).__name__}", str(e)
    except BaseException as e:  # noqa: BLE001
        outcome, detail = f"error:{type(e).__name__}", str(e)
    line = json.dumps({"outcome": outcome, "detail": " ".join(detail.split())[:300]}) + "\n"
    os.write(write_fd, line.encode())
    os._exit(0)


def run_one(path: str, timeout: float) -> dict:
    """Fork a child that loads and uses ``path``; its outcome, seconds and RSS growth."""
    base_rss = _rss()
    read_fd, write_fd = os.pipe()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _child(path, write_fd)
    os.close(write_fd)
    data = b""
    while True:  # the child's line, until it closes the pipe (it exited or died)
        left = timeout - (time.perf_counter() - start)
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            _, _, usage = os.wait4(pid, 0)
            os.close(read_fd)
            return {"outcome": "hang", "detail": f"killed after {timeout:g} s",
                    "seconds": timeout, "growth": usage.ru_maxrss * 1024 - base_rss}  # fmt: skip
        ready, _, _ = select.select([read_fd], [], [], left)
        if ready:
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            data += chunk
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    os.close(read_fd)
    growth = usage.ru_maxrss * 1024 - base_rss
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        return {"outcome": f"crash:{sig}", "detail": "", "seconds": seconds, "growth": growth}
    try:
        result = json.loads(data.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        result = {"outcome": f"exit:{os.WEXITSTATUS(status)}", "detail": data.decode()[-300:]}
    return {**result, "seconds": seconds, "growth": growth}


FINDING_PREFIXES = ("crash", "hang", "load-error", "error", "refused-unnamed", "exit")


def fuzz_model(name: str, n: int, seed: int, timeout: float, folder: str) -> dict:
    from streamforest import persistence

    base = persistence._dumps(F.build(name))
    model_bytes = sum(len(d) for _, d in H.read_entries(base))
    limit = 2 * model_bytes + GROWTH_SLACK
    kinds = list(KINDS)
    weights = np.array([KINDS[k] for k in kinds], float)
    counts: collections.Counter = collections.Counter()
    by_kind: dict = collections.defaultdict(collections.Counter)
    findings, peak, slowest = [], 0, 0.0
    for i in range(n):
        rng = np.random.default_rng([seed, i, sum(map(ord, name))])
        kind = kinds[int(rng.choice(len(kinds), p=weights / weights.sum()))]
        what, blob = mutant(name, base, kind, rng)
        path = os.path.join(folder, f"{name}-mutant-{i}.sfm")
        with open(path, "wb") as f:
            f.write(blob)
        r = run_one(path, timeout)
        os.remove(path)
        outcome = r["outcome"]
        over = r["growth"] > limit
        counts[outcome] += 1
        by_kind[kind][outcome] += 1
        peak = max(peak, r["growth"])
        slowest = max(slowest, r["seconds"])
        if over:
            counts["rss-over-limit"] += 1
        if over or outcome.startswith(FINDING_PREFIXES):
            cost = f"({r['growth'] / 2**20:.0f} MB, {r['seconds']:.2f} s)"
            findings.append(f"{name} #{i} {kind}: {what} -> {outcome} {cost} {r['detail']}")
    return {"model": name, "mutants": n, "file_bytes": len(base), "model_bytes": model_bytes,
            "rss_limit": limit, "peak_growth": peak, "slowest_seconds": slowest,
            "counts": dict(counts), "by_kind": {k: dict(v) for k, v in by_kind.items()},
            "findings": findings}  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", help="comma-separated registry names (default: all)")
    ap.add_argument("--mutants", type=int, default=25, help="mutants per model (25)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds a mutant may run (5)")
    ap.add_argument("--json", help="write the results there")
    args = ap.parse_args(argv)
    from streamforest import registry

    names = args.models.split(",") if args.models else registry.names()
    print(f"load {os.getloadavg()[0]:.2f} at the start; {args.mutants} mutants per model, "
          f"seed {args.seed}, timeout {args.timeout:g} s", flush=True)  # fmt: skip
    start = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="file-fuzz-") as folder:
        for name in names:
            r = fuzz_model(name, args.mutants, args.seed, args.timeout, folder)
            results.append(r)
            c = r["counts"]
            size = f"file {r['file_bytes'] / 1e3:7.0f} kB, model {r['model_bytes'] / 1e6:6.2f} MB"
            print(f"{name:34s} {size}: "
                  f"refused {c.get('refused', 0):3d}, ran {c.get('ran', 0):3d}, "
                  f"later ValueError {c.get('later-ValueError', 0):2d}, "
                  f"findings {len(r['findings'])}, peak growth {r['peak_growth'] / 2**20:5.0f} MB "
                  f"(limit {r['rss_limit'] / 2**20:.0f}), slowest {r['slowest_seconds']:.2f} s",
                  flush=True)  # fmt: skip
            for line in r["findings"]:
                print("   ", line[:400], flush=True)
    total: collections.Counter = collections.Counter()
    for r in results:
        total.update(r["counts"])
    n_findings = sum(len(r["findings"]) for r in results)
    crashes = sum(v for k, v in total.items() if k.startswith("crash"))
    other = sum(v for k, v in total.items() if k.startswith(("load-error", "error", "exit")))
    print(f"\n{sum(r['mutants'] for r in results)} mutants of {len(results)} models in "
          f"{time.perf_counter() - start:.0f} s (load {os.getloadavg()[0]:.2f} at the end): "
          f"{crashes} crashes, {total.get('hang', 0)} hangs, "
          f"{total.get('rss-over-limit', 0)} over the memory limit, {other} other exceptions, "
          f"{total.get('refused-unnamed', 0)} refusals not naming the file; "
          f"{total.get('refused', 0)} refused (ValueError), {total.get('ran', 0)} ran, "
          f"{total.get('later-ValueError', 0)} loaded then raised ValueError")  # fmt: skip
    worst = max(results, key=lambda r: r["peak_growth"] / r["rss_limit"])
    print(
        f"largest memory growth against its limit: {worst['model']} "
        f"{worst['peak_growth'] / 2**20:.0f} MB of {worst['rss_limit'] / 2**20:.0f} MB"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "total": dict(total)}, f, indent=1)
    return 1 if n_findings else 0


if __name__ == "__main__":
    sys.exit(main())
