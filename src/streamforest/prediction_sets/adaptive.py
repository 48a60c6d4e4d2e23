"""AdaptiveConformalClassifier: the long-run error rate of prediction sets held at ``alpha`` on
any sequence (adaptive conformal inference, conformal PID control), with the controllers and
compiled update rules of :class:`~streamforest.AdaptiveConformal`."""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

from ..features import n_rows
from ..intervals import group_controllers
from ..intervals.adaptive import AdaptiveConformal
from ..intervals.base import check_alphas
from .conformal import ClassifierMixin, ConformalClassifier, check_label, check_labels

#: The lower end of a set's interval on the score line (finite, below every score).
_LOW = -1e300


class AdaptiveConformalClassifier(ClassifierMixin, AdaptiveConformal):
    """Online wrapper that keeps the long-run share of prediction sets missing the label at
    ``alpha``, whatever the sequence (drift, adversarial order), around a
    :class:`ConformalClassifier`.

    A prediction set is ``{k : s(x, k) <= q}``, the classes whose conformity score is at most a
    threshold ``q``; it misses the label ``y`` exactly when ``s(x, y) > q``.  So a set is the
    interval ``(-inf, q]`` on the score line and the label its point ``s(x, y)``, and the
    controllers of :class:`~streamforest.AdaptiveConformal` (the same state and the same compiled
    passes) apply unchanged, with the base method's thresholds as interval upper ends:

    - ``"aci"`` (Gibbs & Candes 2021): the set at ``alpha`` is the base set at ``alpha_t``,
      ``alpha_t <- alpha_t + gamma (alpha - miss_t)``, the threshold interpolated in
      ``logit(alpha)`` between the base thresholds of a ladder of 13 levels (``alpha_t <= 0``:
      every class; ``alpha_t >= 1``: the empty set).  On any sequence of ``T`` examples,
      ``|miss rate - alpha| <= (max(alpha_1, 1 - alpha_1) + gamma) / (gamma T)``
      (:meth:`long_run_bound`).
    - ``"pid"`` (Angelopoulos, Candes & Tibshirani 2023): the threshold is the base one plus
      ``q_t``, a quantile tracker and a saturating integrator of ``sum (miss - alpha)`` in units
      of the recent range of ``s(x, y) - q``; rows whose base threshold is infinite (too few
      calibration scores) are covered and do not move it.

    - ``"dtaci"``, ``"agaci"``, ``"sfogd"``, ``"saocp"``, ``"nexcp"``: the methods of
      :class:`~streamforest.AdaptiveConformal` on the additive score ``s(x, y) - q`` (the set's
      threshold ``q + theta``).

    ``learn_one(x, y)``: the controllers learn from the set the wrapper would have given for
    ``x`` now, then the base method learns ``(x, y)`` (its score of ``y`` computed before).  The
    served log of :class:`~streamforest.AdaptiveConformal` is not used for sets yet (a set's miss
    needs the label's score under the model that served it): in batches and with delayed labels
    the controllers learn from the sets they would give when the label comes.  With
    several levels, sets are reported nested (a smaller ``alpha`` gets the union of its own set
    and those of the larger levels); the bound holds for each level's own sets.  The levels
    tracked are capped as :class:`~streamforest.AdaptiveConformal`'s (``alphas`` and the 16 most
    recently asked for by ``predict_learn_many``).

    Parameters
    ----------
    model
        The :class:`ConformalClassifier` to wrap (cloned when learning starts); default
        ``ConformalClassifier()``.
    alphas, method, gamma, ki, csat, window
        As in :class:`~streamforest.AdaptiveConformal`.
    """

    #: The score-based methods take additive scores ``s(x, y) - q`` (a set is ``(-inf, q]``).
    _SCALED = False

    # --- hooks of AdaptiveConformal ------------------------------------------------------------
    def _check_model(self) -> None:
        if self.model is not None and not isinstance(self.model, ConformalClassifier):
            raise TypeError(
                f"model must be a ConformalClassifier (over any classifier), got "
                f"{type(self.model).__name__}"
            )

    @staticmethod
    def _default_model():
        return ConformalClassifier()

    @property
    def predict_interval(self):
        raise AttributeError("a classifier gives prediction sets: use predict_sets")

    @property
    def predict_interval_one(self):
        raise AttributeError("a classifier gives prediction sets: use predict_set_one")

    # --- the pass ------------------------------------------------------------------------------
    def _set_run(self, X, y, alphas, one: bool, w=None, groups=None):
        """Run the base method's pass and the controllers; returns ``(base pass, sets)`` with
        sets ``(n, len(alphas), K)``.  Learns when ``y`` is given.  With groups (the wrapper's,
        or its model's), a controller per group (``streamforest.intervals._group_controllers``;
        ``groups``: the rows' group values, else read from ``X``)."""
        conf = self.model_
        n = 1 if one else n_rows(X)
        grp = group_controllers.group_rows(self, X, n, one, groups, y is not None)
        kw = group_controllers.base_kwargs(self, groups)
        true = np.zeros(n)  # the labels' scores, filled by the base pass before the controllers
        done = []

        def base(levels):
            r = conf._pass(X, y, np.ascontiguousarray(levels, dtype=np.float64), one=one, w=w,
                           **kw)  # fmt: skip
            if r.true_scores is not None:
                true[:] = r.true_scores
            iv = np.empty((n, levels.shape[0], 2))
            iv[:, :, 0] = _LOW
            iv[:, :, 1] = r.thresholds
            done.append(r)
            return np.full(n, -np.inf), iv  # an empty set is reported at -inf: no class

        if grp is None:
            _, _, hi = self._run(base, true, alphas, learn=y is not None)
        else:
            _, _, hi = group_controllers.run(self, grp, base, true, alphas, y is not None)
        r = done[0]
        return r, ConformalClassifier._sets(r, np.ascontiguousarray(hi))

    # --- array API -------------------------------------------------------------------------------
    def learn_many(self, X, y, w=None, groups=None):
        """Learn the rows of ``X`` in order (controllers, then the base method)."""
        check_labels(y, n_rows(X))
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformalClassifier.learn_many, X, y, w, groups)
        with self._atomic():
            r, _ = self._set_run(X, y, self.levels_.copy(), one=False, w=w, groups=groups)
            self._n_seen += r.proba.shape[0]
        return self

    def predict_learn_many(self, X, y, alpha=0.1, w=None, groups=None):
        """Prequential pass: ``(labels, proba, sets)`` as
        :meth:`ConformalClassifier.predict_learn_many`, the sets being the wrapper's; the
        levels asked for are tracked from now on."""
        alphas, scalar = check_alphas(alpha)
        check_labels(y, n_rows(X))
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformalClassifier.predict_learn_many, X, y, alpha, w,
                                    groups)  # fmt: skip
        with self._atomic():
            self._track(alphas)
            r, sets = self._set_run(X, y, alphas, one=False, w=w, groups=groups)
            self._n_seen += r.proba.shape[0]
        labels = ConformalClassifier._argmax_labels(r.proba, r.known, self.model_._classes)
        return labels, r.proba, (sets[:, 0, :] if scalar else sets)

    def predict_sets(self, X, alpha=0.1, groups=None) -> np.ndarray:
        """The sets the wrapper gives now (boolean ``(n, n_classes)``, or
        ``(n, len(alpha), n_classes)`` for a list).  Changes nothing."""
        alphas, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformalClassifier.predict_sets, X, alpha, groups,
                                    keep=False)  # fmt: skip
        _, sets = self._set_run(X, None, alphas, one=False, groups=groups)
        return sets[:, 0, :] if scalar else sets

    def predict_proba(self, X) -> np.ndarray:
        """The base model's probabilities, columns :attr:`classes_`."""
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformalClassifier.predict_proba, X, keep=False)
        return self.model_.predict_proba(X)

    def predict(self, X) -> np.ndarray:
        """The most probable class of each row."""
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformalClassifier.predict, X, keep=False)
        return self.model_.predict(X)

    @property
    def classes_(self) -> list:
        m = self.__dict__.get("_model")
        return m.classes_ if m is not None else []

    # --- River-style API -------------------------------------------------------------------------
    def learn_one(self, x: Mapping[Hashable, object], y, w=None, groups=None) -> None:
        """Learn one example: the controllers from the set the wrapper gives for ``x`` now, then
        the base method."""
        check_label(y)
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformalClassifier.learn_one, x, y, w, groups)
        with self._atomic():
            self._set_run(x, y, self.levels_.copy(), one=True, w=w, groups=groups)
            self._n_seen += 1

    def predict_set_one(self, x: Mapping[Hashable, object], alpha=0.1, groups=None) -> list:
        """The wrapper's set for ``x``: labels, most probable first (a list of such lists for a
        list of ``alpha``)."""
        alphas, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return self._first_call(
                AdaptiveConformalClassifier.predict_set_one, x, alpha, groups, keep=False
            )
        r, sets = self._set_run(x, None, alphas, one=True, groups=groups)
        out = [self.model_._labels_of(r.proba[0], s) for s in sets[0]]
        return out[0] if scalar else out

    def predict_proba_one(self, x: Mapping[Hashable, object]) -> dict:
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformalClassifier.predict_proba_one, x, keep=False)
        return self.model_.predict_proba_one(x)

    def predict_one(self, x: Mapping[Hashable, object]):
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformalClassifier.predict_one, x, keep=False)
        return self.model_.predict_one(x)

    @property
    def n_features_in_(self) -> int:
        m = self.__dict__.get("_model")
        return getattr(m.model_, "n_features_in_", 0) if m is not None else 0

    @property
    def feature_names_in_(self) -> list:
        m = self.__dict__.get("_model")
        return getattr(m.model_, "feature_names_in_", []) if m is not None else []
