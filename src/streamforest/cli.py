"""The ``streamforest`` command line.

``streamforest run`` is the main job: a prequential (test-then-train) run of a model on a stream,
with a progress bar, a metrics table, a PNG of windowed MER / RIS / MAE and a JSON of the results.
With no arguments it runs OnlineQRF (10 trees, alpha = 0.1) on Friedman #1 with global abrupt
drift (100k rows).  ``streamforest list`` names the models, streams, datasets and metrics.

Errors (bad arguments, missing files, unknown columns, non-numeric data) print one line and exit
with status 2.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import time

DEFAULT_OUT = "streamforest-results"

MODELS = {
    "qrf": "OnlineQRF: KLL sketches in the leaves, equal-tailed quantile intervals (default)",
    "qrf-hdi": "OnlineQRF with highest-density (shortest) intervals, HDI-Forest",
    "cp-approx": "CPApproximate: conformal intervals from a FIFO out-of-bag calibration set",
    "cp-exact": "CPExact: as cp-approx, calibration scores kept exact as the trees change",
    "conformal-qrf": "ConformalQRF: OnlineQRF bounds calibrated by out-of-bag conformal scores",
    "gaussian": "GaussianInterval: mean +- z sd of the trees (baseline)",
    "forest": "OnlineForestRegressor: point predictions only",
    "tree": "HoeffdingTreeRegressor: a single tree, point predictions only",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise SystemExit(_fail(f"{message} (see '{self.prog} --help')"))


def _fail(message: str) -> int:
    print(f"streamforest: error: {message}", file=sys.stderr)
    return 2


def _value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _params(items) -> dict:
    out = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.isidentifier():
            raise ValueError(f"--param takes KEY=VALUE, got {item!r}")
        out[key] = _value(value)
    return out


def build_model(name: str, params: dict, seed: int, n_jobs: int = 1):
    """The model ``name`` (see :data:`MODELS`); each parameter goes to the interval method, the
    forest or the tree template, whichever takes it."""
    from . import (
        ConformalQRF,
        CPApproximate,
        CPExact,
        GaussianInterval,
        HoeffdingTreeRegressor,
        OnlineForestRegressor,
        OnlineQRF,
    )

    methods = {
        "qrf": (OnlineQRF, {}),
        "qrf-hdi": (OnlineQRF, {"interval": "hdi"}),
        "cp-approx": (CPApproximate, {}),
        "cp-exact": (CPExact, {}),
        "conformal-qrf": (ConformalQRF, {}),
        "gaussian": (GaussianInterval, {}),
    }
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODELS)}")
    params = dict(params)
    tree_names = set(HoeffdingTreeRegressor._param_names())
    forest_names = set(OnlineForestRegressor._param_names()) - {"tree"}

    def take(names):
        return {k: params.pop(k) for k in list(params) if k in names}

    if name == "tree":
        kw = take(tree_names)
        _no_leftovers(params, name)
        return HoeffdingTreeRegressor(**{"seed": seed, **kw})
    cls, fixed = methods.get(name, (None, {}))
    method_kw = take(set(cls._param_names()) - {"forest"}) if cls else {}
    forest_kw = take(forest_names)
    tree_kw = take(tree_names)
    _no_leftovers(params, name)
    if tree_kw:
        forest_kw["tree"] = HoeffdingTreeRegressor(**tree_kw)
    forest = OnlineForestRegressor(**{"n_trees": 10, "seed": seed, "n_jobs": n_jobs, **forest_kw})
    if cls is None:
        return forest
    return cls(**{**fixed, "forest": forest, "seed": seed, **method_kw})


def _no_leftovers(params: dict, name: str) -> None:
    if params:
        raise ValueError(
            f"model {name!r} has no parameter {', '.join(map(repr, params))} "
            f"(see 'streamforest list' and the model's docstring)"
        )


def _stream(args):
    from . import streams as S

    if sum(x is not None for x in (args.file, args.dataset)) + (args.stream is not None) > 1:
        raise ValueError("give one of --stream, --file and --dataset")
    if args.file is not None:
        return S.from_file(args.file, target=args.target)
    if args.target is not None:
        raise ValueError("--target goes with --file")
    if args.dataset is not None:
        return S.dataset(args.dataset)
    return S.make(args.stream or "friedman1-gra", n=args.n or 100_000, seed=args.seed)


def _alphas(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"--alphas takes numbers separated by commas, got {text!r}") from None
    if not values or not all(0 < v < 1 for v in values):
        raise ValueError(f"each alpha must be in (0, 1), got {text!r}")
    return values


def _first_run() -> bool:
    """No compiled kernel cached yet next to the sources (numba's cache files)."""
    here = os.path.dirname(__file__)
    for _, _, files in os.walk(here):
        if any(f.endswith(".nbi") for f in files):
            return False
    return True


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text).strip("-")


def _run(args) -> int:
    from .evaluate import prequential

    alphas = _alphas(args.alphas)
    stream = _stream(args)
    params = _params(args.param)
    if args.model == "conformal-qrf" and "alphas" not in params:
        params["alphas"] = tuple(alphas)
    model = build_model(args.model, params, args.seed, args.jobs)
    n = args.n if (args.file or args.dataset) else None
    total = stream.n if n is None else min(n, stream.n)
    if total == 0:
        raise ValueError(f"{stream!r} has no rows")
    window = args.window or max(1, total // 100)
    if not args.quiet and _first_run():
        print("compiling kernels on first use (about a minute; cached afterwards)", file=sys.stderr)
    t0 = time.perf_counter()  # load compiled code outside the timed run, on a throw-away clone
    warm = model.clone()
    prequential(warm, stream, alphas=alphas, n=min(2000, total), window=max(1, total))
    warm._load_kernels()
    load = time.perf_counter() - t0
    result = prequential(
        model, stream, alphas=alphas, n=n, window=window, step=args.step, progress=not args.quiet
    )
    result.totals["compiled_code_load_seconds"] = load
    print(result.table())
    data = os.path.basename(args.file) if args.file else args.dataset or args.stream
    stem = _slug(f"{args.model}_{data or 'friedman1-gra'}_n{result.n}_seed{args.seed}")
    os.makedirs(args.out, exist_ok=True)
    json_path = args.json or os.path.join(args.out, stem + ".json")
    if os.path.dirname(json_path):
        os.makedirs(os.path.dirname(json_path), exist_ok=True)
    result.save_json(json_path)
    print(f"\nresults: {json_path}")
    if not args.no_plot:
        png = os.path.join(args.out, stem + ".png")
        result.plot(png)
        print(f"figure:  {png}")
    return 0


def _list(args) -> int:
    from . import streams as S
    from .metrics import DESCRIPTIONS

    def section(title, items):
        print(title)
        width = max(len(k) for k in items)
        for k, v in items.items():
            print(f"  {k:<{width}}  {v}")
        print()

    section("models (--model; parameters with --param KEY=VALUE)", MODELS)
    section("streams (--stream)", S.BUILTIN)
    try:
        info = S.manifest()
        section(
            f"datasets (--dataset, from {S.data_root()})",
            {
                k: f"{v.get('rows', '?')} rows, {v.get('features', '?')} features"
                for k, v in info.items()
            },
        )
    except (FileNotFoundError, ValueError):
        print("datasets (--dataset): no datasets folder found (set STREAMFOREST_DATA)\n")
    section("metrics", DESCRIPTIONS)
    print("files (--file PATH --target COLUMN): .csv, .csv.gz, .tsv, .parquet, .arff")
    return 0


def parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="streamforest",
        description="Online regression forests for data streams, with prediction intervals.",
    )
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser(
        "run",
        help="prequential run of a model on a stream (the main job)",
        description="Test-then-train run: prints the metrics table, writes a JSON of the results "
        "and a PNG of windowed MER / RIS / MAE. Defaults: OnlineQRF, 10 trees, alpha 0.1, "
        "Friedman #1 with global abrupt drift, 100k rows.",
    )
    run.add_argument("--model", default="qrf", choices=list(MODELS), help="model (default qrf)")
    run.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="model parameter, repeatable (e.g. --param n_trees=20 --param k=400)",
    )
    src = run.add_argument_group("data (one of)")
    src.add_argument("--stream", help="built-in stream (default friedman1-gra; see list)")
    src.add_argument("--file", help="CSV (.csv/.csv.gz/.tsv), Parquet or ARFF file")
    src.add_argument("--dataset", help="a dataset of the shared data folder (see list)")
    run.add_argument("--target", help="target column of --file (default: the last column)")
    run.add_argument("--alphas", default="0.1", help="significance levels, e.g. 0.1,0.05")
    run.add_argument("--n", type=int, help="rows (default 100000 for streams, all of a file)")
    run.add_argument("--window", type=int, help="window size of the figure (default n/100)")
    run.add_argument("--step", type=int, help="rows between sliding-window ends (default: window)")
    run.add_argument("--seed", type=int, default=42, help="seed of the stream and model (42)")
    run.add_argument("--jobs", type=int, default=1, help="threads for the trees (default 1)")
    run.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    run.add_argument("--json", metavar="PATH", help="where to write the JSON (default in --out)")
    run.add_argument("--no-plot", action="store_true", help="do not write the PNG")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    sub.add_parser("list", help="models, streams, datasets and metrics", description="What "
                   "'streamforest run' can use.")  # fmt: skip
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if getattr(args, "n", None) is not None and args.n <= 0:
        return _fail("--n must be positive")
    for opt in ("window", "step", "jobs"):
        if getattr(args, opt, None) is not None and getattr(args, opt) <= 0:
            return _fail(f"--{opt} must be positive")
    try:
        return _run(args) if args.command == "run" else _list(args)
    except KeyboardInterrupt:
        return _fail("interrupted")
    except (ValueError, TypeError, OSError, ImportError, RuntimeError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        return _fail(msg)


if __name__ == "__main__":
    sys.exit(main())
