# Data frames as analysts bring them (R/model-columns.R): factors with one
# level in the rows fitted, levels of new data that training did not have,
# character, logical, date and date-time columns. Each fit or prediction is
# compared with the matrix method on the model matrix built by hand.

table_data <- function(n = 120, seed = 3) {
  set.seed(seed)
  d <- data.frame(x = rnorm(n), g = factor(sample(c("a", "b", "c"), n, TRUE)),
                  one = factor(rep("k", n), levels = c("k", "never")),
                  ch = sample(c("p", "q"), n, TRUE), stringsAsFactors = FALSE)
  d$y <- sin(2 * d$x) + (d$g == "b") - 0.5 * (d$ch == "q") + rnorm(n, sd = 0.1)
  d
}

# The prediction of a matrix fit at rows `X` (in the fit's input columns).
matrix_predict <- function(fit, X) unname(predict(fit, X))

test_that("a factor with one level in the rows fitted is dropped with a classed message", {
  d <- table_data()
  set.seed(5)
  expect_message(fit <- rff_ridge(y ~ x + g + one + ch, data = d, D = 40, lengthscale = 1,
                                  progress = FALSE),
                 class = "rff_dropped_terms")
  set.seed(5)
  ref <- rff_ridge(y ~ x + g + ch, data = d, D = 40, lengthscale = 1, progress = FALSE)
  expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-12)
  expect_equal(names(fit$standardize$center), names(ref$standardize$center))
  m <- tryCatch(rff_ridge(y ~ x + one:x + g, data = d, D = 10, lengthscale = 1, progress = FALSE),
                rff_dropped_terms = function(m) m)
  expect_identical(m$factors, "one")
  expect_identical(m$terms, "x:one")
  expect_match(conditionMessage(m), "`one` (only \"k\")", fixed = TRUE)
  # predict() takes the column with any value, or without it
  nd <- d[1:4, ]
  nd$one <- c("k", "zz", NA, "never")
  expect_equal(predict(fit, nd), predict(ref, d[1:4, ]), tolerance = 1e-12)
  expect_equal(unname(predict(fit, d[1:4, c("x", "g", "ch")])), unname(predict(ref, d[1:4, ])),
               tolerance = 1e-12)
  # a constant character column, and the GLM and the cross-validation
  d$cst <- "same"
  d$cls <- factor(ifelse(d$y > 0.3, "hi", "lo"))
  set.seed(6)
  expect_message(gfit <- rff_glm(cls ~ x + cst + g, data = d, D = 30, lengthscale = 1,
                                 lambda = 1e-3, progress = FALSE), class = "rff_dropped_terms")
  set.seed(6)
  gref <- rff_glm(cls ~ x + g, data = d, D = 30, lengthscale = 1, lambda = 1e-3, progress = FALSE)
  expect_equal(predict(gfit, d[1:5, ]), predict(gref, d[1:5, ]), tolerance = 1e-10)
  set.seed(7)
  expect_message(cv <- rff_cv(y ~ x + one, data = d, D = 20, lengthscale = 1, folds = 3,
                              nlambda = 5, progress = FALSE), class = "rff_dropped_terms")
  set.seed(7)
  cref <- rff_cv(y ~ x, data = d, D = 20, lengthscale = 1, folds = 3, nlambda = 5, progress = FALSE)
  expect_equal(predict(cv, d[1:3, ]), predict(cref, d[1:3, ]), tolerance = 1e-12)
  # a name that needs backticks
  d2 <- data.frame(y = d$y, `my x` = d$x, `one level` = "k", check.names = FALSE)
  expect_message(f2 <- rff_ridge(y ~ ., data = d2, D = 10, lengthscale = 1, progress = FALSE),
                 "one level", class = "rff_dropped_terms")
  expect_identical(names(f2$standardize$center), "`my x`")
  expect_length(predict(f2, d2[1:3, ]), 3L)
  # nothing left to fit
  expect_rff_error(suppressMessages(rff_ridge(y ~ one + cst, data = d, D = 10, progress = FALSE)),
                   "formula", "`formula` has no predictor left")
})

test_that("a level unseen in training is coded as none of the known levels, equidistant from all", {
  d <- table_data()
  set.seed(11)
  fit <- rff_ridge(y ~ x + g, data = d, D = 50, lengthscale = 1, standardize = FALSE,
                   progress = FALSE)
  X <- cbind(x = d$x, gb = as.numeric(d$g == "b"), gc = as.numeric(d$g == "c"))
  set.seed(11)
  ref <- rff_ridge(X, d$y, D = 50, lengthscale = 1, standardize = FALSE, progress = FALSE)
  expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-12)
  nd <- data.frame(x = c(0.1, -0.4, 0.7), g = c("a", "new", "other"))
  w <- tryCatch(predict(fit, nd), rff_new_levels = function(w) w)
  expect_s3_class(w, "warning")
  expect_identical(w$levels, list(g = c("new", "other")))
  expect_identical(w$rows, 2L)
  expect_match(conditionMessage(w), "`g` has 2 levels not seen in training (\"new\", \"other\", in 2 rows)",
               fixed = TRUE)
  p <- suppressWarnings(predict(fit, nd))
  # with treatment contrasts the point equidistant from the levels (0, 0),
  # (1, 0), (0, 1) is (1/2, 1/2)
  Xn <- cbind(x = nd$x, gb = c(0, 0.5, 0.5), gc = c(0, 0.5, 0.5))
  expect_equal(unname(p), matrix_predict(ref, Xn), tolerance = 1e-12)
  # NA for those rows, or a refusal
  pn <- suppressWarnings(predict(fit, nd, new_levels = "na"))
  expect_equal(is.na(unname(pn)), c(FALSE, TRUE, TRUE))
  expect_equal(unname(pn[1]), unname(p[1]), tolerance = 1e-12)
  expect_warning(predict(fit, nd, new_levels = "na"), class = "rff_new_levels")
  expect_rff_error(predict(fit, nd, new_levels = "error"), "newdata",
                   "`g` has 2 levels not seen in training")
  old <- options(rff.new_levels = "error")
  on.exit(options(old))
  expect_rff_error(predict(fit, nd), "newdata", "not seen in training")
  options(old)
  expect_rff_error(predict(fit, nd, new_levels = "drop"), "new_levels")
  # rows without a new level are not touched, and no warning without one
  expect_warning(p1 <- predict(fit, nd[1, ]), NA)
  expect_equal(unname(p1), unname(p[1]), tolerance = 1e-12)
})

test_that("the unseen level is equidistant from every level under any contrasts", {
  lv <- c("a", "b", "c", "d")
  for (spec in list("contr.treatment", "contr.sum", "contr.helmert", stats::contr.SAS,
                    matrix(c(1, 2, 0, 5, 0, 1, 3, 1, 2, 2, 0, 1), 4, 3))) {
    C <- rff:::unseen_contrasts(spec, lv)
    expect_equal(dim(C), c(5L, 3L))
    dist2 <- rowSums((C[1:4, ] - rep(C[5, ], each = 4))^2)
    expect_equal(dist2, rep(dist2[1], 4), tolerance = 1e-10, ignore_attr = TRUE)
  }
  expect_equal(unname(rff:::unseen_contrasts("contr.treatment", c("u", "v"))[3, ]), 0.5)
})

test_that("unseen levels in interactions and in indicator coding, for the GLM and cv fits", {
  d <- table_data()
  # without an intercept the first factor has an indicator per level: the
  # unseen level has all of them zero
  set.seed(12)
  fit <- rff_ridge(y ~ g + x + g:x - 1, data = d, D = 40, lengthscale = 1, standardize = FALSE,
                   progress = FALSE)
  X <- model.matrix(~ g + x + g:x - 1, d)
  set.seed(12)
  # (`- 1` also leaves the ridge model without its intercept)
  ref <- rff_ridge(X, d$y, D = 40, lengthscale = 1, standardize = FALSE, intercept = FALSE,
                   progress = FALSE)
  expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-12)
  expect_identical(colnames(X), c("ga", "gb", "gc", "x", "gb:x", "gc:x"))
  nd <- data.frame(g = c("zz", "b"), x = c(0.3, -1))
  p <- suppressWarnings(predict(fit, nd))
  # the interaction is coded by contrasts (g has its main effect): 1/2 x each
  Xn <- rbind(c(0, 0, 0, 0.3, 0.15, 0.15), c(0, 1, 0, -1, -1, 0))
  expect_equal(unname(p), matrix_predict(ref, Xn), tolerance = 1e-12)
  # GLM: probabilities of a new level are proper and NA under "na"
  d$cls <- factor(sample(c("u", "v", "w"), nrow(d), TRUE))
  g <- rff_glm(cls ~ x + ch + g, data = d, D = 30, lengthscale = 1, lambda = 1e-2, progress = FALSE)
  nd <- data.frame(x = c(0, 1), ch = c("unknown", "p"), g = c("a", "b"))
  expect_warning(pr <- predict(g, nd, type = "response"), class = "rff_new_levels")
  expect_equal(unname(rowSums(pr)), c(1, 1), tolerance = 1e-12)
  expect_true(all(is.na(suppressWarnings(predict(g, nd, type = "class", new_levels = "na"))[1])))
  cv <- rff_cv(y ~ x + g, data = d, D = 20, lengthscale = 1, folds = 3, nlambda = 5,
               progress = FALSE)
  expect_rff_error(predict(cv, data.frame(x = 0, g = "q"), new_levels = "error"), "newdata",
                   "not seen in training")
  expect_warning(predict(cv, data.frame(x = 0, g = "q")), class = "rff_new_levels")
})

test_that("a level with no training rows, and a factor of many levels", {
  d <- table_data()
  d$g <- factor(d$g, levels = c("a", "b", "c", "empty"))
  fit <- rff_ridge(y ~ x + g, data = d, D = 30, lengthscale = 1, progress = FALSE)
  expect_identical(fit$xlevels$g, c("a", "b", "c"))
  expect_warning(predict(fit, data.frame(x = 0, g = factor("empty", levels = levels(d$g)))),
                 "\"empty\"", fixed = TRUE)
  set.seed(2)
  n <- 1500
  big <- data.frame(x = rnorm(n), code = factor(sprintf("c%03d", sample(300, n, TRUE))))
  big$y <- big$x + as.integer(big$code) / 300 + rnorm(n, sd = 0.1)
  f <- rff_ridge(y ~ ., data = big, D = 60, lengthscale = 3, progress = FALSE)
  expect_equal(length(f$standardize$center), 1L + nlevels(droplevels(big$code)) - 1L)
  expect_equal(unname(predict(f, big[1:5, ])), unname(fitted(f)[1:5]), tolerance = 1e-10)
})

test_that("logical columns are 0/1 dummies, Date and POSIXct numbers; lists and complex are refused", {
  d <- table_data()
  d$flag <- d$x > 0
  d$day <- as.Date("2021-03-01") + seq_len(nrow(d))
  d$when <- as.POSIXct("2021-03-01 10:00:00", tz = "UTC") + 3600 * seq_len(nrow(d))
  set.seed(21)
  expect_message(fit <- rff_ridge(y ~ x + flag + day + when, data = d, D = 30, lengthscale = 2,
                                  progress = FALSE),
                 class = "rff_time_columns")
  num <- data.frame(y = d$y, x = d$x, flag = d$flag, day = as.numeric(d$day),
                    when = as.numeric(d$when))
  set.seed(21)
  ref <- rff_ridge(y ~ x + flag + day + when, data = num, D = 30, lengthscale = 2, progress = FALSE)
  expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-12)
  expect_identical(fit$coerced, c(day = "Date", when = "POSIXt"))
  # the logical is the 0/1 dummy flagTRUE, left unscaled as a dummy is
  expect_identical(names(fit$standardize$center), c("x", "flagTRUE", "day", "when"))
  expect_equal(unname(fit$standardize$scale[c("flagTRUE", "day")]), c(1, sd(as.numeric(d$day))))
  expect_equal(predict(fit, d[1:5, ]), predict(ref, num[1:5, ]), tolerance = 1e-12)
  # new data in other spellings of the same types; a constant logical
  nd <- d[1:3, ]
  nd$day <- as.character(nd$day)
  nd$flag <- TRUE
  expect_equal(unname(predict(fit, nd)), unname(predict(ref, transform(num[1:3, ], flag = TRUE))),
               tolerance = 1e-12)
  nd$day <- c("2021-03-02", "March", "2021-03-04")
  expect_rff_error(predict(fit, nd), "newdata", "`day` of `newdata` must be a Date")
  expect_message(f1 <- rff_ridge(y ~ x + ok, data = transform(d, ok = TRUE), D = 10,
                                 lengthscale = 1, progress = FALSE), "constant")
  expect_length(predict(f1, transform(d[1:2, ], ok = FALSE)), 2L)
  # integer codes are numbers
  d$int <- sample(1:5, nrow(d), TRUE)
  f <- rff_ridge(y ~ x + int, data = d, D = 10, lengthscale = 2, progress = FALSE)
  expect_identical(names(f$standardize$center), c("x", "int"))
  # refused, naming the column
  d$z <- complex(real = d$x, imaginary = 1)
  expect_rff_error(rff_ridge(y ~ x + z, data = d, D = 10, progress = FALSE), "data", "`z`")
  d$z <- I(as.list(d$x))
  expect_rff_error(rff_ridge(y ~ x + z, data = d, D = 10, progress = FALSE), "data", "'z'")
  d$z <- matrix(as.character(1:(2 * nrow(d))), nrow(d), 2)
  expect_rff_error(rff_glm(factor(y > 0) ~ x + z, data = d, D = 10, progress = FALSE), "data",
                   "`z` is a character matrix")
  expect_rff_error(rff_ridge(y ~ x + nothere, data = d, D = 10, progress = FALSE), "data",
                   "'nothere'")
})
