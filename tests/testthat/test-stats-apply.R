# rff_stats_apply(): statistics computed chunk by chunk where the data is
# read, against the one-process fit on all rows.

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

test_that("chunks read in this process give the statistics of all rows", {
  dat <- write_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 40, lengthscale = 1.2)
  s <- rff_stats_apply(dat$rds, readRDS, m, progress = FALSE)
  expect_s3_class(s, "rff_stats")
  expect_null(s$chunks)
  expect_same_stats(s, rff_stats(dat$x, dat$y, m))
  expect_same_fit(s, dat$x, dat$y, m)
  # a path chosen from the data is the same too
  expect_equal(rff_ridge(s, nlambda = 8)$lambda,
               rff_ridge(standardize = FALSE, dat$x, dat$y, map = m, nlambda = 8, progress = FALSE)$lambda,
               tolerance = 1e-10)
  # CSV files, the reader's argument given through `...`, no intercept,
  # a progress bar over chunks
  expect_output(
    s0 <- rff_stats_apply(dat$csv, read_csv_chunk, m, response = "y", intercept = FALSE,
                          progress = TRUE, chunk_size = 7),
    "100%")
  direct0 <- rff_ridge(standardize = FALSE, dat$x, dat$y, lambda = 1e-4, map = m, intercept = FALSE,
                       progress = FALSE)
  expect_equal(rff_ridge(s0, lambda = 1e-4)$coefficients, direct0$coefficients,
               tolerance = 1e-10)
})

test_that("kept chunks are the statistics of each chunk, named as the chunks", {
  dat <- write_chunks(k = 3, n_each = c(30, 50, 40))
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 20, variant = "phase")
  chunks <- stats::setNames(as.list(dat$rds), c("a", "b", "c"))
  s <- rff_stats_apply(chunks, readRDS, m, keep_chunks = TRUE, progress = FALSE)
  expect_named(s$chunks, c("a", "b", "c"))
  for (j in 1:3) {
    expect_same_stats(s$chunks[[j]], rff_stats(dat$x[dat$rows[[j]], ], dat$y[dat$rows[[j]]], m),
                      tol = 1e-12)
    expect_true(same_map(s$chunks[[j]]$map, m))
  }
  expect_output(print(s), "statistics of 3 chunks kept")
  # c() keeps the chunks of both parts, and drops them when a part has none
  s2 <- rff_stats_apply(dat$rds[1:2], readRDS, m, keep_chunks = TRUE, progress = FALSE)
  both <- c(s, s2)
  expect_length(both$chunks, 5)
  expect_equal(both$n, s$n + s2$n)
  expect_null(c(s, rff_stats(dat$x[1:5, ], dat$y[1:5], m))$chunks)
  # several responses
  two <- function(f) {
    d <- readRDS(f)
    list(x = d$x, y = cbind(u = d$y, v = d$x[, 1]))
  }
  s3 <- rff_stats_apply(dat$rds, two, m, progress = FALSE)
  y3 <- cbind(u = dat$y, v = dat$x[, 1])
  direct <- rff_ridge(standardize = FALSE, dat$x, y3, lambda = 1e-3, map = m, progress = FALSE)
  expect_equal(rff_ridge(s3, lambda = 1e-3)$coefficients, direct$coefficients,
               tolerance = 1e-10)
  expect_equal(s3$response, c("u", "v"))
})

test_that("two PSOCK workers reading RDS and CSV files give the one-process fit", {
  dat <- write_chunks(k = 5, n_each = c(40, 70, 55, 65, 30))
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 30, lengthscale = 1.5)
  cl <- local_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  s <- rff_stats_apply(dat$rds, readRDS, m, cluster = cl, progress = FALSE)
  expect_same_fit(s, dat$x, dat$y, m)
  # the workers read the files: a reader that records its process id
  read_pid <- function(f) c(readRDS(f), list(pid = Sys.getpid()))
  e <- tryCatch(rff_stats_apply(dat$rds[1], read_pid, m, cluster = cl, progress = FALSE),
                rff_error = function(e) e)
  expect_match(conditionMessage(e), "returned `pid`")
  pids <- unlist(parallel::clusterCall(cl, Sys.getpid))
  expect_false(Sys.getpid() %in% pids)
  s_csv <- rff_stats_apply(dat$csv, read_csv_chunk, m, cluster = cl, response = "y",
                           keep_chunks = TRUE, threads = 1, progress = FALSE)
  expect_same_fit(s_csv, dat$x, dat$y, m)
  expect_length(s_csv$chunks, 5)
})

test_that("a future plan with two multisession workers gives the one-process fit", {
  skip_if_not_installed("future")
  dat <- write_chunks(k = 4)
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 30, lengthscale = 1.5)
  oplan <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(oplan), add = TRUE)
  # future ships the reader's globals (`column_of_y`) to the workers
  column_of_y <- "y"
  read <- function(f) read_csv_chunk(f, column_of_y)
  s <- rff_stats_apply(dat$csv, read, m, cluster = "future", keep_chunks = TRUE,
                       progress = FALSE)
  expect_same_fit(s, dat$x, dat$y, m)
  # and the globals of a weights function (`w_scale`)
  w_scale <- 2
  w_of <- function(chunk, data) w_scale * exp(-abs(data$y - 20))
  s_w <- rff_stats_apply(dat$csv, read, m, cluster = "future", weights = w_of, progress = FALSE)
  expect_same_fit(s_w, dat$x, dat$y, m, weights = 2 * exp(-abs(dat$y - 20)))
  # also for a reader defined at top level, as in a script
  assign("rff_test_column", "y", envir = globalenv())
  on.exit(rm("rff_test_column", envir = globalenv()), add = TRUE)
  read_global <- function(f) {
    d <- utils::read.csv(f)
    list(x = as.matrix(d[names(d) != rff_test_column]), y = d[[rff_test_column]])
  }
  environment(read_global) <- globalenv()
  s_global <- rff_stats_apply(dat$csv, read_global, m, cluster = "future", progress = FALSE)
  expect_same_fit(s_global, dat$x, dat$y, m)
  cv <- rff_cv(s, nlambda = 5)
  expect_equal(cv$fit$coefficients,
               rff_ridge(standardize = FALSE, dat$x, dat$y, lambda = cv$lambda_best, map = m,
                         progress = FALSE)$coefficients, tolerance = 1e-10)
})

test_that("a failing chunk is an rff_error naming it, with the other chunks' statistics", {
  dat <- write_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 20)
  files <- dat$rds
  files[3] <- file.path(dat$dir, "no-such-file.rds")
  e <- tryCatch(suppressWarnings(rff_stats_apply(files, readRDS, m, keep_chunks = TRUE,
                                                 progress = FALSE)),
                rff_error = function(e) e)
  expect_s3_class(e, "rff_chunk_error")
  expect_s3_class(e, "rff_error")
  expect_match(conditionMessage(e), "chunk 3 (\"", fixed = TRUE)
  expect_match(conditionMessage(e), "no-such-file.rds", fixed = TRUE)
  expect_match(conditionMessage(e), "cannot open", fixed = TRUE)   # the worker's message
  expect_match(conditionMessage(e), "after 1 attempt:", fixed = TRUE)
  expect_equal(e$chunk, 3L)
  expect_equal(e$failed, 3L)
  expect_match(e$errors[[1]], "cannot open")
  ok <- unlist(dat$rows[-3])
  expect_same_stats(e$partial, rff_stats(dat$x[ok, ], dat$y[ok], m))
  expect_length(e$partial$chunks, 3)
  # resuming with the failed chunk once it is there completes the statistics
  rest <- rff_stats_apply(dat$rds[e$failed], readRDS, m, keep_chunks = TRUE, progress = FALSE)
  expect_same_fit(c(e$partial, rest), dat$x[c(ok, dat$rows[[3]]), ],
                  dat$y[c(ok, dat$rows[[3]])], m)
  # bad data from the reader fails the chunk too, named by its name
  bad <- list(a = dat$rds[1], b = "wrong columns")
  read_bad <- function(ch) {
    if (ch == "wrong columns") list(x = matrix(1, 3, 2), y = 1:3) else readRDS(ch)
  }
  e <- tryCatch(rff_stats_apply(bad, read_bad, m, progress = FALSE), rff_error = function(e) e)
  expect_match(conditionMessage(e), "chunk 2 (\"b\")", fixed = TRUE)
  expect_match(conditionMessage(e), "`read(chunk)$x` has 2 columns", fixed = TRUE)
  expect_equal(e$partial$n, length(dat$rows[[1]]))
  # nothing succeeded: no partial statistics
  e <- tryCatch(rff_stats_apply(list(1, 2), function(i) stop("down ", i), m, progress = FALSE),
                rff_error = function(e) e)
  expect_match(conditionMessage(e), "chunk 1 (\"1\") failed after 1 attempt: down 1 (and 1 more chunk failed)",
               fixed = TRUE)
  expect_null(e$partial)
  expect_equal(e$failed, 1:2)
})

test_that("failing chunks on PSOCK workers are retried, then reported", {
  dat <- write_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 20)
  cl <- local_cluster()
  on.exit(parallel::stopCluster(cl), add = TRUE)
  # a reader that fails the first time it sees a file (a flag file records it)
  read_once_failing <- function(f) {
    flag <- paste0(f, ".seen")
    if (!file.exists(flag)) {
      file.create(flag)
      stop("transient failure reading ", basename(f))
    }
    readRDS(f)
  }
  e <- tryCatch(rff_stats_apply(dat$rds, read_once_failing, m, cluster = cl, progress = FALSE),
                rff_error = function(e) e)
  expect_match(conditionMessage(e), "chunk 1 (\"", fixed = TRUE)
  expect_match(conditionMessage(e), "transient failure reading part-1.rds (and 3 more chunks failed)",
               fixed = TRUE)
  expect_equal(e$failed, 1:4)
  unlink(paste0(dat$rds, ".seen"))
  s <- rff_stats_apply(dat$rds, read_once_failing, m, cluster = cl, retries = 1,
                       keep_chunks = TRUE, progress = FALSE)
  expect_same_fit(s, dat$x, dat$y, m)
  expect_length(s$chunks, 4)
  # a chunk that always fails uses up its retries; the others are kept
  read_one_bad <- function(f) if (grepl("part-2", f)) stop("corrupt file") else readRDS(f)
  e <- tryCatch(rff_stats_apply(dat$rds, read_one_bad, m, cluster = cl, retries = 2,
                                progress = FALSE),
                rff_error = function(e) e)
  expect_match(conditionMessage(e), "part-2.rds\") failed after 3 attempts: corrupt file",
               fixed = TRUE)
  ok <- unlist(dat$rows[-2])
  expect_same_stats(e$partial, rff_stats(dat$x[ok, ], dat$y[ok], m))
  # sequentially, retries work the same way
  unlink(paste0(dat$rds, ".seen"))
  s1 <- rff_stats_apply(dat$rds, read_once_failing, m, retries = 1, progress = FALSE)
  expect_same_stats(s1, rff_stats(dat$x, dat$y, m))
})

test_that("a worker that dies fails its chunks without losing the others", {
  dat <- write_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 20)
  cl <- local_cluster(1)
  on.exit({
    try(parallel::stopCluster(cl), silent = TRUE)
    for (node in cl) try(close(node$con), silent = TRUE)
  }, add = TRUE)
  read_or_die <- function(f) if (grepl("part-4", f)) quit(save = "no") else readRDS(f)
  # one worker, one chunk at a time: it dies at chunk 4, after three
  e <- tryCatch(rff_stats_apply(dat$rds, read_or_die, m, cluster = cl, retries = 1,
                                progress = FALSE),
                rff_error = function(e) e)
  expect_s3_class(e, "rff_chunk_error")
  expect_match(conditionMessage(e), "chunk 4 (\"", fixed = TRUE)
  expect_equal(e$failed, 4L)
  # the retry found no worker left
  expect_match(e$errors[[1]], "no worker of the cluster is alive", fixed = TRUE)
  ok <- unlist(dat$rows[1:3])
  expect_same_stats(e$partial, rff_stats(dat$x[ok, ], dat$y[ok], m))
})

test_that("a worker killed mid-chunk loses no finished chunk; the lost one is retried on a live worker", {
  skip_on_os("windows")
  dat <- write_chunks(k = 6, n_each = c(60, 90, 75, 45, 50, 70))
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 20)
  # the first worker to read part-3 is killed (SIGKILL) while reading it
  read_or_killed <- function(f) {
    flag <- paste0(f, ".killed")
    if (grepl("part-3", f) && !file.exists(flag)) {
      file.create(flag)
      tools::pskill(Sys.getpid(), tools::SIGKILL)
      # not reached: SIGKILL ends the worker at once (no waiting on a clock)
      stop("the worker outlived SIGKILL")
    }
    readRDS(f)
  }
  for (retries in c(0, 2)) {
    unlink(paste0(dat$rds, ".killed"))
    cl <- local_cluster(2)
    res <- tryCatch(rff_stats_apply(dat$rds, read_or_killed, m, cluster = cl, retries = retries,
                                    keep_chunks = TRUE, progress = FALSE),
                    rff_error = function(e) e)
    for (node in cl) try(close(node$con), silent = TRUE)
    if (retries == 0) {
      expect_s3_class(res, "rff_chunk_error")
      expect_equal(res$failed, 3L)
      expect_match(res$errors[[1]], "died", fixed = TRUE)
      ok <- unlist(dat$rows[-3])
      expect_same_stats(res$partial, rff_stats(dat$x[ok, ], dat$y[ok], m))
      expect_length(res$partial$chunks, 5)
    } else {
      # the other worker read chunk 3 again, and every chunk is there
      expect_s3_class(res, "rff_stats")
      expect_same_stats(res, rff_stats(dat$x, dat$y, m))
      expect_length(res$chunks, 6)
    }
  }
})

test_that("rff_cv() on kept chunks equals refits leaving each chunk out", {
  dat <- write_chunks(k = 4, n_each = c(50, 80, 65, 55))
  on.exit(unlink(dat$dir, recursive = TRUE))
  m <- rff_map(3, D = 30, lengthscale = 1.3)
  s <- rff_stats_apply(dat$rds, readRDS, m, keep_chunks = TRUE, progress = FALSE)
  cv <- rff_cv(s, nlambda = 6)
  expect_s3_class(cv, "rff_cv")
  n <- length(dat$y)
  lam <- cv$lambda
  expect_equal(lam, rff_ridge(standardize = FALSE, dat$x, dat$y, map = m, nlambda = 6, progress = FALSE)$lambda,
               tolerance = 1e-10)
  # brute force: fit without chunk j, predict chunk j
  sse <- sapply(seq_along(dat$rows), function(j) {
    i <- dat$rows[[j]]
    fit <- rff_ridge(standardize = FALSE, dat$x[-i, ], dat$y[-i], lambda = lam, map = m, progress = FALSE)
    colSums((dat$y[i] - predict(fit, dat$x[i, ], lambda = lam))^2)
  })
  nj <- lengths(dat$rows)
  cvm <- rowSums(sse) / n
  mse <- t(sse) / nj
  cvsd <- sqrt(colSums(nj * (mse - rep(cvm, each = 4))^2) / n / 3)
  expect_equal(drop(cv$cvm), unname(cvm), tolerance = 1e-8)
  expect_equal(drop(cv$cvsd), unname(cvsd), tolerance = 1e-6)
  expect_equal(cv$lambda_best, lam[which.min(cvm)])
  expect_equal(coef(cv), coef(rff_ridge(standardize = FALSE, dat$x, dat$y, lambda = cv$lambda_best, map = m,
                                        progress = FALSE)), tolerance = 1e-10)
  expect_equal(predict(cv, dat$x[1:3, ]),
               predict(rff_ridge(standardize = FALSE, dat$x, dat$y, lambda = cv$lambda_best, map = m,
                                 progress = FALSE), dat$x[1:3, ]), tolerance = 1e-10)
  expect_output(print(cv), "cross-validated over 4 chunks as folds")
  expect_equal(nobs(cv), n)
  # given lambda values
  cv2 <- rff_cv(s, lambda = lam[2:3])
  expect_equal(drop(cv2$cvm), unname(cvm[2:3]), tolerance = 1e-8)
  # what needs the data or other folds is refused
  expect_error(rff_cv(s, folds = 3), "`folds` cannot be given with statistics",
               class = "rff_error")
  expect_error(rff_cv(s, lengthscale = 2), "`lengthscale`", class = "rff_error")
  expect_error(rff_cv(rff_stats(dat$x, dat$y, m)), "keep_chunks = TRUE", class = "rff_error")
  expect_error(rff_cv(c(s, rff_stats(dat$x[1:5, ], dat$y[1:5], m))), "keep_chunks = TRUE",
               class = "rff_error")
})

test_that("bad arguments are rff_errors naming them", {
  m <- rff_map(2, D = 6)
  rd <- function(i) list(x = matrix(i, 4, 2), y = 1:4)
  expect_error(rff_stats_apply(read = rd, map = m), "`chunks` is required", class = "rff_error")
  expect_error(rff_stats_apply(list(), rd, m), "`chunks` must be", class = "rff_error")
  expect_error(rff_stats_apply(data.frame(a = 1), rd, m), "`chunks` must be", class = "rff_error")
  expect_error(rff_stats_apply(1:2, "readRDS", m), "`read` must be a function", class = "rff_error")
  expect_error(rff_stats_apply(1:2, rd), "`map` is required", class = "rff_error")
  expect_error(rff_stats_apply(1:2, rd, list()), "`map`", class = "rff_error")
  expect_error(rff_stats_apply(1:2, rd, m, cluster = "mpi"), "`cluster` must be",
               class = "rff_error")
  expect_error(rff_stats_apply(1:2, rd, m, cluster = 2), "`cluster` must be", class = "rff_error")
  expect_error(rff_stats_apply(1:2, rd, m, retries = -1), "`retries`", class = "rff_error")
  expect_error(rff_stats_apply(1:2, rd, m, progress = NA), "`progress`", class = "rff_error")
  expect_error(rff_stats_apply(1:2, rd, m, keep_chunks = "yes"), "`keep_chunks`",
               class = "rff_error")
  expect_error(rff_stats_apply(1:2, rd, m, intercept = 1), "`intercept`", class = "rff_error")
  expect_error(rff_stats_apply(1:2, rd, m, chunk_size = 0), "`chunk_size`", class = "rff_error")
  expect_error(rff_stats_apply(1:2, rd, m, threads = 0), "`threads`", class = "rff_error")
  old <- options(rff.max_gb = 1e-6)
  on.exit(options(old))
  expect_error(rff_stats_apply(1:2, rd, m, keep_chunks = TRUE, progress = FALSE),
               "`keep_chunks` is too large", class = "rff_error")
  options(old)
  # what the reader returns is checked on the worker; the chunk fails
  returns <- list(list(x = 1:3), 42, list(x = matrix(1, 3, 2), y = 1:2),
                  list(x = matrix(1, 3, 2), y = 1:3, weights = c(1, -1, 1)),
                  list(x = matrix(1, 3, 2), y = 1:3, offset = 1),
                  list(x = matrix(NA, 3, 2), y = 1:3))
  msgs <- c("must return a list with elements `x` and `y`",
            "must return a list with elements `x` and `y`",
            "`read(chunk)$y` must have one value per row",
            "`read(chunk)$weights` must be non-negative and finite",
            "returned `offset`, which is not used",
            "`read(chunk)$x` must not contain missing")
  for (i in seq_along(returns)) {
    e <- tryCatch(rff_stats_apply(list(i), function(i) returns[[i]], m, progress = FALSE),
                  rff_error = function(e) e)
    expect_s3_class(e, "rff_chunk_error")
    expect_match(conditionMessage(e), msgs[i], fixed = TRUE)
  }
})

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
