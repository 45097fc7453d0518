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

test_that("a candidate that is never the fit is scored without its path's coefficients", {
  # the criteria of ridge_rows_fit(coefficients = FALSE) are those of the
  # full fit, without its V (u * w) products; the search passes it for
  # candidates on a subsample or on the first features of many rows
  set.seed(73)
  n <- 400
  x <- matrix(rnorm(n * 3), n, 3)
  y <- cbind(sin(2 * x[, 1]) + rnorm(n, sd = 0.2), x[, 2] * x[, 3])
  m <- list(x = x, y = y, weights = NULL)
  map <- rff_map(3, D = 60, lengthscale = 1.3)
  path <- list(lambda = NULL, nlambda = 30L, ratio = 1e-6)
  for (w in list(NULL, runif(n))) {
    m$weights <- w
    a <- rff:::ridge_rows_fit(m, map, seq_len(n), path, TRUE, 128L, 1L, "loo",
                              score_only = TRUE, partial = TRUE)
    b <- rff:::ridge_rows_fit(m, map, seq_len(n), path, TRUE, 128L, 1L, "loo",
                              score_only = TRUE, partial = TRUE, coefficients = FALSE)
    expect_false(is.null(a$coefficients))
    expect_null(b$coefficients)
    expect_null(b$intercept)
    for (k in c("loo", "gcv", "df", "rss", "lambda", "best", "lambda_best")) {
      expect_identical(b[[k]], a[[k]], label = k)
    }
  }
  # the search asks for none on a subsample, or on fewer features of many rows
  seen <- new.env()
  seen$coef <- logical()
  suppressMessages(trace(rff:::solve_path, print = FALSE, where = asNamespace("rff"),
                         tracer = bquote(assign("coef", c(get("coef", .(seen)), coefficients),
                                                envir = .(seen)))))
  on.exit(suppressMessages(untrace(rff:::solve_path, where = asNamespace("rff"))))
  set.seed(74)
  n <- 5200
  x <- matrix(rnorm(n * 2), n, 2)
  yb <- rbinom(n, 1, plogis(2 * sin(2 * x[, 1]) + x[, 2]))
  fit <- rff_glm(x, yb, family = "binomial", D = 1100, lambda = 1e-3, progress = FALSE)
  expect_identical(length(seen$coef), nrow(fit$lengthscale_search$table))
  expect_false(any(seen$coef))
  # all rows on all features: the winner is the fit, with its coefficients
  seen$coef <- logical()
  r <- rff_ridge(x[1:300, ], yb[1:300], D = 200, progress = FALSE)
  expect_true(all(seen$coef))
  expect_false(is.null(r$coefficients))
})

test_that("a path chosen from the data has its candidates scored over the lambdas it covers", {
  set.seed(75)
  n <- 500
  x <- matrix(rnorm(n * 2), n, 2)
  # nearly noiseless classes: ridge's leave-one-out error falls to small lambda
  y <- as.integer(sin(3 * x[, 1]) + x[, 2] > 0)
  env <- new.env()
  suppressMessages(trace(rff:::glm_coded, exit = bquote(assign("m", returnValue(), envir = .(env))),
                         where = asNamespace("rff"), print = FALSE))
  on.exit(suppressMessages(untrace(rff:::glm_coded, where = asNamespace("rff"))))
  # the range of the GLM's path, at a spacing no wider than that of 50
  # values over 1e-6: 26 values down to 1e-3 (1e-3 is 24.5 such steps)
  step <- log(1e6) / 49
  for (ratio in c(1e-3, 1e-4)) {
    k <- 1 + ceiling(log(1 / ratio) / step)
    expect_identical(k, c(26, 34)[match(ratio, c(1e-3, 1e-4))])
    set.seed(76)
    fit <- rff_glm(x, y, family = "binomial", D = 150, lambda_min_ratio = ratio, nlambda = 5,
                   progress = FALSE)
    s <- fit$lengthscale_search
    below <- logical(nrow(s$table))
    for (i in seq_len(nrow(s$table))) {
      map <- rff:::rescale_map(env$m$map, s$table$lengthscale[i])
      r <- rff_ridge(env$m$x, env$m$y[, 1], map = map, standardize = FALSE, nlambda = k,
                     lambda_min_ratio = ratio, progress = FALSE)
      expect_equal(s$table$loo[i], min(r$loo), tolerance = 1e-8)
      long <- rff_ridge(env$m$x, env$m$y[, 1], map = map, standardize = FALSE, progress = FALSE)
      below[i] <- min(long$loo) < min(r$loo) * (1 - 1e-6)
    }
    # the default ridge path (50 values to 1e-6) would score some lower
    expect_true(any(below))
  }
  # at most 100 values, however small lambda_min_ratio is: each costs a
  # leave-one-out pass over the search's rows (2,451 at this spacing)
  tiny <- rff:::glm_search_path(list(lambda = NULL, nlambda = 20L, ratio = 1e-300))
  expect_identical(tiny$nlambda, 100L)
  expect_identical(tiny$ratio, 1e-300)
  expect_identical(rff:::glm_search_path(list(lambda = NULL, nlambda = 20L, ratio = 1e-12))$nlambda,
                   99L)
  # given lambdas: 50 values down to 1e-6, as rff_ridge()'s default
  expect_identical(rff:::glm_search_path(list(lambda = c(1, 0.1), nlambda = 2L, ratio = 1e-4)),
                   list(lambda = NULL, nlambda = 50L, ratio = 1e-6))
})
