# lengthscale = "ard" (R/ard.R, src/ard.c): the evidence against its dense
# closed form, its gradient against finite differences, the optimizer's
# acceptance rule, reproducibility and thread-count independence.

ard_evidence <- rff:::ard_evidence

# |got - want| within `tol` of the largest |want|.
expect_close <- function(got, want, tol, info = NULL) {
  expect_lte(max(abs(got - want)) / max(abs(want)), tol, label = info)
}
rescale_map <- rff:::rescale_map

# The criterion of ard_evidence() from the dense n x n covariance
# s2 (W^-1 + Z Z' / alpha) of a Gaussian process whose kernel is Z Z' / alpha:
# the negative log likelihood (restricted, with a flat intercept) with the
# noise variance profiled out, less the constants ard_evidence() drops.
dense_criterion <- function(x, y, w, map, alpha, intercept) {
  n <- nrow(x)
  Z <- rff_features(x, map = map)
  C <- diag(1 / w, n) + tcrossprod(Z) / alpha
  Ci <- solve(C)
  ld <- as.numeric(determinant(C)$modulus)
  if (intercept) {
    s <- sum(Ci)
    P <- Ci - rowSums(Ci) %o% colSums(Ci) / s
    np <- n - 1
    nll <- np / 2 * log(drop(crossprod(y, P %*% y)) / np) + ld / 2 + log(s) / 2
  } else {
    np <- n
    nll <- np / 2 * log(drop(crossprod(y, Ci %*% y)) / np) + ld / 2
  }
  nll + np / 2 * log(np) + sum(log(w)) / 2 - if (intercept) log(sum(w)) / 2 else 0
}

test_that("the evidence equals the dense Gaussian-process closed form (n = 50)", {
  set.seed(3)
  n <- 50
  x <- matrix(rnorm(2 * n), n)
  y <- matrix(x[, 1]^2 + rnorm(n, sd = 0.3))
  w <- runif(n, 0.2, 1)
  for (D in c(30, 80)) for (ic in c(FALSE, TRUE)) {
    # D < n: the streamed D x D route; D > n: the n x n route
    map <- rff_map(2, D = D, lengthscale = c(0.7, 2))
    got <- ard_evidence(x, y, w, map, 0.4, ic, 1000L, 1L, grad = FALSE)$value
    want <- dense_criterion(x, y, w, map, 0.4, ic)
    expect_close(got, want, 1e-10)
  }
})

# Central differences extrapolated (Richardson) to O(h^4).
fd_gradient <- function(f, th, h = 1e-3) {
  vapply(seq_along(th), function(k) {
    e <- replace(numeric(length(th)), k, 1)
    d1 <- (f(th + h * e) - f(th - h * e)) / (2 * h)
    d2 <- (f(th + h / 2 * e) - f(th - h / 2 * e)) / h
    (4 * d2 - d1) / 3
  }, 0)
}

test_that("the C gradient matches finite differences for every kernel and variant", {
  set.seed(1)
  n <- 60
  d <- 3
  x <- matrix(rnorm(n * d), n, d)
  y <- matrix(sin(x[, 1]) + 0.5 * x[, 2] + 0.1 * rnorm(n))
  w <- runif(n, 0.1, 1)
  th <- c(log(c(0.8, 1.5, 2)), log(0.3))
  for (variant in c("pair", "phase")) for (kernel in c("gaussian", "laplace", "matern")) {
    for (D in c(40, 100)) for (ic in c(TRUE, FALSE)) {
      base <- rff_map(d, D = D, kernel = kernel, variant = variant, nu = 2.5)
      f <- function(t) {
        ard_evidence(x, y, w, rescale_map(base, exp(t[1:d])), exp(t[d + 1]), ic, 1000L, 1L,
                     grad = FALSE)$value
      }
      # chunks of 17 rows: the streamed pass over several chunks
      g <- ard_evidence(x, y, w, rescale_map(base, exp(th[1:d])), exp(th[d + 1]), ic, 17L,
                        1L)$gradient
      # Cauchy frequencies are large: a smaller step for the Laplace kernel
      fd <- fd_gradient(f, th, h = if (kernel == "laplace") 1e-6 else 1e-3)
      expect_close(g, fd, 1e-6, info = paste(variant, kernel, D, ic))
    }
  }
})

test_that("the gradient of several responses and of orthogonal and QMC maps", {
  set.seed(4)
  n <- 45
  d <- 2
  x <- matrix(rnorm(n * d), n, d)
  y <- cbind(cos(x[, 1]), x[, 2]^2) + 0.1 * rnorm(2 * n)
  w <- rep(1, n)
  th <- c(log(c(1.2, 0.6)), log(0.1))
  for (sampler in c("orthogonal", "qmc")) for (D in c(20, 60)) {
    base <- rff_map(d, D = D, sampler = sampler)
    f <- function(t) {
      ard_evidence(x, y, w, rescale_map(base, exp(t[1:d])), exp(t[d + 1]), TRUE, 1000L, 1L,
                   grad = FALSE)$value
    }
    g <- ard_evidence(x, y, w, rescale_map(base, exp(th[1:d])), exp(th[d + 1]), TRUE, 7L,
                      1L)$gradient
    expect_close(g, fd_gradient(f, th), 1e-6, info = paste(sampler, D))
  }
})

test_that("the gradient does not depend on the thread count or the chunk size", {
  set.seed(5)
  n <- 300
  x <- matrix(rnorm(n * 4), n)
  y <- matrix(x[, 1] + rnorm(n))
  w <- runif(n)
  map <- rff_map(4, D = 64, lengthscale = c(1, 2, 3, 4))
  g1 <- ard_evidence(x, y, w, map, 0.5, TRUE, 50L, 1L)$gradient
  g2 <- ard_evidence(x, y, w, map, 0.5, TRUE, 50L, 2L)$gradient
  expect_identical(g1, g2)
  g3 <- ard_evidence(x, y, w, map, 0.5, TRUE, 300L, 2L)$gradient
  expect_close(g3, g1, 1e-12)
})

ard_data <- function(n, seed) {
  set.seed(seed)
  x <- matrix(runif(n * 5, -2, 2), n, 5, dimnames = list(NULL, paste0("x", 1:5)))
  y <- sin(2 * x[, 1]) + 0.5 * x[, 2] + rnorm(n, sd = 0.2)
  list(x = x, y = y)
}

test_that("ard ranks the relevant inputs first and is no worse than isotropic", {
  tr <- ard_data(300, 11)
  te <- ard_data(500, 12)
  set.seed(1)
  iso <- rff_ridge(tr$x, tr$y, D = 200)
  set.seed(1)
  ard <- rff_ridge(tr$x, tr$y, D = 200, lengthscale = "ard")
  s <- ard$lengthscale_search$ard
  # the optimizer started from the isotropic choice and only went downhill
  # on the criterion (the evidence less the prior's penalty, zero at the
  # start), so uphill on the evidence
  expect_lte(s$criterion[["end"]], s$criterion[["start"]])
  expect_true(s$evidence[["end"]] >= s$evidence[["start"]])
  expect_identical(s$start, iso$lengthscale_search$table$lengthscale[iso$lengthscale_search$best])
  expect_true(s$kept)
  expect_lte(s$score, s$score_isotropic)
  rel <- rff_relevance(ard)
  expect_named(rel, paste0("x", 1:5))
  expect_equal(unname(rel), 1 / ard$map$lengthscale)
  expect_setequal(names(sort(rel, decreasing = TRUE))[1:2], c("x1", "x2"))
  rmse <- function(f) sqrt(mean((predict(f, te$x) - te$y)^2))
  expect_lt(rmse(ard), rmse(iso))
  # the isotropic fit: one relevance for every column
  expect_equal(unname(rff_relevance(iso)), rep(1 / iso$map$lengthscale, 5))
})

test_that("the ARD optimum's evidence is at least the best isotropic evidence", {
  tr <- ard_data(150, 13)
  set.seed(2)
  fit <- rff_ridge(tr$x, tr$y, D = 100, lengthscale = "ard")
  s <- fit$lengthscale_search$ard
  m <- list(x = scale(tr$x), y = matrix(tr$y))
  base <- rff:::rescale_map(fit$map, 1)
  w <- rep(1, 150)
  # the best isotropic lengthscale and alpha, by optim() on the dense criterion
  iso <- stats::optim(c(0, 0), function(t) {
    dense_criterion(m$x, m$y, w, rescale_map(base, exp(t[1])), exp(t[2]), TRUE)
  })
  ard_value <- dense_criterion(m$x, m$y, w, rescale_map(base, unname(s$lengthscale)),
                               s$lambda * 150, TRUE)
  expect_lt(ard_value, iso$value)
})

test_that("ard is reproducible under set.seed() and across thread counts", {
  tr <- ard_data(120, 14)
  set.seed(9)
  a <- rff_ridge(tr$x, tr$y, D = 80, lengthscale = "ard", threads = 1)
  set.seed(9)
  b <- rff_ridge(tr$x, tr$y, D = 80, lengthscale = "ard", threads = 2)
  expect_identical(a$map$lengthscale, b$map$lengthscale)
  expect_identical(coef(a), coef(b))
})

test_that("ard on a formula with factors, and with weights", {
  set.seed(6)
  d <- data.frame(y = rnorm(80), u = runif(80), g = factor(sample(letters[1:3], 80, TRUE)))
  d$y <- d$y * 0.1 + sin(3 * d$u) + (d$g == "a")
  fit <- rff_ridge(y ~ ., data = d, D = 60, lengthscale = "ard", weights = runif(80))
  rel <- rff_relevance(fit)
  expect_named(rel, c("u", "gb", "gc"))
  # a factor's dummies share one lengthscale
  expect_identical(rel[["gb"]], rel[["gc"]])
  expect_true(all(is.finite(predict(fit, d))))
})

test_that("ard keeps the isotropic fit where the evidence is not finite", {
  set.seed(8)
  x <- matrix(rnorm(20), 10)
  # a constant response is fitted exactly: the profiled noise is zero
  fit <- rff_ridge(x, rep(1, 10), D = 20, lengthscale = "ard")
  expect_false(fit$lengthscale_search$ard$accepted)
  expect_equal(unname(predict(fit, x)), rep(1, 10))
  # two rows, and weights that leave two rows
  expect_length(rff_relevance(rff_ridge(x[1:2, ], 1:2, D = 20, lengthscale = "ard")), 2)
  w <- c(rep(0, 8), 1, 1)
  expect_length(rff_relevance(rff_ridge(x, rnorm(10), weights = w, D = 20,
                                        lengthscale = "ard")), 2)
})

test_that("ard is refused where a lengthscale rescales no frequencies", {
  x <- matrix(rnorm(40), 20)
  y <- rnorm(20)
  expect_rff_error(rff_ridge(x, y, lengthscale = "ard", kernel = "arccos"), "lengthscale")
  expect_rff_error(rff_ridge(x, y, lengthscale = "ard", kernel = "polynomial"), "lengthscale")
  expect_rff_error(rff_ridge(x, y, lengthscale = "ard", sampler = "nystrom", D = 10),
                   "lengthscale")
  expect_rff_error(rff_features(x, lengthscale = "ard"), "lengthscale")
  expect_rff_error(rff_relevance(list()), "fit")
})

test_that("rff_cv(lengthscale = \"ard\") cross-validates the ARD candidate with the walk's", {
  tr <- ard_data(200, 15)
  set.seed(3)
  cv <- rff_cv(tr$x, tr$y, lengthscale = "ard", D = 100, folds = 5)
  s <- cv$fit$lengthscale_search
  nc <- length(cv$lengthscale)
  # the last candidate is ARD's, one lengthscale per column
  expect_length(cv$lengthscale[[nc]], 5)
  expect_true(all(lengths(cv$lengthscale[-nc]) == 1L))
  expect_identical(s$ard$kept, cv$best[["lengthscale"]] == nc)
  # its score is the minimum of its CV curve
  expect_equal(s$ard$score, min(cv$cvm[, nc]))
  expect_identical(cv$fit$map$lengthscale, cv$lengthscale[[cv$best[["lengthscale"]]]])
  expect_identical(names(which.min(s$ard$lengthscale)), "x1")
  expect_rff_error(rff_cv(tr$x, tr$y, lengthscale = "ard", map = cv$fit$map), "lengthscale")
})

test_that("rff_glm and rff_cv(family =) with lengthscale = \"ard\"", {
  tr <- ard_data(240, 16)
  yb <- factor(tr$y > median(tr$y))
  set.seed(4)
  g <- rff_glm(tr$x, yb, lengthscale = "ard", D = 100)
  a <- g$lengthscale_search$ard
  expect_true(a$evidence[["end"]] >= a$evidence[["start"]])
  # kept when its leave-one-out error is lower by at least 3 standard
  # errors of the rows' paired differences (z <= -3)
  expect_false(is.na(a$z))
  expect_identical(a$kept, a$score <= a$score_isotropic && a$z <= -3)
  if (a$kept) expect_identical(unname(g$map$lengthscale), unname(a$lengthscale))
  expect_length(rff_relevance(g), 5)
  set.seed(4)
  gc <- rff_cv(tr$x, yb, family = "binomial", lengthscale = "ard", D = 100, folds = 4)
  nc <- length(gc$lengthscale)
  expect_length(gc$lengthscale[[nc]], 5)
  expect_identical(gc$fit$lengthscale_search$ard$kept, gc$best[["lengthscale"]] == nc)
  # multinomial: the evidence of the class indicators, one response each
  y3 <- cut(tr$y, quantile(tr$y, 0:3 / 3), include.lowest = TRUE, labels = c("l", "m", "h"))
  g3 <- rff_glm(tr$x, y3, family = "multinomial", lengthscale = "ard", D = 100)
  expect_true(all(is.finite(g3$lengthscale_search$ard$lengthscale)))
  png(tf <- tempfile(fileext = ".png"))
  expect_identical(plot(g3, type = "relevance"), g3)
  dev.off()
  unlink(tf)
  expect_rff_error(plot(g3, type = "bogus"), "type")
})

test_that("as D grows the ARD lengthscales approach those of the exact GP", {
  set.seed(21)
  n <- 200
  x <- matrix(runif(2 * n, -1, 1), n, 2)
  y <- matrix(sin(2 * x[, 1]) + 0.3 * x[, 2] + rnorm(n, sd = 0.1))
  # the exact GP: kernel K of the same lengthscales, the same criterion
  # (noise profiled out, flat intercept) from its n x n covariance
  exact <- function(t) {
    K <- rff_kernel(x, lengthscale = exp(t[1:2]))
    C <- diag(n) + K / exp(t[3])
    Ci <- solve(C)
    s <- sum(Ci)
    P <- Ci - rowSums(Ci) %o% colSums(Ci) / s
    (n - 1) / 2 * log(drop(crossprod(y, P %*% y))) +
      as.numeric(determinant(C)$modulus) / 2 + log(s) / 2
  }
  gp <- stats::optim(c(0, 0, log(0.01)), exact, method = "L-BFGS-B",
                     lower = c(-3, -3, -15), upper = c(5, 5, 5))
  m <- list(x = x, y = y, weights = NULL, map = rff_map(2, D = 4000))
  a <- rff:::ard_optimize(m, 1, 0.01 / n, TRUE, 1000L, 1L, features = 4000L,
                          prior_sd = Inf)
  # the evidence's random-feature kernel has relative error about
  # sqrt(2 / D) = 0.022 (pairs); a lengthscale that the data determine to
  # within a few percent then moves by a few times that. The second,
  # nearly linear input is weakly determined (long lengthscale), so only
  # the first is compared tightly and the second by its order.
  expect_lt(abs(log(a$lengthscale[[1]]) - gp$par[1]), 0.1)
  expect_lt(abs(log(a$lengthscale[[2]]) - gp$par[2]), 0.3)
  expect_lt(abs(log(a$lambda * n) - gp$par[3]), 0.3)
})
