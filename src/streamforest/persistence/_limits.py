"""What a model file may declare, checked before anything is decompressed or allocated.

A zip entry declares its uncompressed size in the archive's directory and a ``.npy`` entry its
shape in its header; :mod:`zipfile` never reads past the declared size, and the decoder allocates
an array of the declared shape before it fills it.  So a small hostile file could make a load
decompress and allocate gigabytes before any check refuses it (a 2.0 MB file declaring a 2 GB
array, a manifest padded with 1 GB of spaces).  Every declared size is therefore checked first,
against what the file holds and what the model may hold:

- the archive (:func:`check_archive`, before the manifest is read): no two entries of one name
  (two ``manifest.json``: which one would count?); stored or deflated entries only; a stored
  entry's size is its compressed size; every entry inside the file; the manifest at most
  :data:`MAX_MANIFEST_BYTES` and, past :data:`SMALL_ENTRY`, at most :data:`MANIFEST_RATIO` times
  its compressed size (JSON deflates 3 to 20 times; a padded manifest 230 to 1,000 times);
- the arrays (:func:`check_declared_sizes`, after the manifest, before any array is read):
  each entry past :data:`SMALL_ENTRY` at most :data:`RATIO_CAP` times its compressed size
  (deflate at level 1, which :func:`~streamforest.persistence.save` has used since format 2,
  reaches 230 on zeros; format 1 files, written at level 6, up to deflate's own bound of 1,032:
  :data:`RATIO_CAP_V1`); the arrays of an engine with a memory budget (``max_memory_mb``) at
  most :data:`BUDGET_FACTOR` times its budget plus :data:`SLACK_BYTES` (a saved engine holds its
  trees cut to their fields, within the budget); and, when every engine of the model has a
  budget; and the arrays outside every engine (calibration sets, the controllers' state) at most
  :data:`SLACK_BYTES` plus :data:`TOTAL_RATIO` times their compressed bytes (data, which does not
  deflate hundreds of times, whatever the budgets).

Each refusal is a ``ValueError`` naming the entry and the field (the attribute path the
manifest gives the array) and the limit it passed.
"""

from __future__ import annotations

import functools
import zipfile

import numpy as np

from ..tree_kinds import arena
from ._classes import _resolve

SMALL_ENTRY = 2**20  # an entry declaring at most this is cheap whatever its ratio
MAX_MANIFEST_BYTES = 64 * 2**20
MANIFEST_RATIO = 100
RATIO_CAP = 400
RATIO_CAP_V1 = 1100
DEFLATE_BOUND = 1100  # deflate cannot expand more than 1,032 times: above is no deflate stream
BUDGET_FACTOR = 2.0
SLACK_BYTES = 64 * 2**20
TOTAL_RATIO = 64
MANIFEST = "manifest.json"


@functools.cache
def _is_engine(spec) -> bool:
    """Whether class ``spec`` (``module:QualName`` in a manifest) is an engine, whose arrays its
    memory budget bounds (the forests' and boosting's engines, and AMF's)."""
    from ..engine.core import Engine

    try:
        cls = _resolve(spec)
    except (ValueError, TypeError):
        return False  # (refused when the state is decoded)
    return issubclass(cls, Engine) or cls.__name__ == "MondrianEngine"


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def check_archive(zf: zipfile.ZipFile, where: str, file_size: int | None) -> None:
    """Refuse (``ValueError`` naming ``where`` and the entry) an archive with two entries of one
    name, an entry outside the file or of another compression method, a stored entry whose
    sizes disagree, an entry declaring more than deflate can give, or a manifest too large."""
    seen: set[str] = set()
    for info in zf.infolist():
        name = info.filename
        if name in seen:
            raise ValueError(
                f"{where}: two entries named {name!r} in the archive (a model file holds one of "
                f"each: which would count?)"
            )
        seen.add(name)
        method = info.compress_type
        if method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ValueError(
                f"{where}: entry {name!r} uses compression method {method} (saves store or deflate)"
            )
        if file_size is not None and info.header_offset + info.compress_size > file_size:
            raise ValueError(
                f"{where}: entry {name!r} declares {info.compress_size} compressed bytes past "
                f"the end of the file ({file_size} bytes)"
            )
        if method == zipfile.ZIP_STORED and info.file_size != info.compress_size:
            raise ValueError(
                f"{where}: stored entry {name!r} declares {info.file_size} bytes but holds "
                f"{info.compress_size}"
            )
        if info.file_size > SMALL_ENTRY and info.file_size > DEFLATE_BOUND * info.compress_size:
            raise ValueError(
                f"{where}: entry {name!r} declares {_mb(info.file_size)} from "
                f"{info.compress_size} compressed bytes, more than deflate can give "
                f"(a decompression bomb?); refused before decompressing"
            )
    if MANIFEST in seen:
        info = zf.getinfo(MANIFEST)
        if info.file_size > MAX_MANIFEST_BYTES:
            raise ValueError(
                f"{where}: {MANIFEST} declares {_mb(info.file_size)}, more than the "
                f"{_mb(MAX_MANIFEST_BYTES)} a manifest may hold; refused before reading it"
            )
        if info.file_size > SMALL_ENTRY and info.file_size > MANIFEST_RATIO * info.compress_size:
            raise ValueError(
                f"{where}: {MANIFEST} declares {_mb(info.file_size)} from {info.compress_size} "
                f"compressed bytes (more than {MANIFEST_RATIO} times: padding?); refused before "
                f"reading it"
            )


# ------------------------------------------------------------------------------------------------
class _Walk:
    """The manifest's JSON tree walked once: the attribute path of every array entry, and the
    engines with a memory budget with the entries below them."""

    def __init__(self):
        self.paths: dict[str, str] = {}
        self.engines: list[tuple[str, float | None, set]] = []  # path, budget MiB, entries
        self._below: list[set] = []
        self.checked: set[str] = set()  # entries of tree arenas and AMF trees

    def walk(self, node, path: str) -> None:
        stack = [(node, path, None)]
        while stack:
            node, path, done = stack.pop()
            if done is not None:  # leaving an engine: its entries are counted
                self._below.pop()
                continue
            if isinstance(node, list):
                stack.extend((x, f"{path}[{i}]", None) for i, x in enumerate(node))
                continue
            if not isinstance(node, dict):
                continue
            t = node.get("$t")
            if t in ("ndarray", "view"):
                name = node.get("data")
                if isinstance(name, str):
                    self.paths.setdefault(name, path)
                    for below in self._below:
                        below.add(name)
                continue
            items = node.get("items")
            if t == "object":
                cls = node.get("class")
                state = node.get("state")
                if isinstance(cls, str) and _is_engine(cls):
                    entries: set = set()
                    self.engines.append((path, _budget(state), entries))
                    self._below.append(entries)
                    stack.append((None, path, True))
                stack.append((state, path, None))
            elif t == "dict" and isinstance(items, list):
                for pair in items:
                    if isinstance(pair, list) and len(pair) == 2:
                        k = pair[0]
                        step = (
                            f".{k}" if isinstance(k, str) and k.isidentifier() else f"[{k!r:.40}]"
                        )
                        stack.append((pair[1], path + step, None))
            elif t == "namedtuple" and isinstance(items, list):
                if str(node.get("class", "")).endswith((":Arena", "mondrian.state:Trees")):
                    for x in items:  # (their shapes are checked against their layout)
                        if isinstance(x, dict) and isinstance(x.get("data"), str):
                            self.checked.add(x["data"])
                fields = node.get("fields")
                names = fields if isinstance(fields, list) else []
                for i, x in enumerate(items):
                    step = f".{names[i]}" if i < len(names) and isinstance(names[i], str) else ""
                    stack.append((x, path + (step or f"[{i}]"), None))
            elif isinstance(items, list):
                stack.extend((x, f"{path}[{i}]", None) for i, x in enumerate(items))


def _budget(state) -> float | None:
    """An engine's ``max_memory_mb`` from its JSON state (None: none, or not a number)."""
    if not (isinstance(state, dict) and state.get("$t") == "dict"):
        return None
    for pair in state.get("items") or ():
        if isinstance(pair, list) and len(pair) == 2 and pair[0] == "max_memory_mb":
            v = pair[1]
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
                return float(v)
            return None
    return None


def check_declared_sizes(zf: zipfile.ZipFile, manifest: dict, version: int, where: str) -> None:
    """Refuse (``ValueError`` naming the entry and its field) a file whose array entries declare
    more than their compressed bytes or their engine's budget allow (module docstring)."""
    walk = _Walk()
    walk.walk(manifest.get("params"), "params")
    walk.walk(manifest.get("state"), str(manifest.get("class", "model")).rpartition(":")[2])
    infos = {i.filename: i for i in zf.infolist() if i.filename != MANIFEST}
    ratio = RATIO_CAP if version >= 2 else RATIO_CAP_V1

    def field(name: str) -> str:
        return walk.paths.get(name, "an array no field refers to")

    for name, info in infos.items():
        if info.file_size > SMALL_ENTRY and info.file_size > ratio * info.compress_size:
            raise ValueError(
                f"{where}: {field(name)} (entry {name!r}) declares {_mb(info.file_size)} from "
                f"{info.compress_size} compressed bytes, more than {ratio} times (model files "
                f"deflate less: a decompression bomb?); refused before decompressing"
            )
    for path, budget, entries in walk.engines:
        declared = sum(infos[n].file_size for n in entries if n in infos)
        if budget is None:
            continue
        limit = BUDGET_FACTOR * budget * 2**20 + SLACK_BYTES
        if declared > limit:
            big = max((n for n in entries if n in infos), key=lambda n: infos[n].file_size)
            raise ValueError(
                f"{where}: {path}'s arrays declare {_mb(declared)}, more than its memory "
                f"budget (max_memory_mb={budget:g}) allows ({_mb(int(limit))}); the largest, "
                f"{field(big)} (entry {big!r}), {_mb(infos[big].file_size)}; refused before "
                f"decompressing"
            )
    # the arrays outside every engine with a budget (calibration sets, controllers' state: data,
    # which does not deflate hundreds of times), but the trees' (checked against their layout)
    budgeted = set().union(*(entries for _, budget, entries in walk.engines if budget))
    rest = [n for n in infos if n not in budgeted and n not in walk.checked]
    declared = sum(infos[n].file_size for n in rest)
    compressed = sum(infos[n].compress_size for n in rest)
    limit = SLACK_BYTES + TOTAL_RATIO * compressed
    if declared > limit:
        big = max(rest, key=lambda n: infos[n].file_size)
        raise ValueError(
            f"{where}: the arrays outside the trees declare {_mb(declared)} from {compressed} "
            f"compressed bytes, more than {_mb(int(limit))}; the largest, {field(big)} (entry "
            f"{big!r}), {_mb(infos[big].file_size)}; refused before decompressing"
        )


# ------------------------------------------------------------------------------------------------
MAX_TREES = 4096  # rows of a tree arena (a forest has at most 1,000 trees, and as many in the
# background)
ROW_GROWTH = 8  # a row holds at most this times its fields' items (rows grow 4 times at a time;
ROW_SLACK = 65536  # files of formats 1 and 2 kept the spare), plus this many


def check_arena_entries(decoder, nodes: dict) -> None:
    """A tree arena's layout (``lay``, small) read first, and its large arrays' declared shapes
    (``fa``, ``ia``, ``ba``: one row per tree, at most :data:`ROW_GROWTH` times the items its
    fields use) checked against it before they are read (``ValueError`` naming the field, by
    ``decoder.bad``).  ``nodes``: the arena's fields' JSON nodes by name."""
    lay_node = nodes.get("lay")
    if not (isinstance(lay_node, dict) and lay_node.get("$t") == "ndarray"):
        return  # (a reference or a view: checked once loaded, arena.check)
    decoder.path.append(".lay")
    try:
        n_trees, kinds, ends = _layout(decoder, lay_node["data"])
    finally:
        decoder.path.pop()
    for name, which in (("fa", arena.F64), ("ia", arena.I64), ("ba", arena.I8)):
        node = nodes.get(name)
        if not (isinstance(node, dict) and node.get("$t") in ("ndarray", "view")):
            continue
        decoder.path.append("." + name)
        try:
            shape, dtype = decoder.entry_header(node.get("data"))
            cols = ends[:, kinds == which]
            need = float(cols.max()) if cols.size else 0.0
            if node["$t"] == "view":  # a view of a shared buffer: the buffer at most two rows'
                items = 1
                for d in shape:
                    items *= d
                if items > 2 * n_trees * (ROW_GROWTH * need + ROW_SLACK) * 8 / dtype.itemsize:
                    raise decoder.bad(
                        f"a buffer of {shape} for a layout of {n_trees} trees whose fields use "
                        f"at most {need:,.0f} items; refused before reading it"
                    )
                shape = tuple(node.get("shape") or ())
            if len(shape) != 2 or shape[0] != n_trees:
                raise decoder.bad(f"shape {shape} for a layout of {n_trees} trees")
            if shape[1] > ROW_GROWTH * need + ROW_SLACK:
                raise decoder.bad(
                    f"rows of {shape[1]:,} items where the trees' fields use at most "
                    f"{need:,.0f}; refused before reading it"
                )
        finally:
            decoder.path.pop()


def _layout(decoder, name) -> tuple:
    """``(trees, arena of each field, end of each field of each tree)`` of layout entry
    ``name``, its shape checked before it is read."""
    shape, dtype = decoder.entry_header(name)
    if not (
        len(shape) == 3
        and shape[2] == 4
        and 1 <= shape[0] <= MAX_TREES
        and shape[1] <= arena.N_FIELDS
        and dtype == np.int64
    ):
        raise decoder.bad(
            f"a {shape} {dtype} layout, not (trees, fields, 4) int64 of at most "
            f"{MAX_TREES} trees and {arena.N_FIELDS} fields"
        )
    lay = decoder.entry(name)
    if (lay < 0).any():
        raise decoder.bad("a negative offset or size")
    f = lay.astype(np.float64)  # (no int64 wrap: products of huge sizes stay huge)
    ends = f[:, :, 0] + f[:, :, 1] * f[:, :, 2] * f[:, :, 3]
    return shape[0], _field_arenas()[: shape[1]], ends


@functools.lru_cache(maxsize=1)
def _field_arenas() -> np.ndarray:
    """The arena (``F64``, ``I64``, ``I8``) of each tree state field, from its dtype (the
    arena module's docstring: float64, int64 and uint64, int8), read off a tiny tree."""
    from ..rng import new_state
    from ..tree_kinds import state

    st = state.allocate(1, new_state(0), leaves=1, nodes=1, bins=1, cats=1)
    of = {"f": arena.F64, "i": arena.I64, "u": arena.I64}
    return np.array(
        [arena.I8 if a.dtype.itemsize == 1 else of[a.dtype.kind] for a in st], dtype=np.int64
    )


def check_mondrian_entries(decoder, nodes: dict) -> None:
    """AMF's trees (``streamforest.mondrian.state.Trees``): ``meta`` (small: per tree, its node
    count) read first, then ``nodes`` (trees, room, record) and ``tree_rng`` checked to have a
    row per tree, and room for at most :data:`ROW_GROWTH` times the most nodes a tree holds,
    before they are read."""
    meta_node = nodes.get("meta")
    if not (isinstance(meta_node, dict) and meta_node.get("$t") == "ndarray"):
        return
    decoder.path.append(".meta")
    try:
        shape, dtype = decoder.entry_header(meta_node["data"])
        if not (len(shape) == 2 and shape[1] == 2 and 1 <= shape[0] <= MAX_TREES
                and dtype == np.int64):  # fmt: skip
            raise decoder.bad(f"a {shape} {dtype} array, not (trees, 2) int64")
        meta = decoder.entry(meta_node["data"])
        most = float(meta.max(initial=0))
    finally:
        decoder.path.pop()
    n_trees = shape[0]
    for name, room in (("nodes", True), ("tree_rng", False)):
        node = nodes.get(name)
        if not (isinstance(node, dict) and node.get("$t") == "ndarray"):
            continue
        decoder.path.append("." + name)
        try:
            shape, _ = decoder.entry_header(node.get("data"))
            if not shape or shape[0] != n_trees:
                raise decoder.bad(f"shape {shape} for {n_trees} trees")
            if room and (len(shape) < 2 or shape[1] > ROW_GROWTH * most + ROW_SLACK):
                raise decoder.bad(
                    f"shape {shape}: room for more nodes than the trees' {most:,.0f} allow; "
                    f"refused before reading it"
                )
        finally:
            decoder.path.pop()
