# Helpers of the rff_stats_apply() tests (test-stats-apply.R and
# test-stats-apply-weights.R): chunk files, a CSV reader, a local PSOCK
# cluster and the comparisons with the one-process fit.

# Writes `k` chunks of a regression problem as RDS (and CSV) files; returns
# the files and all rows in chunk order.
write_chunks <- function(k = 4, n_each = c(60, 90, 75, 45), d = 3, seed = 11) {
  set.seed(seed)
  dir <- tempfile("rff-chunks-")
  dir.create(dir)
  n_each <- rep_len(n_each, k)
  xs <- ys <- list()
  rds <- csv <- character(k)
  for (j in seq_len(k)) {
    x <- matrix(rnorm(n_each[j] * d), n_each[j], d)
    y <- 20 + sin(2 * x[, 1]) + x[, 2] * x[, 3] + rnorm(n_each[j], sd = 0.1)
    rds[j] <- file.path(dir, sprintf("part-%d.rds", j))
    csv[j] <- file.path(dir, sprintf("part-%d.csv", j))
    saveRDS(list(x = x, y = y), rds[j])
    utils::write.csv(data.frame(y = y, x), csv[j], row.names = FALSE)
    xs[[j]] <- x
    ys[[j]] <- y
  }
  list(dir = dir, rds = rds, csv = csv, x = do.call(rbind, xs), y = unlist(ys),
       rows = split(seq_along(unlist(ys)), rep(seq_len(k), n_each)))
}

# A CSV reader for the workers: self-contained, with an argument given
# through rff_stats_apply()'s `...`.
read_csv_chunk <- function(file, response) {
  df <- utils::read.csv(file)
  list(x = as.matrix(df[setdiff(names(df), response)]), y = df[[response]])
}

# A PSOCK cluster on this host whose workers load rff from the library
# this session loaded it from (the caller stops it).
local_cluster <- function(workers = 2) {
  cl <- parallel::makeCluster(workers)
  libs <- c(normalizePath(dirname(find.package("rff"))), .libPaths())
  parallel::clusterCall(cl, function(p) invisible(.libPaths(p)), libs)
  cl
}

expect_same_stats <- function(s, ref, tol = 1e-10) {
  expect_equal(s$n, ref$n)
  for (f in c("ZtZ", "Zty", "zsum")) {
    expect_equal(s[[f]], ref[[f]], tolerance = tol, label = f)
  }
  # the responses' sums around one shift
  expect_equal(shift_stats(s, ref$yshift)$yty, ref$yty, tolerance = tol)
}

# (a fit from statistics picks its lambda by GCV, one from data by
# leave-one-out unless told otherwise)
expect_same_fit <- function(s, x, y, map, lambda = c(1e-5, 1e-3), tol = 1e-10,
                            weights = NULL) {
  direct <- rff_ridge(standardize = FALSE, x, y, lambda = lambda, map = map, weights = weights,
                      criterion = "gcv", progress = FALSE)
  fit <- rff_ridge(s, lambda = lambda)
  expect_equal(fit$coefficients, direct$coefficients, tolerance = tol)
  expect_equal(fit$intercept, direct$intercept, tolerance = tol)
  expect_equal(fit$gcv, direct$gcv, tolerance = tol)
  expect_equal(fit$lambda_best, direct$lambda_best)
  expect_equal(predict(fit, x[1:4, ]), predict(direct, x[1:4, ]), tolerance = tol)
}
