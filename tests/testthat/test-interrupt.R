# Long computations stop soon after an interrupt and leave the session
# usable. setTimeLimit() is raised from R_CheckUserInterrupt(), the same
# place a Ctrl-C is noticed; a child process also gets a real SIGINT.

skip_if(nzchar(Sys.getenv("RFF_UNDER_VALGRIND")), "timings are meaningless under valgrind")

test_that("a long exact-kernel computation stops at a time limit", {
  x <- matrix(seq(0, 1, length.out = 6000), ncol = 1)
  t0 <- proc.time()[["elapsed"]]
  setTimeLimit(elapsed = 0.5, transient = TRUE)
  err <- tryCatch(rff_kernel(x, kernel = "matern", nu = 1.3), error = function(e) e)
  setTimeLimit(elapsed = Inf)
  took <- proc.time()[["elapsed"]] - t0
  expect_s3_class(err, "error")
  expect_match(conditionMessage(err), "time limit")
  expect_lt(took, 2.5)
  # the session still computes correctly afterwards
  expect_equal(rff_kernel(matrix(c(0, 1)))[1, 2], exp(-1 / 2))
})

test_that("SIGINT stops a long featurization in a child process within a second", {
  skip_on_os("windows")
  code <- '
x <- matrix(runif(40000 * 10), 40000, 10)
m <- rff_map(10, D = 4000)
pidfile <- Sys.getenv("RFF_PIDFILE")
res <- tryCatch({
  writeLines(as.character(Sys.getpid()), pidfile)
  t0 <- proc.time()[["elapsed"]]
  for (i in 1:50) rff_features(x, map = m, threads = 1)
  "finished"
}, interrupt = function(e) sprintf("interrupted after %.2f", proc.time()[["elapsed"]] - t0))
cat(res, "\\n")
cat("after:", rff_kernel(matrix(c(0, 1)))[1, 2], "\\n")
'
  pidfile <- tempfile()
  script <- tempfile(fileext = ".R")
  writeLines(c(sprintf(".libPaths(%s)", paste(deparse(.libPaths()), collapse = "")),
               "library(rff)", code), script)
  outfile <- tempfile()
  Sys.setenv(RFF_PIDFILE = pidfile)
  on.exit(Sys.unsetenv("RFF_PIDFILE"), add = TRUE)
  system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(script)),
          stdout = outfile, stderr = outfile, wait = FALSE)
  for (i in 1:300) if (file.exists(pidfile) && length(readLines(pidfile)) == 1L) break else Sys.sleep(0.1)
  pid <- as.integer(readLines(pidfile))
  Sys.sleep(1.5)
  sent <- proc.time()[["elapsed"]]
  tools::pskill(pid, tools::SIGINT)
  for (i in 1:300) {
    out <- if (file.exists(outfile)) readLines(outfile) else character()
    if (any(grepl("^after:", out))) break
    Sys.sleep(0.05)
  }
  waited <- proc.time()[["elapsed"]] - sent
  expect_true(any(grepl("^interrupted after", out)), label = paste(out, collapse = "\n"))
  expect_lt(waited, 1.5)
  expect_true(any(grepl("^after: 0.6065", out)))
})

test_that("a long streamed ridge fit stops at a time limit and holds no memory", {
  x <- matrix(runif(2e6 * 4), ncol = 4)
  y <- x[, 1]
  gc()
  before <- sum(gc()[, 2])
  t0 <- proc.time()[["elapsed"]]
  setTimeLimit(elapsed = 0.5, transient = TRUE)
  err <- tryCatch(rff_ridge(x, y, D = 400, lambda = 1e-3, progress = FALSE),
                  error = function(e) e)
  setTimeLimit(elapsed = Inf)
  took <- proc.time()[["elapsed"]] - t0
  expect_match(conditionMessage(err), "time limit")
  expect_lt(took, 2.5)
  # the chunk buffers were released with the interrupted call
  gc()
  expect_lt(sum(gc()[, 2]) - before, 5)   # MB
  expect_equal(rff_kernel(matrix(c(0, 1)))[1, 2], exp(-1 / 2))
})
