"""Memory soak (issue 17): a default interval model on a long stationary stream.

OnlineQRF and CPApproximate with their defaults (10 trees, Friedman #1: 10 features, N(0, 1)
noise, unbounded) learn prequentially (``predict_learn_many`` in chunks of ``--chunk`` rows,
alpha = 0.1), each in its own process so that its resident memory is its own.  Every
``--every`` rows a line gives: rows, the process RSS (MB), nodes and leaves of all trees,
deactivated leaves (learning stopped by the memory budget), ``memory_bytes`` (MB) and its
ratio to the RSS growth since the model was empty, throughput (rows per wall second and per CPU
second of this process: the machine is shared, so compare the models of one run, not runs), and
the MAE, coverage and mean width of the interval (an infinite one counted 0) over the last
``--every`` rows, and (OnlineQRF) the items the leaves' KLL sketches hold as a fraction of the
room their slots keep for them (``skfill``).

    python benchmarks/memory_soak.py [--rows 10_000_000] [--every 1_000_000]
        [--models qrf,cpa] [--max-memory-mb MB|none] [--seed 0]

``--max-memory-mb`` overrides the forest's budget (``none``: unbounded); by default the
forest's own default applies.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time

import numpy as np

MODELS = ("qrf", "cpa")


def rss_mb() -> float:
    """Resident set size of this process now (Linux /proc; NaN elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return float("nan")


def _forest_budget(arg: str):
    return None if arg == "none" else float(arg)


def make_model(name: str, budget: str | None, seed: int):
    import streamforest as sf

    kw = {"seed": seed}
    if budget is not None:
        kw["max_memory_mb"] = _forest_budget(budget)
    forest = sf.OnlineForestRegressor(**kw)
    return sf.OnlineQRF(forest=forest) if name == "qrf" else sf.CPApproximate(forest=forest)


def tree_counts(model) -> tuple[int, int, int]:
    """Nodes, live leaves and deactivated leaves over all trees."""
    from streamforest.tree_kinds import state

    e = model.forest_.engine_
    nodes = leaves = deact = 0
    for t in range(e.n_trees):
        nodes += e.int_of(t, state.I_NNODES) - e.int_of(t, state.I_NODE_NFREE)
        leaves += e.int_of(t, state.I_NLEAVES)
        deact += e.int_of(t, state.I_NDEACT)
    return nodes, leaves, deact


def sketch_fill(model) -> float:
    """Items the live leaves' KLL sketches hold, as a fraction of the room their slots keep
    for them (a sketch's capacity with every level); NaN without leaf sketches."""
    e = model.forest_.engine_
    held = room = 0
    for t in range(e.n_trees):
        st = e.state(t)
        if not st.lf_sketch.shape[1]:
            return float("nan")
        live = st.lf_node >= 0
        held += int((st.lf_sketch.shape[1] - st.lf_sketch_levels[live, 1]).sum())
        room += int(live.sum()) * st.lf_sketch.shape[1]
    return held / max(room, 1)


def warm_up(name: str, budget, seed: int) -> None:
    """Run the model once in a process of its own (its first-use allocations there)."""
    from streamforest.streams import Friedman

    X, y = Friedman(function=1, n=None, seed=seed).arrays(2000)
    make_model(name, budget, seed).predict_learn_many(X, y, alpha=0.1)


def soak(name: str, rows: int, every: int, chunk: int, budget, seed: int, out) -> None:
    from streamforest.streams import Friedman

    stream = Friedman(function=1, n=None, seed=seed)
    model = make_model(name, budget, seed)
    gen = stream.chunks(chunk)
    X, y = next(gen)  # the model's first use before the baseline RSS
    make_model(name, budget, seed).predict_learn_many(X[:2000], y[:2000], alpha=0.1)
    base = rss_mb()
    done, abs_err, covered, n_int, width = 0, 0.0, 0, 0, 0.0
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    while done < rows:
        take = min(chunk, rows - done)
        pred, iv = model.predict_learn_many(X[:take], y[:take], alpha=0.1)
        abs_err += float(np.abs(pred - y[:take]).sum())
        covered += int(((iv[:, 0] <= y[:take]) & (y[:take] <= iv[:, 1])).sum())
        wid = iv[:, 1] - iv[:, 0]
        width += float(np.where(np.isfinite(wid), wid, 0.0).sum())
        n_int += take
        done += take
        if done % every == 0 or done == rows:
            wall, cpu = time.perf_counter() - t_wall, time.process_time() - t_cpu
            nodes, leaves, deact = tree_counts(model)
            fill = sketch_fill(model)
            mem = model.memory_bytes / 2**20
            rss = rss_mb()
            out.put(
                f"{name:4s} {done:>11,d} {rss:9.0f} {nodes:9,d} {leaves:9,d} {deact:8,d} "
                f"{mem:9.1f} {mem / max(rss - base, 1e-9):7.2f} {n_int / wall:9,.0f} "
                f"{n_int / max(cpu, 1e-9):9,.0f} {abs_err / n_int:7.4f} {covered / n_int:6.3f} "
                f"{width / n_int:6.3f} {fill:6.2f}"
            )
            abs_err, covered, n_int, width = 0.0, 0, 0, 0.0
            t_wall, t_cpu = time.perf_counter(), time.process_time()
        X, y = next(gen)
    out.put(None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=lambda s: int(s.replace("_", "")), default=10_000_000)
    ap.add_argument("--every", type=lambda s: int(s.replace("_", "")), default=1_000_000)
    ap.add_argument("--chunk", type=int, default=20_000)
    ap.add_argument("--models", default="qrf,cpa")
    ap.add_argument("--max-memory-mb", default=None)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    names = [m for m in a.models.split(",") if m]
    if any(m not in MODELS for m in names) or a.every % a.chunk:
        ap.error(f"--models from {MODELS}; --every a multiple of --chunk")
    print(
        f"{'':4s} {'rows':>11s} {'RSS MB':>9s} {'nodes':>9s} {'leaves':>9s} {'deact':>8s} "
        f"{'mem MB':>9s} {'mem/dRSS':>7s} {'rows/s':>9s} {'rows/cpu':>9s} {'MAE':>7s} "
        f"{'cover':>6s} {'width':>6s} {'skfill':>6s}",
        flush=True,
    )
    ctx = mp.get_context("spawn")
    for name in names:  # one process per model: its RSS is its own
        w = ctx.Process(target=warm_up, args=(name, a.max_memory_mb, a.seed))
        w.start()
        w.join()
        q = ctx.Queue()
        p = ctx.Process(
            target=soak, args=(name, a.rows, a.every, a.chunk, a.max_memory_mb, a.seed, q)
        )
        p.start()
        while (line := q.get()) is not None:
            print(line, flush=True)
        p.join()


if __name__ == "__main__":
    main()
