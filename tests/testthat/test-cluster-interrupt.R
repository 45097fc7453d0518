# The socket-cluster route of rff_stats_apply() and rff_glm_apply()
# (R/socket-jobs.R): a fit interrupted from outside (SIGINT) leaves the
# cluster in step, a cluster that could not be drained is refused, and a
# frozen worker (SIGSTOP) is bounded by `timeout`. Everything runs in a
# child process with a time limit; the worker pids go to a file so that
# this process can wake and kill them whatever the child did.

cluster_setup <- '
set.seed(5)
n <- 400
x <- matrix(rnorm(2 * n), n, 2)
y <- sin(2 * x[, 1]) + x[, 2] + rnorm(n, sd = 0.1)
yb <- factor(x[, 1] * x[, 2] + rnorm(n, sd = 0.3) > 0, c(FALSE, TRUE))
m <- rff_map(2, D = 30, lengthscale = 1)
slow <- tempfile()
# a reader that sleeps while the file `slow` exists (seen by the workers);
# the first reader to remove the file `flag` interrupts the process
# `master`: the interrupt lands while the fit waits on its workers, however
# slow the machine
rd <- function(i, x, y, slow, nap, flag = "", master = 0L) {
  if (nzchar(flag) && file.exists(flag) && suppressWarnings(file.remove(flag))) {
    system(sprintf("kill -INT %d", master))
  }
  if (file.exists(slow)) Sys.sleep(nap)
  list(x = x[i, , drop = FALSE], y = y[i])
}
flag <- tempfile()
cl <- parallel::makeCluster(2)
parallel::clusterCall(cl, function(p) invisible(.libPaths(p)), .libPaths())
pids <- as.integer(unlist(parallel::clusterCall(cl, Sys.getpid)))
writeLines(as.character(pids), PIDFILE)
same_pids <- function() {
  p <- tryCatch(parallel::clusterCall(cl, Sys.getpid), error = function(e) NULL)
  is.list(p) && all(vapply(p, is.numeric, TRUE)) && identical(sort(as.integer(unlist(p))), sort(pids))
}
ref_stats <- rff_stats(x, y, m)
ref_glm <- rff_glm(x, yb, map = m, lambda = 1e-2, standardize = FALSE, progress = FALSE)
same_stats <- function(s) {
  isTRUE(all.equal(s$ZtZ, ref_stats$ZtZ, tolerance = 1e-10)) &&
    isTRUE(all.equal(s$Zty, ref_stats$Zty, tolerance = 1e-10)) && s$n == ref_stats$n
}
same_glm <- function(f) {
  isTRUE(all.equal(f$coefficients, ref_glm$coefficients, tolerance = 1e-6)) &&
    isTRUE(all.equal(f$intercept, ref_glm$intercept, tolerance = 1e-6))
}
'

run_cluster_child <- function(code, timeout = 150) {
  pidfile <- tempfile()
  on.exit({
    if (file.exists(pidfile)) {
      pids <- as.integer(readLines(pidfile))
      tools::pskill(pids, tools::SIGCONT)
      tools::pskill(pids, tools::SIGKILL)
    }
    unlink(pidfile)
  })
  out <- run_child(gsub("PIDFILE", deparse(pidfile), paste0(cluster_setup, code), fixed = TRUE),
                   timeout = timeout)
  out
}

expect_lines <- function(out, expected) {
  info <- paste(out$output, collapse = "\n")
  expect_equal(out$status, 0L, info = info)
  for (e in expected) expect_true(e %in% out$output, info = paste0("missing `", e, "` in:\n", info))
}

test_that("rff_stats_apply() interrupted by SIGINT mid-fit leaves the cluster in step", {
  skip_on_os("windows")
  out <- run_cluster_child('
ch <- split(seq_len(n), rep(1:80, each = 5))
file.create(slow)
file.create(flag)
r <- tryCatch(rff_stats_apply(ch, rd, m, cluster = cl, progress = FALSE, x = x, y = y,
                              slow = slow, nap = 0.1, flag = flag, master = Sys.getpid()),
              interrupt = function(e) "interrupted")
unlink(slow)
cat("INTERRUPTED", identical(r, "interrupted"), "\n")
cat("PIDS", same_pids(), "\n")
s <- rff_stats_apply(ch, rd, m, cluster = cl, progress = FALSE, x = x, y = y, slow = slow, nap = 0)
cat("STATS", same_stats(s), "\n")
f <- rff_glm_apply(split(seq_len(n), rep(1:4, each = 100)), rd, m, lambda = 1e-2, cluster = cl,
                   x = x, y = yb, slow = slow, nap = 0)
cat("GLM", same_glm(f), "\n")
')
  expect_lines(out, c("INTERRUPTED TRUE ", "PIDS TRUE ", "STATS TRUE ", "GLM TRUE "))
})

test_that("rff_glm_apply() interrupted by SIGINT mid-fit leaves the cluster in step", {
  skip_on_os("windows")
  out <- run_cluster_child('
ch <- split(seq_len(n), rep(1:4, each = 100))
file.create(slow)
file.create(flag)
r <- tryCatch(rff_glm_apply(ch, rd, m, lambda = 1e-2, cluster = cl, x = x, y = yb,
                            slow = slow, nap = 1.5, flag = flag, master = Sys.getpid()),
              interrupt = function(e) "interrupted")
unlink(slow)
cat("INTERRUPTED", identical(r, "interrupted"), "\n")
cat("PIDS", same_pids(), "\n")
f <- rff_glm_apply(ch, rd, m, lambda = 1e-2, cluster = cl, x = x, y = yb, slow = slow, nap = 0)
cat("GLM", same_glm(f), "\n")
s <- rff_stats_apply(ch, rd, m, cluster = cl, progress = FALSE, x = x, y = y, slow = slow, nap = 0)
cat("STATS", same_stats(s), "\n")
')
  expect_lines(out, c("INTERRUPTED TRUE ", "PIDS TRUE ", "GLM TRUE ", "STATS TRUE "))
})

test_that("a frozen worker (SIGSTOP): its chunks go to the live worker after `timeout`", {
  skip_on_os("windows")
  out <- run_cluster_child('
ch <- split(seq_len(n), rep(1:8, each = 50))
# a first fit records the workers\' pids
s0 <- rff_stats_apply(ch, rd, m, cluster = cl, progress = FALSE, x = x, y = y, slow = slow, nap = 0)
tools::pskill(pids[2], tools::SIGSTOP)
s <- rff_stats_apply(ch, rd, m, cluster = cl, progress = FALSE, x = x, y = y, slow = slow, nap = 0,
                     timeout = 5)
cat("STATS", same_stats(s), "\n")
f <- rff_glm_apply(split(seq_len(n), rep(1:4, each = 100)), rd, m, lambda = 1e-2, cluster = cl,
                   x = x, y = yb, slow = slow, nap = 0, timeout = 5)
cat("GLM", same_glm(f), paste(f$reread, collapse = ","), "\n")
tools::pskill(pids[1], tools::SIGSTOP)
e <- tryCatch(rff_stats_apply(ch, rd, m, cluster = cl, progress = FALSE, x = x, y = y,
                              slow = slow, nap = 0, timeout = 3), error = function(e) e)
cat("SCLASS", class(e)[1], inherits(e, "rff_error"), "\n")
cat("SMESSAGE", conditionMessage(e), "\n")
e2 <- tryCatch(rff_glm_apply(ch, rd, m, lambda = 1e-2, cluster = cl, x = x, y = yb, slow = slow,
                             nap = 0, timeout = 3), error = function(e) e)
cat("GCLASS", class(e2)[1], inherits(e2, "rff_error"), "\n")
cat("GMESSAGE", conditionMessage(e2), "\n")
cat("GPID", grepl(sprintf("node %d of the cluster (pid %d)", e2$worker, pids[e2$worker]),
                  conditionMessage(e2), fixed = TRUE), "\n")
tools::pskill(pids, tools::SIGCONT)
')
  expect_lines(out, c("STATS TRUE ", "GLM TRUE 3,4 ", "SCLASS rff_worker_error TRUE ",
                      "GCLASS rff_worker_error TRUE ", "GPID TRUE "))
  smsg <- grep("^SMESSAGE", out$output, value = TRUE)
  pids <- NULL
  expect_match(smsg, "did not answer within `timeout` (3 s)", fixed = TRUE)
  expect_match(smsg, "node 1 of the cluster (pid ", fixed = TRUE)
  expect_match(smsg, "node 2 of the cluster (pid ", fixed = TRUE)
  expect_match(grep("^GMESSAGE", out$output, value = TRUE), "did not answer within `timeout` (3 s)",
               fixed = TRUE)
})

test_that("`timeout` is checked", {
  m <- rff_map(2, D = 10)
  rd <- function(i) list(x = matrix(0, 2, 2), y = c(0, 1))
  for (bad in list(0, -1, NA, "5", c(1, 2), NULL)) {
    expect_rff_error(rff_stats_apply(1:2, rd, m, timeout = bad), "timeout")
    expect_rff_error(rff_glm_apply(1:2, rd, m, lambda = 1, timeout = bad), "timeout")
  }
})
