# rff_glm()'s lengthscale search (glm_auto_lengthscale()): its rows and the
# features it scores on.

test_that("rff_glm() on more than 5,000 rows scores its lengthscales on the first 1,000 features of its 5,000", {
  set.seed(71)
  n <- 5200
  x <- matrix(rnorm(n * 2), n, 2)
  y <- rbinom(n, 1, plogis(2 * sin(2 * x[, 1]) + x[, 2]))
  # the search's rows and responses, as glm_coded() gives them
  env <- new.env()
  suppressMessages(trace(rff:::glm_coded, exit = bquote(assign("m", returnValue(), envir = .(env))),
                         where = asNamespace("rff"), print = FALSE))
  on.exit(suppressMessages(untrace(rff:::glm_coded, where = asNamespace("rff"))))
  set.seed(72)
  fit <- rff_glm(x, y, family = "binomial", D = 1100, lambda = 1e-3, progress = FALSE)
  s <- fit$lengthscale_search
  expect_true(env$m$subsampled)
  expect_identical(nrow(env$m$x), 5000L)
  expect_identical(s$features, 1000L)
  # the fit keeps all its features
  expect_identical(fit$map$D, 1100L)
  # every candidate's score: the leave-one-out error of ridge regression of
  # the 0/1 response on the first 1,000 features at its lengthscale
  for (i in seq_len(nrow(s$table))) {
    sub <- rff:::rescale_map(rff:::ard_submap(env$m$map, 1000L), s$table$lengthscale[i])
    r <- rff_ridge(env$m$x, env$m$y[, 1], map = sub, standardize = FALSE, progress = FALSE)
    expect_equal(s$table$loo[i], min(r$loo), tolerance = 1e-8)
  }
  # at most 5,000 rows: all of them, on all the features
  g <- list(x = x[1:5000, ], y = y[1:5000], family = "binomial", K = 1L, weights = NULL)
  expect_false(rff:::glm_coded(g, list(map = fit$map))$subsampled)
  expect_true(rff:::glm_coded(list(x = x, y = y, family = "binomial", K = 1L, weights = NULL),
                              list(map = fit$map))$subsampled)
})
