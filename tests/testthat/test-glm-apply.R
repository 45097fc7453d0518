# rff_glm_apply(): rff_glm() on chunks kept by the workers, against rff_glm()
# on the concatenated rows.

# Writes `k` chunks of a problem of `family` as RDS files (with weights
# and an offset when asked); returns the files and all rows in chunk order.
write_glm_chunks <- function(family = "binomial", k = 4, n_each = c(150, 110, 180, 130),
                             d = 3, seed = 21, weights = FALSE, offset = FALSE) {
  set.seed(seed)
  dir <- tempfile("rff-glm-chunks-")
  dir.create(dir)
  n_each <- rep_len(n_each, k)
  files <- character(k)
  parts <- vector("list", k)
  for (j in seq_len(k)) {
    n <- n_each[j]
    x <- matrix(rnorm(n * d), n, d)
    f <- sin(2 * x[, 1]) + x[, 2] * x[, 3]
    off <- if (offset) runif(n, -0.5, 0.5)
    y <- switch(family,
      binomial = factor(runif(n) < stats::plogis(2 * f + if (offset) off else 0),
                        levels = c(FALSE, TRUE), labels = c("no", "yes")),
      multinomial = factor(cut(f + rnorm(n, sd = 0.3), c(-Inf, -0.4, 0.4, Inf),
                               labels = c("a", "b", "c")), levels = c("a", "b", "c")),
      poisson = rpois(n, exp(0.5 + 0.5 * f + if (offset) off else 0)))
    p <- list(x = x, y = y)
    if (weights) p$weights <- runif(n, 0.2, 2)
    if (offset) p$offset <- off
    files[j] <- file.path(dir, sprintf("part-%d.rds", j))
    saveRDS(p, files[j])
    parts[[j]] <- p
  }
  cat_y <- function(ys) if (is.factor(ys[[1]])) factor(unlist(lapply(ys, as.character)),
                                                      levels = levels(ys[[1]])) else unlist(ys)
  list(dir = dir, files = files, x = do.call(rbind, lapply(parts, `[[`, "x")),
       y = cat_y(lapply(parts, `[[`, "y")),
       weights = if (weights) unlist(lapply(parts, `[[`, "weights")),
       offset = if (offset) unlist(lapply(parts, `[[`, "offset")),
       chunk = rep(seq_len(k), n_each))
}

# tight enough that both fits stop at the same iteration of the same
# trajectory (the sums differ only in their order)
tight <- list(epsilon = 1e-13, maxit = 3000)

# rff_glm() on the concatenated rows, with the same seed for the
# preconditioner's sample.
direct_glm <- function(dat, family, map, lambda, seed = 5, foldid = NULL) {
  set.seed(seed)
  rff_glm(dat$x, dat$y, family = family, map = map, lambda = lambda, standardize = FALSE,
          weights = dat$weights, offset = dat$offset, control = tight, foldid = foldid,
          progress = FALSE)
}

expect_same_glm <- function(fit, ref, tol = 1e-8) {
  expect_s3_class(fit, "rff_glm")
  expect_equal(fit$coefficients, ref$coefficients, tolerance = tol)
  expect_equal(fit$intercept, ref$intercept, tolerance = tol)
  expect_equal(fit$deviance, ref$deviance, tolerance = 1e-8)
  expect_equal(fit$null.deviance, ref$null.deviance, tolerance = 1e-10)
  expect_equal(fit$lambda, ref$lambda)
  expect_equal(fit$n, ref$n)
}

cases <- list(
  binomial = list(family = "binomial", weights = TRUE, offset = TRUE, lambda = 1e-3),
  multinomial = list(family = "multinomial", weights = TRUE, offset = FALSE, lambda = 1e-2),
  poisson = list(family = "poisson", weights = TRUE, offset = TRUE, lambda = 1e-3))

test_that("in process, the fit equals rff_glm() on all rows (three families, weights, offset)", {
  for (cs in cases) {
    dat <- write_glm_chunks(cs$family, weights = cs$weights, offset = cs$offset)
    m <- rff_map(3, D = 80, lengthscale = 1.2)
    ref <- direct_glm(dat, cs$family, m, cs$lambda)
    set.seed(5)
    fit <- rff_glm_apply(dat$files, readRDS, m, family = cs$family, lambda = cs$lambda,
                         control = tight)
    expect_same_glm(fit, ref)
    expect_true(fit$passes > 0)
    expect_equal(fit$chunks, c(150, 110, 180, 130))
    # predicts, prints and summarizes like the fit in memory
    nx <- matrix(rnorm(15), 5, 3)
    noff <- if (cs$offset) runif(5)
    expect_equal(predict(fit, nx, type = "response", newoffset = noff),
                 predict(ref, nx, type = "response", newoffset = noff), tolerance = 1e-8)
    s1 <- summary(fit)
    s2 <- summary(ref)
    expect_equal(s1$df, s2$df, tolerance = 1e-6)
    expect_equal(s1$aic, s2$aic, tolerance = 1e-6)
    expect_equal(as.numeric(logLik(fit)), as.numeric(logLik(ref)), tolerance = 1e-8)
    if (cs$family != "poisson") {
      expect_equal(unclass(s1$confusion), unclass(s2$confusion), ignore_attr = TRUE)
      expect_equal(s1$accuracy, s2$accuracy, tolerance = 1e-12)
    }
    expect_output(print(fit), "regression")
    expect_error(predict(fit), class = "rff_error")
    unlink(dat$dir, recursive = TRUE)
  }
})

test_that("a lambda path is cross-validated with the chunks as folds, as rff_glm(foldid = chunk)", {
  dat <- write_glm_chunks("binomial", weights = TRUE)
  m <- rff_map(3, D = 60, lengthscale = 1.2)
  lam <- c(3e-2, 3e-3, 3e-4)
  ref <- direct_glm(dat, "binomial", m, lam, foldid = dat$chunk)
  set.seed(5)
  fit <- rff_glm_apply(dat$files, readRDS, m, lambda = lam, control = tight)
  expect_same_glm(fit, ref)
  expect_equal(fit$cvm, ref$cvm, tolerance = 1e-6)
  expect_equal(fit$cvsd, ref$cvsd, tolerance = 1e-5)
  expect_equal(fit$lambda_best, ref$lambda_best)
  expect_equal(fit$folds, 4L)
  # a path chosen from the data: the same values, the same early stop
  ref2 <- direct_glm(dat, "binomial", m, NULL, foldid = dat$chunk)
  set.seed(5)
  fit2 <- rff_glm_apply(dat$files, readRDS, m, nlambda = 20, control = tight)
  expect_equal(fit2$lambda, ref2$lambda, tolerance = 1e-12)
  expect_equal(fit2$cvm, ref2$cvm, tolerance = 1e-6)
  expect_equal(fit2$lambda_best, ref2$lambda_best)
  unlink(dat$dir, recursive = TRUE)
})

test_that("1, 2 and 3 PSOCK workers give the same fit to the last bit, equal to rff_glm()", {
  # R CMD check (_R_CHECK_LIMIT_CORES_) allows 2 processes: there 1 and 2
  # workers; the sanitize run and `make unit`, without that limit, add 3
  limited <- nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_")) &&
    !identical(tolower(Sys.getenv("_R_CHECK_LIMIT_CORES_")), "false")
  nw <- if (limited) 2L else 3L
  cl <- local_cluster(nw)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  for (cs in cases) {
    dat <- write_glm_chunks(cs$family, k = 5, n_each = c(90, 120, 70, 100, 110),
                            weights = cs$weights, offset = cs$offset)
    m <- rff_map(3, D = 60, lengthscale = 1.2)
    ref <- direct_glm(dat, cs$family, m, cs$lambda)
    fits <- lapply(c(list(NULL), lapply(seq_len(nw), function(k) cl[seq_len(k)])), function(cluster) {
      set.seed(5)
      rff_glm_apply(dat$files, readRDS, m, family = cs$family, lambda = cs$lambda,
                    cluster = cluster, control = tight, threads = 1)
    })
    expect_same_glm(fits[[3]], ref)
    expect_equal(vapply(fits, `[[`, 0L, "workers"), c(1L, seq_len(nw)))
    for (f in fits[-1]) {
      expect_identical(f$coefficients, fits[[1]]$coefficients)
      expect_identical(f$intercept, fits[[1]]$intercept)
      expect_identical(f$deviance, fits[[1]]$deviance)
      expect_identical(f$passes, fits[[1]]$passes)
    }
    unlink(dat$dir, recursive = TRUE)
  }
})

test_that("under future::plan(multisession) the fit equals rff_glm()", {
  skip_if_not_installed("future")
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  for (cs in cases) {
    dat <- write_glm_chunks(cs$family, weights = cs$weights, offset = cs$offset)
    m <- rff_map(3, D = 60, lengthscale = 1.2)
    ref <- direct_glm(dat, cs$family, m, cs$lambda)
    set.seed(5)
    fit <- rff_glm_apply(dat$files, readRDS, m, family = cs$family, lambda = cs$lambda,
                         cluster = "future", control = tight)
    expect_same_glm(fit, ref)
    expect_equal(fit$workers, 2L)
    unlink(dat$dir, recursive = TRUE)
  }
})

test_that("weights from a list or a function give the fit of weights from read()", {
  dat <- write_glm_chunks("binomial", weights = TRUE)
  on.exit(unlink(dat$dir, recursive = TRUE), add = TRUE)
  m <- rff_map(3, D = 40, lengthscale = 1.2)
  set.seed(5)
  ref <- rff_glm_apply(dat$files, readRDS, m, lambda = 1e-2, control = tight)
  no_w <- function(f) {
    p <- readRDS(f)
    p$weights <- NULL
    p
  }
  wl <- split(dat$weights, dat$chunk)
  names(wl) <- NULL
  set.seed(5)
  f1 <- rff_glm_apply(dat$files, no_w, m, lambda = 1e-2, weights = wl, control = tight)
  set.seed(5)
  f2 <- rff_glm_apply(dat$files, no_w, m, lambda = 1e-2, control = tight,
                      weights = function(chunk, data) readRDS(chunk)$weights)
  expect_identical(f1$coefficients, ref$coefficients)
  expect_identical(f2$coefficients, ref$coefficients)
  # every weight zero: nothing to fit
  zero <- lapply(wl, function(w) 0 * w)
  expect_error(rff_glm_apply(dat$files, no_w, m, lambda = 1e-2, weights = zero),
               class = "rff_error")
})

test_that("a fit that does not converge warns; a fit survives saveRDS() and plots", {
  dat <- write_glm_chunks("multinomial")
  on.exit(unlink(dat$dir, recursive = TRUE), add = TRUE)
  m <- rff_map(3, D = 40, lengthscale = 1.2)
  expect_warning(rff_glm_apply(dat$files, readRDS, m, family = "multinomial", lambda = 1e-4,
                               control = list(maxit = 2)),
                 class = "rff_convergence")
  fit <- rff_glm_apply(dat$files, readRDS, m, family = "multinomial", lambda = c(1e-2, 1e-3))
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  back <- readRDS(f)
  nx <- matrix(rnorm(12), 4, 3)
  expect_identical(predict(back, nx, type = "response"), predict(fit, nx, type = "response"))
  expect_equal(levels(predict(fit, nx, type = "class")), c("a", "b", "c"))
  expect_equal(nobs(fit), nrow(dat$x))
  expect_equal(sum(summary(fit)$confusion), nrow(dat$x))
  pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(plot(fit))
})

test_that("a worker caches Fourier features from d = 30 (\"pair\") or d = 10 (\"phase\"), others always; the cache changes nothing", {
  # the rule, written out: a frequency costs d terms and a trig call worth
  # 10, shared by 2 features ("pair") or by 1 ("phase"); cached from 20 a
  # feature
  expected <- function(kind, d) switch(kind, pair = d >= 30, phase = d >= 10, arccos = TRUE,
                                       nystrom = TRUE)
  cases <- list(c("pair", 3), c("pair", 29), c("pair", 30), c("phase", 9), c("phase", 10),
                c("arccos", 3), c("nystrom", 3))
  for (cs in cases) {
    kind <- cs[1L]
    d <- as.integer(cs[2L])
    dat <- write_glm_chunks(d = d, n_each = c(60, 50))
    m <- switch(kind,
      pair = rff_map(d, D = 40, lengthscale = 2),
      phase = rff_map(d, D = 40, lengthscale = 2, variant = "phase"),
      arccos = rff_map(d, D = 40, kernel = "arccos"),
      nystrom = rff_map(d, D = 20, sampler = "nystrom", landmarks = dat$x[1:20, ]))
    fit <- rff_glm_apply(dat$files, readRDS, m, lambda = 1e-2)
    unlink(dat$dir, recursive = TRUE)
    expect_identical(fit$cached, expected(kind, d), info = paste(kind, d))
  }
  # a cache that holds the first two chunks of four (0.1 MB; 40 features of
  # 150 + 110 rows take 81 kB, the third would bring 126 kB) or none: the
  # same fit to the last bit; all chunks (and then, in this process, the
  # preconditioner's sample, all 570 rows, which is computed another way):
  # the same to rounding
  dat <- write_glm_chunks(d = 30)
  on.exit(unlink(dat$dir, recursive = TRUE), add = TRUE)
  m <- rff_map(30, D = 40, lengthscale = 5)
  fits <- lapply(c(1024, 0.1, 0), function(mb) {
    set.seed(3)
    rff_glm_apply(dat$files, readRDS, m, lambda = 1e-3, cache_mb = mb, control = tight)
  })
  expect_identical(vapply(fits, `[[`, TRUE, "cached"), c(TRUE, FALSE, FALSE))
  expect_identical(fits[[2L]]$coefficients, fits[[3L]]$coefficients)
  expect_identical(fits[[2L]]$deviance, fits[[3L]]$deviance)
  expect_equal(fits[[1L]]$coefficients, fits[[3L]]$coefficients, tolerance = 1e-10)
})
