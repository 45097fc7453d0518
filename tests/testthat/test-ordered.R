# Ordered factors in formulas enter the kernel as the ranks of their levels
# (R/model-input.R): each fit equals the matrix method's fit on the ranks
# computed by hand.

ordered_data <- function(n = 80, seed = 41) {
  set.seed(seed)
  lv <- c("poor", "fair", "good", "best")
  o <- factor(sample(lv, n, TRUE), levels = lv, ordered = TRUE)
  u <- rnorm(n)
  data.frame(y = u + 0.5 * as.integer(o) + rnorm(n, sd = 0.2), u = u, o = o,
             g = factor(sample(c("a", "b"), n, TRUE)))
}

test_that("an ordered factor is one column of its level ranks, standardized like a numeric input", {
  d <- ordered_data()
  set.seed(7)
  fit <- rff_ridge(y ~ u + o + g, data = d, D = 60, lengthscale = 1.5, progress = FALSE)
  ranks <- match(as.character(d$o), c("poor", "fair", "good", "best"))
  X <- cbind(u = d$u, o = ranks, gb = as.numeric(d$g == "b"))
  s <- fit$standardize
  expect_equal(unname(s$center), c(mean(d$u), mean(ranks), mean(X[, "gb"])))
  # the ranks are scaled like a numeric input, the dummy keeps its 0/1 scale
  expect_equal(unname(s$scale), c(sd(d$u), sd(ranks), 1))
  expect_equal(names(s$scale), c("u", "o", "gb"))
  Xs <- sweep(sweep(X, 2L, s$center), 2L, s$scale, "/")
  set.seed(7)
  by_hand <- rff_ridge(Xs, d$y, D = 60, lengthscale = 1.5, progress = FALSE, standardize = FALSE)
  expect_equal(unname(fitted(fit)), unname(fitted(by_hand)), tolerance = 1e-10)
  expect_equal(unname(coef(fit)), unname(coef(by_hand)), tolerance = 1e-10)
  expect_equal(fit$ordered, list(o = c("poor", "fair", "good", "best")))
  # without ordered factors the fit records none
  expect_null(rff_ridge(y ~ u + g, data = d, D = 20, progress = FALSE)$ordered)
  # unordered, the same factor is three centred dummies
  d2 <- transform(d, o = factor(o, ordered = FALSE))
  f2 <- rff_ridge(y ~ u + o + g, data = d2, D = 20, progress = FALSE)
  expect_equal(length(f2$standardize$scale), 5L)
})

test_that("predict() ranks new values among the training levels, whatever their coding", {
  d <- ordered_data()
  fit <- rff_ridge(y ~ u + o, data = d, D = 60, lengthscale = 1.5, progress = FALSE)
  full <- predict(fit, d)
  expect_equal(unname(full), unname(fitted(fit)), tolerance = 1e-10)
  rows <- which(d$o %in% c("good", "best"))[1:6]
  # a new factor with only two levels: its own codes would be 1 and 2
  nd <- data.frame(u = d$u[rows], o = factor(as.character(d$o[rows]), levels = c("good", "best"),
                                            ordered = TRUE))
  expect_equal(unname(predict(fit, nd)), unname(full[rows]), tolerance = 1e-10)
  # character values
  nd$o <- as.character(nd$o)
  expect_equal(unname(predict(fit, nd)), unname(full[rows]), tolerance = 1e-10)
  # a missing value predicts NA, as for a numeric input
  nd$o[2] <- NA
  p <- predict(fit, nd)
  expect_true(is.na(p[2]))
  expect_equal(unname(p[-2]), unname(full[rows[-2]]), tolerance = 1e-10)
  # a level the fit never saw: the middle rank (1 + 4) / 2 by default, with
  # a warning; refused with new_levels = "error"
  nd$o[2] <- "awful"
  expect_warning(p <- predict(fit, nd), class = "rff_new_levels")
  xr <- (cbind(u = nd$u[2], o = 2.5) - fit$standardize$center) / fit$standardize$scale
  z <- rff_features(xr, map = fit$map)
  expect_equal(unname(p[2]), drop(z %*% coef(fit)[-1]) + unname(coef(fit)[1]), tolerance = 1e-10)
  expect_equal(unname(p[-2]), unname(full[rows[-2]]), tolerance = 1e-10)
  expect_error(predict(fit, nd, new_levels = "error"), class = "rff_error")
  expect_error(predict(fit, nd, new_levels = "error"), "not seen in training (\"awful\"", fixed = TRUE)
})

test_that("levels absent from the training rows take no rank", {
  d <- ordered_data()
  d <- d[d$o != "fair", ]
  set.seed(3)
  # the ordered factor first among the predictors
  fit <- rff_ridge(y ~ o + u, data = d, D = 40, lengthscale = 2, progress = FALSE)
  ranks <- match(as.character(d$o), c("poor", "good", "best"))
  set.seed(3)
  ref <- rff_ridge(cbind(o = ranks, u = d$u), d$y, D = 40, lengthscale = 2, progress = FALSE)
  expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-10)
  expect_equal(fit$ordered$o, c("poor", "good", "best"))
  # "fair" had no training row: new, at the middle rank of the three
  expect_warning(p <- predict(fit, data.frame(u = 0, o = "fair")), "\"fair\"", fixed = TRUE)
  expect_equal(unname(p), unname(predict(ref, cbind(o = 2, u = 0))), tolerance = 1e-10)
  expect_error(predict(fit, data.frame(u = 0, o = "fair"), new_levels = "error"), "\"fair\"",
               fixed = TRUE, class = "rff_error")
})

test_that("rff_glm() and rff_cv() take ordered factors as ranks too", {
  d <- ordered_data(n = 120, seed = 5)
  d$cls <- factor(ifelse(d$y > median(d$y), "hi", "lo"))
  ranks <- as.integer(d$o)
  set.seed(11)
  fit <- rff_glm(cls ~ u + o, data = d, D = 40, lengthscale = 1.5, lambda = 0.01,
                 progress = FALSE)
  set.seed(11)
  ref <- rff_glm(cbind(u = d$u, o = ranks), d$cls, D = 40, lengthscale = 1.5, lambda = 0.01,
                 progress = FALSE)
  expect_equal(unname(predict(fit, d, type = "response")),
               unname(predict(ref, cbind(u = d$u, o = ranks), type = "response")),
               tolerance = 1e-8)
  set.seed(12)
  cv <- rff_cv(y ~ u + o, data = d, D = 30, lengthscale = 1.5, folds = 4, progress = FALSE)
  set.seed(12)
  cv_ref <- rff_cv(cbind(u = d$u, o = ranks), d$y, D = 30, lengthscale = 1.5, folds = 4,
                   progress = FALSE)
  expect_equal(cv$cvm, cv_ref$cvm, tolerance = 1e-10)
  expect_equal(unname(predict(cv, d[1:5, ])), unname(predict(cv_ref, cbind(u = d$u, o = ranks)[1:5, ])),
               tolerance = 1e-10)
})

test_that("contrasts the user chose, offsets and the response are not ranked", {
  d <- ordered_data()
  poly_cols <- function(fit) names(fit$standardize$center)
  # C() in the formula, contrasts() on the factor, options(contrasts)
  f1 <- rff_ridge(y ~ u + C(o, contr.poly), data = d, D = 20, progress = FALSE)
  expect_null(f1$ordered)
  expect_equal(length(poly_cols(f1)), 4L)
  d2 <- d
  contrasts(d2$o) <- contr.treatment(4)
  set.seed(2)
  f2 <- rff_ridge(y ~ u + o, data = d2, D = 20, lengthscale = 1, progress = FALSE)
  expect_null(f2$ordered)
  X <- model.matrix(~ u + o, d2)[, -1]
  expect_equal(unname(f2$standardize$center), unname(colMeans(X)))
  # (model.frame() warns that newdata's contrasts are dropped, as for lm())
  expect_equal(unname(suppressWarnings(predict(f2, d2[1:4, ]))), unname(fitted(f2)[1:4]),
               tolerance = 1e-10)
  old <- options(contrasts = c("contr.treatment", "contr.treatment"))
  on.exit(options(old))
  f3 <- rff_ridge(y ~ u + o, data = d, D = 20, progress = FALSE)
  expect_null(f3$ordered)
  expect_equal(length(poly_cols(f3)), 4L)
  options(old)
  # an offset() of an ordered factor is model.offset()'s business (an
  # error), not ranked on the way in and raw on the way out
  expect_error(suppressWarnings(rff_ridge(y ~ u + offset(o), data = d, D = 20, progress = FALSE)),
               "numeric")
  # an ordered response of rff_glm() stays a multiclass response
  g <- rff_glm(o ~ u, data = d, D = 20, lengthscale = 1, lambda = 0.1, progress = FALSE)
  expect_equal(g$levels, levels(d$o))
  expect_null(g$ordered)
})
