# Randomized robustness: a few thousand calls mixing valid and invalid shapes
# and values through every exported entry point, run in a child process so
# that a crash is reported as a failure. Every call must either return a
# finite result of the right shape or raise an rff_error.
fuzz_code <- '
set.seed(20261129)
good_map <- rff_map(2, D = 6)
phase_map <- rff_map(2, D = 5, variant = "phase")
tamper <- function(m, field, value) { m[[field]] <- value; m }
pools <- list(
  x = list(matrix(rnorm(10), 5, 2), data.frame(a = 1:5, b = c(0.5, 1, 2, 0, 3)),
           matrix(rnorm(10), 5, 2), rnorm(4), matrix(1, 1, 2), NULL, "a", list(1, 2), factor(1:3), mean,
           matrix(c(1, NA), 1, 2), matrix(c(NaN, 1), 1, 2), matrix(c(Inf, 1), 1, 2),
           matrix(numeric(0), 0, 2), matrix(numeric(0), 2, 0), matrix(1i, 2, 2),
           matrix(NA, 2, 2), matrix(TRUE, 2, 2), array(1, c(2, 2, 2)),
           data.frame(a = "x"), matrix(1e300, 2, 2), -0),
  D = list(4, 10, 1, 2L, 0, -2, 3.5, NA, Inf, "10", 1e10, c(4, 6), NULL, TRUE),
  kernel = list("gaussian", "laplace", "matern", "polynomial", "rbf", NA, 1, c("a", "b"), NULL),
  lengthscale = list(1, c(1, 2), 0.01, 1e6, 0, -1, NA, Inf, "a", NULL, numeric(0), c(1, 2, 3),
                     1e-310, 1e-300),
  nu = list(0.5, 2.5, 0.05, 40, 1e6, 0, -1, NA, Inf, "1", NULL, 1e-20, 0.01, 3e9, 64.5),
  intercept = list(TRUE, FALSE, NA, "yes", c(TRUE, FALSE)),
  max_rows = list(2000, 2, 10, 1, 0, NA, "a", 1e9),
  sampler_fn = list(function(m, d) matrix(rnorm(m * d), d, m),
                    function(m, d) matrix(rt(m * d, df = 3), d, m),
                    function(m, d) matrix(Inf, d, m), function(m, d) "a",
                    function(m, d) matrix(1, m + 1, d), function() 1, 1, NULL),
  kappa_fn = list(function(delta) exp(-sum(delta^2) / 2), function(delta) NA, 1, NULL),
  name = list("mine", "other", NA, 1, c("a", "b"), NULL),
  variant = list("pair", "phase", "x", NA, NULL, 2),
  threads = list(NULL, 1, 2, 0, -1, NA, 1.5, "2", 1e6),
  map = list(NULL, good_map, phase_map, rff_map(1, D = 4), unclass(good_map), list(),
             tamper(good_map, "omega", matrix(1, 3, 3)), tamper(good_map, "D", 7L),
             tamper(good_map, "omega", "a"), tamper(good_map, "omega", NULL),
             tamper(phase_map, "phase", NULL), tamper(good_map, "variant", "phase"),
             tamper(good_map, "kernel", "nope"), tamper(good_map, "d", 5L), "map"),
  y = list(NULL, matrix(rnorm(6), 3, 2), 0, matrix(1, 1, 3), "y", matrix(NA_real_, 1, 2)),
  resp = list(rnorm(5), matrix(rnorm(10), 5, 2), 1:5, rnorm(4), NULL, "y", c(1, NA, 2, 3, 4),
              c(1, Inf, 2, 3, 4), matrix(1, 5, 0), factor(1:5), list(1)),
  lambda = list(NULL, 0.1, c(1e-3, 1e-1), 0, -1, NA, Inf, "a", numeric(0)),
  chunk_size = list(NULL, 2, 1000, 0, -1, NA, 1.5, "a"),
  reps = list(1, 3, 0, -1, NA, 2.5, "a", 1e9),
  keep = list(FALSE, TRUE, NA, "yes", c(TRUE, FALSE)),
  folds = list(2, 5, 1, 0, 6, NA, "a", 2.5),
  delta = list(1, c(0.5, 2), matrix(c(0.1, 0.2), 1, 2), NA, "a", NULL, matrix(numeric(0), 0, 1)),
  eps = list(0.1, c(0.01, 0.5), 0, -1, NA, "a", NULL),
  newdata = list(matrix(rnorm(4), 2, 2), matrix(rnorm(6), 3, 2), matrix(1, 2, 3), "a", NULL,
                 matrix(NA_real_, 1, 2), matrix(numeric(0), 0, 2))
)
# argument name = the pool its values come from
args_of <- function(...) {
  a <- c(...)
  nm <- if (is.null(names(a))) rep("", length(a)) else names(a)
  names(a) <- ifelse(nm == "", a, nm)
  a
}
fns <- list(
  rff_map = args_of("d", "D", "kernel", "lengthscale", "nu", "variant", "degree", "offset",
                    "sampler", "landmarks"),
  rff_features = args_of("x", "D", "kernel", "lengthscale", "nu", "variant", "map", "threads",
                         "degree", "offset", "sampler", "landmarks"),
  rff_kernel = args_of("x", "y", "kernel", "lengthscale", "nu", "map", "degree", "offset"),
  rff_ridge = args_of("x", y = "resp", "D", "kernel", "lengthscale", "nu", "variant",
                      "lambda", "map", "intercept", "chunk_size", "threads", "sampler",
                      "landmarks"),
  rff_stats = args_of("x", y = "resp", "map", "intercept", "chunk_size"),
  rff_cv = args_of("x", y = "resp", "folds", "lambda", "D", "kernel", "variant", "intercept"),
  rff_kernel_error = args_of("x", "y", "D", "kernel", "variant", "reps", "keep", "map",
                             "sampler"),
  rff_variance = args_of("delta", "D", "kernel", "variant"),
  rff_tail_bound = args_of("D", "eps", "variant"),
  rff_uniform_bound = args_of("D", "eps", "d", "diameter", "kernel", "lengthscale", "nu",
                              "variant"),
  rff_uniform_D = args_of("eps", "prob", "d", "diameter", "kernel", "variant"),
  predict = args_of(object = "fit", "newdata", "lambda"),
  rff_median_lengthscale = args_of("x", "max_rows"),
  rff_blas_info = args_of("threads"),
  rff_spectral = args_of(sample = "sampler_fn", kappa = "kappa_fn", "name"),
  c = args_of(a = "stats1", b = "stats"),
  user_map = args_of("d", "D", kernel = "spectral", "lengthscale", "variant"),
  rff_stats_apply = args_of("chunks", read = "reader", "map", "cluster", weights = "chunk_weights",
                            "retries", keep_chunks = "keep", "intercept", "chunk_size", "threads"),
  glm6 = args_of("x", y = "classes", "lambda", "D", "lengthscale", "cache_mb",
                 weights = "glm_weights", offset = "resp"),
  glm6b = args_of("x", y = "classes", "family", "kernel", "map", "intercept", "chunk_size",
                  "threads")
)
# rff_glm() with few features unless D is given (the default D is 1000)
glm6 <- function(..., D = 6) rff_glm(..., D = D)
glm6b <- function(..., map = NULL) if (is.null(map)) glm6(...) else rff_glm(..., map = map)
pools$classes <- list(factor(c("a", "b", "a", "b", "a")), c(0, 1, 0, 1, 1),
                      c(TRUE, FALSE, TRUE, TRUE, FALSE), factor(c("a", "b", "c", "a", "b")),
                      c(0, 3, 1, 0, 2), rep(1, 5), c(0, 1, NA, 1, 0), "y", NULL,
                      factor(letters[1:5]), rnorm(5), c(0, 1, 2.5, 1, 0), -(1:5))
pools$family <- list("binomial", "multinomial", "poisson", "gaussian", NA, 1, NULL,
                     c("binomial", "poisson"))
pools$cache_mb <- list(0, 1024, -1, NA, "a", Inf, NULL)
pools$glm_weights <- list(rep(1, 5), c(1, 2, 0.5, 1, 3), NULL, c(-1, 1, 1, 1, 1), rep(0, 5),
                          c(1, NA, 1, 1, 1), "w", 1)
# a map drawn from a user-defined spectral measure
user_map <- function(...) rff_map(...)
pools$fit <- list(rff_ridge(matrix(rnorm(20), 10, 2), rnorm(10), D = 6, progress = FALSE),
                  rff_ridge(matrix(rnorm(20), 10, 2), rnorm(10), D = 6, lambda = 0.1,
                            progress = FALSE))
pools$fit <- c(pools$fit, list(
  rff_cv(matrix(rnorm(40), 20, 2), rnorm(20), folds = 2, D = 6, progress = FALSE),
  rff_glm(matrix(rnorm(40), 20, 2), rep(0:1, 10), D = 6, lambda = c(0.1, 0.01), folds = 2,
          progress = FALSE),
  rff_glm(matrix(rnorm(40), 20, 2), rep(c("a", "b", "c", "d"), 5), D = 6, lambda = 0.1,
          progress = FALSE)))
pools$stats <- list(rff_stats(matrix(rnorm(20), 10, 2), rnorm(10), map = good_map),
                    rff_stats(matrix(rnorm(10), 5, 2), rnorm(5), map = good_map),
                    rff_stats(matrix(rnorm(10), 5, 2), rnorm(5), map = phase_map),
                    rff_stats(matrix(rnorm(10), 5, 2), rnorm(5), map = good_map, intercept = FALSE),
                    rff_stats(matrix(rnorm(10), 5, 2), matrix(rnorm(10), 5, 2), map = good_map),
                    NULL, good_map, 1)
pools$stats1 <- pools$stats[1:5]   # c() dispatches on its first argument
pools$spectral <- list(rff_spectral(function(m, d) matrix(rnorm(m * d), d, m),
                                    function(delta) exp(-sum(delta^2) / 2)),
                       rff_spectral(function(m, d) matrix(Inf, d, m), function(delta) 1),
                       "gaussian", list(sample = 1))
required <- c("d", "x", "delta", "eps", "object", "y", "sample", "kappa", "a", "diameter",
              "prob", "chunks", "read")
pools$degree <- list(2, 1, 3, 0, 31, 1.5, NA, "2", NULL)
pools$offset <- list(1, 0, 2.5, -1, NA, Inf, "a", NULL)
pools$sampler <- list("iid", "nystrom", "orthogonal", "qmc", "x", NA, NULL, 1)
pools$landmarks <- list(NULL, matrix(rnorm(6), 3, 2), matrix(rnorm(4), 2, 2), matrix(1, 2, 3),
                        "a", matrix(NA_real_, 2, 2), matrix(1e300, 2, 2))
pools$map <- c(pools$map, list(rff_map(2, D = 5, kernel = "polynomial"),
                               rff_map(2, landmarks = matrix(rnorm(8), 4, 2)),
                               tamper(rff_map(2, landmarks = matrix(rnorm(8), 4, 2)), "weights",
                                      matrix(1, 3, 3))))
pools$diameter <- list(1, 4, 0.5, 0, -1, NA, Inf, "a", NULL, c(1, 2))
pools$prob <- list(0.01, 0.5, 0.1, 0, 1, -1, NA, "a", NULL)
pools$d <- list(1, 2, 3L, 0, -1, 2.5, NA, "2", NULL, 1e10)
# rff_stats_apply(): chunks, readers of a chunk (5 rows of 2 columns when
# valid), row weights, retries and engines
pools$chunks <- list(1:2, list(a = "p", b = "q", c = "r"), 7L, list(), NULL, data.frame(a = 1),
                     mean, character(0))
pools$reader <- list(function(ch) list(x = matrix(rnorm(10), 5, 2), y = rnorm(5)),
                     function(ch) list(x = data.frame(a = rnorm(5), b = 1:5),
                                       y = matrix(rnorm(10), 5, 2), weights = rexp(5)),
                     function(ch, ...) list(x = matrix(rnorm(10), 5, 2), y = rnorm(5),
                                            weights = c(0, 1, 2, 0, 1)),
                     function(ch) list(x = matrix(rnorm(15), 5, 3), y = rnorm(5)),
                     function(ch) list(x = matrix(rnorm(10), 5, 2), y = rnorm(4)),
                     function(ch) list(x = matrix(rnorm(10), 5, 2), y = rnorm(5),
                                       weights = c(1, -1, 1, 1, 1)),
                     function(ch) list(x = matrix(rnorm(10), 5, 2), y = rnorm(5),
                                       weights = c(1, NA, 1, 1, 1)),
                     function(ch) list(x = matrix(rnorm(10), 5, 2), y = rnorm(5), weights = 1:2),
                     function(ch) list(x = matrix(rnorm(10), 5, 2), y = rnorm(5), weights = "1"),
                     function(ch) list(x = matrix(rnorm(10), 5, 2), y = rnorm(5), offset = 1),
                     function(ch) list(x = matrix(NA_real_, 5, 2), y = rnorm(5)),
                     function(ch) list(x = matrix(rnorm(10), 5, 2), y = rnorm(5),
                                       weights = rep(0, 5)),
                     function(ch) stop("cannot read ", ch[[1]]), function(ch) 42,
                     function(ch) NULL, function() 1, "readRDS", NULL, 1)
pools$chunk_weights <- list(NULL, function(chunk, data) rep(2, NROW(data$x)),
                            function(chunk, data, ...) runif(NROW(data$x)),
                            function(chunk, data) -1, function(chunk, data) NA,
                            function(chunk, data) rep(Inf, NROW(data$x)),
                            function(chunk, data) stop("no weights"), function(chunk) 1,
                            list(rep(1, 5), rep(1, 5)), list(rep(1, 5), c(1, -1, 1, 1, 1)),
                            list(1, 2), list(NA, NA), list("a", "b"), list(), 1:2, "w",
                            data.frame(w = 1:2))
pools$retries <- list(0, 1, -1, NA, 1.5, "a", 1e6, NULL)
pools$cluster <- list(NULL, "mpi", 2, list(), NA, "future ")
# how many leading entries of each pool are valid values; they are drawn
# half of the time so that valid calls are frequent too
nvalid <- c(x = 3, D = 4, kernel = 4, degree = 3, offset = 3, sampler = 4, landmarks = 3, lengthscale = 4, nu = 5, variant = 2,
            intercept = 2, max_rows = 3, sampler_fn = 2, kappa_fn = 1, name = 2,
            stats = 2, stats1 = 5, spectral = 1,
            threads = 3, map = 3, y = 3, d = 3, resp = 3, lambda = 4, chunk_size = 3,
            reps = 2, keep = 2, folds = 2, delta = 3, eps = 2, newdata = 2, fit = 2,
            diameter = 3, prob = 3, chunks = 3, reader = 3, chunk_weights = 3, retries = 2,
            cluster = 1, classes = 5, family = 3, cache_mb = 2, glm_weights = 3)
# predict() gives NA for rows of newdata with missing values (na.pass)
finite_result <- function(fn, res, args) {
  switch(fn,
    rff_map = inherits(res, "rff_map") && all(is.finite(res$omega)),
    rff_ridge = inherits(res, "rff_ridge") && all(is.finite(res$coefficients)),
    rff_stats = inherits(res, "rff_stats") && all(is.finite(res$ZtZ)),
    rff_cv = inherits(res, "rff_cv") && all(is.finite(res$fit$coefficients)),
    predict = is.numeric(res) && all(is.finite(res) | (is.na(res) & anyNA(args$newdata))),
    rff_kernel_error = is.data.frame(res) && all(is.finite(res$max_abs)),
    rff_variance = is.double(res) && all(is.finite(res) & res >= 0),
    rff_tail_bound = is.double(res) && all(is.finite(res) & res >= 0),
    rff_uniform_bound = is.double(res) && all(is.finite(res) & res >= 0),
    rff_uniform_D = is.double(res) && all(is.finite(res) & res >= 1),
    rff_median_lengthscale = is.double(res) && all(is.finite(res) & res > 0),
    rff_spectral = inherits(res, "rff_spectral"),
    rff_blas_info = inherits(res, "rff_blas_info") && res$threads >= 1L,
    c = inherits(res, "rff_stats") && all(is.finite(res$ZtZ)),
    user_map = inherits(res, "rff_map") && all(is.finite(res$omega)),
    rff_stats_apply = inherits(res, "rff_stats") && all(is.finite(res$ZtZ)) && res$wsum > 0,
    glm6 = , glm6b = inherits(res, "rff_glm") && all(is.finite(res$coefficients)) &&
      all(is.finite(res$deviance)),
    is.numeric(res) && all(is.finite(res)))
}
counts <- c(ok = 0, rff_error = 0, other = 0)
for (i in seq_len(2500)) {
  fn <- names(fns)[sample.int(length(fns), 1)]
  args <- list()
  for (a in names(fns[[fn]])) {
    pname <- fns[[fn]][[a]]
    # required arguments are left out now and then too
    # (but not the first argument of predict or c, which chooses the method)
    keep_arg <- if (a %in% c("object", "a")) TRUE else if (a %in% required) runif(1) < 0.95 else runif(1) < 0.5
    if (keep_arg) {
      pool <- pools[[pname]]
      k <- if (runif(1) < 0.5) sample.int(nvalid[[pname]], 1) else sample.int(length(pool), 1)
      args[a] <- list(pool[[k]])
    }
  }
  if (fn %in% c("rff_ridge", "rff_cv", "rff_stats_apply", "glm6", "glm6b")) args$progress <- FALSE
  res <- tryCatch(do.call(fn, args), rff_error = function(e) e, error = function(e) e)
  if (inherits(res, "rff_error")) {
    counts["rff_error"] <- counts["rff_error"] + 1
  } else if (inherits(res, "error")) {
    counts["other"] <- counts["other"] + 1
    cat("OTHER ERROR in", fn, ":", conditionMessage(res), "\\n")
    str(args)
  } else {
    if (finite_result(fn, res, args)) counts["ok"] <- counts["ok"] + 1 else {
      counts["other"] <- counts["other"] + 1
      cat("BAD RESULT from", fn, "\\n"); str(args)
    }
  }
}
cat(sprintf("robustness: %d ok, %d rff_error, %d other\\n", counts["ok"],
            counts["rff_error"], counts["other"]))
'

test_that("hundreds of random valid and invalid calls never crash or misbehave", {
  res <- run_child(fuzz_code)
  expect_equal(res$status, 0L, label = paste(tail(res$output, 20), collapse = "\n"))
  line <- grep("^robustness:", res$output, value = TRUE)
  expect_length(line, 1L)
  n <- as.integer(regmatches(line, gregexpr("[0-9]+", line))[[1]])
  expect_gt(n[1], 150)  # valid calls were made and succeeded
  expect_gt(n[2], 600)  # invalid calls raised rff_error
  expect_equal(n[3], 0L, label = paste(res$output, collapse = "\n"))
})
