# rff_stats_apply() with row weights, under future, and further faults:
# against the one-process fit on all rows (helpers in helper-stats-apply.R).

# Weighted chunks: `weights` of every row (in chunk order), and RDS files
# whose read() returns them beside x and y.
write_weighted_chunks <- function(dat, w) {
  files <- file.path(dat$dir, sprintf("weighted-%d.rds", seq_along(dat$rows)))
  for (j in seq_along(files)) {
    i <- dat$rows[[j]]
    saveRDS(list(x = dat$x[i, ], y = dat$y[i], weights = w[i]), files[j])
  }
  files
}

test_that("weighted chunks give the weighted fit on all rows, however the weights come", {
  dat <- write_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 30, lengthscale = 1.3)
  set.seed(3)
  w <- rexp(length(dat$y))
  w[dat$rows[[2]][1:7]] <- 0
  w[dat$rows[[3]]] <- 0          # a chunk whose rows all weigh 0 adds nothing
  wj <- lapply(dat$rows, function(i) w[i])
  files <- write_weighted_chunks(dat, w)
  # read() returns the weights
  s_read <- rff_stats_apply(files, readRDS, m, progress = FALSE)
  expect_same_fit(s_read, dat$x, dat$y, m, weights = w)
  expect_equal(s_read$wsum, sum(w), tolerance = 1e-12)
  expect_equal(s_read$n, sum(w > 0))
  # a list parallel to the chunks
  s_list <- rff_stats_apply(dat$rds, readRDS, m, weights = wj, keep_chunks = TRUE,
                            progress = FALSE)
  expect_same_fit(s_list, dat$x, dat$y, m, weights = w)
  expect_equal(s_list$chunks[[3]]$n, 0)
  expect_equal(s_list$chunks[[3]]$wsum, 0)
  # a function of the chunk and what read() returned
  wfun <- function(chunk, data) 1 / (1 + data$x[, 1]^2)
  s_fun <- rff_stats_apply(dat$rds, readRDS, m, weights = wfun, progress = FALSE)
  expect_same_fit(s_fun, dat$x, dat$y, m, weights = 1 / (1 + dat$x[, 1]^2))
  # no intercept, several responses, a path from the data
  y2 <- cbind(a = dat$y, b = dat$x[, 2])
  two <- function(f) {
    d <- readRDS(f)
    list(x = d$x, y = cbind(a = d$y, b = d$x[, 2]), weights = d$weights)
  }
  s2 <- rff_stats_apply(files, two, m, intercept = FALSE, progress = FALSE)
  direct2 <- rff_ridge(standardize = FALSE, dat$x, y2, weights = w, map = m, intercept = FALSE,
                       nlambda = 6, progress = FALSE)
  fit2 <- rff_ridge(s2, nlambda = 6)
  expect_equal(fit2$lambda, direct2$lambda, tolerance = 1e-10)
  expect_equal(fit2$coefficients, direct2$coefficients, tolerance = 1e-10)
  # the chunks as folds: rff_cv() on data with the chunks as foldid, same weights
  cv <- rff_cv(s_list, nlambda = 6)
  foldid <- rep(seq_along(dat$rows), lengths(dat$rows))
  cv_data <- rff_cv(dat$x, dat$y, foldid = foldid, weights = w, map = m, standardize = FALSE,
                    nlambda = 6, progress = FALSE)
  expect_equal(cv$lambda, cv_data$lambda, tolerance = 1e-10)
  expect_equal(cv$cvm, cv_data$cvm, tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(cv$cvsd, cv_data$cvsd, tolerance = 1e-6, ignore_attr = TRUE)
  expect_equal(coef(cv), coef(cv_data), tolerance = 1e-10)
})

test_that("two PSOCK workers with weights give the weighted one-process fit", {
  dat <- write_chunks(k = 5, n_each = c(40, 70, 55, 65, 30))
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 30, lengthscale = 1.5)
  set.seed(4)
  w <- runif(length(dat$y), 0, 3)
  files <- write_weighted_chunks(dat, w)
  cl <- local_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  s_read <- rff_stats_apply(files, readRDS, m, cluster = cl, progress = FALSE)
  expect_same_fit(s_read, dat$x, dat$y, m, weights = w)
  s_list <- rff_stats_apply(dat$rds, readRDS, m, cluster = cl,
                            weights = lapply(dat$rows, function(i) w[i]), progress = FALSE)
  expect_same_fit(s_list, dat$x, dat$y, m, weights = w)
  s_fun <- rff_stats_apply(dat$csv, read_csv_chunk, m, cluster = cl, response = "y",
                           weights = function(chunk, data) exp(-abs(data$y - 20)),
                           progress = FALSE)
  expect_same_fit(s_fun, dat$x, dat$y, m, weights = exp(-abs(dat$y - 20)))
})

test_that("bad weights are rff_errors naming where they came from", {
  m <- rff_map(2, D = 6)
  rd <- function(i) list(x = matrix(i + seq_len(8) / 8, 4, 2), y = 1:4)
  # the argument itself, before any chunk is read
  never <- function(i) stop("read() was called")
  expect_error(rff_stats_apply(1:2, never, m, weights = c(1, 2)),
               "`weights` must be NULL, a function(chunk, data)", fixed = TRUE, class = "rff_error")
  expect_error(rff_stats_apply(1:2, never, m, weights = list(rep(1, 4))),
               "a list with one element per chunk (2), got a list of length 1", fixed = TRUE,
               class = "rff_error")
  expect_error(rff_stats_apply(1:2, never, m, weights = "w"), "`weights` must be NULL",
               class = "rff_error")
  expect_error(rff_stats_apply(1:2, never, m, weights = function(data) 1),
               "`weights` must be a function of two arguments", class = "rff_error")
  expect_error(rff_stats_apply(1:2, never, m, weights = list(c(1, -1, 1, 1), rep(1, 4))),
               "`weights[[1]]` must be non-negative and finite", fixed = TRUE, class = "rff_error")
  expect_error(rff_stats_apply(1:2, never, m, weights = list(rep(1, 4), c(1, NA, 1, 1))),
               "`weights[[2]]` must be non-negative and finite", fixed = TRUE, class = "rff_error")
  expect_error(rff_stats_apply(1:2, never, m, weights = list(rep(1, 4), c(1, Inf, 1, 1))),
               "`weights[[2]]` must be non-negative and finite", fixed = TRUE, class = "rff_error")
  expect_error(rff_stats_apply(1:2, never, m, weights = list(rep(1, 4), "1")),
               "`weights[[2]]` must be NULL or non-negative numbers, one per row of chunk 2",
               fixed = TRUE, class = "rff_error")
  # on the worker: the chunk fails, its message saying which weights were wrong
  chunk_fails <- function(expr, msg) {
    e <- tryCatch(expr, rff_error = function(e) e)
    expect_s3_class(e, "rff_chunk_error")
    expect_s3_class(e, "rff_error")
    expect_match(conditionMessage(e), msg, fixed = TRUE)
    e
  }
  e <- chunk_fails(rff_stats_apply(1:2, rd, m, weights = list(rep(1, 4), rep(1, 3)),
                                   progress = FALSE),
                   "chunk 2 (\"2\") failed after 1 attempt: `weights[[2]]` must be NULL or 4 non-negative numbers (one per row), got a double vector of length 3")
  expect_equal(e$partial$n, 4)   # chunk 1 is kept
  chunk_fails(rff_stats_apply(1:2, rd, m, weights = function(chunk, data) -seq_len(4),
                              progress = FALSE),
              "`weights(chunk, data)` must be non-negative and finite")
  chunk_fails(rff_stats_apply(1:2, rd, m, weights = function(chunk, data) c(1, NA, 1, 1),
                              progress = FALSE),
              "`weights(chunk, data)` must be non-negative and finite")
  chunk_fails(rff_stats_apply(1:2, rd, m, weights = function(chunk, data) 1,
                              progress = FALSE),
              "`weights(chunk, data)` must be NULL or 4 non-negative numbers (one per row), got 1")
  chunk_fails(rff_stats_apply(1:2, rd, m, weights = function(chunk, data) stop("no weights for ", chunk),
                              progress = FALSE),
              "no weights for 1")
  read_w <- function(w) function(i) c(rd(i), list(weights = w))
  chunk_fails(rff_stats_apply(1:2, read_w(c(1, -2, 1, 1)), m, progress = FALSE),
              "`read(chunk)$weights` must be non-negative and finite")
  chunk_fails(rff_stats_apply(1:2, read_w(c(NaN, 1, 1, 1)), m, progress = FALSE),
              "`read(chunk)$weights` must be non-negative and finite")
  chunk_fails(rff_stats_apply(1:2, read_w(c(1, 1)), m, progress = FALSE),
              "`read(chunk)$weights` must be NULL or 4 non-negative numbers (one per row)")
  chunk_fails(rff_stats_apply(1:2, read_w(rep("1", 4)), m, progress = FALSE),
              "`read(chunk)$weights` must be NULL or 4 non-negative numbers (one per row)")
  chunk_fails(rff_stats_apply(1:2, read_w(rep(1, 4)), m, weights = list(rep(1, 4), rep(1, 4)),
                              progress = FALSE),
              "`read(chunk)` returned `weights` and `weights` is given too")
  # every row weighing zero leaves nothing to fit
  expect_error(rff_stats_apply(1:2, read_w(rep(0, 4)), m, progress = FALSE),
               "every row of every chunk has weight zero", class = "rff_error")
})

test_that("cluster = \"future\" without future is an rff_error", {
  ns <- asNamespace("rff")
  real <- get("has_package", envir = ns)
  unlockBinding("has_package", ns)
  assign("has_package", function(pkg) FALSE, envir = ns)
  on.exit({
    assign("has_package", real, envir = ns)
    lockBinding("has_package", ns)
  })
  expect_error(rff_stats_apply(1:2, identity, rff_map(2, D = 6), cluster = "future"),
               "needs the package future,", class = "rff_error")
})

test_that("a chunk whose y has another number of columns fails alone, named", {
  dat <- write_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 20)
  read_two_y <- function(f) {
    d <- readRDS(f)
    if (grepl("part-3", f)) d$y <- cbind(d$y, d$y)
    d
  }
  e <- tryCatch(rff_stats_apply(dat$rds, read_two_y, m, keep_chunks = TRUE, progress = FALSE),
                rff_error = function(e) e)
  expect_s3_class(e, "rff_chunk_error")
  expect_equal(e$failed, 3L)
  expect_match(conditionMessage(e), "chunk 3 (\"", fixed = TRUE)
  expect_match(conditionMessage(e), "`read(chunk)$y` has 2 columns, the chunks read before it 1",
               fixed = TRUE)
  ok <- unlist(dat$rows[-3])
  expect_same_stats(e$partial, rff_stats(dat$x[ok, ], dat$y[ok], m))
  expect_length(e$partial$chunks, 3)
})

test_that("under future's multisession plan a killed worker loses no finished chunk", {
  skip_on_os("windows")
  skip_if_not_installed("future")
  dat <- write_chunks(k = 6, n_each = c(60, 90, 75, 45, 50, 70))
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 20)
  # the plan drops the dead worker's connection without closing it: close
  # the sockets opened here that are still open at the end
  before <- getAllConnections()
  oplan <- future::plan(future::multisession, workers = 2)
  on.exit({
    future::plan(oplan)
    for (i in setdiff(getAllConnections(), before)) {
      con <- getConnection(i)
      if (inherits(con, "sockconn")) try(close(con), silent = TRUE)
    }
  }, add = TRUE)
  read_or_killed <- function(f) {
    flag <- paste0(f, ".killed")
    if (grepl("part-2", f) && !file.exists(flag)) {
      file.create(flag)
      tools::pskill(Sys.getpid(), tools::SIGKILL)
      # not reached: SIGKILL ends the worker at once (no waiting on a clock)
      stop("the worker outlived SIGKILL")
    }
    readRDS(f)
  }
  res <- tryCatch(rff_stats_apply(dat$rds, read_or_killed, m, cluster = "future",
                                  keep_chunks = TRUE, progress = FALSE),
                  rff_error = function(e) e)
  expect_s3_class(res, "rff_chunk_error")
  expect_true(2L %in% res$failed)
  expect_false(1L %in% res$failed)
  ok <- unlist(dat$rows[-res$failed])
  expect_same_stats(res$partial, rff_stats(dat$x[ok, ], dat$y[ok], m))
  # the plan keeps its dead worker: set it again (new workers), and the
  # failed chunks complete the statistics
  future::plan(future::sequential)
  future::plan(future::multisession, workers = 2)
  rest <- rff_stats_apply(dat$rds[res$failed], read_or_killed, m, cluster = "future",
                          keep_chunks = TRUE, progress = FALSE)
  s <- c(res$partial, rest)
  expect_same_stats(s, rff_stats(dat$x, dat$y, m))
  expect_length(s$chunks, 6)
})
