"""Loading: one dtype (and byte order) per array field.

Compiled code takes arrays of one item type in this machine's byte order (a binding refuses any
other with a ``TypeError`` at the first call that passes it: after the load, in the middle of
learning), so a loaded array must have the dtype its estimator gives the field.  The estimators'
array attributes are listed here by name with their dtype and number of dimensions (a name means
one field wherever it appears: ``tests/test_file_hostile.py`` checks the table against every
registry model, so a new array attribute is added here); the tree arenas' arrays are checked by
:func:`streamforest.tree_kinds.arena.check` and the sketches' and calibration sets' by
:mod:`._validation`.  An array of another dtype or byte order is refused (``ValueError``
naming the field): never converted, since a file this library wrote holds exactly these.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FIELD_TYPES", "check_field_types"]

_F8, _I8, _U8, _I1 = (
    np.dtype(np.float64),
    np.dtype(np.int64),
    np.dtype(np.uint64),
    np.dtype(np.int8),
)

FIELD_TYPES: dict[str, tuple[np.dtype, int]] = {
    # engines (Engine, ClassifierEngine, BoostEngine, MondrianEngine)
    "created": (_I1, 1), "bg_on": (_I1, 1), "_drifted": (_I1, 1), "nominal": (_I1, 1),
    "n_resets": (_I8, 1), "drift_counts": (_I8, 2), "_h": (_I8, 1),
    "bg_rng": (_U8, 2), "rng": (_U8, 1),
    "_bw": (_F8, 1), "_wt": (_F8, 1), "_no_memo": (_F8, 2), "_h_row": (_F8, 1),
    "last_predictions": (_F8, 1), "leaf_memo": (_F8, 2), "row_buffer": (_F8, 1),
    "_acc": (_F8, 1), "_p1": (_F8, 1), "_clean": (_F8, 1), "_extension": (_F8, 2),
    "_one_weight": (_F8, 1), "_saved": (_F8, 2), "_weights": (_F8, 1), "label_guard": (_F8, 1),
    "_weights_column": (_F8, 2), "settings": (_F8, 1),
    # classifiers' scratch (dropped from files, but a file may hold them)
    "_mean": (_F8, 1), "_pt": (_F8, 3), "_votes": (_F8, 1),
    # calibration sets (CPApproximate, CPExact, NormalizedConformal, ConformalQRF)
    "ring_": (_I8, 1), "cal_cnt_": (_I8, 1), "cal_birth_": (_I8, 2), "cal_leaf_": (_I8, 2),
    "cal_next_": (_I8, 2), "cal_prev_": (_I8, 2), "cal_oob_": (_I1, 2),
    "cal_pred_": (_F8, 2), "cal_sum_": (_F8, 1), "cal_x_": (_F8, 2), "cal_y_": (_F8, 1),
    "cal_cur_": (_F8, 2), "cal_spread_": (_F8, 1), "guard_": (_F8, 1), "level_": (_F8, 1),
    "scale_": (_F8, 1), "label_guard_": (_F8, 1),
    # adaptive conformal controllers
    "alpha_t_": (_F8, 1), "cal_": (_F8, 2), "ex_": (_F8, 3), "isum_": (_F8, 1),
    "levels_": (_F8, 1), "p_": (_F8, 1), "st_": (_F8, 2), "win_": (_F8, 2),
    "steps_": (_I8, 1), "win_n_": (_I8, 1), "win_pos_": (_I8, 1),
    "_asked": (_I8, 1),  # (when each level was last asked for: not saved, rebuilt on loading)
    # prediction sets' score ring
    "_ring": (_F8, 1), "_sorted": (_F8, 1), "_cal": (_I8, 1),
}  # fmt: skip
# fields whose number of dimensions differs between estimators (one or one per level)
_ANY_NDIM = frozenset({"cal_order_", "cal_pos_", "cal_score_", "cal_sorted_"})
for _name, _dt in (("cal_order_", _I8), ("cal_pos_", _I8), ("cal_score_", _F8),
                   ("cal_sorted_", _F8)):  # fmt: skip
    FIELD_TYPES[_name] = (_dt, 0)


def check_field_types(obj) -> None:
    """Raise ``ValueError`` naming the attribute unless each array attribute of ``obj`` listed
    in :data:`FIELD_TYPES` has its dtype (in this machine's byte order) and dimensions."""
    for name, value in obj.__dict__.items():
        if not isinstance(value, np.ndarray):
            continue
        if not value.dtype.isnative:
            raise ValueError(
                f"{name}: dtype {value.dtype.str!r} is not in this machine's byte order "
                f"(refused, not converted)"
            )
        expected = FIELD_TYPES.get(name)
        if expected is None:
            continue
        dtype, ndim = expected
        if value.dtype != dtype:
            raise ValueError(f"{name}: a {value.dtype} array where the model keeps {dtype}")
        if name not in _ANY_NDIM and value.ndim != ndim:
            raise ValueError(f"{name}: {value.ndim} dimensions where the model keeps {ndim}")


# learnt scalars (the parameters are checked by their estimators' rules, ._parameters): what
# each holds, by name, wherever it appears
_COUNT, _COUNT_OR_NONE, _SEED, _REAL, _REAL_OR_NONE, _BUDGET = range(6)
SCALAR_TYPES: dict[str, int] = {
    "_n_seen": _COUNT, "_version": _COUNT, "_resid_width": _COUNT, "synced_version": _COUNT,
    "n_classes": _COUNT, "_synced_classes": _COUNT, "synced_classes": _COUNT,
    "_threads": _COUNT, "tree_features": _COUNT, "tree_values": _COUNT, "n_trees_": _COUNT,
    "_most": _COUNT, "version": _COUNT, "max_observer_bins": _COUNT, "aggregation": _COUNT,
    "n_jobs": _COUNT, "max_codes": _COUNT_OR_NONE, "max_features": _COUNT_OR_NONE,
    "n_ignored_names": _COUNT,
    "_seed": _SEED, "seed": _SEED,
    "target_shift_": _REAL, "_items_per_row": _REAL, "bagging": _REAL, "warning": _REAL,
    "target_shift": _REAL_OR_NONE, "max_memory_mb": _BUDGET,
}  # fmt: skip


def check_scalar_types(obj) -> None:
    """Raise ``ValueError`` naming the attribute unless each learnt scalar of ``obj`` (not a
    parameter of its estimator) listed in :data:`SCALAR_TYPES` holds what it should: a count (a
    whole number in ``[-1, 2**62)``, -1 for none yet), a seed (``None`` or a whole number in
    ``[0, 2**64)``), a finite number, a budget (``None`` or a positive number)."""
    import math

    names = type(obj)._param_names() if hasattr(type(obj), "_param_names") else ()
    for name, value in obj.__dict__.items():
        kind = SCALAR_TYPES.get(name)
        if kind is None or name in names or isinstance(value, np.ndarray):
            continue  # (an estimator's parameters: checked by its own rules)
        whole = type(value) is int or isinstance(value, np.integer)
        real = (whole or isinstance(value, (float, np.floating))) and not isinstance(value, bool)
        if kind in (_COUNT, _COUNT_OR_NONE):
            ok = (value is None and kind == _COUNT_OR_NONE) or (whole and -1 <= value < 2**62)
        elif kind == _SEED:
            ok = value is None or (whole and 0 <= value < 2**64)
        elif kind == _REAL:
            ok = real and math.isfinite(value)
        elif kind == _REAL_OR_NONE:
            ok = value is None or (real and math.isfinite(value))
        else:
            ok = value is None or (real and 0 < value < math.inf)
        if not ok:
            raise ValueError(f"{name} = {value!r:.60}: not what the model keeps there")
