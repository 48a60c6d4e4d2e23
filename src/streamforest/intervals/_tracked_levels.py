"""The levels an adaptive conformal wrapper (:class:`~streamforest.AdaptiveConformal`,
:class:`~streamforest.AdaptiveConformalClassifier`) tracks: a controller per level, those of
``alphas`` always, and a bounded number of the other levels asked for, the least recently asked
forgotten past the cap (warned once), so the controllers' memory and a call's time are bounded
whatever levels a stream asks for.

The wrapper keeps, aligned with ``levels_`` and its controller arrays, ``_asked`` (the call
count when each level was last asked for; not saved: a loaded wrapper takes its levels as asked
equally long ago) and ``_layout``, a number changed whenever the tracked levels change, so that a
served record (a column per tracked level) is read only under the levels it was served with."""

from __future__ import annotations

import warnings

import numpy as np

#: Levels asked for by ``predict_learn_many`` (beyond ``alphas``) that stay tracked; past that
#: the least recently asked is forgotten (see "Several levels" of
#: :class:`~streamforest.AdaptiveConformal`).
MAX_ASKED_LEVELS = 16


def _among(levels, values) -> np.ndarray:
    """For each of ``values``: whether it is one of ``levels`` (to 1e-12)."""
    return np.array([bool(np.any(np.abs(levels - a) <= 1e-12)) for a in values], bool)


def index_of(levels, values) -> np.ndarray:
    """Position of each of ``values`` among ``levels`` (to 1e-12; -1: not there)."""
    values = np.asarray(values, dtype=float)
    if levels.shape[0] == 0:
        return np.full(values.shape[0], -1, np.int64)
    hit = np.abs(levels[None, :] - values[:, None]) <= 1e-12
    return np.where(hit.any(axis=1), hit.argmax(axis=1), -1).astype(np.int64)


def reset(wrapper) -> None:
    """No level asked for yet (a new or loaded wrapper), no record's layout."""
    d = wrapper.__dict__
    d["_layout"] = 0
    d["_asked"] = np.zeros(wrapper.levels_.shape[0], np.int64)
    d["_asked_clock"] = 0


def start(wrapper, levels) -> None:
    """Start controllers (at their initial state) for the levels not tracked yet."""
    new = [float(a) for a, t in zip(levels, _among(wrapper.levels_, levels), strict=True) if not t]
    new = list(dict.fromkeys(new))
    if not new:
        return
    d = wrapper.__dict__
    d["levels_"] = np.concatenate([wrapper.levels_, new])
    d["_asked"] = np.concatenate([d["_asked"], np.zeros(len(new), np.int64)])
    for k, v in wrapper._initial_rows(len(new), new).items():
        d[k] = np.concatenate([d[k], v])
    d["_layout"] += 1


def track(wrapper, levels, cap: int = MAX_ASKED_LEVELS) -> None:
    """Track ``levels``, asked for now: start the new ones and forget the least recently asked
    levels outside ``alphas`` past ``cap`` of them (a ``RuntimeWarning`` the first time); a call
    asking for more than ``cap`` levels outside ``alphas`` is refused (``ValueError``) before
    anything changes."""
    d = wrapper.__dict__
    pinned = wrapper._levels_of(wrapper.alphas)
    asked = [float(a) for a, p in zip(levels, _among(pinned, levels), strict=True) if not p]
    asked = list(dict.fromkeys(asked))
    if len(asked) > cap:
        raise ValueError(
            f"alpha: {len(asked)} levels besides alphas={wrapper.alphas!r} asked for at once; "
            f"at most {cap} are tracked (give the levels you keep asking for as alphas)"
        )
    start(wrapper, levels)
    d["_asked_clock"] += 1
    d["_asked"][index_of(wrapper.levels_, asked)] = d["_asked_clock"]
    free = ~_among(pinned, wrapper.levels_)
    excess = int(free.sum()) - cap
    if excess <= 0:
        return
    candidates = np.flatnonzero(free)
    drop = candidates[np.argsort(d["_asked"][candidates], kind="stable")[:excess]]
    if not d.get("_warned_levels"):
        d["_warned_levels"] = True
        warnings.warn(
            f"{type(wrapper).__name__}: more than {cap} levels besides alphas="
            f"{wrapper.alphas!r} asked for; the least recently asked "
            f"({', '.join(f'{a:g}' for a in wrapper.levels_[drop])}) is forgotten, and so on "
            "(a level asked for again starts afresh).  Give the levels you use as alphas.",
            RuntimeWarning,
            stacklevel=5,
        )
    keep = np.ones(wrapper.levels_.shape[0], bool)
    keep[drop] = False
    for k in ("levels_", "_asked", *wrapper._CONTROLLERS):
        d[k] = d[k][keep]
    d["_layout"] += 1
