# Helpers shared by the tests of the samplers, the arc-cosine kernel,
# rff_spectral() and the median heuristic.

# Fraction of draws below the p-quantiles of the reference law, each within
# k binomial standard errors of p.
expect_law <- function(draws, qfun, p = c(0.1, 0.25, 0.5, 0.75, 0.9), k = 4) {
  n <- length(draws)
  emp <- vapply(qfun(p), function(q) mean(draws <= q), numeric(1))
  expect_true(all(abs(emp - p) < k * sqrt(p * (1 - p) / n)),
              label = paste("empirical", paste(format(emp, digits = 3), collapse = " ")))
}

# z(x)'z(y) over reps independent maps, x and y the two rows of xy.
replicate_estimates <- function(xy, reps, ...) {
  vapply(seq_len(reps), function(r) {
    Z <- rff_features(xy, ..., threads = 1)
    sum(Z[1, ] * Z[2, ])
  }, numeric(1))
}
