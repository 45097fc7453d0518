# rff_glm(): kernel GLMs on random features, against glm(), nnet::multinom(),
# glmnet and finite differences on the same feature matrix.

test_that("binomial at lambda = 0 is glm() on the features, with weights and an offset", {
  d <- glm_data()
  m <- rff_map(2, D = 6, lengthscale = 1.5)
  Z <- rff_features(d$x, map = m)
  f <- rff_glm(d$x, d$yb, map = m, lambda = 0, standardize = FALSE, weights = d$w,
               offset = d$off, control = tight)
  g <- glm(d$yb ~ Z + offset(d$off), family = binomial, weights = d$w,
           control = glm.control(epsilon = 1e-14, maxit = 100))
  expect_equal(unname(coef(f)), unname(coef(g)), tolerance = 1e-6)
  expect_equal(f$deviance, deviance(g), tolerance = 1e-9)
  expect_equal(f$null.deviance, g$null.deviance, tolerance = 1e-9)
  expect_equal(as.numeric(logLik(f)), as.numeric(logLik(g)), tolerance = 1e-9)
  # df of an unpenalized fit: every coefficient
  expect_equal(attr(logLik(f), "df"), 7, tolerance = 1e-6)
  expect_equal(summary(f)$aic, AIC(g), tolerance = 1e-6)
  expect_equal(unname(fitted(f)), unname(fitted(g)), tolerance = 1e-6)
  expect_equal(unname(predict(f, d$x[1:5, ], newoffset = d$off[1:5])),
               unname(predict(g)[1:5]), tolerance = 1e-6)
})

test_that("poisson at lambda = 0 is glm() on the features, with weights and an offset", {
  d <- glm_data(seed = 2)
  m <- rff_map(2, D = 4, lengthscale = 2)
  Z <- rff_features(d$x, map = m)
  f <- rff_glm(d$x, d$cnt, family = "poisson", map = m, lambda = 0, standardize = FALSE,
               weights = d$w, offset = d$off, control = tight)
  g <- glm(d$cnt ~ Z + offset(d$off), family = poisson, weights = d$w,
           control = glm.control(epsilon = 1e-14))
  expect_equal(unname(coef(f)), unname(coef(g)), tolerance = 1e-6)
  expect_equal(f$deviance, deviance(g), tolerance = 1e-9)
  expect_equal(f$null.deviance, g$null.deviance, tolerance = 1e-9)
  expect_equal(as.numeric(logLik(f)), as.numeric(logLik(g)), tolerance = 1e-9)
  expect_equal(summary(f)$aic, AIC(g), tolerance = 1e-6)
  expect_equal(unname(predict(f, d$x[1:4, ], type = "response", newoffset = d$off[1:4])),
               unname(fitted(g)[1:4]), tolerance = 1e-6)
})

test_that("multinomial at lambda = 0 has nnet::multinom()'s probabilities", {
  skip_if_not_installed("nnet")
  d <- glm_data(n = 500, seed = 3)
  # overlapping classes, so that the unpenalized fit exists
  set.seed(30)
  cls <- factor(c("a", "b", "c")[apply(cbind(0, d$x[, 1], d$x[, 2]) +
                                          matrix(rlogis(1500), 500), 1, which.max)])
  m <- rff_map(2, D = 4, lengthscale = 2)
  Z <- rff_features(d$x, map = m)
  f <- rff_glm(d$x, cls, map = m, lambda = 0, standardize = FALSE, control = tight)
  g <- nnet::multinom(cls ~ Z, trace = FALSE, reltol = 1e-14, abstol = 1e-14, maxit = 5000)
  expect_equal(unname(fitted(f)), unname(fitted(g)), tolerance = 1e-5)
  expect_equal(f$deviance, deviance(g), tolerance = 1e-7)
  expect_identical(colnames(fitted(f)), c("a", "b", "c"))
  # the coefficients' class contrasts are those of multinom's baseline coding
  b <- coef(f)
  expect_equal(unname(t(b[, 2:3] - b[, 1])), unname(coef(g)), tolerance = 1e-4)
  # penalized: coefficients sum to zero over classes, intercepts centred
  fp <- rff_glm(d$x, cls, map = m, lambda = 0.01, standardize = FALSE, control = tight)
  expect_equal(unname(rowSums(coef(fp))), rep(0, 5), tolerance = 1e-8)
})

test_that("the penalized fits equal glmnet(alpha = 0) on the same features and lambda", {
  skip_if_not_installed("glmnet")
  d <- glm_data(n = 300, seed = 4)
  m <- rff_map(2, D = 40, lengthscale = 1)
  Z <- rff_features(d$x, map = m)
  lam <- 0.02
  f <- rff_glm(d$x, d$yb, map = m, lambda = lam, standardize = FALSE, weights = d$w,
               control = tight)
  g <- glmnet::glmnet(Z, d$yb, family = "binomial", alpha = 0, lambda = lam,
                      standardize = FALSE, weights = d$w, thresh = 1e-14, maxit = 1e6)
  expect_equal(unname(coef(f)), as.vector(coef(g)), tolerance = 1e-5)
  f <- rff_glm(d$x, d$cnt, family = "poisson", map = m, lambda = lam, standardize = FALSE,
               offset = d$off, control = tight)
  g <- glmnet::glmnet(Z, d$cnt, family = "poisson", alpha = 0, lambda = lam, offset = d$off,
                      standardize = FALSE, thresh = 1e-14, maxit = 1e6)
  expect_equal(unname(coef(f)), as.vector(coef(g)), tolerance = 1e-5)
  f <- rff_glm(d$x, d$cls, map = m, lambda = lam, standardize = FALSE, control = tight)
  g <- glmnet::glmnet(Z, d$cls, family = "multinomial", alpha = 0, lambda = lam,
                      standardize = FALSE, thresh = 1e-14, maxit = 1e6)
  gb <- do.call(cbind, lapply(coef(g), as.vector))
  # glmnet's intercepts are identified differently: compare centred ones
  gb[1L, ] <- gb[1L, ] - mean(gb[1L, ])
  expect_equal(unname(coef(f)), unname(gb), tolerance = 1e-5)
})

test_that("the C pass's gradient is the derivative of its loss (finite differences)", {
  d <- glm_data(n = 200, seed = 5)
  m <- rff_map(2, D = 8, lengthscale = 1)
  pass <- function(y, fam, B, a, off = NULL) {
    .Call(rff:::C_rff_glm_pass, d$x, NULL, m, y, fam, off, as.double(d$w), B, a, 64L, 1L,
          FALSE)
  }
  set.seed(6)
  cases <- list(list(y = as.double(d$yb), fam = "binomial", K = 1L),
                list(y = as.double(d$cnt), fam = "poisson", K = 1L),
                list(y = as.integer(d$cls), fam = "multinomial", K = 3L))
  for (cs in cases) {
    B <- matrix(rnorm(8 * cs$K, sd = 0.5), 8, cs$K)
    a <- rnorm(cs$K, sd = 0.3)
    off <- if (cs$K == 1L) matrix(d$off) else NULL
    r <- pass(cs$y, cs$fam, B, a, off)
    h <- 1e-6
    num <- B
    for (j in seq_along(B)) {
      Bp <- B; Bp[j] <- Bp[j] + h
      Bm <- B; Bm[j] <- Bm[j] - h
      num[j] <- (pass(cs$y, cs$fam, Bp, a, off)$loss - pass(cs$y, cs$fam, Bm, a, off)$loss) / (2 * h)
    }
    expect_equal(r$grad, num, tolerance = 1e-6, label = cs$fam)
    num0 <- vapply(seq_len(cs$K), function(k) {
      ap <- a; ap[k] <- ap[k] + h
      am <- a; am[k] <- am[k] - h
      (pass(cs$y, cs$fam, B, ap, off)$loss - pass(cs$y, cs$fam, B, am, off)$loss) / (2 * h)
    }, 0)
    expect_equal(r$grad0, num0, tolerance = 1e-6, label = cs$fam)
    # the loss itself: base R
    eta <- rff_features(d$x, map = m) %*% B + rep(a, each = 200) + if (is.null(off)) 0 else off[, 1]
    ll <- switch(cs$fam,
                 binomial = log1p(exp(eta[, 1])) - cs$y * eta[, 1],
                 poisson = exp(eta[, 1]) - cs$y * eta[, 1],
                 multinomial = log(rowSums(exp(eta))) - eta[cbind(1:200, cs$y)])
    expect_equal(r$loss, sum(d$w * ll), tolerance = 1e-12, label = cs$fam)
  }
})

test_that("streamed, cached and threaded fits agree; the fallback path of workspace maps too", {
  d <- glm_data(n = 1500, seed = 7)
  m <- rff_map(2, D = 60, lengthscale = 1)
  a <- rff_glm(d$x, d$cls, map = m, lambda = 1e-3, threads = 1)
  b <- rff_glm(d$x, d$cls, map = m, lambda = 1e-3, cache_mb = 0, threads = 2)
  c2 <- rff_glm(d$x, d$cls, map = m, lambda = 1e-3, cache_mb = 0, threads = 1,
                chunk_size = 100)
  expect_true(a$cached)
  expect_false(b$cached)
  expect_equal(coef(a), coef(b), tolerance = 1e-10)
  expect_equal(coef(b), coef(c2), tolerance = 1e-10)
  # a Nystrom map is featurized chunk by chunk: same fit streamed or cached
  set.seed(8)
  n1 <- rff_glm(d$x, d$yb, D = 30, sampler = "nystrom", lambda = 1e-3)
  n2 <- rff_glm(d$x, d$yb, map = n1$map, lambda = 1e-3, cache_mb = 0)
  expect_equal(coef(n1), coef(n2), tolerance = 1e-10)
})

test_that("cross-validation folds are fits without the held-out rows", {
  d <- glm_data(n = 300, seed = 9)
  m <- rff_map(2, D = 30, lengthscale = 1)
  foldid <- rep(1:3, 100)
  lam <- c(0.05, 0.005)
  f <- rff_glm(d$x, d$yb, map = m, lambda = lam, foldid = foldid, standardize = FALSE,
               control = tight)
  dev <- sapply(1:3, function(j) {
    tr <- foldid != j
    fj <- rff_glm(d$x[tr, ], d$yb[tr], map = m, lambda = lam, standardize = FALSE,
                  foldid = rep(1:2, length.out = sum(tr)), control = tight)
    eta <- predict(fj, d$x[!tr, ], lambda = lam)
    colMeans(2 * (log1p(exp(eta)) - d$yb[!tr] * eta))
  })
  expect_equal(f$cvm, unname(rowMeans(dev)), tolerance = 1e-6)
  expect_equal(f$lambda_best, lam[which.min(rowMeans(dev))])
  # rff_cv with the class measure counts misclassified held-out rows
  cv <- rff_cv(d$x, d$yb, family = "binomial", map = m, lambda = lam, foldid = foldid,
               standardize = FALSE, type.measure = "class", control = tight)
  err <- sapply(1:3, function(j) {
    tr <- foldid != j
    fj <- rff_glm(d$x[tr, ], d$yb[tr], map = m, lambda = lam, standardize = FALSE,
                  foldid = rep(1:2, length.out = sum(tr)), control = tight)
    colMeans((predict(fj, d$x[!tr, ], lambda = lam) > 0) != d$yb[!tr])
  })
  expect_equal(unname(cv$cvm[, 1]), unname(rowMeans(err)), tolerance = 1e-12)
  expect_s3_class(cv$fit, "rff_glm")
  expect_true(cv$lambda_1se >= cv$lambda_min)
  # the formula method: the same folds give the same curve
  df <- data.frame(u = d$x[, 1], v = d$x[, 2], y = factor(d$yb, labels = c("n", "p")))
  cvf <- rff_cv(y ~ u + v, data = df, family = "binomial", map = m, lambda = lam,
                foldid = foldid, standardize = FALSE, type.measure = "class", control = tight)
  expect_equal(cvf$cvm, cv$cvm, tolerance = 1e-12)
  expect_identical(levels(predict(cvf, df[1:3, ], type = "class")), c("n", "p"))
})

test_that("rff_cv(family =): lambda_1se is the largest lambda within one standard error; predict() gives the link", {
  d <- glm_data(n = 300, seed = 18)
  m <- rff_map(2, D = 30, lengthscale = 1)
  cv <- rff_cv(d$x, d$yb, family = "binomial", map = m, standardize = FALSE, nlambda = 8,
               lambda_min_ratio = 1e-4, foldid = rep(1:4, 75))
  cvm <- cv$cvm[, 1]
  i <- which.min(cvm)
  expect_identical(cv$lambda_min, cv$lambda[i])
  # glmnet's rule, from the table of the cross-validation
  ref <- max(cv$lambda[cvm <= cvm[i] + cv$cvsd[i, 1]])
  expect_identical(cv$lambda_1se, ref)
  # these data have lambdas within one se on both sides of the minimum
  expect_true(cv$lambda_1se > cv$lambda_min)
  expect_true(any(cv$lambda < cv$lambda_min & cvm <= cvm[i] + cv$cvsd[i, 1]))
  # predict() defaults to the linear predictor at lambda_min: z'b + a
  b <- coef(cv)
  eta <- drop(rff_features(d$x[1:5, ], map = m) %*% b[-1]) + b[1]
  expect_equal(unname(predict(cv, d$x[1:5, ])), eta, tolerance = 1e-10)
  expect_equal(unname(predict(cv, d$x[1:5, ], type = "response")), plogis(eta),
               tolerance = 1e-10)
  b1 <- coef(cv, lambda = "1se")
  expect_equal(unname(predict(cv, d$x[1:5, ], lambda = "1se")),
               drop(rff_features(d$x[1:5, ], map = m) %*% b1[-1]) + b1[1], tolerance = 1e-10)
})

test_that("the lambda path starts at the curvature at the start times the features' total variance", {
  d <- glm_data(n = 300, seed = 17)
  m <- rff_map(2, D = 20, lengthscale = 1)
  Z <- rff_features(d$x, map = m)
  # sum over features of the w-weighted variance (divisor sum(w))
  tv <- function(w) sum(apply(Z, 2L, function(z) sum(w * (z - weighted.mean(z, w))^2)) / sum(w))
  f <- rff_glm(d$x, d$yb, map = m, standardize = FALSE, weights = d$w, nlambda = 4,
               lambda_min_ratio = 0.01, folds = 2)
  p <- weighted.mean(d$yb, d$w)
  expect_equal(f$lambda[1], p * (1 - p) * tv(d$w), tolerance = 1e-10)
  expect_equal(f$lambda, f$lambda[1] * 0.01^((0:3) / 3), tolerance = 1e-12)
  fp <- rff_glm(d$x, d$cnt, family = "poisson", map = m, standardize = FALSE, nlambda = 3,
                folds = 2)
  expect_equal(fp$lambda[1], mean(d$cnt) * tv(rep(1, 300)), tolerance = 1e-10)
  fm <- rff_glm(d$x, d$cls, map = m, standardize = FALSE, nlambda = 3, folds = 2)
  pk <- as.vector(table(d$cls)) / 300
  expect_equal(fm$lambda[1], max(eigen(diag(pk) - tcrossprod(pk))$values) * tv(rep(1, 300)),
               tolerance = 1e-10)
})

test_that("the weighted AUC is the Mann-Whitney statistic", {
  set.seed(10)
  y <- rbinom(50, 1, 0.4)
  s <- round(rnorm(50) + y, 1)
  w <- rep(1, 50)
  pos <- s[y == 1]
  neg <- s[y == 0]
  ref <- mean(outer(pos, neg, ">") + 0.5 * outer(pos, neg, "=="))
  expect_equal(rff:::weighted_auc(y, s, w), ref, tolerance = 1e-12)
  w2 <- sample(1:3, 50, replace = TRUE)
  rep_idx <- rep(seq_len(50), w2)
  expect_equal(rff:::weighted_auc(y, s, w2), rff:::weighted_auc(y[rep_idx], s[rep_idx],
                                                                 rep(1, length(rep_idx))),
               tolerance = 1e-12)
})

test_that("separable classes: the penalty keeps the fit finite and converged", {
  x <- matrix(c(-2, -1, -0.5, 0.5, 1, 2), ncol = 1)
  y <- c(0, 0, 0, 1, 1, 1)
  f <- expect_silent(rff_glm(x, y, D = 20, lambda = 1e-3, lengthscale = 1))
  expect_true(all(f$converged))
  expect_true(is.finite(f$deviance))
  expect_identical(as.integer(predict(f, x, type = "class")) - 1L, as.integer(y))
  p <- predict(f, x, type = "response")
  expect_true(all(p > 0 & p < 1))
})

test_that("too few iterations is a classed warning", {
  d <- glm_data(seed = 11)
  expect_warning(rff_glm(d$x, d$cls, D = 50, lambda = 1e-6, lengthscale = 1,
                         control = list(maxit = 2)),
                 class = "rff_convergence")
})

test_that("the warning names the fits that did not converge: the folds or the held-out set's", {
  d <- glm_data(seed = 11)
  warned <- function(...) {
    msgs <- character()
    withCallingHandlers(rff_glm(d$x, d$cls, D = 50, lambda = c(1e-2, 1e-6), lengthscale = 1,
                                control = list(maxit = 2), ...),
                        rff_convergence = function(w) {
                          msgs <<- c(msgs, conditionMessage(w))
                          invokeRestart("muffleWarning")
                        })
    msgs
  }
  foldid <- rep_len(1:5, nrow(d$x))
  m <- warned(foldid = foldid)
  expect_length(m, 2L)
  expect_match(m[2L], "some cross-validation fits did not converge", fixed = TRUE)
  m <- warned(foldid = foldid, holdout = TRUE)
  expect_length(m, 2L)
  expect_match(m[2L], "the fit without the held-out rows did not converge", fixed = TRUE)
  expect_match(m[1L], "the fit did not converge in 2 iterations", fixed = TRUE)
})

test_that("the default tolerance stops near the minimum, in fewer iterations than 1e-8", {
  d <- glm_data(n = 400, seed = 41)
  m <- rff_map(2, D = 60, lengthscale = 1)
  lam <- 1e-3
  fit <- function(control) rff_glm(d$x, d$cls, map = m, lambda = lam, standardize = FALSE,
                                   control = control)
  # the objective: the loss per row (the deviance / 2, unit weights) plus the penalty
  obj <- function(f) f$deviance / (2 * 400) + lam / 2 * sum(f$coefficients^2)
  best <- obj(fit(tight))
  tol <- 1e-6 * (abs(best) + 0.1)
  f6 <- fit(list())
  f8 <- fit(list(epsilon = 1e-8))
  # within a few times epsilon (|F| + 0.1) of the minimum, and not as close
  # as 1e-8 gets
  expect_lt(obj(f6) - best, 5 * tol)
  expect_gt(obj(f6) - best, 0.05 * tol)
  expect_lt(obj(f8) - best, 0.05 * tol)
  expect_lt(sum(f6$iterations), sum(f8$iterations))
})

test_that("a long path's warm starts give the fits from scratch: the path and its folds", {
  # from the third lambda on the path starts from the line through the two
  # solutions before, and each fold from its own fit at the lambda before,
  # moved by the change of the fit on all rows; neither may change a fit
  d <- glm_data(n = 240, seed = 31)
  m <- rff_map(2, D = 40, lengthscale = 1)
  foldid <- rep(1:3, 80)
  lam <- 0.2 * 0.3^(0:5)
  f <- rff_glm(d$x, d$cls, map = m, lambda = lam, foldid = foldid, standardize = FALSE,
               control = tight)
  for (l in c(3, 6)) {
    one <- rff_glm(d$x, d$cls, map = m, lambda = lam[l], standardize = FALSE, control = tight)
    # both at the objective's rounding floor (`tight`; the path's lambdas
    # other than lambda_best at 10 times it): the coefficients agree to what
    # that floor leaves in the flattest directions (about sqrt(1e-16 F /
    # lambda), 3e-7 at the smallest lambda; 0.9e-7 here with the usual
    # compiler flags, more under the sanitizers'), the deviances (first
    # order in them: 3e-9 here) to 1e-7
    expect_equal(f$deviance[l], one$deviance, tolerance = 1e-7, info = l)
    expect_equal(coef(f, lambda = lam[l]), coef(one), tolerance = 1e-6, info = l)
  }
  dev <- sapply(1:3, function(j) {
    tr <- foldid != j
    vapply(lam, function(l) {
      fj <- rff_glm(d$x[tr, ], d$cls[tr], map = m, lambda = l, standardize = FALSE,
                    control = tight)
      p <- predict(fj, d$x[!tr, ], type = "response")
      -2 * mean(log(p[cbind(seq_len(sum(!tr)), as.integer(d$cls[!tr]))]))
    }, 0)
  })
  expect_equal(f$cvm, unname(rowMeans(dev)), tolerance = 1e-6)
  # the start: exact on a line in log lambda, and between the solutions
  s2 <- matrix(1:4, 2)
  s1 <- s2 + 0.5
  expect_equal(rff:::path_extrapolate(s1, s2, 1, 0.1, 0.01), s1 + 0.5)
  expect_equal(rff:::path_extrapolate(s1, s2, 1, 0.1, 10^-1.5), s1 + 0.25)
})

test_that("a cross-validated path: folds to 1000 x epsilon (at most 1e-4), the path to 10 x, lambda_best to epsilon", {
  # the cap matters: with folds at 1e-3 instead of 1e-4 (the default
  # epsilon's 1000 x), the best CV deviance of mlbench::Sonar's rff_cv()
  # moved by 3% of itself and its lengthscale changed
  d <- glm_data(200, seed = 8)
  m <- rff_map(2, D = 20, lengthscale = 1)
  rec <- new.env()
  suppressMessages(trace("lbfgs_lambda", where = asNamespace("rff"), print = FALSE,
                         tracer = bquote({
    fold <- !is.null(w) && any(w == 0)
    assign("eps", rbind(get("eps", .(rec)), c(fold, control$epsilon)), envir = .(rec))
  })))
  on.exit(suppressMessages(untrace("lbfgs_lambda", where = asNamespace("rff"))), add = TRUE)
  for (eps in c(NA, 1e-9, 1e-8)) {
    rec$eps <- NULL
    ctl <- if (is.na(eps)) list() else list(epsilon = eps)
    e <- if (is.na(eps)) 1e-6 else eps
    f <- rff_glm(d$x, d$cls, map = m, nlambda = 4, foldid = rep_len(1:3, 200),
                 standardize = FALSE, control = ctl)
    fold <- rec$eps[, 1] == 1
    expect_equal(sum(fold), 3 * length(f$lambda))
    expect_equal(unique(rec$eps[fold, 2]), min(1000 * e, 1e-4))
    # the path's lambdas, then lambda_best's last solve
    path <- rec$eps[!fold, 2]
    expect_equal(path, c(rep(10 * e, length(f$lambda)), e))
  }
})
