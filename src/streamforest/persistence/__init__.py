"""Versioned, safe persistence of streamforest models: :func:`save` and :func:`load`.

File format
-----------
A model file is one zip archive holding

- ``manifest.json`` (first entry): a JSON object with ``format`` (``"streamforest-model"``),
  ``format_version`` (an integer), ``library`` and ``library_version`` (who wrote it),
  ``class`` (``"module:QualName"`` of the estimator), ``params`` (its constructor
  parameters, ``get_params(deep=False)``), ``state`` (the estimator's whole object graph as a
  JSON tree) and, for information only, the ``python_version`` and ``numpy_version`` that wrote it;
- ``arrays/<n>.npy``: the numpy arrays the state refers to by name, in ``.npy`` format (read
  back with ``allow_pickle=False``).

The state is encoded generically, without knowledge of any estimator's attributes: the object
graph is walked from the estimator's ``__dict__`` (or what its class's ``__getstate__`` returns,
so scratch buffers an estimator drops from pickles are dropped here too).  JSON values stand for
``None``, ``bool``, ``int``, finite ``float`` and ``str``; everything else is a JSON object whose
``"$t"`` key names its kind: ``float`` (NaN and infinities), ``bytes``, ``list``, ``tuple``,
``set``, ``frozenset``, ``dict`` (a list of key/value pairs, so keys may be any supported
hashable value), ``ndarray`` and ``view`` (numpy arrays of any dtype but object), ``scalar`` (a
numpy scalar, as its dtype and raw bytes), ``dtype``, ``namedtuple`` and ``object`` (instances of
classes defined in ``streamforest`` modules) and ``ref``.  Every container, array and object
carries an ``id``; a second reference to the same Python object is a ``{"$t": "ref", "id": n}``,
so shared objects (one feature space shared by a forest and its trees, one array in two places)
stay shared after loading.  Arrays that are views of a common buffer are stored as that buffer
plus the views' offsets, shapes and strides, so they keep sharing memory; a lone view is
stored as a copy of its own data.  Saving the same model twice gives the same bytes.

Safety
------
Loading executes no code from the file: no pickle anywhere (``.npy`` entries are read with
``allow_pickle=False``), and classes are resolved only from ``streamforest`` modules (by
``importlib`` and ``getattr``) and only if the name resolves to a class defined in a
``streamforest`` module (NamedTuple classes, or classes whose bases are all streamforest classes).
Objects are rebuilt with ``cls.__new__(cls)`` and their state set as pickle does it (their
``__setstate__`` if the class defines one, else ``__dict__`` and slots).  Anything else in a
model (functions, arbitrary classes, locks, ...) makes :func:`save`
raise a ``TypeError`` naming the attribute path.

Loading also validates (:mod:`._validation`, :mod:`._tree_validation`): compiled kernels read
their arrays without bounds checks, so every index, count and size in the loaded arrays (tree
nodes, leaf slots, bins, categories, sketch levels, calibration sets, CPExact's member lists)
is checked against the arrays it indexes before :func:`load` returns.  Any damaged file (a bad
checksum or deflate stream, a ``.npy`` header that does not fit its entry, an index out of its
array) is a ``ValueError`` naming the file; only errors opening it are ``OSError``.

A hostile file is refused before it costs anything (issue #48): every size the archive and the
``.npy`` headers declare is checked before anything is decompressed (:mod:`._limits`: against
the file's bytes, the engines' memory budgets, a cap on the manifest; duplicate entries
refused), a tree arena's and AMF's trees' large arrays against their layout before they are read;
every estimator's constructor parameters pass its own rules before its state is set
(:mod:`._parameters`); each array field has its one dtype in this machine's byte order and each
learnt scalar its kind (:mod:`._field_types`: refused, never converted); a classifier's labels
and class index agree with each other and its trees (:mod:`._validation`).

Writing
-------
:func:`save` writes a temporary file beside the target and renames it over the target
(:mod:`._atomic_file`): the target is always the old file or the whole new one; the temporary
file is removed on any exception or interrupt, and those of earlier saves to the same path that
were killed are removed by the next save; a new file gets the mode ``open`` gives (``0o666``
less the umask), an existing file keeps its mode; a symbolic link's target is replaced (the
link stays).

Package layout: :mod:`._format` (the archive, the manifest, versions), :mod:`._classes` (which
classes a file may name), :mod:`._encoder` / :mod:`._decoder` (the object graph as JSON and
arrays), :mod:`._dtypes`, :mod:`._atomic_file`, :mod:`._limits` (declared sizes),
:mod:`._parameters`, :mod:`._field_types`, :mod:`._validation`, :mod:`._tree_validation` and
:mod:`._state_upgrades` (state whose meaning changed).

Versions
--------
``format_version`` covers both the container described above and the layout of the estimators'
learnt state (attribute names, NamedTuple fields, what the arrays hold), since the state is
stored as the estimators hold it.  So it must be bumped whenever an estimator's state layout
changes; a reader refuses files whose format version is newer than :data:`FORMAT_VERSION` or older
than :data:`MIN_FORMAT_VERSION` (an upgrade step in ``_UPGRADES`` can keep older formats readable).

==============  ==============================================  ======================
format_version  written by                                      read by
==============  ==============================================  ======================
1               streamforest 0.1.0                              streamforest 0.1.x
2               streamforest 0.1.x, with tree kinds and         streamforest 0.1.x
                background trees
3               streamforest 0.1.x, with classification trees   streamforest 0.1.x
4               streamforest 0.1.x, with ABORF's Bayesian        streamforest 0.1.x
                leaves
5               streamforest 0.1.x, a classifier's category      streamforest 0.1.x
                weights per nominal feature
6               streamforest 0.1.x, Bayesian leaves centred     streamforest 0.1.x
                on their means
7               streamforest 0.1.x, a classifier's category     streamforest 0.1.x
                cap (hash buckets past it)
==============  ==============================================  ======================

Version 2: every tree's state has the fields of the split rules and of change adaptation
(``lf_nexamples``, ``lf_candidate``, ``lf_buffer``, ``nd_alt``, ``nd_isalt``, ``nd_detector``,
``nd_alt_compare``, ``nd_path``; more ``ints``) and its parameters ``split_rule``, ``m_min`` and the
alternates'; a forest's engine holds background trees and drift counts, and a tree's drift detector
state (``TreeState.drift_detector``) is the thesis' Page-Hinkley test's.  Version 1 files still
load: the manifest is unchanged, and the objects upgrade themselves when their state is set (the
arena is laid out anew with the added fields as a new tree of its kind has them,
:func:`streamforest.tree_kinds.arena.upgrade`; the engine starts without background trees or
warnings, each tree's detector restarted in the new layout; a forest gets
``warning_fraction=None``).

Version 3: every tree's state ends with the class fields of classification trees
(``lf_class_weights``, ``lf_class_stats``, ``lf_nominal_class_weights``, ``lf_candidate_classes``,
``lf_range``; zero-sized in a regression tree) and its parameters with ``task``, ``ph_gamma`` and
``alt_chi2``; an engine records ``n_classes``. Version 2 files load unchanged: the arena upgrade
appends the fields as a regression tree has them and the parameters' defaults, and an engine without
``n_classes`` has none.

Version 4: every tree's state ends with the fields of ABORF's Bayesian leaves (``lf_bayes``,
``ft_bayes``; zero-sized unless ``leaf_model="bayesian"``) and its parameters with ``nig_c``,
``nig_a0``, ``nig_b0`` and ``nig_decay``.  Version 3 files load unchanged, the arena appending
the empty fields and the parameters' defaults (tested with files saved by format 3 code).

Version 5: a classification tree's ``lf_nominal_class_weights`` has one row per nominal feature (the
``s``-th nominal feature's weights of each category and class in row ``s``) instead of one per
feature (the rows of numeric features held nothing: on KDD'99, 41 rows of 70 codes x 23 classes, 528
kB a leaf, of which its 3 nominal features' rows are 39 kB), and its leaves no linear-model,
normaliser or observer columns (``lf_coef`` and ``lf_rmsprop`` one column, ``lf_x``, ``lf_scale``,
``lf_head`` and ``lf_nbins`` none; ``lf_candidate`` only the candidates' thresholds).  Version 3 and
4 files load: the arena keeps the nominal features' rows of ``lf_nominal_class_weights``
(:func:`streamforest.tree_kinds.arena.upgrade`; the other fields are read by their shapes, so wider
ones still work).

Version 6: ABORF's Bayesian leaves model their target less the leaf's running mean and keep
their scatter (``lf_bayes``) about the leaf's running means of the target and the features
(raw units before: not offset invariant); the layout is unchanged.  Version 4 and 5 files load:
each Bayesian leaf's scatter is moved to its means and its intercept lowered by its target mean
(:mod:`._state_upgrades`), so the model predicts as saved, and learns on as the new model.

Version 7: a model's feature space records its category cap (``max_codes``, set by a classifier
under a memory budget) and, per feature, the number of hash buckets its later categories go to
once it reached the cap (``code_limits``; see :mod:`streamforest.features`).  Files of formats 6
and older load with no cap and no feature past one (their categories were all coded, as before);
a classifier with a budget works its cap out at its next learning call.
"""

from __future__ import annotations

import io

from ._atomic_file import write_atomically
from ._classes import _resolve
from ._decoder import _Decoder
from ._format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST,  # noqa: F401  (a name of the former module)
    MIN_FORMAT_VERSION,
    _check_version,
    _manifest_and_entries,
    _open_zip,
    _read_manifest,
    _where,
    _write_zip,
    corrupt,
    read_manifest,
)
from ._limits import check_archive, check_declared_sizes
from ._state_upgrades import upgrade_state
from ._validation import validate

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "MIN_FORMAT_VERSION", "load", "read_manifest", "save"]


def save(model, path, *, compress: bool = True) -> None:
    """Write ``model`` (any streamforest estimator, fitted or not) to ``path``.

    ``path`` is a ``str`` or ``os.PathLike`` (the file is written to a temporary file in the same
    directory, then moved into place, so a crash never leaves a half-written model behind), or
    a binary file object open for writing.  ``compress`` deflates the archive's entries.  A new
    file gets the mode ``open`` gives (``0o666`` less the umask), an existing one keeps its
    mode; a symbolic link's target is written (the link stays); temporary files are removed on
    every way out, and those of earlier saves to the same path killed mid-write on the next save
    (:mod:`streamforest.persistence._atomic_file`).

    Raises ``TypeError`` (naming the attribute path) if the model holds a value that cannot be
    stored safely, before anything is written.
    """
    manifest, entries = _manifest_and_entries(model)
    if hasattr(path, "write"):
        _write_zip(path, manifest, entries, compress)
        return
    write_atomically(path, lambda f: _write_zip(f, manifest, entries, compress))


def load(path):
    """Read a model written by :func:`save` (``path``: ``str``, ``os.PathLike`` or a binary file
    object).  Refuses (``ValueError``, naming the file) files that are not streamforest models,
    whose format version this library cannot read, that name a class outside streamforest, or
    that are damaged: a bad checksum or archive, arrays that do not fit their headers, and any
    index, count or size in the model's arrays that does not fit the arrays it indexes
    (:mod:`streamforest.persistence._validation`), all checked before any compiled code runs.
    Errors opening the file (``OSError``: no such file, no permission) pass as they are."""
    where = _where(path)
    zf = _open_zip(path, where)  # OSError (no such file, no permission) passes as it is
    try:
        with zf:
            return _load(zf, where)
    except ValueError as e:
        if str(e).startswith(where):
            raise
        raise ValueError(f"{where}: {e}") from e
    except Exception as e:  # anything else a damaged file made a reader, constructor or check
        raise corrupt(where, e) from e  # raise (OSError too: a bz2 stream in a damaged entry)


def _file_size(zf) -> int | None:
    try:
        pos = zf.fp.tell()
        size = zf.fp.seek(0, io.SEEK_END)
        zf.fp.seek(pos)
        return size
    except (AttributeError, OSError, ValueError):
        return None


def _load(zf, where: str):
    check_archive(zf, where, _file_size(zf))  # before anything is decompressed
    manifest = _read_manifest(zf, where)
    version = manifest.get("format_version")
    manifest = _check_version(manifest, where)
    check_declared_sizes(zf, manifest, version, where)  # before any array is read
    cls = _resolve(manifest.get("class"))
    dec = _Decoder(zf, where)
    params = manifest.get("params")
    if not isinstance(params, dict) or "state" not in manifest:
        raise dec.bad("no params or state")
    for k, v in params.items():
        dec.decode_at(v, f"params[{k!r:.40}]")
    model = dec.decode_at(manifest["state"], cls.__name__)
    if type(model) is not cls:
        raise dec.bad(f"the state is a {type(model).__name__}, not a {cls.__name__}")
    validate(model, where)
    upgrade_state(model, version)
    return model


def _dumps(model) -> bytes:
    """The bytes :func:`save` writes for ``model`` (for tests)."""
    buf = io.BytesIO()
    save(model, buf)
    return buf.getvalue()
