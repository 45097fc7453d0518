# rff_stats_apply(): statistics computed chunk by chunk where the data is
# read, against the one-process fit on all rows.

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
               rff_ridge(standardize = FALSE, dat$x, dat$y, map = m, nlambda = 8,
                         criterion = "gcv", progress = FALSE)$lambda,
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
  # inside progressr::with_progress(), the chunks the workers finish reach
  # its handlers: one step each
  if (requireNamespace("progressr", quietly = TRUE)) {
    old <- options(progressr.enable = TRUE)
    amounts <- 0
    out <- capture.output(progressr::with_progress(withCallingHandlers(
      sp <- rff_stats_apply(dat$csv, read, m, cluster = "future", progress = TRUE),
      progression = function(p) if (identical(p$type, "update")) amounts <<- amounts + p$amount),
      handlers = progressr::handler_void, delay_stdout = FALSE))
    options(old)
    expect_equal(amounts, 4)
    expect_length(out, 0L)
    expect_same_fit(sp, dat$x, dat$y, m)
  }
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
  expect_equal(lam, rff_ridge(standardize = FALSE, dat$x, dat$y, map = m, nlambda = 6,
                              lambda_min_ratio = 1e-6, progress = FALSE)$lambda,
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
