# rff_glm()'s interface: responses, formulas, bad input, print, summary,
# plot and weights (glm_data(): helper-glm.R).

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
  # a level absent from the training data: predicted as none of the known
  # levels with a warning, or refused
  nd <- df[1:2, ]
  nd$g <- factor(c("p", "r"))
  expect_warning(pr <- predict(f, nd, type = "response"), class = "rff_new_levels")
  expect_equal(unname(pr[1]), unname(p[1]), tolerance = 1e-10)
  expect_error(predict(f, nd, new_levels = "error"), class = "rff_error")
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
