"""Issue 49: the interval settings follow the base.  NormalizedConformal's ``center`` and
``batch_scores`` default to None and resolve, when learning starts, to the settings validated for
the forest's kind (``RegressionForest.forest_kind``; ``intervals.calibration_defaults``); an
explicit argument wins; the resolved values are kept (and saved), the parameters stay None.  The
default base is ``SGBTRegressor()`` with the setting tuned on Friedman 'gra'."""

import copy
import io
import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest import persistence, registry
from streamforest.engine import forest_interface
from streamforest.intervals.calibration_defaults import SETTINGS
from streamforest.metrics import score
from streamforest.streams import Friedman


def rows(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    return X, 10 * X[:, 0] + 5 * np.sin(3 * X[:, 1]) + rng.standard_normal(n)


def small_sgbt(seed=0):
    return sf.SGBTRegressor(n_steps=10, learning_rate=0.3, seed=seed)


KINDS = [
    (lambda: sf.OnlineForestRegressor(n_trees=3), forest_interface.BAGGED),
    (lambda: sf.ABORFRegressor(n_trees=2, depth=3), forest_interface.BAGGED),
    (lambda: sf.ATSEREnsembleRegressor(), forest_interface.BAGGED),
    (lambda: sf.OnlineForestRegressor(n_trees=1), forest_interface.SINGLE_TREE),
    (small_sgbt, forest_interface.BOOSTED),
    (lambda: sf.AMFRegressor(n_trees=2), forest_interface.MONDRIAN),
]


@pytest.mark.parametrize("make, kind", KINDS)
def test_each_forest_says_its_kind_and_the_method_takes_that_kinds_settings(make, kind):
    forest = make()
    assert forest.forest_kind == kind and kind in forest_interface.FOREST_KINDS
    m = sf.NormalizedConformal(forest=forest, seed=1)
    X, y = rows(400)
    m.learn_many(X, y)
    assert (m.center_, m.batch_scores_) == (
        SETTINGS[kind]["center"],
        SETTINGS[kind]["batch_scores"],
    )
    assert m.get_params()["center"] is None and m.get_params()["batch_scores"] is None
    assert m.clone().center is None


def test_sgbt_resolves_to_the_setting_validated_on_gra():
    """Over SGBT: the SGBT alone as the centre, scored row by row (issue 31's must-show), and
    SGBT's own defaults are the tuned steps; over the bagged forest the settings before."""
    m = sf.NormalizedConformal(forest=sf.SGBTRegressor())
    m.learn_many(*rows(300))
    assert (m.center_, m.batch_scores_) == ("forest", False)
    assert "_bias" not in m.__dict__  # no second SGBT as a bias forest
    p = sf.SGBTRegressor().get_params()
    assert (p["n_steps"], p["learning_rate"], p["drift_threshold"]) == (200, 0.0625, 50.0)
    f = sf.NormalizedConformal(forest=sf.OnlineForestRegressor(n_trees=3))
    f.learn_many(*rows(300))
    assert (f.center_, f.batch_scores_) == ("boosted", True)


def test_the_default_base_is_sgbt_and_the_command_lines_default_too():
    m = sf.NormalizedConformal()
    m.learn_many(*rows(300))
    assert type(m.forest_) is sf.SGBTRegressor and m.center_ == "forest"
    trees = sf.NormalizedConformal(normalize="trees")  # needs bagged members: the forest
    trees.learn_many(*rows(300))
    assert type(trees.forest_) is sf.OnlineForestRegressor and trees.center_ == "boosted"
    assert registry.DEFAULT == "normalized-cp-sgbt"
    assert isinstance(registry.build(registry.DEFAULT).forest, sf.SGBTRegressor)


@pytest.mark.parametrize(
    "explicit",
    [{"center": "boosted"}, {"batch_scores": True}, {"center": "boosted", "batch_scores": True}],
)
def test_an_explicit_argument_wins_and_gives_that_settings_results(explicit):
    X, y = rows(1200)
    auto = {"center": "forest", "batch_scores": False}  # what SGBT resolves to
    m = sf.NormalizedConformal(forest=small_sgbt(), **explicit)
    ref = sf.NormalizedConformal(forest=small_sgbt(), **{**auto, **explicit})
    for a in range(0, 1200, 400):
        got = m.predict_learn_many(X[a : a + 400], y[a : a + 400], alpha=[0.1, 0.05])
        want = ref.predict_learn_many(X[a : a + 400], y[a : a + 400], alpha=[0.1, 0.05])
        np.testing.assert_array_equal(got[1], want[1])
    assert (m.center_, m.batch_scores_) == (ref.center, ref.batch_scores)
    assert m.get_params()["center"] == explicit.get("center")


def test_the_settings_for_sgbt_are_narrower_than_the_old_ones_and_valid_on_a_short_gra():
    """Friedman 'gra' (20k rows, drifts at 10k and 15k), a small SGBT, blocks of 1000 rows
    through predict_learn_many: the resolved settings (center="forest", batch_scores=False)
    against the defaults before (center="boosted", batch_scores=True).  Measured: MER 0.0964 /
    RIS 0.2036 against 0.0959 / 0.2545."""
    X, y = Friedman(function=1, drift="gra", n=20_000, seed=3).arrays()

    def run(**kw):
        m = sf.NormalizedConformal(
            forest=sf.SGBTRegressor(n_steps=30, learning_rate=0.2, seed=0), **kw
        )
        out = [
            m.predict_learn_many(X[a : a + 1000], y[a : a + 1000], alpha=0.1)
            for a in range(0, 20_000, 1000)
        ]
        r = score(
            y, np.concatenate([p for p, _ in out]), np.concatenate([iv for _, iv in out]), [0.1]
        )
        return r["intervals"]["0.1"]["mer"], r["intervals"]["0.1"]["ris"]

    mer_new, ris_new = run()
    mer_old, ris_old = run(center="boosted", batch_scores=True)
    assert mer_new <= 0.105 and mer_old <= 0.105
    assert ris_new <= 0.85 * ris_old, (ris_new, ris_old)


def test_the_sentinel_and_the_resolved_settings_survive_saving():
    X, y = rows(1600)
    unfitted = persistence.load(
        io.BytesIO(persistence._dumps(sf.NormalizedConformal(forest=small_sgbt())))
    )
    assert unfitted.center is None and unfitted.batch_scores is None
    unfitted.learn_many(X[:800], y[:800])
    assert (unfitted.center_, unfitted.batch_scores_) == ("forest", False)
    m = sf.NormalizedConformal(forest=small_sgbt()).learn_many(X[:800], y[:800])
    copies = [persistence.load(io.BytesIO(persistence._dumps(m))), pickle.loads(pickle.dumps(m))]
    want = m.predict_learn_many(X[800:], y[800:], alpha=0.1)[1]
    for loaded in copies:
        assert loaded.center is None and (loaded.center_, loaded.batch_scores_) == ("forest", False)
        np.testing.assert_array_equal(
            loaded.predict_learn_many(X[800:], y[800:], alpha=0.1)[1], want
        )


def test_a_model_saved_before_the_settings_per_base_keeps_the_settings_it_learnt_with():
    """State written before issue 49 holds ``center``/``batch_scores`` as given (never None) and
    no ``center_``: loading takes them as the resolved settings, whatever the base's kind."""
    X, y = rows(1200)
    m = sf.NormalizedConformal(forest=small_sgbt(), center="boosted", batch_scores=True)
    m.learn_many(X[:600], y[:600])
    state = copy.deepcopy(m.__getstate__())  # (its own arrays, as a loaded file has)
    del state["center_"], state["batch_scores_"]
    old = sf.NormalizedConformal.__new__(sf.NormalizedConformal)
    old.__setstate__(state)
    assert (old.center_, old.batch_scores_) == ("boosted", True)
    np.testing.assert_array_equal(
        old.predict_learn_many(X[600:], y[600:], alpha=0.1)[1],
        m.predict_learn_many(X[600:], y[600:], alpha=0.1)[1],
    )


@pytest.mark.parametrize("field, value", [("center_", "bogus"), ("batch_scores_", "yes")])
def test_a_file_with_a_bad_resolved_setting_is_refused(field, value):
    m = sf.NormalizedConformal(forest=small_sgbt()).learn_many(*rows(300))
    m.__dict__[field] = value
    with pytest.raises(ValueError, match=field):
        persistence.load(io.BytesIO(persistence._dumps(m)))


def test_a_fitted_file_without_its_resolved_settings_takes_its_forests_kinds():
    """(No file this code writes lacks them; a damaged one still predicts, never an
    AttributeError.)"""
    X, y = rows(900)
    m = sf.NormalizedConformal(forest=small_sgbt()).learn_many(X[:600], y[:600])
    state = copy.deepcopy(m.__getstate__())
    del state["center_"], state["batch_scores_"]
    damaged = sf.NormalizedConformal.__new__(sf.NormalizedConformal)
    damaged.__setstate__(state)
    assert (damaged.center_, damaged.batch_scores_) == ("forest", False)
    np.testing.assert_array_equal(damaged.predict_interval(X[600:]), m.predict_interval(X[600:]))
