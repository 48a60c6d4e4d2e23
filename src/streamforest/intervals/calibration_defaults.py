"""The calibration settings validated for each kind of base (issue 49): an interval method whose
settings depend on its forest leaves them at ``None`` by default and takes, when learning starts,
those of :data:`SETTINGS` for its forest's kind (:attr:`RegressionForest.forest_kind
<streamforest.engine.forest_interface.RegressionForest.forest_kind>`); a value given to its
constructor wins.  docs/intervals.md, "Settings per base", is this table with the measurements
behind each row.
"""

from __future__ import annotations

from types import MappingProxyType

from ..engine.forest_interface import BAGGED, BOOSTED, MONDRIAN, SINGLE_TREE

_AVERAGED = MappingProxyType({"center": "boosted", "batch_scores": True})

#: ``{kind: {parameter: value}}`` of :class:`~streamforest.NormalizedConformal`'s calibration
#: settings per kind of base.
SETTINGS = MappingProxyType(
    {
        # a bias forest corrects the averaged trees' coarse leaves; a batch's rows scored with
        # the centre from before the batch (the alpha sweep, docs/intervals.md)
        BAGGED: _AVERAGED,
        SINGLE_TREE: _AVERAGED,  # (not measured apart: a bagged forest of one)
        # the steps already correct each other: the SGBT alone as the centre, scored row by
        # row (issue 31; issue 49's benchmark, docs/benchmarks/defaults.md)
        BOOSTED: MappingProxyType({"center": "forest", "batch_scores": False}),
        MONDRIAN: MappingProxyType({"center": "forest", "batch_scores": False}),
    }
)


def resolved(method, forest, names) -> dict:
    """``{name: value}`` for ``method``'s parameters ``names``: the value given to its
    constructor, or (``None``) the one of :data:`SETTINGS` for ``forest``'s kind."""
    table = SETTINGS.get(getattr(forest, "forest_kind", BAGGED), SETTINGS[BAGGED])
    out = {}
    for name in names:
        value = getattr(method, name)
        out[name] = table[name] if value is None else value
    return out


__all__ = ["SETTINGS", "resolved"]
