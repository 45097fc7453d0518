# rff_glm(): kernel GLMs on random features, against glm(), nnet::multinom(),
# glmnet and finite differences on the same feature matrix.

glm_data <- function(n = 400, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(2 * n), n, 2)
  list(x = x, off = runif(n, -0.5, 0.5), w = sample(1:3, n, replace = TRUE),
       yb = rbinom(n, 1, plogis(sin(2 * x[, 1]) + x[, 2])),
       cnt = rpois(n, exp(0.5 + 0.4 * sin(2 * x[, 1]))),
       cls = factor(c("a", "b", "c")[1 + (x[, 1] > 0) + (x[, 2] > 0.3)]))
}
tight <- list(epsilon = 1e-15, maxit = 2000)

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

test_that("responses: factors, logicals, 0/1, characters; the second level is the event", {
  d <- glm_data(n = 200, seed = 12)
  m <- rff_map(2, D = 20, lengthscale = 1)
  yf <- factor(ifelse(d$yb == 1, "yes", "no"), levels = c("yes", "no"))
  f1 <- rff_glm(d$x, yf, map = m, lambda = 0.01)
  f0 <- rff_glm(d$x, d$yb, map = m, lambda = 0.01)
  # "no" is the event of yf: coefficients of the opposite sign
  expect_equal(coef(f1), -coef(f0), tolerance = 1e-6)
  expect_identical(levels(predict(f1, d$x, type = "class")), c("yes", "no"))
  f2 <- rff_glm(d$x, d$yb == 1, map = m, lambda = 0.01)
  expect_equal(coef(f2), coef(f0), tolerance = 1e-10)
  f3 <- rff_glm(d$x, as.character(d$cls), map = m, lambda = 0.01)
  expect_identical(f3$family, "multinomial")
  expect_identical(f3$levels, c("a", "b", "c"))
  pr <- predict(f3, d$x[1:5, ], type = "response")
  expect_equal(unname(rowSums(pr)), rep(1, 5), tolerance = 1e-12)
  expect_identical(as.character(predict(f3, d$x[1:5, ], type = "class")),
                   c("a", "b", "c")[max.col(pr)])
  # a level without observations is dropped
  cl4 <- factor(d$cls, levels = c("a", "b", "c", "z"))
  expect_identical(rff_glm(d$x, cl4, map = m, lambda = 0.01)$levels, c("a", "b", "c"))
  # several lambdas: one column each
  fp <- rff_glm(d$x, d$yb, map = m, lambda = c(0.1, 0.01), folds = 2)
  expect_identical(dim(predict(fp, d$x[1:3, ], lambda = c(0.1, 0.01))), c(3L, 2L))
  expect_identical(dim(predict(rff_glm(d$x, d$cls, map = m, lambda = c(0.1, 0.01), folds = 2),
                               d$x[1:3, ], type = "response", lambda = c(0.1, 0.01))),
                   c(3L, 3L, 2L))
})

test_that("the formula method matches the default method, with factors and missing values", {
  d <- glm_data(n = 300, seed = 13)
  df <- data.frame(u = d$x[, 1], v = d$x[, 2], g = factor(sample(c("p", "q"), 300, TRUE)),
                   y = factor(d$yb, labels = c("neg", "pos")))
  df$u[5] <- NA
  m <- rff_map(3, D = 30, lengthscale = 1)
  f <- rff_glm(y ~ u + v + g, data = df, map = m, lambda = 0.01)
  X <- model.matrix(~ u + v + g, df)[, -1]
  # what the formula's standardization gives: u and v centred and scaled,
  # the dummy gq centred only
  X <- sweep(X, 2L, colMeans(X))
  X[, 1:2] <- sweep(X[, 1:2], 2L, apply(X[, 1:2], 2L, sd), "/")
  f0 <- rff_glm(X, df$y[-5], map = m, lambda = 0.01, standardize = FALSE)
  expect_equal(coef(f), coef(f0), tolerance = 1e-10)
  expect_identical(nobs(f), 299L)
  p <- predict(f, df[1:6, ], type = "response")
  expect_true(is.na(p[5]))
  expect_equal(unname(p[-5]), unname(predict(f0, X[c(1:4, 5), ], type = "response")),
               tolerance = 1e-10)
  # a level absent from the training data
  nd <- df[1:2, ]
  nd$g <- factor(c("p", "r"))
  expect_error(predict(f, nd), class = "rff_error")
})

test_that("bad inputs are rff_errors naming the argument", {
  d <- glm_data(n = 100, seed = 14)
  e <- function(expr, arg) {
    err <- expect_error(expr, class = "rff_error")
    expect_identical(err$arg, arg)
  }
  e(rff_glm(d$x, rep(1, 100), D = 10), "y")
  e(rff_glm(d$x, factor(rep("a", 100)), D = 10), "y")
  e(rff_glm(d$x, d$cls, family = "binomial", D = 10), "family")
  e(rff_glm(d$x, d$cnt + 0.5, family = "poisson", D = 10), "y")
  e(rff_glm(d$x, d$cnt, D = 10), "y")
  e(rff_glm(d$x, -d$cnt - 1, family = "poisson", D = 10), "y")
  e(rff_glm(d$x, d$yb, weights = c(-1, rep(1, 99)), D = 10), "weights")
  e(rff_glm(d$x, d$yb, family = "gamma", D = 10), "family")
  e(rff_glm(d$x, d$cls, offset = d$off, D = 10), "offset")
  e(rff_glm(d$x, d$yb, cache_mb = -1, D = 10), "cache_mb")
  e(rff_glm(d$x, d$yb, control = list(eps = 1), D = 10), "control")
  e(rff_glm(d$x, d$yb, lambda = -1, D = 10), "lambda")
  e(rff_glm(d$x, c(d$yb[-1], NA), D = 10), "y")
  e(rff_glm(d$x, d$yb, bogus = 1), "bogus")
  f <- rff_glm(d$x, d$yb, D = 10, lambda = c(0.1, 0.01), folds = 2, lengthscale = 1)
  e(predict(f, d$x, lambda = 0.5), "lambda")
  e(predict(f, newx = d$x), "newx")
  e(predict(f, d$x, s = 0.1), "s")
  e(predict(f, d$x, type = "probability"), "type")
  e(predict(f, d$x[, 1, drop = FALSE]), "newdata")
  fp <- rff_glm(d$x, d$cnt, family = "poisson", D = 10, lambda = 0.1, lengthscale = 1)
  e(predict(fp, d$x, type = "class"), "type")
  e(rff_cv(d$x, d$yb, family = "binomial", type.measure = "mse", D = 10), "type.measure")
  e(rff_cv(d$x, d$cls, family = "multinomial", type.measure = "auc", D = 10), "type.measure")
  e(rff_cv(d$x, d$cnt, type.measure = "class", D = 10), "type.measure")
})

test_that("rff_ridge() points a factor response to rff_glm()", {
  d <- glm_data(n = 50, seed = 15)
  err <- expect_error(rff_ridge(d$x, d$cls, D = 10), class = "rff_error")
  expect_match(conditionMessage(err), "rff_glm()", fixed = TRUE)
  expect_no_match(conditionMessage(err), "coming")
})

test_that("print, summary, plot and the confusion table", {
  d <- glm_data(n = 200, seed = 16)
  f <- rff_glm(d$x, d$cls, D = 30, nlambda = 5, folds = 3)
  expect_output(print(f), "multinomial")
  s <- summary(f)
  expect_identical(sum(s$confusion), 200L)
  expect_equal(s$accuracy, mean(predict(f, type = "class") == d$cls))
  # rows the predicted class, columns the observed one, misclassified rows off the diagonal
  expect_true(s$accuracy < 1)
  expect_identical(as.vector(s$confusion),
                   as.vector(table(predict(f, type = "class"), d$cls)))
  expect_identical(names(dimnames(s$confusion)), c("predicted", "observed"))
  expect_output(print(s), "Training accuracy")
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_silent(plot(f))
  cv <- rff_cv(d$x, d$yb, family = "binomial", D = 30, nlambda = 5, folds = 3,
               lengthscale = c(0.5, 1), type.measure = "auc")
  expect_output(print(cv), "AUC")
  expect_output(print(summary(cv)), "AUC")
  expect_silent(plot(cv))
  expect_equal(unname(cv$cvm[cv$best[1], cv$best[2]]), max(cv$cvm))
})

test_that("a problem solved in the span of its rows has the C pass's loss, gradient and eta", {
  set.seed(31)
  n <- 40
  x <- matrix(rnorm(2 * n), n, 2)
  m <- rff_map(2, D = 120, lengthscale = 1)
  w <- runif(n)
  cases <- list(binomial = list(y = as.double(x[, 1] > 0), K = 1L, off = matrix(0.3, n, 1L)),
                poisson = list(y = as.double(rpois(n, 2)), K = 1L, off = matrix(-0.2, n, 1L)),
                multinomial = list(y = sample(1:3, n, TRUE), K = 3L, off = NULL))
  for (fam in names(cases)) {
    cs <- cases[[fam]]
    full <- rff:::glm_problem(x, cs$y, fam, cs$K, cs$off, w, m, 256L, 1L, Inf)
    red <- rff:::glm_problem(x, cs$y, fam, cs$K, cs$off, w, m, 256L, 1L, Inf, reduce = TRUE)
    expect_null(full$basis)
    V <- red$basis
    r <- ncol(V)
    expect_true(nrow(V) == 120L && r <= n && r > n / 2)
    expect_identical(red$D, r)
    # an orthonormal basis of the rows' span, and the rows in it
    expect_equal(crossprod(V), diag(r), tolerance = 1e-13)
    expect_equal(red$Z, full$Z %*% V, tolerance = 1e-13)
    expect_equal(full$Z %*% tcrossprod(V), full$Z, tolerance = 1e-6)
    theta <- rbind(rnorm(cs$K), matrix(rnorm(r * cs$K, sd = 0.3), r, cs$K))
    a <- rff:::glm_pass(red, theta, red$w)
    lifted <- rff:::lift_coef(array(theta, c(dim(theta), 1L)), V)
    expect_identical(dim(lifted), c(121L, cs$K, 1L))
    b <- rff:::glm_pass(full, matrix(lifted, 121L, cs$K), full$w)
    expect_equal(a$loss, b$loss, tolerance = 1e-12)
    if (fam == "poisson") {
      # a row of weight zero adds nothing, even where its loss overflows (as in C)
      w0 <- red$w
      w0[1L] <- 0
      red$offset[1L, 1L] <- full$offset[1L, 1L] <- 800
      a0 <- rff:::glm_pass(red, theta, w0)
      b0 <- rff:::glm_pass(full, matrix(lifted, 121L, cs$K), w0)
      expect_true(is.finite(a0$loss) && all(is.finite(a0$grad)))
      expect_equal(a0$loss, b0$loss, tolerance = 1e-12)
      expect_equal(unname(a0$grad), unname(crossprod(V, b0$grad)), tolerance = 1e-10)
    }
    expect_equal(a$grad0, b$grad0, tolerance = 1e-12)
    expect_equal(unname(a$eta), unname(b$eta), tolerance = 1e-12)
    # the gradient in the span: V' times the features' gradient
    expect_equal(unname(a$grad), unname(crossprod(V, b$grad)), tolerance = 1e-10)
  }
})

test_that("fits in the span of the rows equal the streamed fits of the whole feature space", {
  set.seed(32)
  n <- 60
  x <- matrix(rnorm(2 * n), n, 2)
  y <- factor(ifelse(rowSums(x^2) > 1.4, "out", "in"))
  m <- rff_map(2, D = 200, lengthscale = 1)
  tight <- list(epsilon = 1e-12, maxit = 2000)
  # cache_mb = 0 streams every pass over the D = 200 features; the default
  # caches them and solves in the span of the 60 rows
  streamed <- rff_glm(x, y, map = m, lambda = c(0.1, 0.01), standardize = FALSE,
                      cache_mb = 0, control = tight, progress = FALSE, foldid = rep(1:3, 20))
  cached <- rff_glm(x, y, map = m, lambda = c(0.1, 0.01), standardize = FALSE,
                    control = tight, progress = FALSE, foldid = rep(1:3, 20))
  expect_false(streamed$cached)
  expect_true(cached$cached)
  expect_equal(coef(cached, lambda = 0.01), coef(streamed, lambda = 0.01), tolerance = 1e-5)
  expect_equal(cached$deviance, streamed$deviance, tolerance = 1e-8)
  expect_equal(cached$cvm, streamed$cvm, tolerance = 1e-6)
  expect_equal(predict(cached, x[1:5, ], type = "response"),
               predict(streamed, x[1:5, ], type = "response"), tolerance = 1e-7)
})

test_that("the L-BFGS in C takes the R code's iterations, step for step", {
  set.seed(33)
  n <- 50
  x <- matrix(rnorm(2 * n), n, 2)
  m <- rff_map(2, D = 150, lengthscale = 1.2)
  w <- runif(n)
  w[1:5] <- 0
  cases <- list(binomial = list(y = as.double(x[, 1] + rnorm(n) > 0), K = 1L, off = matrix(0.2, n, 1L)),
                poisson = list(y = as.double(rpois(n, exp(x[, 2] / 2))), K = 1L, off = NULL),
                multinomial = list(y = sample(1:3, n, TRUE), K = 3L, off = matrix(rnorm(3 * n, sd = 0.1), n)))
  ctl <- list(epsilon = 1e-10, maxit = 200L)
  for (fam in names(cases)) {
    cs <- cases[[fam]]
    prob <- rff:::glm_problem(x, cs$y, fam, cs$K, cs$off, w, m, 256L, 1L, Inf, reduce = TRUE)
    theta0 <- matrix(0, prob$D + 1L, cs$K)
    theta0[1L, ] <- rff:::glm_start(prob, prob$w)
    P <- rff:::glm_precond(prob, theta0, 2L)
    prob$Z <- prob$Z %*% P$vectors
    prob$basis <- prob$basis %*% P$vectors
    P$zbar <- drop(crossprod(P$vectors, P$zbar))
    P$vectors <- NULL
    th_c <- th_r <- rff:::to_inner(theta0, P$zbar)
    mem_c <- mem_r <- NULL
    # a fold's weights on the second lambda, the pairs carried over
    for (i in 1:3) {
      lam <- c(0.05, 0.005, 0.001)[i]
      wi <- if (i == 2L) replace(w, 6:15, 0) else NULL
      W <- sum(if (is.null(wi)) prob$w else wi)
      rc <- rff:::lbfgs_lambda(prob, th_c, lam, P, wi, W, ctl, mem_c)
      rr <- rff:::lbfgs_lambda(prob, th_r, lam, P, wi, W, ctl, mem_r, in_c = FALSE)
      expect_identical(rc$iter, rr$iter)
      expect_identical(rc$passes, rr$passes)
      expect_true(rc$converged && rr$converged)
      expect_equal(rc$th, rr$th, tolerance = 1e-9)
      expect_equal(rc$cur$f, rr$cur$f, tolerance = 1e-12)
      expect_equal(unname(rc$cur$g), unname(rr$cur$g), tolerance = 1e-6)
      expect_equal(unname(rc$cur$eta), unname(rr$cur$eta), tolerance = 1e-9)
      expect_equal(rc$cur$loss, rr$cur$loss, tolerance = 1e-12)
      expect_identical(length(rc$mem$S), length(rr$mem$S))
      expect_equal(rc$mem$Y, rr$mem$Y, tolerance = 1e-6)
      th_c <- rc$th
      th_r <- rr$th
      mem_c <- rc$mem
      mem_r <- rr$mem
    }
    # the objective at the C solution is stationary: its gradient, from the
    # R pass, is below the tolerance the stopping rule implies
    ev <- rff:::glm_eval(prob, th_c, 0.001, P, NULL, sum(prob$w))
    expect_lt(max(abs(ev$g)), 1e-3)
    expect_equal(ev$f, rc$cur$f, tolerance = 1e-12)
  }
})

test_that("extreme weights act through their proportions in rff_glm()", {
  set.seed(1)
  x <- matrix(rnorm(400), 200)
  y <- as.numeric(x[, 1] + rnorm(200, sd = 0.5) > 0)
  m <- rff_map(2, D = 10, lengthscale = 1)
  one <- rff_glm(x, y, map = m, lambda = c(0.1, 0.01))
  for (k in c(1e-310, 1e300)) {
    f <- rff_glm(x, y, map = m, lambda = c(0.1, 0.01), weights = rep(k, 200))
    expect_equal(coef(f), coef(one), tolerance = 1e-6)
    # the deviance is that of the weights given: k times that of weights 1
    if (k > 1) expect_equal(f$deviance, k * one$deviance, tolerance = 1e-6)
  }
  w <- c(1e308, 1e308, rep(1, 198))
  f <- rff_glm(x, y, map = m, lambda = 0.01, weights = w)
  g <- rff_glm(x, y, map = m, lambda = 0.01, weights = w / 1e308)
  expect_equal(coef(f), coef(g), tolerance = 1e-6)
  expect_true(all(is.finite(predict(f, x[1:5, ]))))
  expect_identical(f$prior.weights, w)
})
