# deviance(), logLik(), AIC(), BIC(), vcov() and anova() of fits
# (R/fit-stats.R), the plot of a ridge fit's criterion and the measure's
# label of a GLM chosen by misclassification.

test_that("deviance and logLik of a ridge fit are lm's formulas at lambda_best", {
  set.seed(11)
  fit <- rff_ridge(mpg ~ wt + hp, data = mtcars, D = 30)
  r <- residuals(fit)
  n <- nrow(mtcars)
  expect_equal(deviance(fit), sum(r^2))
  ll <- logLik(fit)
  expect_s3_class(ll, "logLik")
  expect_equal(as.numeric(ll), -n / 2 * (log(2 * pi) + 1 + log(sum(r^2) / n)))
  expect_equal(attr(ll, "df"), fit$df[fit$best] + 1)
  expect_equal(attr(ll, "nobs"), n)
  expect_equal(AIC(fit), -2 * as.numeric(ll) + 2 * (fit$df[fit$best] + 1))
  expect_equal(BIC(fit), -2 * as.numeric(ll) + log(n) * (fit$df[fit$best] + 1))
  # the effective df counts the intercept: tr(H) of the features' ridge
  Z <- rff_features(scale(cbind(mtcars$wt, mtcars$hp)), map = fit$map)
  Zc <- scale(Z, scale = FALSE)
  H <- Zc %*% solve(crossprod(Zc) + n * fit$lambda_best * diag(ncol(Z)), t(Zc))
  expect_equal(fit$df[fit$best], sum(diag(H)) + 1, tolerance = 1e-6)
})

test_that("weighted logLik is logLik.lm's, with zero weights left out", {
  set.seed(12)
  w <- c(0, runif(31, 0.5, 2))
  fit <- rff_ridge(mpg ~ wt + hp, data = mtcars, weights = w, D = 30, lambda = 0.01)
  r <- residuals(fit)[w > 0]
  ww <- w[w > 0]
  N <- length(r)
  expect_equal(as.numeric(logLik(fit)),
               0.5 * (sum(log(ww)) - N * (log(2 * pi) + 1 - log(N) + log(sum(ww * r^2)))))
  expect_equal(attr(logLik(fit), "nobs"), N)
  # an lm() with the same residuals has the same likelihood (the formula check)
  l <- lm(mpg ~ wt + hp, data = mtcars, weights = w)
  expect_equal(as.numeric(logLik(l)),
               0.5 * (sum(log(ww)) - N * (log(2 * pi) + 1 - log(N) +
                                            log(sum(ww * residuals(l)[w > 0]^2)))))
})

test_that("vcov of a ridge fit gives predict()'s standard errors", {
  skip_if_not_installed("MASS")
  set.seed(13)
  x <- as.matrix(MASS::Boston[1:150, c("lstat", "rm", "crim")])
  y <- MASS::Boston$medv[1:150]
  fit <- rff_ridge(x, y, D = 40, standardize = FALSE, lengthscale = 5)
  V <- vcov(fit)
  expect_identical(dim(V), c(41L, 41L))
  expect_identical(rownames(V), names(coef(fit)))
  expect_equal(V, t(V))
  nx <- x[1:7, ]
  C <- cbind(1, rff_features(nx, map = fit$map))
  se <- predict(fit, nx, se.fit = TRUE)$se.fit
  expect_equal(unname(sqrt(rowSums((C %*% V) * C))), unname(se), tolerance = 1e-8)
  # without intercept: sigma^2 (Z'Z + n lambda I)^-1 directly
  f0 <- rff_ridge(x, y, D = 20, standardize = FALSE, lengthscale = 5, intercept = FALSE,
                  lambda = 0.05)
  Z <- rff_features(x, map = f0$map)
  s2 <- sum((y - Z %*% coef(f0))^2) / (150 - f0$df)
  expect_equal(unname(vcov(f0)), s2 * solve(crossprod(Z) + 150 * 0.05 * diag(20)),
               tolerance = 1e-8)
})

test_that("GLM and CV fits: deviance at lambda_best, logLik, AIC through it", {
  set.seed(14)
  d <- droplevels(iris[51:150, ])
  g <- rff_glm(Species ~ ., data = d, D = 30, nlambda = 5, folds = 3)
  expect_length(deviance(g), 1L)
  eta <- predict(g, type = "link")
  yy <- as.integer(d$Species == "virginica")
  expect_equal(deviance(g), -2 * sum(yy * eta - log1p(exp(eta))))
  expect_equal(AIC(g), deviance(g) + 2 * attr(logLik(g), "df"))
  cv <- rff_cv(mpg ~ wt + hp, data = mtcars, folds = 4, D = 30, nlambda = 10,
               lengthscale = 2)
  expect_equal(deviance(cv), deviance(cv$fit))
  expect_equal(logLik(cv), logLik(cv$fit))
  expect_equal(vcov(cv), vcov(cv$fit))
})

test_that("anova and bad arguments are rff_errors naming the argument", {
  set.seed(15)
  fit <- rff_ridge(mpg ~ wt + hp, data = mtcars, D = 20)
  expect_rff_error(anova(fit), "object", "AIC()")
  expect_rff_error(anova(fit, fit), "object", "nested")
  cv <- rff_cv(mpg ~ wt, data = mtcars, folds = 3, D = 20, nlambda = 5, lengthscale = 1)
  expect_rff_error(anova(cv), "object", "AIC()")
  expect_rff_error(deviance(fit, lambda = 1), "...", "`lambda`")
  expect_rff_error(logLik(fit, 2), "...")
  expect_rff_error(vcov(fit, foo = 1), "...", "`foo`")
  two <- rff_ridge(as.matrix(mtcars[, c("wt", "hp")]), as.matrix(mtcars[, c("mpg", "qsec")]),
                   D = 20)
  expect_length(deviance(two), 2L)
  expect_rff_error(logLik(two), "object", "2 responses")
  expect_rff_error(vcov(two), "object", "one response")
  st <- rff_stats(as.matrix(mtcars[, c("wt", "hp")]), mtcars$mpg, map = fit$map)
  sf <- rff_ridge(st)
  expect_equal(as.numeric(logLik(sf)),
               -16 * (log(2 * pi) + 1 + log(sf$rss[sf$best] / 32)))
})

test_that("plot of a ridge fit draws the criterion that chose lambda", {
  skip_if_not_installed("MASS")
  set.seed(16)
  loo <- rff_ridge(medv ~ lstat + rm, data = MASS::Boston[1:120, ], D = 30)
  expect_identical(loo$criterion, "LOO")
  cc <- rff:::ridge_criterion_curve(loo)
  expect_identical(cc$label, "leave-one-out MSE")
  expect_identical(which.min(cc$value), loo$best)
  gcv <- rff_ridge(medv ~ lstat + rm, data = MASS::Boston[1:120, ], D = 30, criterion = "gcv")
  cg <- rff:::ridge_criterion_curve(gcv)
  expect_identical(cg$label, "GCV")
  expect_identical(which.min(cg$value), gcv$best)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(loo))
})

test_that("a GLM chosen by misclassification says so in print, summary and plot", {
  set.seed(17)
  d <- droplevels(iris[51:150, ])
  cv <- rff_cv(Species ~ ., data = d, family = "binomial", type.measure = "class",
               folds = 3, D = 30, nlambda = 6, lengthscale = 2)
  out <- capture.output(summary(cv))
  expect_true(any(grepl("CV misclassification rate", out, fixed = TRUE)))
  expect_false(any(grepl("deviance per row", out, fixed = TRUE)))
  expect_true(any(grepl("CV misclassification rate", capture.output(print(cv$fit)),
                        fixed = TRUE)))
  g <- rff_glm(Species ~ ., data = d, D = 30, nlambda = 4, folds = 3, lengthscale = 2)
  expect_true(any(grepl("CV deviance per row", capture.output(print(g)), fixed = TRUE)))
})
