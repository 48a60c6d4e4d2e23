"""A structure-aware fuzzer of model files (issue #33): damaged files must be refused, not crash.

Each mutation takes a learnt model, changes one value (or one shape) of its decoded state,
saves it with :func:`streamforest.save` (so checksums and headers are valid), then loads it and,
if it loads, runs it: predictions of every kind the model has, per example and in batches, then
more learning and predictions.  The outcome of a mutation is one of

- ``rejected``: :func:`streamforest.load` raised ``ValueError`` (naming the file);
- ``ran``: it loaded and every call ran without an error;
- ``error:<Type>``: it loaded and a later call raised (the validator let through a state the
  model cannot use: a finding, not a crash);
- ``unsaved``: the mutated model could not even be saved (``save`` read an impossible layout);

and a crash of the process (a segmentation fault) is what the file validator exists to prevent.

What is mutated (by :class:`~streamforest.tree_kinds.state.TreeState` field name for the trees):
any array reachable from the model (the tree arenas' ``fa``/``ia``/``ba``/``lay``/``pa``,
calibration sets, sketches, ...), two times in three a tree's index-like field (node
children, features, leaf slots, category offsets, counts in ``ints``, bin links and hash
entries, sketch level boundaries, CPExact's member lists), with values chosen to hurt:
-1, -2, 0, the array's size and one past it, 10**12 and -10**12, a random index, another
entry's value, NaN and infinities (float arrays), or a shape (a field's extent in the arena's
layout, an array cut or lengthened).

Run ``python tests/model_file_fuzzer.py --model qrf --mutations 1000`` for counts (a driver
that runs the mutations in child processes and restarts after a crash, reporting it); the
tests run a few dozen.
"""

from __future__ import annotations

import argparse
import collections
import io
import os
import signal
import subprocess
import sys

import numpy as np

INDEX_FIELDS = ("ints", "nd_feat", "nd_left", "nd_right", "nd_leaf", "nd_cat_off", "nd_cat_len",
                "nd_cat_right", "nd_alt", "lf_node", "lf_free", "lf_head", "lf_nbins",
                "lf_sketch_levels", "lf_aux", "bin_hash", "bins", "ft_nominal", "nd_miss_left",
                "lf_active", "lf_mask")  # fmt: skip
_BIN_INDEX_COLUMNS = (8, 9, 10)  # B_LEAF, B_FEAT, B_NEXT


def data(n: int, seed: int = 0, nominal: bool = False):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    y = X @ [3.0, -2.0, 1.0, 0.0] + rng.normal(0, 0.1, n)
    if nominal:
        X[:, 3] = rng.integers(0, 5, n)
        y += (X[:, 3] == 2) * 2.0
    return X, y


def build(name: str):
    """A small learnt model of registry entry ``name`` (feature 3 nominal for trees/forests)."""
    from streamforest import registry

    spec = registry.get(name)
    params = {}
    if "forest" in spec.layers:  # (an SGBT forest's members are its boosting steps)
        params["n_trees" if "n_trees" in spec.parameters()["forest"] else "n_steps"] = 3
    if "n_members" in spec.param_names():
        params["n_members"] = 3
    if "calibration_size" in spec.param_names():
        params["calibration_size"] = 50
    if "nominal_features" in spec.param_names():
        params["nominal_features"] = (3,)
    if "grace_period" in spec.param_names():
        params["grace_period"] = 30
    model = registry.build(name, params, seed=0)
    X, y = data(600, nominal="nominal_features" in params)
    if spec.task == "classification":
        y = labels(y)
    model.learn_many(X[:500], y[:500])
    for i in range(500, 600):
        model.learn_one(dict(enumerate(X[i])), y[i].item())
    return model


def labels(y: np.ndarray) -> np.ndarray:
    """Three classes from a regression target."""
    return np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))


def workload(model, X, y) -> None:
    """Every prediction the model has, per example and in batches, then more learning."""
    rows = [dict(enumerate(r)) for r in X[:5]]
    model.predict(X)
    for r in rows:
        model.predict_one(r)
    if hasattr(model, "predict_interval"):
        model.predict_interval(X, alpha=[0.1, 0.3])
        model.predict_interval_one(rows[0], alpha=0.1)
    if hasattr(model, "predict_quantiles"):
        model.predict_quantiles(X, [0.1, 0.5, 0.9])
        model.predict_quantiles_one(rows[0], 0.5)
    if hasattr(model, "predict_proba"):
        model.predict_proba(X)
        model.predict_proba_one(rows[0])
        y = labels(y)
    if hasattr(model, "predict_sets"):
        model.predict_sets(X, alpha=[0.1, 0.3])
        model.predict_set_one(rows[0], alpha=0.1)
    for r, t in zip(rows, y[:5], strict=True):
        model.learn_one(r, t.item())
    model.learn_many(X, y)
    model.predict(X)
    if hasattr(model, "predict_interval"):
        model.predict_interval(X, alpha=0.1)
        model.predict_interval_one(rows[1], alpha=0.2)


# ------------------------------------------------------------------------------------------------
def _targets(model):
    """``(kind, label, object)`` for every mutable thing: ``("array", path, (holder, key))`` for
    an array attribute, ``("field", path, (engine, arena name, tree, field))`` for a tree field,
    ``("int", path, (holder, key))`` for an int attribute."""
    from streamforest.engine.core import Engine
    from streamforest.persistence._validation import _objects
    from streamforest.tree_kinds import arena as AR
    from streamforest.tree_kinds.state import TreeState

    out = []
    for path, obj in _objects(model, "model"):
        for k, v in obj.__dict__.items():
            if isinstance(v, np.ndarray) and v.size:
                out.append(("array", f"{path}.{k}", (obj, k)))
            elif type(v) is int and not k.startswith("__"):
                out.append(("int", f"{path}.{k}", (obj, k)))
            elif isinstance(v, AR.Arena):  # its arrays (not its kind: read from the params)
                for j, name in enumerate(v._fields):
                    if isinstance(v[j], np.ndarray):
                        out.append(("array", f"{path}.{k}.{name}", (v, j)))
        if isinstance(obj, Engine):
            for arena, live in (("arena", obj.created), ("bg", obj.bg_on)):
                for t in np.flatnonzero(live).tolist():
                    for name in TreeState._fields:
                        out.append(("field", f"{path}.{arena}[{t}].{name}", (obj, arena, t, name)))
    return out


def _value(rng, a: np.ndarray, flat: int):
    n = a.size
    ints = [-1, -2, 0, n, n + 1, 10**12, -(10**12), int(rng.integers(-3, n + 3))]
    other = a.flat[int(rng.integers(n))]  # another entry's value
    if a.dtype.kind == "f":
        choices = ints + [np.nan, np.inf, -np.inf, 1e300, float(a.flat[flat]) + 0.5, other]
    elif a.dtype.kind == "u":
        choices = [0, 1, 2**63, 2**64 - 1, int(rng.integers(2**62))]
    elif a.dtype.kind == "b":  # (a flag array, e.g. a wrapper's: flipped)
        choices = [not bool(a.flat[flat])]
    else:
        info = np.iinfo(a.dtype)
        choices = [v for v in ints if info.min <= v <= info.max] + [info.max, info.min, other]
    return choices[int(rng.integers(len(choices)))]


def mutate(model, rng) -> str:
    """Change one thing of ``model`` in place; returns what was changed."""
    from streamforest.tree_kinds import arena as AR
    from streamforest.tree_kinds.state import TreeState

    targets = _targets(model)
    fields = [t for t in targets if t[0] == "field" and t[2][3] in INDEX_FIELDS]
    pool = fields if fields and rng.random() < 2 / 3 else targets
    kind, label, ref = pool[int(rng.integers(len(pool)))]
    if kind == "int":
        obj, k = ref
        v = [-1, 0, 10**12, getattr(obj, k) + 1, -(10**12)][int(rng.integers(5))]
        setattr(obj, k, v)
        return f"{label} = {v}"
    if kind == "field":
        engine, arena_name, t, name = ref
        A = getattr(engine, arena_name)
        k = TreeState._fields.index(name)
        if rng.random() < 0.1:  # a shape: the field's extent in the layout
            d = 1 + int(rng.integers(min(3, A.lay.shape[2] - 1)))
            v = [0, int(A.lay[t, k, d]) + 1, int(A.lay[t, k, d]) - 1, 10**12][int(rng.integers(4))]
            A.lay[t, k, d] = v
            return f"{label} dimension {d - 1} = {v}"
        st = AR.load(A, t)
        a = st[k]
        if not a.size:
            return f"{label} (empty, unchanged)"
        # rows in use (nodes, leaf slots, bins) four times in five: most of a pool is spare
        used = {"nd": st.ints[0], "lf": st.ints[2], "bins": st.ints[5]}.get(name[:2], a.shape[0])
        rows = int(used) if 0 < used <= a.shape[0] and rng.random() < 0.8 else a.shape[0]
        row = int(rng.integers(rows))
        width = a.size // a.shape[0]
        if name == "bins" and rng.random() < 0.7:
            flat = row * width + _BIN_INDEX_COLUMNS[int(rng.integers(3))]
        else:
            flat = row * width + int(rng.integers(width))
        v = _value(rng, a, flat)
        a.reshape(-1)[flat] = v
        return f"{label}.flat[{flat}] = {v}"
    holder, key = ref
    a = holder[key] if isinstance(holder, tuple) else getattr(holder, key)
    if rng.random() < 0.1:  # a shape: cut or lengthened
        n = a.shape[0]
        new = a[: max(0, n - 1)] if rng.random() < 0.5 else np.concatenate([a, a[:1]])
        if isinstance(holder, tuple):
            return f"{label} (arena array, shape unchanged)"
        setattr(holder, key, np.ascontiguousarray(new))
        return f"{label} shape {a.shape} -> {new.shape}"
    if not a.size:
        return f"{label} (empty, unchanged)"
    if not a.flags.writeable:
        a = a.copy()
        setattr(holder, key, a)
    flat = int(rng.integers(a.size))
    v = _value(rng, a, flat)
    a.reshape(-1)[flat] = v
    return f"{label}.flat[{flat}] = {v}"


def run_mutations(name: str, start: int, stop: int, seed: int, alarm: int = 0,
                  out=sys.stdout) -> None:  # fmt: skip
    """Mutations ``start`` to ``stop - 1`` of model ``name``: one line each, ``i outcome what``,
    printed before (``i start``) and after, so a driver knows which one crashed."""
    import streamforest as sf
    from streamforest import persistence

    base = persistence._dumps(build(name))
    X, y = data(40, seed=1, nominal=True)
    for i in range(start, stop):
        signal.alarm(0)
        rng = np.random.default_rng([seed, i])
        model = persistence.load(io.BytesIO(base))
        what = mutate(model, rng)
        print(f"{i} start {what}", file=out, flush=True)
        if alarm:  # SIGALRM's default action ends the process, even inside a compiled loop
            signal.alarm(alarm)
        try:
            blob = persistence._dumps(model)
        except Exception as e:  # noqa: BLE001 - the mutation made the model unsaveable
            print(f"{i} unsaved {type(e).__name__}: {e}"[:300], file=out, flush=True)
            continue
        buf = io.BytesIO(blob)
        buf.name = f"mutation-{i}.streamforest"
        try:
            loaded = sf.load(buf)
        except ValueError as e:
            assert buf.name in str(e), f"the error does not name the file: {e}"
            print(f"{i} rejected {e}"[:300], file=out, flush=True)
            continue
        try:
            workload(loaded, X, y)
        except Exception as e:  # noqa: BLE001 - a finding: loaded, then failed
            message = " ".join(str(e).split())  # one line: the parent reads the lines
            print(f"{i} error:{type(e).__name__} {what} | {message}"[:400], file=out, flush=True)
            continue
        print(f"{i} ran {what}", file=out, flush=True)
    signal.alarm(0)


HANG = -signal.SIGALRM  # the exit code of a child whose mutation ran longer than its alarm


def drive(name: str, n: int, seed: int = 0, per_child: int = 10**9,
          hang_seconds: int = 120) -> dict:  # fmt: skip
    """Run mutations 0..n-1 in child processes (restarting after a crash); returns the counts
    of outcomes, crashes as ``crash:<exit code>`` (``crash:hang`` for a mutation still running
    after ``hang_seconds``: a kernel in an endless loop), and the lines of every finding."""
    counts: collections.Counter = collections.Counter()
    findings = []
    i = 0
    env = dict(os.environ)
    while i < n:
        stop = min(n, i + per_child)
        try:
            proc = subprocess.run(
                [sys.executable, __file__, "--model", name, "--start", str(i), "--stop",
                 str(stop), "--seed", str(seed), "--child", "--alarm", str(hang_seconds)],
                capture_output=True, text=True, env=env,
            )  # fmt: skip
            stdout, code = proc.stdout, proc.returncode
        except subprocess.TimeoutExpired as e:  # (the child's alarm failed)
            stdout, code = e.stdout or "", "hang"
        done = {}
        started = {}
        for line in stdout.splitlines():
            idx, _, rest = line.partition(" ")
            outcome, _, what = rest.partition(" ")
            if outcome == "start":
                started[int(idx)] = what
            else:
                done[int(idx)] = outcome
                if outcome.startswith("error"):
                    findings.append(line)
        for idx in sorted(done):
            counts[done[idx]] += 1
        if code == HANG:
            code = "hang"
        if code != 0:
            crashed = max(started) if started else i
            counts[f"crash:{code}"] += 1
            findings.append(f"{crashed} crash:{code} {started.get(crashed, '')}")
            if crashed not in started:  # the child died before any mutation: give up
                findings.append(proc.stderr[-2000:] if code != "hang" else "")
                break
            i = crashed + 1
        else:
            i = stop
    return {"counts": dict(counts), "findings": findings}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="qrf")
    ap.add_argument("--mutations", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--stop", type=int, default=0)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--alarm", type=int, default=0, help="seconds a mutation may run (child)")
    args = ap.parse_args()
    if args.child:
        run_mutations(args.model, args.start, args.stop, args.seed, args.alarm)
        return
    result = drive(args.model, args.mutations, args.seed)
    print(args.model, args.mutations, "mutations:", result["counts"])
    for line in result["findings"]:
        print("  ", line[:300])


if __name__ == "__main__":
    main()
