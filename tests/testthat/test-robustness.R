# Randomized robustness: a few hundred calls mixing valid and invalid shapes
# and values through every exported entry point, run in a child process so
# that a crash is reported as a failure. Every call must either return a
# finite result of the right shape or raise an rff_error.
fuzz_code <- '
set.seed(20261129)
good_map <- rff_map(2, D = 6)
phase_map <- rff_map(2, D = 5, variant = "phase")
tamper <- function(m, field, value) { m[[field]] <- value; m }
pools <- list(
  x = list(matrix(rnorm(10), 5, 2), rnorm(4), data.frame(a = 1:3, b = c(0.5, 1, 2)),
           matrix(1, 1, 2), NULL, "a", list(1, 2), factor(1:3), mean,
           matrix(c(1, NA), 1, 2), matrix(c(NaN, 1), 1, 2), matrix(c(Inf, 1), 1, 2),
           matrix(numeric(0), 0, 2), matrix(numeric(0), 2, 0), matrix(1i, 2, 2),
           matrix(NA, 2, 2), matrix(TRUE, 2, 2), array(1, c(2, 2, 2)),
           data.frame(a = "x"), matrix(1e300, 2, 2), -0),
  D = list(4, 10, 1, 2L, 0, -2, 3.5, NA, Inf, "10", 1e10, c(4, 6), NULL, TRUE),
  kernel = list("gaussian", "laplace", "matern", "rbf", NA, 1, c("a", "b"), NULL),
  lengthscale = list(1, c(1, 2), 0.01, 1e6, 0, -1, NA, Inf, "a", NULL, numeric(0), c(1, 2, 3)),
  nu = list(0.5, 2.5, 0.01, 40, 0, -1, NA, Inf, "1", NULL),
  variant = list("pair", "phase", "x", NA, NULL, 2),
  threads = list(NULL, 1, 2, 0, -1, NA, 1.5, "2", 1e6),
  map = list(NULL, good_map, phase_map, rff_map(1, D = 4), unclass(good_map), list(),
             tamper(good_map, "omega", matrix(1, 3, 3)), tamper(good_map, "D", 7L),
             tamper(good_map, "omega", "a"), tamper(good_map, "omega", NULL),
             tamper(phase_map, "phase", NULL), tamper(good_map, "variant", "phase"),
             tamper(good_map, "kernel", "nope"), tamper(good_map, "d", 5L), "map"),
  y = list(NULL, matrix(rnorm(6), 3, 2), 0, matrix(1, 1, 3), "y", matrix(NA_real_, 1, 2))
)
fns <- list(
  rff_map = c("d", "D", "kernel", "lengthscale", "nu", "variant"),
  rff_features = c("x", "D", "kernel", "lengthscale", "nu", "variant", "map", "threads"),
  rff_kernel = c("x", "y", "kernel", "lengthscale", "nu", "map")
)
pools$d <- list(1, 2, 3L, 0, -1, 2.5, NA, "2", NULL, 1e10)
# how many leading entries of each pool are valid values; they are drawn
# half of the time so that valid calls are frequent too
nvalid <- c(x = 4, D = 4, kernel = 3, lengthscale = 4, nu = 4, variant = 2,
            threads = 3, map = 4, y = 3, d = 3)
counts <- c(ok = 0, rff_error = 0, other = 0)
for (i in seq_len(600)) {
  fn <- names(fns)[sample.int(length(fns), 1)]
  args <- list()
  for (a in fns[[fn]]) {
    required <- a %in% c("d", "x")
    if (required || runif(1) < 0.5) {
      pool <- pools[[a]]
      k <- if (runif(1) < 0.5) sample.int(nvalid[[a]], 1) else sample.int(length(pool), 1)
      args[a] <- list(pool[[k]])
    }
  }
  res <- tryCatch(do.call(fn, args), rff_error = function(e) e, error = function(e) e)
  if (inherits(res, "rff_error")) {
    counts["rff_error"] <- counts["rff_error"] + 1
  } else if (inherits(res, "error")) {
    counts["other"] <- counts["other"] + 1
    cat("OTHER ERROR in", fn, ":", conditionMessage(res), "\\n")
    str(args)
  } else {
    ok <- if (fn == "rff_map") inherits(res, "rff_map") && all(is.finite(res$omega)) else
      is.matrix(res) && is.double(res) && all(is.finite(res))
    if (ok) counts["ok"] <- counts["ok"] + 1 else {
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
  expect_gt(n[1], 30)   # valid calls were made and succeeded
  expect_gt(n[2], 300)  # invalid calls raised rff_error
  expect_equal(n[3], 0L, label = paste(res$output, collapse = "\n"))
})
