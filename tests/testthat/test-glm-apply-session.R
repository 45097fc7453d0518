# rff_glm_apply()'s session (R/glm-apply-session.R, R/glm-apply-worker.R):
# readers that fail, bad chunks, workers that die, and argument checks.

# Four chunks of a binary problem as RDS files, all rows in chunk order.
fault_chunks <- function(n_each = c(80, 60, 90, 70), d = 2, seed = 3) {
  set.seed(seed)
  dir <- tempfile("rff-glm-faults-")
  dir.create(dir)
  files <- file.path(dir, sprintf("part-%d.rds", seq_along(n_each)))
  xs <- ys <- list()
  for (j in seq_along(n_each)) {
    x <- matrix(rnorm(n_each[j] * d), n_each[j], d)
    y <- factor(x[, 1] * x[, 2] + rnorm(n_each[j], sd = 0.3) > 0, levels = c(FALSE, TRUE),
                labels = c("no", "yes"))
    saveRDS(list(x = x, y = y), files[j])
    xs[[j]] <- x
    ys[[j]] <- as.character(y)
  }
  list(dir = dir, files = files, x = do.call(rbind, xs),
       y = factor(unlist(ys), levels = c("no", "yes")))
}

test_that("a failing read() is retried, then an rff_chunk_error names the chunk", {
  dat <- fault_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE), add = TRUE)
  m <- rff_map(2, D = 20, lengthscale = 1)
  files <- dat$files
  files[3] <- file.path(dat$dir, "missing.rds")
  e <- tryCatch(rff_glm_apply(files, readRDS, m, lambda = 1e-2, retries = 2),
                rff_error = function(e) e)
  expect_s3_class(e, "rff_chunk_error")
  expect_equal(e$chunk, 3L)
  expect_equal(e$failed, 3L)
  expect_match(conditionMessage(e), "chunk 3 (\"", fixed = TRUE)
  expect_match(conditionMessage(e), "missing.rds", fixed = TRUE)
  expect_match(conditionMessage(e), "after 3 attempts", fixed = TRUE)
  # a reader that fails once per chunk: one retry is enough
  flaky <- function(f) {
    flag <- paste0(f, ".tried")
    if (!file.exists(flag)) {
      file.create(flag)
      stop("transient failure")
    }
    readRDS(f)
  }
  e0 <- tryCatch(rff_glm_apply(dat$files, flaky, m, lambda = 1e-2), rff_error = function(e) e)
  expect_s3_class(e0, "rff_chunk_error")
  expect_match(conditionMessage(e0), "transient failure")
  unlink(paste0(dat$files, ".tried"))
  fit <- rff_glm_apply(dat$files, flaky, m, lambda = 1e-2, retries = 1)
  ref <- rff_glm(dat$x, dat$y, map = m, lambda = 1e-2, standardize = FALSE, progress = FALSE)
  expect_equal(fit$coefficients, ref$coefficients, tolerance = 1e-6)
})

test_that("bad read() results are errors naming the chunk and what was wrong", {
  dat <- fault_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE), add = TRUE)
  m <- rff_map(2, D = 20, lengthscale = 1)
  spoil <- function(j, f) {
    p <- readRDS(dat$files[j])
    saveRDS(f(p), dat$files[j])
  }
  fails <- function(pattern, chunk, class = "rff_chunk_error", ...) {
    e <- tryCatch(rff_glm_apply(dat$files, readRDS, m, lambda = 1e-2, ...),
                  rff_error = function(e) e)
    expect_s3_class(e, class)
    expect_match(conditionMessage(e), pattern, fixed = TRUE)
    if (!is.null(chunk)) expect_match(conditionMessage(e), sprintf("chunk %d", chunk), fixed = TRUE)
  }
  keep <- lapply(dat$files, readRDS)
  restore <- function() for (j in seq_along(keep)) saveRDS(keep[[j]], dat$files[j])
  spoil(2, function(p) { p$x <- cbind(p$x, 1); p })
  fails("read(chunk)$x", 2)
  restore()
  spoil(3, function(p) { p$y[5] <- NA; p })
  fails("missing values", 3)
  restore()
  spoil(4, function(p) { p$x[2, 1] <- NA; p })
  fails("read(chunk)$x", 4)
  restore()
  spoil(3, function(p) {
    p$y <- factor(as.character(p$y), levels = c("no", "yes", "maybe"))
    p$y[1] <- "maybe"
    p
  })
  fails("\"maybe\", which is not among the levels", 3)
  restore()
  spoil(2, function(p) { p$extra <- 1; p })
  fails("`extra`", 2)
  restore()
  spoil(2, function(p) { p$offset <- rep(0, nrow(p$x)); p })
  fails("offset", NULL, class = "rff_error")
  restore()
  spoil(1, function(p) { p$weights <- rep(-1, nrow(p$x)); p })
  fails("read(chunk)$weights", 1)
  restore()
  spoil(1, function(p) "not a list")
  fails("must return a list", 1)
  restore()
  # the worker's memory limit
  fails("`memory_mb`", 1, memory_mb = 0.001)
})

test_that("the arguments are checked, with errors naming them", {
  dat <- fault_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE), add = TRUE)
  m <- rff_map(2, D = 20, lengthscale = 1)
  f <- dat$files
  bad <- list(
    chunks = list(list(), readRDS, m),
    read = list(f, "readRDS", m),
    map = list(f, readRDS, list()),
    family = list(f, readRDS, m, family = "gaussian"),
    lambda = list(f, readRDS, m, lambda = -1),
    lambda = list(f[1], readRDS, m, lambda = c(1, 0.1)),
    cluster = list(f, readRDS, m, cluster = 2),
    weights = list(f, readRDS, m, weights = list(1)),
    levels = list(f, readRDS, m, levels = "a"),
    levels = list(f, readRDS, m, family = "poisson", levels = c("a", "b")),
    levels = list(f, readRDS, m, levels = c("a", "b", "c")),
    intercept = list(f, readRDS, m, intercept = NA),
    control = list(f, readRDS, m, control = list(tol = 1)),
    retries = list(f, readRDS, m, retries = -1),
    cache_mb = list(f, readRDS, m, cache_mb = -1),
    memory_mb = list(f, readRDS, m, memory_mb = 0),
    progress = list(f, readRDS, m, progress = "yes"))
  for (i in seq_along(bad)) {
    e <- tryCatch(do.call(rff_glm_apply, bad[[i]]), rff_error = function(e) e)
    expect_s3_class(e, "rff_error")
    expect_identical(e$arg, names(bad)[i], label = names(bad)[i])
  }
  expect_error(rff_glm_apply(f, readRDS), class = "rff_error")
  # levels given: a class outside them is an error; poisson needs counts
  e <- tryCatch(rff_glm_apply(f, readRDS, m, lambda = 0.01, levels = c("no", "si")),
                rff_error = function(e) e)
  expect_match(conditionMessage(e), "\"yes\", which is not among the levels", fixed = TRUE)
  e <- tryCatch(rff_glm_apply(f, readRDS, m, lambda = 0.01, family = "poisson"),
                rff_error = function(e) e)
  expect_match(conditionMessage(e), "counts", fixed = TRUE)
})

# Child processes with a time limit: a worker killed (SIGKILL) mid-fit.
# Each child writes 4 chunks and fits them in process first (`ref`).
kill_setup <- '
set.seed(3)
dir <- tempfile(); dir.create(dir)
files <- file.path(dir, sprintf("part-%d.rds", 1:4))
for (f in files) {
  x <- matrix(rnorm(200), 100, 2)
  saveRDS(list(x = x, y = factor(x[, 1] * x[, 2] > 0, c(FALSE, TRUE))), f)
}
m <- rff_map(2, D = 30, lengthscale = 1)
ref <- rff_glm_apply(files, readRDS, m, lambda = 1e-2, threads = 1)
'
kill_code <- paste0(kill_setup, '
cl <- parallel::makeCluster(WORKERS)
libs <- .libPaths()
parallel::clusterCall(cl, function(p) invisible(.libPaths(p)), libs)
pids <- unlist(parallel::clusterCall(cl, Sys.getpid))
victim <- pids[length(pids)]
calls <- 0
# the last worker is killed just before the third pass of the solver
trace("glm_pass", where = asNamespace("rff"), print = FALSE, tracer = quote({
  assign("calls", calls + 1, envir = globalenv())
  if (calls == 3) tools::pskill(victim, tools::SIGKILL)
}))
res <- tryCatch(rff_glm_apply(files, readRDS, m, lambda = 1e-2, cluster = cl),
                rff_error = function(e) e)
if (inherits(res, "rff_glm")) {
  cat("FIT", identical(res$coefficients, ref$coefficients), paste(res$reread, collapse = ","), "\n")
} else {
  cat("ERROR", class(res)[1], res$worker, paste(res$chunks, collapse = ","), "\n")
  cat("MESSAGE", conditionMessage(res), "\n")
}
')

test_that("a worker killed mid-fit: its chunks are read again by a live worker, same fit", {
  skip_on_os("windows")
  out <- run_child(sub("WORKERS", "2", kill_code, fixed = TRUE), timeout = 120)
  expect_equal(out$status, 0L, info = paste(out$output, collapse = "\n"))
  line <- grep("^FIT", out$output, value = TRUE)
  expect_identical(line, "FIT TRUE 3,4 ")
})

test_that("the only worker killed mid-fit: an error naming the worker and its chunks, no hang", {
  skip_on_os("windows")
  out <- run_child(sub("WORKERS", "1", kill_code, fixed = TRUE), timeout = 120)
  expect_equal(out$status, 0L, info = paste(out$output, collapse = "\n"))
  expect_identical(grep("^ERROR", out$output, value = TRUE), "ERROR rff_worker_error 1 1,2,3,4 ")
  msg <- grep("^MESSAGE", out$output, value = TRUE)
  expect_match(msg, "node 1 of the cluster (pid ", fixed = TRUE)
  expect_match(msg, "died during the fit", fixed = TRUE)
  expect_match(msg, "chunk 4", fixed = TRUE)
})

# The same under future::plan(multisession): the worker that answered for
# slot VICTIM (its pid from the last round) is killed before the third pass.
future_kill_code <- paste0(kill_setup, '
future::plan(future::multisession, workers = 2)
passes <- 0
victim <- NA
trace("glm_round", where = asNamespace("rff"), print = FALSE, tracer = quote({
  if (op == "pass") {
    assign("passes", passes + 1, envir = globalenv())
    if (passes == 3) {
      assign("victim", S$pids[VICTIM], envir = globalenv())
      tools::pskill(victim, tools::SIGKILL)
    }
  }
}))
res <- tryCatch(rff_glm_apply(files, readRDS, m, lambda = 1e-2, cluster = "future"),
                rff_error = function(e) e)
cat("VICTIM", !is.na(victim) && victim != Sys.getpid(), "\n")
if (inherits(res, "rff_glm")) {
  cat("FIT", identical(res$coefficients, ref$coefficients), "\n")
} else {
  cat("ERROR", class(res)[1], res$worker, paste(res$chunks, collapse = ","), "\n")
  cat("MESSAGE", conditionMessage(res), "\n")
}
')

test_that("a multisession worker killed mid-fit: the same fit, or an error naming the worker and its chunks, no hang", {
  skip_on_os("windows")
  skip_if_not_installed("future")
  # the future sent again goes where the plan puts it: on a live worker the
  # fit goes on (it reads the chunks again), on the dead one it fails again
  # and the fit stops with an rff_worker_error
  for (slot in 1:2) {
    out <- run_child(sub("VICTIM", slot, future_kill_code, fixed = TRUE), timeout = 120)
    info <- paste(out$output, collapse = "\n")
    expect_equal(out$status, 0L, info = info)
    expect_identical(grep("^VICTIM", out$output, value = TRUE), "VICTIM TRUE ", info = info)
    fit <- grep("^FIT", out$output, value = TRUE)
    err <- grep("^ERROR", out$output, value = TRUE)
    expect_true(length(fit) + length(err) == 1L, info = info)
    if (length(fit)) {
      expect_identical(fit, "FIT TRUE ")
    } else {
      held <- if (slot == 1L) "1,2" else "3,4"
      expect_identical(err, sprintf("ERROR rff_worker_error %d %s ", slot, held))
      msg <- grep("^MESSAGE", out$output, value = TRUE)
      expect_match(msg, sprintf("the future of worker %d failed during the fit", slot), fixed = TRUE)
      expect_match(msg, sprintf("chunk %s", substr(held, 3L, 3L)), fixed = TRUE)
    }
  }
})

test_that("a worker killed while reading: another reads its chunks and the fit goes on", {
  skip_on_os("windows")
  dat <- fault_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE), add = TRUE)
  m <- rff_map(2, D = 20, lengthscale = 1)
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
  cl <- parallel::makeCluster(2)
  on.exit(for (node in cl) try(close(node$con), silent = TRUE), add = TRUE)
  libs <- c(normalizePath(dirname(find.package("rff"))), .libPaths())
  parallel::clusterCall(cl, function(p) invisible(.libPaths(p)), libs)
  fit <- rff_glm_apply(dat$files, read_or_killed, m, lambda = 1e-2, cluster = cl)
  ref <- rff_glm_apply(dat$files, readRDS, m, lambda = 1e-2, threads = 1)
  expect_identical(fit$coefficients, ref$coefficients)
  expect_equal(fit$reread, 3:4)
})

test_that("on a PSOCK cluster each chunk is read once for the whole fit, CV included", {
  dat <- fault_chunks()
  on.exit(unlink(dat$dir, recursive = TRUE), add = TRUE)
  m <- rff_map(2, D = 20, lengthscale = 1)
  log <- file.path(dat$dir, "reads")
  # one log file per worker process: appends of two processes to one file
  # could interleave within a line
  counted <- function(f, log) {
    cat(basename(f), "\n", file = paste0(log, "-", Sys.getpid(), ".log"), append = TRUE)
    readRDS(f)
  }
  cl <- parallel::makeCluster(2)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  libs <- c(normalizePath(dirname(find.package("rff"))), .libPaths())
  parallel::clusterCall(cl, function(p) invisible(.libPaths(p)), libs)
  fit <- rff_glm_apply(dat$files, counted, m, lambda = c(1e-1, 1e-2), cluster = cl, log = log)
  logs <- list.files(dat$dir, "^reads-[0-9]+[.]log$", full.names = TRUE)
  expect_length(logs, 2L)
  reads <- table(trimws(unlist(lapply(logs, readLines))))
  expect_equal(as.vector(reads), rep(1L, 4))
  expect_equal(names(reads), basename(dat$files))
  expect_true(fit$passes > 10)
  expect_equal(fit$workers, 2L)
  # the workers keep nothing of the fit once it is done
  left <- parallel::clusterCall(cl, function() length(ls(rff:::glm_worker_store)))
  expect_equal(unlist(left), c(0L, 0L))
})
