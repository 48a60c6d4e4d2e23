"""The ``streamforest`` command line.

``streamforest run`` is the main job: a prequential (test-then-train) run of a model on a stream,
with a progress bar, a metrics table, a PNG of windowed MER / RIS / MAE and a JSON of the results;
the task comes from the model: a classifier (``streamforest run --model conformal-actser-rforest
--stream agrawal``) runs on classification streams or labelled files and reports accuracy,
kappa and its prediction sets' coverage and size.
With no arguments it runs the registry's default model (NormalizedConformal over
SGBTRegressor, ``normalized-cp-sgbt``, alpha = 0.1) on Friedman #1 with global abrupt drift
(100k rows).  ``streamforest list`` names the models (from :mod:`streamforest.registry`, with
their parameters), streams (with theirs), datasets and metrics.

Result files are named after the run's configuration (:func:`result_stem`): model, data, rows,
seed, the alphas, and a short hash of everything else that was changed from its default, so runs
with other settings never overwrite each other; re-running the same configuration replaces its
files and says so.

The figure's default window (:func:`default_window`) is ``n // 50`` rows, about 50 points along
the stream, but at least 500 rows, so that a window's MER at alpha = 0.1 has a standard error of
at most 0.014 (sqrt(0.1 * 0.9 / 500)); data of fewer than 5,000 rows get 10 windows.

Errors (bad arguments, missing files, unknown columns, non-numeric data, empty files, a missing
optional dependency) print one line and exit with status 2.  Every argument is checked before
the run (:func:`check_arguments`: each number within its range, the model's and the stream's
parameters by their own rules) and every error names its flag (``--window``, ``--seed``,
``--param KEY=VALUE`` ...), and for data the file, the column and the row; the outputs
(``--out``, ``--json``) are checked writable before the run starts (:func:`check_outputs`).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import textwrap

from . import registry
from ._extras import MissingExtraError, have, need
from ._version import __version__

DEFAULT_OUT = "streamforest-results"
DEFAULT_STREAM = "friedman1-gra"
DEFAULT_CLASSIFICATION_STREAM = "agrawal"
DEFAULT_N = 100_000
MIN_WINDOW = 500


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


def _params(items, option: str = "--param") -> dict:
    out = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.isidentifier():
            raise ValueError(f"{option} takes KEY=VALUE, got {item!r}")
        out[key] = _value(value)
    return out


def build_model(name: str, params: dict, seed: int, n_jobs: int = 1):
    """The model ``name`` of :mod:`streamforest.registry`; each parameter goes to the interval
    method, the forest or the tree template, whichever takes it first."""
    return registry.build(name, params, seed=seed, n_jobs=n_jobs)


def _is_path(text: str) -> bool:
    from .streams.files import FORMATS

    name = text.lower().removesuffix(".gz")
    return os.sep in text or "/" in text or name.endswith(tuple(FORMATS)) or os.path.exists(text)


def _dataset(spec: str, target, bad_numbers=None):
    """``--dataset``: a path (any file format), else a dataset name: the shared datasets folder
    if there is one, then bundled, cached or downloadable datasets."""
    from . import datasets, streams

    if _is_path(spec):
        return streams.from_file(spec, target=target, bad_numbers=bad_numbers or "error")
    if target is not None and target != "target":
        raise ValueError("--target goes with --file or a --dataset path")
    try:  # the project's shared datasets folder (STREAMFOREST_DATA, ../shared/data), if any
        return streams.dataset(spec, root=streams.data_root())
    except (FileNotFoundError, ValueError):
        pass
    if spec in datasets.REMOTE and spec not in datasets.cached():
        datasets.fetch(spec, quiet=False)
    return datasets.stream(spec)


#: Classification streams (``--stream NAME`` with a classifier): class, fixed arguments, text.
CLASSIFICATION_STREAMS = {
    "sea": ("SEA", {}, "SEA concepts (3 features, function 1, 10% label noise), stationary"),
    "agrawal": ("Agrawal", {}, "Agrawal (9 features, 3 nominal), function 1, stationary"),
    "randomrbf": ("RandomRBF", {}, "random RBF (10 features, 50 centroids, 2 classes), stationary"),
    "randomrbf-drift": ("RandomRBF", {"speed": 0.001},
                        "random RBF, every centroid moving at speed 0.001 (incremental drift)"),
    "hyperplane-classification": ("RotatingHyperplane", {},
                                  "rotating hyperplane classification (10 features, 2 drifting)"),
    "led": ("LED", {}, "LED digits (7 segments + 17 irrelevant, 10% noise), 10 classes"),
    "stagger": ("STAGGER", {}, "STAGGER concepts (3 nominal features), function 1"),
}  # fmt: skip


def _classification_stream(name: str, n: int, seed, params: dict):
    from . import streams as streams

    if name not in CLASSIFICATION_STREAMS:
        raise ValueError(
            f"unknown classification stream {name!r}; choose from "
            f"{', '.join(CLASSIFICATION_STREAMS)} (the model is a classifier)"
        )
    cls_name, fixed, _ = CLASSIFICATION_STREAMS[name]
    return getattr(streams, cls_name)(n=n, seed=seed, **{**fixed, **params})


def _classification_data(args):
    """``--file`` / ``--dataset`` for a classifier: labels kept as strings, ``?`` missing."""
    from .streams import files

    path = args.file if args.file is not None else args.dataset
    if args.file is not None or _is_path(args.dataset):
        return files.from_file(path, target=args.target, bad_numbers=args.bad_numbers or "error",
                           labels=True, missing_values=files.CLASSIFICATION_MISSING)  # fmt: skip
    if args.target is not None and args.target != "target":
        raise ValueError("--target goes with --file or a --dataset path")
    return files.classification_dataset(args.dataset)


def _stream(args, task: str = "regression"):
    from . import streams as streams

    if task == "classification":
        if sum(x is not None for x in (args.stream, args.file, args.dataset)) > 1:
            raise ValueError("give one of --stream, --file and --dataset")
        if args.stream_param and (args.file or args.dataset):
            raise ValueError("--stream-param goes with --stream")
        if args.file is not None or args.dataset is not None:
            return _classification_data(args)
        extra = _params(args.stream_param, "--stream-param")
        name = args.stream or DEFAULT_CLASSIFICATION_STREAM
        return _classification_stream(name, args.n or DEFAULT_N, args.seed, extra)
    if args.stream in CLASSIFICATION_STREAMS and args.stream not in streams.BUILTIN:
        raise ValueError(f"--stream {args.stream} is a classification stream: pick a classifier")
    if sum(x is not None for x in (args.stream, args.file, args.dataset)) > 1:
        raise ValueError("give one of --stream, --file and --dataset")
    if args.stream_param and (args.file or args.dataset):
        raise ValueError("--stream-param goes with --stream")
    if args.file is not None:
        return streams.from_file(
            args.file, target=args.target, bad_numbers=args.bad_numbers or "error"
        )
    if args.bad_numbers is not None and not (args.dataset and _is_path(args.dataset)):
        raise ValueError("--bad-numbers goes with --file or a --dataset path")
    if args.dataset is not None:
        return _dataset(args.dataset, args.target, args.bad_numbers)
    if args.target is not None:
        raise ValueError("--target goes with --file or a --dataset path")
    extra = _params(args.stream_param, "--stream-param")
    return streams.make(
        args.stream or DEFAULT_STREAM, n=args.n or DEFAULT_N, seed=args.seed, **extra
    )


MAX_ROWS = 10**12  # --n, --window, --step: more rows than any run reads
MAX_SEED = 2**63 - 1  # the models' and streams' seeds
MAX_JOBS = 64  # the forests' n_jobs


def check_arguments(args) -> None:
    """Every number of ``streamforest run`` checked before anything runs: ``ValueError`` naming
    the flag and the value (argparse already refused what is not an integer)."""
    for flag, value, lo, hi in (
        ("--n", args.n, 1, MAX_ROWS),
        ("--window", args.window, 1, MAX_ROWS),
        ("--step", args.step, 1, MAX_ROWS),
        ("--seed", args.seed, 0, MAX_SEED),
        ("--jobs", args.jobs, 1, MAX_JOBS),
    ):
        if value is not None and value < lo:
            rule = "positive" if lo == 1 else f">= {lo}"
            raise ValueError(f"{flag} must be {rule}, got {value}")
        if value is not None and value > hi:
            raise ValueError(f"{flag} must be at most {hi:,}, got {value}")
    if args.window is not None and args.step is not None and args.window % args.step:
        raise ValueError(f"--window {args.window} must be a multiple of step (--step {args.step})")
    _alphas(args.alphas)
    _params(args.param)
    _params(args.stream_param, "--stream-param")


def _writable_folder(flag: str, folder: str) -> None:
    """Make ``folder`` (and its parents) and check that a file can be written in it, before
    the run: ``ValueError`` naming the flag and the folder."""
    folder = folder or "."
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ValueError(f"{flag} {folder}: a file, not a folder")
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".streamforest-check-"):
            pass
    except OSError as e:
        raise ValueError(f"{flag} {folder}: cannot write there ({e.strerror or e})") from None


def check_outputs(args, json_path: str | None) -> None:
    """The output folder and the JSON's file checked writable before the run starts."""
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ValueError(f"--out {args.out} is a file, not a folder")
    _writable_folder("--out", args.out)
    if json_path is None:
        return
    if os.path.isdir(json_path):
        raise ValueError(f"--json {json_path}: a folder, not a file")
    try:
        _writable_folder("--json", os.path.dirname(json_path))
    except ValueError as e:
        raise ValueError(f"--json {json_path}: {str(e).partition(': ')[2]}") from None
    if os.path.exists(json_path):
        try:
            with open(json_path, "ab"):  # (appends nothing: the run replaces it)
                pass
        except OSError as e:
            raise ValueError(f"--json {json_path}: cannot write it ({e.strerror or e})") from None


def _checked_file(inner, label: str):
    """``inner`` (a file's stream) whose rows are checked as they are read: an infinite number
    (``1e400`` in a cell) is an error naming the file, the column and the row, not the model's
    error about a feature's index once the row reached it."""
    import numpy as np

    from .streams.base import Stream

    class CheckedFile(Stream):
        def __repr__(self) -> str:
            return repr(inner)

        n = inner.n
        feature_names = inner.feature_names
        nominal = inner.nominal
        change_points = list(getattr(inner, "change_points", []))

        def chunks(self, size: int = 10_000):
            start = 0
            for X, y in inner.chunks(size):
                if X.dtype.kind == "f":
                    bad = np.isinf(X)
                else:
                    bad = np.array([[type(v) is float and math.isinf(v) for v in r]
                                    for r in X.tolist()], dtype=bool).reshape(X.shape)  # fmt: skip
                if bad.any():
                    i, j = (int(k[0]) for k in np.nonzero(bad))
                    raise ValueError(
                        f"{label}: column {self.feature_names[j]!r} has an infinite value "
                        f"({X[i, j]}) at data row {start + i} (a number too large for a float?)"
                    )
                yield X, y
                start += len(y)

    return CheckedFile()


def _alphas(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"--alphas takes numbers separated by commas, got {text!r}") from None
    if not values or not all(0 < v < 1 for v in values):
        raise ValueError(f"--alphas: each alpha must be in (0, 1), got {text!r}")
    return values


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text).strip("-")


def result_stem(model: str, data: str, n: int, seed: int, alphas=(), changed=None) -> str:
    """The file name (without suffix) of a run's results: ``{model}_{data}_n{n}_seed{seed}``,
    then ``_a{alpha-alpha...}`` for a model with intervals, then ``_{hash}`` (8 hex digits of a
    sha256 of ``changed``, the other settings changed from their defaults) if there are any.

    >>> result_stem("qrf", "friedman1-gra", 100000, 42, [0.1, 0.05])
    'qrf_friedman1-gra_n100000_seed42_a0.1-0.05'
    >>> result_stem("tree", "d.csv", 500, 1, changed={"param": {"grace_period": 50}})
    'tree_d.csv_n500_seed1_33b718b1'
    """
    stem = f"{model}_{data}_n{n}_seed{seed}"
    if alphas:
        stem += "_a" + "-".join(f"{float(a):g}" for a in alphas)
    if changed:
        text = json.dumps(changed, sort_keys=True, default=repr, separators=(",", ":"))
        stem += "_" + hashlib.sha256(text.encode()).hexdigest()[:8]
    return _slug(stem)


def _non_default(spec, params: dict) -> dict:
    """The ``--param`` values that differ from the model's defaults."""
    defaults = spec.parameters()
    routed = spec.route(params)
    missing = object()
    return {
        k: v
        for layer, kw in routed.items()
        for k, v in kw.items()
        if defaults[layer].get(k, missing) != v
    }


def _changed(args, spec) -> dict:
    """Settings of the run, besides model, data, n, seed and alphas, that are not defaults (the
    hash of :func:`result_stem`)."""
    out = {}
    params = _non_default(spec, _params(args.param))
    if params:
        out["param"] = params
    stream_params = _params(args.stream_param, "--stream-param")
    if stream_params:
        out["stream_param"] = stream_params
    for opt in ("window", "step"):
        if getattr(args, opt) is not None:
            out[opt] = getattr(args, opt)
    if args.file or (args.dataset and _is_path(args.dataset)):
        out["file"] = os.path.abspath(args.file or args.dataset)
        if args.target is not None:
            out["target"] = args.target
    return out


def _check_parameters(model) -> None:
    """Every estimator of ``model`` (it and the estimators among its parameters: a forest, a
    tree template) checks its parameters now, as it would when learning starts."""
    stack, seen = [model], set()
    while stack:
        est = stack.pop()
        if id(est) in seen or not hasattr(est, "_check_params"):
            continue
        seen.add(id(est))
        est._check_params()
        stack.extend(v for v in est.get_params(deep=False).values() if hasattr(v, "get_params"))


def _data_error(args, error: Exception) -> str:
    """The message of an error making the run's data, naming the flag (and the file or stream)
    unless it already names the file."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    for flag, value in (("--file", args.file), ("--dataset", args.dataset)):
        if value is not None:
            return text if value in text else f"{flag} {value}: {text}"
    if args.stream_param:
        given = " ".join(f"--stream-param {p}" for p in args.stream_param)
        return f"{given}: {text}"
    return f"--stream {args.stream}: {text}" if args.stream else text


def _data_label(args) -> str:
    if args.file or (args.dataset and _is_path(args.dataset)):
        name = os.path.basename(args.file or args.dataset)
        for suffix in (".gz", ".csv", ".tsv", ".parquet", ".pq", ".arff"):
            name = name.removesuffix(suffix)
        return name
    if args.dataset or args.stream:
        return args.dataset or args.stream
    task = registry.get(args.model).task
    return DEFAULT_CLASSIFICATION_STREAM if task == "classification" else DEFAULT_STREAM


def default_window(n: int) -> int:
    """The figure's default window for ``n`` rows: ``n // 50``, at least 500 rows, and at most
    ``n // 10`` (ten windows for short data).

    >>> [default_window(n) for n in (100_000, 30_000, 4000, 1030, 5)]
    [2000, 600, 400, 103, 1]
    """
    return max(1, min(n // 10, MIN_WINDOW), n // 50)


def _run(args) -> int:
    from .evaluate import prequential
    from .intervals.diagnostics import group_columns

    alphas = _alphas(args.alphas)
    need("rich", "the streamforest command")
    if not args.no_plot and not have("matplotlib"):
        raise MissingExtraError(
            "plotting needs matplotlib: pip install 'streamforest[plot]' (or run with --no-plot)"
        )
    check_outputs(args, args.json)
    params = _params(args.param)
    spec = registry.get(args.model)
    if not spec.available:
        spec.layer_cls(spec.layers[0])  # TypeError: which class this build lacks
        spec.layer_cls(spec.layers[-1])
    try:
        stream = _stream(args, spec.task)
    except (ValueError, TypeError) as e:
        raise ValueError(_data_error(args, e)) from None
    if "alphas" in spec.parameters()[spec.layers[0]] and "alphas" not in params:
        params["alphas"] = tuple(alphas)  # a model calibrating fixed levels (ConformalQRF)
    if args.groups and "groups" in spec.parameters()[spec.layers[0]] and "groups" not in params:
        params["groups"] = group_columns(args.groups.split(","), list(stream.feature_names))
    try:
        model = spec.build(params, seed=args.seed, n_jobs=args.jobs)
        _check_parameters(model)  # every parameter now, not when learning starts
    except (ValueError, TypeError) as e:
        given = " ".join(f"--param {p}" for p in args.param or []) or f"--model {args.model}"
        raise ValueError(f"{given}: {e}") from None
    n = args.n if (args.file or args.dataset) else None
    total = stream.n if n is None else min(n, stream.n)
    if total == 0:
        raise ValueError(f"{_data_label(args)} has no rows")
    if args.file or (args.dataset and _is_path(args.dataset)):
        stream = _checked_file(stream, args.file or args.dataset)
    window = args.window or default_window(total)
    result = prequential(
        model, stream, alphas=alphas, n=n, window=window, step=args.step, progress=not args.quiet,
        groups=args.groups.split(",") if args.groups else None,
    )  # fmt: skip
    print(result.table())
    changed = _changed(args, spec)
    stem = result_stem(spec.name, _data_label(args), result.n, args.seed, result.alphas, changed)
    os.makedirs(args.out, exist_ok=True)
    json_path = args.json or os.path.join(args.out, stem + ".json")
    if os.path.dirname(json_path):
        os.makedirs(os.path.dirname(json_path), exist_ok=True)
    again = " (replaced the file of an earlier run)" if os.path.exists(json_path) else ""
    result.save_json(json_path)
    print(f"\nresults: {json_path}{again}")
    if not args.no_plot:
        png = os.path.join(args.out, stem + ".png")
        again = " (replaced the file of an earlier run)" if os.path.exists(png) else ""
        result.plot(png)
        print(f"figure:  {png}{again}")
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
            if not m.available:
                print(_wrap("(not in this build of streamforest)", width + 4))
                continue
            params = m.parameters()
            own = m.layers[0] if m.layers[0] in ("method", "sets") else None
            if own and _defaults(params[own]):
                print(_wrap(_defaults(params[own]), width + 4))
            below = [layer for layer in m.layers if layer != own]
            for layer in below:
                cls = m.layer_cls(layer)
                shared.setdefault((layer, cls), (params[layer], []))[1].append(m.name)
            print(_wrap(f"+ {' and '.join(below)} parameters", width + 4))
        print()
    for (layer, cls), (params, users) in shared.items():
        others = [m.name for m in specs if m.name not in users]
        if not others:
            which = "every model"
        elif len(users) <= len(others):  # name the shorter list
            which = f"models {', '.join(users)}"
        else:
            which = f"every model but {', '.join(others)}"
        print(_wrap(f"{layer} parameters ({cls.__name__}; {which})", 0))
        print(_wrap(_defaults(params), 2))
        print()
    print("seed and n_jobs come from --seed and --jobs, alphas from --alphas; a --param goes to")
    print("the model first, then its forest, then its trees (see each class's docstring)")
    print()


def _list_streams() -> None:
    from . import streams as streams

    print(f"streams (--stream NAME; --n rows, default {DEFAULT_N}; --seed, default 42;")
    print("         --stream-param KEY=VALUE for the others, repeatable)")
    width = max(len(k) for k in streams.BUILTIN)
    for name, text in streams.BUILTIN.items():
        cls, fixed = streams.constructor(name)
        shown = {**fixed, **streams.parameters(name)}
        call = ", ".join(f"{k}={v!r}" for k, v in shown.items())
        print(f"  {name:<{width}}  {text}")
        print(_wrap(f"{cls.__name__}({call})", width + 4))
    print()
    print(f"classification streams (--stream NAME with a classifier; default "
          f"{DEFAULT_CLASSIFICATION_STREAM})")  # fmt: skip
    width = max(len(k) for k in CLASSIFICATION_STREAMS)
    for name, (cls_name, fixed, text) in CLASSIFICATION_STREAMS.items():
        call = ", ".join(f"{k}={v!r}" for k, v in fixed.items())
        print(f"  {name:<{width}}  {text}")
        print(_wrap(f"{cls_name}({call})", width + 4))
    print()


def _list_datasets() -> None:
    from . import datasets as datasets
    from . import streams as streams

    rows = {}
    for name, b in datasets.BUNDLED.items():
        rows[name] = f"bundled: {b.rows} rows, {b.features} features, {b.description} ({b.licence})"
    local = datasets.cached()
    for name, r in datasets.REMOTE.items():
        state = "downloaded" if name in local else "downloaded on first use"
        rows[name] = f"{state}: {r.rows} rows, {r.features} features, {r.description}"
    for name, path in local.items():
        rows.setdefault(name, f"cached: {path}")
    try:
        folder = streams.data_root()
        for k, v in streams.manifest().items():
            what = f"{v.get('rows', '?')} rows, {v.get('features', '?')} features"
            rows.setdefault(k, f"shared folder {folder}: {what}")
    except (FileNotFoundError, ValueError):
        pass
    try:
        from .streams.files import classification_datasets

        for k, v in classification_datasets().items():
            what = (f"{v.get('rows', '?')} rows, {v.get('features', '?')} features, "
                    f"{v.get('n_classes', '?')} classes")  # fmt: skip
            rows.setdefault(k, f"classification (with a classifier): {what}")
    except (FileNotFoundError, ValueError):
        pass
    cache = f"cache: {datasets.data_home()}, set {datasets.ENV}"
    print(f"datasets (--dataset NAME or --dataset PATH; {cache})")
    width = max(len(k) for k in rows)
    for k, v in rows.items():
        print(f"  {k:<{width}}  {v}")
    print()


def _list(args) -> int:
    from .metrics import DESCRIPTIONS

    _list_models()
    _list_streams()
    _list_datasets()
    print("metrics")
    width = max(len(k) for k in DESCRIPTIONS)
    for k, v in DESCRIPTIONS.items():
        print(f"  {k:<{width}}  {v}")
    print()
    print("classification metrics (streamforest.classification_metrics)")
    print(_wrap("accuracy, kappa (Cohen's), kappa_m, kappa_t, macro_f1, log_loss; prediction "
                "sets at each alpha: coverage, mean_set_size, singletons, empty", 2))  # fmt: skip
    print()
    print("files (--file PATH --target COLUMN): .csv, .csv.gz, .tsv, .parquet, .arff")
    print("  with a classifier the target holds class labels (strings); '?' cells are missing")
    return 0


def _warmup(args=None) -> int:
    """Kept for scripts and image builds that called it: the compiled core is built when the
    package is installed, so there is nothing to compile or load ahead of time."""
    print("streamforest's core is compiled at install: nothing to warm up")
    return 0


EXAMPLES = """\
examples:
  streamforest run                                  the default model on Friedman #1 with drift
  streamforest run --model cp-approx --alphas 0.1,0.05 --param n_trees=20
  streamforest run --stream hyperplane --n 50000 --stream-param noise=0.5
  streamforest run --dataset concrete               a bundled real dataset
  streamforest run --dataset california_housing     downloaded and cached on first use
  streamforest run --file data.csv.gz --target y --no-plot --out results/
  streamforest run --model conformal-actser-rforest --stream agrawal --alphas 0.1,0.05
  streamforest list                                 models, streams, datasets, metrics
"""

RUN_EXAMPLES = """\
examples:
  streamforest run --model cp-exact --param calibration_size=500 --param n_trees=20
  streamforest run --stream friedman2-lea --n 200000 --alphas 0.1,0.05 --jobs 2
  streamforest run --dataset concrete --window 100
  streamforest run --dataset ./data/house.parquet --target price --out runs/
  streamforest run --file data.csv --target y --json run.json --no-plot --quiet

Result files: OUT/MODEL_DATA_nN_seedS[_aALPHAS][_HASH].json and .png, HASH a short digest of the
other settings changed from their defaults (--param, --stream-param, --window, --step, the file),
so runs with other settings never overwrite each other.
"""


def parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="streamforest",
        description="Online regression forests for data streams, with prediction intervals.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"streamforest {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser(
        "run",
        help="prequential run of a model on a stream (the main job)",
        description="Test-then-train run: prints the metrics table, writes a JSON of the results "
        "and a PNG of windowed MER / RIS / MAE. Defaults: "
        f"{registry.get(registry.DEFAULT).layer_cls('method').__name__} ({registry.DEFAULT}), "
        "10 trees, "
        "alpha 0.1, Friedman #1 with global abrupt drift, 100k rows.",
        epilog=RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    src.add_argument(
        "--stream",
        help=f"built-in stream (default {DEFAULT_STREAM}, {DEFAULT_CLASSIFICATION_STREAM} for a "
        "classifier; see list)",
    )
    src.add_argument("--file", help="CSV (.csv/.csv.gz/.tsv), Parquet or ARFF file")
    src.add_argument(
        "--dataset",
        metavar="NAME|PATH",
        help="a bundled, cached or downloadable dataset (see list), or a file's path",
    )
    run.add_argument(
        "--stream-param",
        action="append",
        metavar="KEY=VALUE",
        help="parameter of the --stream, repeatable (e.g. --stream-param noise=0.5; see list)",
    )
    run.add_argument("--target", help="target column of a file (default: the last column)")
    run.add_argument(
        "--bad-numbers",
        choices=("error", "missing"),
        help="a text cell in a numeric column of a file: an error naming it (default) or a "
        "missing value",
    )
    run.add_argument("--alphas", default="0.1", help="significance levels, e.g. 0.1,0.05")
    run.add_argument(
        "--groups",
        metavar="COL",
        help="column(s) of the data, e.g. sex or 0,3: "
        "MER and width per group (an interval method also calibrates per group)",
    )
    run.add_argument(
        "--n", type=int, help=f"rows (default {DEFAULT_N} for streams, all of a file or dataset)"
    )
    run.add_argument(
        "--window",
        type=int,
        help=f"window of the figure, in rows (default n/50, at least {MIN_WINDOW} and at most "
        "n/10)",
    )
    run.add_argument("--step", type=int, help="rows between sliding-window ends (default: window)")
    run.add_argument("--seed", type=int, default=42, help="seed of the stream and model (42)")
    run.add_argument("--jobs", type=int, default=1, help="threads for the trees (default 1)")
    run.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    run.add_argument("--json", metavar="PATH", help="where to write the JSON (default in --out)")
    run.add_argument("--no-plot", action="store_true", help="do not write the PNG")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    sub.add_parser("list", help="models, streams, datasets and metrics", description="What "
                   "'streamforest run' can use, with every parameter and its default.")  # fmt: skip
    # a no-op kept for scripts and image builds that called it (the core is compiled at
    # install): not described in the help, and whatever options they passed are accepted
    sub.add_parser("warmup", add_help=False)  # (main takes it before parsing: any options)
    return ap


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else list(argv))[:1] == ["warmup"]:
        return _warmup(None)  # whatever options it was given (they were numba's)
    args = parser().parse_args(argv)
    if args.command == "run":
        try:
            check_arguments(args)
        except ValueError as e:
            return _fail(str(e))
    try:
        return {"run": _run, "list": _list, "warmup": _warmup}[args.command](args)
    except KeyboardInterrupt:
        return _fail("interrupted")
    except BrokenPipeError:  # the reader went away (`streamforest list | head`): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # nothing left to flush at exit
        except (OSError, ValueError):
            pass
        return 141  # 128 + SIGPIPE, as a program killed by the signal
    except (ValueError, TypeError, OSError, ImportError, RuntimeError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        return _fail(msg)


if __name__ == "__main__":
    sys.exit(main())
