"""The ``streamforest`` command line.

``streamforest run`` is the main job: a prequential (test-then-train) run of a model on a stream,
with a progress bar, a metrics table, a PNG of windowed MER / RIS / MAE and a JSON of the results.
With no arguments it runs OnlineQRF (10 trees, alpha = 0.1) on Friedman #1 with global abrupt
drift (100k rows).  ``streamforest list`` names the models (from :mod:`streamforest.registry`,
with their parameters), streams, datasets and metrics.  ``streamforest warmup`` compiles the
numba kernels ahead of time (:func:`streamforest.warmup`).

Errors (bad arguments, missing files, unknown columns, non-numeric data) print one line and exit
with status 2.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import sys
import textwrap
import time
from contextlib import contextmanager

from . import registry

DEFAULT_OUT = "streamforest-results"
COMPILING = "compiling kernels (first run only, about a minute)…"


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
    """The model ``name`` of :mod:`streamforest.registry`; each parameter goes to the interval
    method, the forest or the tree template, whichever takes it first."""
    return registry.build(name, params, seed=seed, n_jobs=n_jobs)


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


@contextmanager
def _compile_status(show: bool, text: str = COMPILING, summary: bool = True):
    """While the block runs: if a kernel compiles (not when it loads from numba's cache), a
    status line on stderr (a spinner on a terminal, one line otherwise), then (``summary``) how
    long it took."""
    from rich.console import Console

    from .compilation import watch

    console = Console(stderr=True)
    shown = []

    def started():  # from the compiling thread; compilations come one at a time
        if show and not shown:
            if console.is_terminal:
                status = console.status(text)
                status.start()
                shown.append(status)
            else:
                print(text, file=sys.stderr, flush=True)
                shown.append(None)

    with watch(on_start=started) as w:
        try:
            yield w
        finally:
            if shown and shown[0] is not None:
                shown[0].stop()
            if shown and summary:
                print(
                    f"compiled {w.compiled} kernels in {w.seconds:.0f} s (cached: later runs "
                    f"skip this; 'streamforest warmup' does it ahead of time)",
                    file=sys.stderr,
                    flush=True,
                )


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text).strip("-")


def _run(args) -> int:
    from .evaluate import prequential

    alphas = _alphas(args.alphas)
    stream = _stream(args)
    params = _params(args.param)
    spec = registry.get(args.model)
    if "alphas" in spec.parameters()[spec.layers[0]] and "alphas" not in params:
        params["alphas"] = tuple(alphas)  # a model calibrating fixed levels (ConformalQRF)
    model = spec.build(params, seed=args.seed, n_jobs=args.jobs)
    n = args.n if (args.file or args.dataset) else None
    total = stream.n if n is None else min(n, stream.n)
    if total == 0:
        raise ValueError(f"{stream!r} has no rows")
    window = args.window or max(1, total // 100)
    t0 = time.perf_counter()  # load compiled code outside the timed run, on a throw-away clone
    with _compile_status(show=not args.quiet):
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
    stem = _slug(f"{spec.name}_{data or 'friedman1-gra'}_n{result.n}_seed{args.seed}")
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


def _defaults(params: dict) -> str:
    shown = []
    for k, v in params.items():
        if k in _FROM_OPTIONS:
            continue
        shown.append(f"{k}=<--alphas>" if k == "alphas" else f"{k}={v!r}")
    return " ".join(shown)


_FROM_OPTIONS = ("seed", "n_jobs")  # --seed and --jobs


def _wrap(text: str, indent: int) -> str:
    width = max(60, min(120, shutil.get_terminal_size((100, 24)).columns))
    return textwrap.fill(
        text, width, initial_indent=" " * indent, subsequent_indent=" " * indent,
        break_long_words=False, break_on_hyphens=False,
    )  # fmt: skip


def _list_models() -> None:
    """Each model of the registry with its own parameters and their defaults; the forest's and
    the tree's parameters (shared by the models built on them) once, after them."""
    specs = list(registry.MODELS.values())
    width = max(len(m.name) for m in specs)
    shared: dict = {}  # (layer, class) -> (parameters, model names)
    for task in registry.tasks():
        print(f"{task} models (--model NAME; --param KEY=VALUE, repeatable)")
        for m in specs:
            if m.task != task:
                continue
            aka = f" (also: {', '.join(m.aliases)})" if m.aliases else ""
            print(f"  {m.name:<{width}}  {m.description}{aka}")
            params = m.parameters()
            if m.layers[0] == "method" and _defaults(params["method"]):
                print(_wrap(_defaults(params["method"]), width + 4))
            below = [layer for layer in m.layers if layer != "method"]
            for layer in below:
                cls = m.layer_cls(layer)
                shared.setdefault((layer, cls), (params[layer], []))[1].append(m.name)
            print(_wrap(f"+ {' and '.join(below)} parameters", width + 4))
        print()
    for (layer, cls), (params, users) in shared.items():
        others = [m.name for m in specs if m.name not in users]
        which = f"every model but {', '.join(others)}" if others else "every model"
        print(f"{layer} parameters ({cls.__name__}; {which})")
        print(_wrap(_defaults(params), 2))
        print()
    print("seed and n_jobs come from --seed and --jobs, alphas from --alphas; a --param goes to")
    print("the model first, then its forest, then its trees (see each class's docstring)")
    print()


def _list(args) -> int:
    from . import streams as S
    from .metrics import DESCRIPTIONS

    def section(title, items):
        print(title)
        width = max(len(k) for k in items)
        for k, v in items.items():
            print(f"  {k:<{width}}  {v}")
        print()

    _list_models()
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


def _warmup(args) -> int:
    from .compilation import warmup

    models = args.model or None
    for name in models or ():
        registry.get(name)  # unknown names: one-line error before any work
    with _compile_status(not args.quiet, "compiling kernels (a minute or two)…", summary=False):
        report = warmup(models, verbose=not args.quiet)
    print(report)
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
    run.add_argument(
        "--model",
        default=registry.DEFAULT,
        choices=registry.names(aliases=True),
        metavar="NAME",
        help=f"model (default {registry.DEFAULT}; see list)",
    )
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
    warm = sub.add_parser(
        "warmup",
        help="compile the numba kernels ahead of time (e.g. in a Docker build step)",
        description="Compile (or load from numba's on-disk cache) every kernel the models use, "
        "so no later run pauses to compile (streamforest.warmup()).",
    )
    warm.add_argument(
        "--model",
        action="append",
        choices=registry.names(aliases=True),
        metavar="NAME",
        help="only this model, repeatable (default: all; see list)",
    )
    warm.add_argument("--quiet", action="store_true", help="only the summary line")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if getattr(args, "n", None) is not None and args.n <= 0:
        return _fail("--n must be positive")
    for opt in ("window", "step", "jobs"):
        v = getattr(args, opt, None)
        if v is not None and min(v if isinstance(v, list) else [v]) <= 0:
            return _fail(f"--{opt.replace('_', '-')} must be positive")
    try:
        return {"run": _run, "list": _list, "warmup": _warmup}[args.command](args)
    except KeyboardInterrupt:
        return _fail("interrupted")
    except (ValueError, TypeError, OSError, ImportError, RuntimeError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        return _fail(msg)


if __name__ == "__main__":
    sys.exit(main())
