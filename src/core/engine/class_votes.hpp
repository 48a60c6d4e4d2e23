// A classifier forest's answer: the trees' class probabilities combined into one, by vote.
//
// A tree's output is a row of class probabilities (``K`` = the width of its class fields, the
// same for every tree of an engine).  The forest's answer is the mean of its trees'
// probabilities and a majority vote of their classes (each tree's most probable class), ties
// broken by the mean probability: ``predict_proba_one`` (one row) and ``vote_rows`` (a chunk)
// compute the same thing.
//
// Invariant (checked by the bindings): ``PT`` is ``(T, n, K)``, ``mean`` has ``n`` rows of
// ``K``, ``votes`` ``K`` items; every tree of the arena is a classification tree of at most
// ``K`` classes.
#pragma once

#include "common/views.hpp"
#include "tree/tree_ref.hpp"

namespace sf::engine {

/// For each row ``i`` of the trees' probabilities ``PT`` (``(T, n, K)``): ``mean.row(i)`` the
/// mean probabilities, ``cls[i]`` the majority class; ``votes``: ``(K,)`` scratch.
void vote_rows(Cube<const double> PT, Mat<double> mean, Vec<double> votes, Vec<i64> cls);

/// The forest's answer for row ``x``: ``mean`` gets the mean class probabilities, the majority
/// class is returned (``PT``: ``(T, 1, K)`` scratch, ``votes``: ``(K,)`` scratch).  Each tree's
/// leaf node, rows seen and votes go to the memo ``M`` (``(4, T)``).
i64 predict_proba_one(const tree::Arena& A, Vec<const double> x, Cube<double> PT,
                      Vec<double> mean, Vec<double> votes, Mat<double> M);

}  // namespace sf::engine
