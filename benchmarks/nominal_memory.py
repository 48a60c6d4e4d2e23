"""Memory of a classifier on high-cardinality nominal streams (issue 33).

A classifier with its defaults (``--model``: ``actser-ensemble``, ``ACTSEREnsembleClassifier``,
25 trees; ``actser``, one ``ACTSERClassifier``; ``hoeffding``, one ``HoeffdingTreeClassifier``;
each with ``max_memory_mb=--budget``, 256 by default) learns three streams prequentially, each
stream and API in a process of its own (so that its resident memory is its own):

- ``ids-50k``: a nominal user id uniform over 50,000 ids, two numeric features, 2 classes;
- ``ids-200k``: the same with 200,000 ids;
- ``classes-500``: 500 classes and 50,000 ids.

Each user has a preferred class: the label is it with probability 0.7, else the class of the
first numeric feature's interval (``floor(K x0)``), so the id carries most of what can be learnt.
The rows are drawn chunk by chunk as the run learns them (:class:`Stream`), so the process holds
the model and one chunk, as a stream's consumer does, not the whole stream.

Two APIs: ``one`` (a dict per example: ``predict_one`` then ``learn_one``) and ``many`` (a chunk
of ``--chunk`` rows as an object array: ``predict`` then ``learn_many``); the accuracy counts
the rows after the first chunk in both (prequential: each row predicted before it is learnt).
After every 1,000 rows
a line gives the rows, the peak RSS of the process over those rows (``VmHWM``, reset per chunk
through ``/proc/self/clear_refs``) and its ratio to the budget, the same less the process's RSS
before learning (the interpreter, numpy and the compiled kernels, loaded first by a small model
that is then dropped) as a ratio to the budget, ``memory_bytes`` (MiB), the prequential accuracy
so far and the rows per second (prediction and learning).  The summary line of each run gives
the largest ratios over all chunks.

    python benchmarks/nominal_memory.py [--rows 200_000] [--streams ids-50k,ids-200k,classes-500]
        [--apis one,many] [--model actser-ensemble|actser|hoeffding] [--budget 256]
        [--every 1000] [--quiet] [--stop-rss-mib MiB]

``--stop-rss-mib`` ends a run once its peak RSS passes that much (to measure a version without
the category cap, whose memory grows without bound).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

STREAMS = {"ids-50k": (50_000, 2), "ids-200k": (200_000, 2), "classes-500": (50_000, 500)}
APIS = ("one", "many")
#: ``--model``: the class's name in streamforest and the parameters of the warm-up's small model
MODELS = {
    "actser-ensemble": ("ACTSEREnsembleClassifier", {"n_members": 3}),
    "actser": ("ACTSERClassifier", {}),
    "hoeffding": ("HoeffdingTreeClassifier", {}),
}


def make_model(model: str, budget: float, **params):
    """The classifier ``--model`` names, with budget ``budget`` and seed 0."""
    import streamforest as sf

    return getattr(sf, MODELS[model][0])(max_memory_mb=budget, seed=0, **params)


class Stream:
    """Stream ``name``'s rows, drawn chunk by chunk as a stream delivers them (a run holds only
    the chunk it learns, not the whole stream: 200k label strings would be ~15 MiB of the
    process's RSS that is the benchmark's, not the model's).  Draws made chunk by chunk give
    the same rows as one draw of all of them (numpy's generators draw in sequence), so a
    shorter run sees the rows a longer one starts with."""

    def __init__(self, name: str, seed: int = 0):
        n_ids, self.n_classes = STREAMS[name]
        self._ids = np.random.default_rng([seed, 0])
        self._x = np.random.default_rng([seed, 1])
        self._preferred = np.random.default_rng([seed, 2]).integers(0, self.n_classes, n_ids)
        self._mix = np.random.default_rng([seed, 3])
        self._n_ids = n_ids

    def next(self, k: int):
        """``(ids, X numeric (k, 2), labels)`` of the stream's next ``k`` rows."""
        ids = self._ids.integers(0, self._n_ids, k)
        X = self._x.random((k, 2))
        mix = self._mix.random(k) < 0.7
        y = np.where(mix, self._preferred[ids], np.floor(self.n_classes * X[:, 0]).astype(int))
        return ids, X, y


def stream(name: str, n: int, seed: int = 0):
    """``(ids, X numeric (n, 2), labels)``: the first ``n`` rows of stream ``name``."""
    return Stream(name, seed).next(n)


def _status(key: str) -> float:
    """A ``/proc/self/status`` entry in MiB (NaN where there is none)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _reset_peak() -> None:
    """Reset ``VmHWM`` to the current RSS (Linux 4.0+; nothing elsewhere)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _warm_up(model: str, budget: float) -> None:
    """Load (or compile) the kernels both APIs use, with a small model that is then dropped."""
    import gc

    from streamforest.engine.budget import release_free_memory

    ids, X, y = stream("ids-50k", 3000)
    m = make_model(model, budget, **MODELS[model][1])
    for i in range(300):
        x = {"user": f"u{ids[i]}", "x0": X[i, 0], "x1": X[i, 1]}
        m.predict_one(x)
        m.learn_one(x, f"c{y[i]}")
    rows = _rows(ids, X, 300, 3000)
    m.predict(rows)
    m.learn_many(rows, np.array([f"c{v}" for v in y[300:3000]]))
    del m
    gc.collect()
    release_free_memory()


def _rows(ids, X, a: int, b: int) -> np.ndarray:
    out = np.empty((b - a, 3), dtype=object)
    out[:, 0] = [f"u{v}" for v in ids[a:b].tolist()]
    out[:, 1] = X[a:b, 0].tolist()
    out[:, 2] = X[a:b, 1].tolist()
    return out


def run_one(name: str, api: str, n: int, budget: float, chunk: int, every: int, quiet: bool,
            stop_mib: float = float("inf"), model: str = "actser-ensemble"):  # fmt: skip
    """One stream and API in this process; prints a JSON line per ``every`` rows and a
    summary (early, ``"stopped"``, once the peak RSS passed ``stop_mib``)."""
    _warm_up(model, budget)
    base = _status("VmRSS")
    rows_of = Stream(name)
    m = make_model(model, budget)
    correct = 0
    elapsed = 0.0
    worst = {"rss_ratio": 0.0, "growth_ratio": 0.0, "memory_mib": 0.0}
    step = chunk if api == "many" else every
    done = 0
    _reset_peak()
    while done < n:
        b = min(n, done + step)
        ids, X, y = rows_of.next(b - done)
        labels = np.array([f"c{v}" for v in y.tolist()], dtype=object)
        t0 = time.perf_counter()
        if api == "one":
            for i in range(b - done):
                x = {"user": f"u{ids[i]}", "x0": float(X[i, 0]), "x1": float(X[i, 1])}
                hit = m.predict_one(x) == labels[i]
                correct += bool(hit) and done + i >= chunk  # scored from the second chunk
                m.learn_one(x, labels[i])
        else:
            rows = _rows(ids, X, 0, b - done)
            if done:
                correct += int(np.sum(m.predict(rows) == labels))
            m.learn_many(rows, labels)
        elapsed += time.perf_counter() - t0
        done = b
        if done % every and done < n:
            continue
        peak = _status("VmHWM")
        _reset_peak()
        rec = {
            "model": model,
            "stream": name,
            "api": api,
            "rows": done,
            "peak_rss_mib": round(peak, 1),
            "rss_ratio": round(peak / budget, 3),
            "growth_ratio": round((peak - base) / budget, 3),
            "memory_mib": round(m.memory_bytes / 2**20, 1),
            "accuracy": round(correct / max(1, done - chunk), 4),
            "rows_per_s": round(done / elapsed, 1),
        }
        for k in worst:
            worst[k] = max(worst[k], rec[k])
        if not quiet:
            print(json.dumps(rec), flush=True)
        if peak > stop_mib:
            break
    fs = m.features_
    summary = {
        "summary": True,
        "model": model,
        "stream": name,
        "api": api,
        "rows": done,
        "stopped": done < n,
        "budget_mib": budget,
        "base_rss_mib": round(base, 1),
        "max_rss_ratio": worst["rss_ratio"],
        "max_growth_ratio": worst["growth_ratio"],
        "max_memory_mib": worst["memory_mib"],
        "accuracy": round(correct / max(1, done - chunk), 4),
        "rows_per_s": round(done / elapsed, 1),
        "classes": m.n_classes_,
        "codes_kept": fs.max_categories,
        "code_cap": getattr(fs, "max_codes", None),  # (None before the cap existed)
        "tree_resets": int(m.engine_.n_resets.sum()),
        "leaves": int(getattr(m, "n_leaves", -1)),  # (the ensemble's: -1, it does not count)
    }
    print(json.dumps(summary), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--streams", default=",".join(STREAMS))
    ap.add_argument("--apis", default=",".join(APIS))
    ap.add_argument("--model", default="actser-ensemble", choices=sorted(MODELS))
    ap.add_argument("--budget", type=float, default=256.0, help="max_memory_mb (MiB)")
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--every", type=int, default=1000)
    ap.add_argument("--quiet", action="store_true", help="summary lines only")
    ap.add_argument("--stop-rss-mib", type=float, default=float("inf"),
                    help="end a run once its peak RSS passes this (MiB)")  # fmt: skip
    ap.add_argument("--one", nargs=2, metavar=("STREAM", "API"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        run_one(a.one[0], a.one[1], a.rows, a.budget, a.chunk, a.every, a.quiet, a.stop_rss_mib,
                a.model)  # fmt: skip
        return 0
    for name in a.streams.split(","):
        for api in a.apis.split(","):
            if name not in STREAMS or api not in APIS:
                raise SystemExit(f"unknown stream or API: {name} {api}")
            cmd = [
                sys.executable,
                os.path.abspath(__file__),
                "--one",
                name,
                api,
                "--rows",
                str(a.rows),
                "--budget",
                str(a.budget),
                "--chunk",
                str(a.chunk),
                "--every",
                str(a.every),
                "--stop-rss-mib",
                str(a.stop_rss_mib),
                "--model",
                a.model,
            ]
            cmd += ["--quiet"] if a.quiet else []  # fmt: skip
            r = subprocess.run(cmd, check=False)
            if r.returncode:
                print(json.dumps({"model": a.model, "stream": name, "api": api,
                                  "exit_code": r.returncode}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
