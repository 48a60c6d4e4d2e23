"""Pre-grown random trees of ABORF (Seah's thesis, ch. 6, §6.2.1 and Algorithms 6.1-6.3): what
the rule does (its compiled unit is ``src/core/rules/pregrown.hpp``) and the tree's size.

A split rule of the compiled tree (``TreeParams.split_rule == SPLIT_PREGROWN``): the tree is a
balanced binary tree of depth ``Q`` (``TreeParams.max_depth``) built when it is created, before
any data, and its structure never changes; learning happens in its ``2**Q`` leaves (linear models)
and in the tree's evidence weight.

**Building** (``build_pregrown``, thesis §6.2.1).  ``M`` points uniform in ``[0, 1]^D`` (``D``
the features known when the tree is created; ``M`` is ``TreeParams.mc_points``, see
:func:`mc_point_count`) are drawn from the tree's generator and passed down level by level.  Each
split node gets the centre of mass ``c`` of the points that reach it (Monte Carlo estimate of the
centre of its cell; a node no point reaches takes its parent's centre) and one split through it:

- *projection* (``oblique``, the thesis' choice): ``tau_j ~ U[-1, 1]`` for each numeric feature,
  ``u = tau / |tau|``; ``x`` goes left when ``u . x <= u . c`` (eqs. 6.1-6.5);
- *axis-aligned* (``oblique=False``, the thesis' univariate comparison, Table 6.6): a numeric
  feature ``f`` drawn uniformly, ``x_f <= c_f``;
- *nominal* (thesis: "randomly assigning categories to each side of the split"): with
  probability ``D_nominal / D`` the node splits on a nominal feature drawn uniformly; each
  category goes to a fixed random side, a hash of the node's salt and the category code
  (``cat_goes_left``, ``src/core/rules/extra.hpp``, as ATSER's nominal candidates), so
  categories first seen later get a side too.  Monte Carlo points go to a random side (a hash of
  the salt and the point's index), as a random half of the categories would send them.

**Scaling** (eq. 6.6): the tree keeps the running min and max of each numeric feature over the
examples it learnt (``TreeState.ft_minmax``) and routes ``(x - min) / (max - min)``.  The range is
extended by an example *after* it is learnt, so the prediction made before learning a row is the
one routing gives for it at that moment (the thesis scales with the example included; it
differs only for an example outside the range seen so far, which is routed with a scaled value
outside ``[0, 1]`` instead of at its edge).

A value beyond ``HUGE_X`` (1e100, missing to the leaf models) extends no range: one row with a
feature at 1e300 squashed every later row's scaled value of that feature to 0, and the trees'
routing with it, for good.  Such a value is still routed as it is (far out on its side; a scaled
value that overflows to infinity, or a projection that becomes NaN, sends the row to one side: a
routing, never a prediction, that is not finite).

**Missing values and later features**: a missing value, or a feature whose range is still
unknown (fewer than two distinct values), takes the coordinate of the node's centre, so it
pushes neither way (an axis-aligned node then sends the row left: ``c_f <= c_f``); a missing
nominal value goes to a side drawn when the tree was built.  Features that emerge after the tree
was built have weight 0 in every projection and are never split on; the leaf models use them.

**Evidence** (Algorithm 6.3, leaf-level ``rho``): for the example's leaf, with ``e = y - y_hat``
(the tree's prediction before learning), ``n <- gamma n + w``, ``S <- gamma S + w e**2``,
``rho = n / S`` (eq. 6.54; the algorithm's listing prints ``e**2 / S``, which does not estimate
the noise precision the derivation needs), ``e_T <- gamma_T e_T + w rho e**2 / 2``, and the log of
the scaling term ``b_T`` replaces the leaf's previous ``(n - D) / 2 log rho`` by the new one.  The
tree's log weight is ``(-e_T + log b_T) / |leaves|`` (the power likelihood ``1 / |Omega_T|``); the
forest's prediction is the mean of the trees' predictions weighted by ``exp`` of it, normalised
(Algorithm 6.1, line 7).  ``D`` is the number of features known when the leaf learns.  This is
the leaf level of ``rho`` that Algorithm 6.3 lists; the thesis' tables use the ensemble level
(one ``rho`` from every tree's errors, §6.5.1), which makes each tree's weight depend on the
other trees' errors row by row, while the engine runs every tree on its own.  An example that
reaches an empty leaf only fades ``e_T``: the leaf made no prediction (its 0 is no estimate, and
counted an error of the targets' own size: with ``y`` offset by 1e6, the first rows of each leaf
outweighed every later error, and the forest's error rose by half).

**Bayesian leaves** (``leaf_model == LEAF_BAYES``, thesis §6.2.1-6.2.2, see
``src/core/leaves/bayes.hpp``): the tree's evidence is its marginal likelihood, kept as
the faded sum of the log posterior predictive densities of the examples it learnt, each computed
by its leaf before learning it: ``e_T <- gamma_T e_T - w log p(y | x, leaf)``, log weight ``-e_T /
|leaves|`` (with ``gamma = gamma_T = 1`` the sum is the log of eq. 6.21, the product of the
leaves' evidences, by the chain rule; the thesis' eq. 6.38 mixes the evidence itself with weight
``gamma_T / (1 + gamma_T)``, about 1/2 per example, where this fades its log as Algorithm 6.3
does); a row reaching an empty leaf adds no term, as above.
"""

from __future__ import annotations

MAX_DEPTH = 16
MC_CAP = 1 << 16  # at most this many Monte Carlo points ...
MC_FLOATS = 1 << 22  # ... and points * features (32 MB of coordinates while building)


def mc_point_count(n_features: int, depth: int) -> int:
    """Monte Carlo points that place the node centres of a tree of ``depth`` on ``n_features``
    features: the thesis' ``3 * 2**(D - 1)``, at least ``2**(depth + 1)`` (about four points per
    deepest split node; for small ``D`` the thesis' count leaves most deep nodes without a point),
    capped at ``2**16`` and at ``2**22 / D`` coordinates (the thesis' count doubles with every
    feature), but never below that floor."""
    floor = 1 << (depth + 1)
    thesis = 3 << (n_features - 1) if n_features <= 40 else 1 << 42
    cap = max(floor, min(MC_CAP, MC_FLOATS // max(1, n_features)))
    return int(min(max(thesis, floor), cap))


def pregrown_size(depth: int) -> tuple[int, int]:
    """``(nodes, leaves)`` of the balanced tree of ``depth``."""
    return (1 << (depth + 1)) - 1, 1 << depth


# ------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------
