# Long computations stop at an interrupt and leave the session usable.
# Deterministic: a test hook (rff:::C_rff_runtime_info) raises a real
# SIGINT (raise()), as a Ctrl-C would, at a chosen interrupt check, so R's
# own signal handler and interrupt path are exercised without a second
# process racing the first; and counts the checks; each
# test runs in a child R process, so an interrupt cannot reach the test run.

interrupt_at <- function(after, expr_code) {
  code <- sprintf('
hook <- function(after) .Call(rff:::C_rff_runtime_info, after, 1L)$checks
%s
gc(); before <- gc()[2L, 2L]
c0 <- hook(%d)
res <- tryCatch({ run(); "finished" }, interrupt = function(e) "interrupted")
c1 <- hook(0)
gc(); held <- gc()[2L, 2L] - before
cat("result:", res, "\\n")
cat("checks:", c1 - c0, "\\n")
cat("held_mb:", held, "\\n")
cat("after:", rff_kernel(matrix(c(0, 1)))[1, 2], "\\n")
', expr_code, after)
  out <- run_child(code, timeout = 120)
  field <- function(name) {
    line <- grep(paste0("^", name, ":"), out$output, value = TRUE)
    if (length(line) == 0L) return(NA_character_)
    trimws(sub(paste0("^", name, ":"), "", line[1L]))
  }
  list(status = out$status, output = out$output, result = field("result"),
       checks = as.numeric(field("checks")), held = as.numeric(field("held_mb")),
       after = as.numeric(field("after")))
}

test_that("an exact-kernel computation checks for interrupts every 64 columns and stops at one", {
  run <- 'x <- matrix(seq(0, 1, length.out = 3000), ncol = 1)
run <- function() rff_kernel(x, kernel = "matern", nu = 1.3)'
  full <- interrupt_at(0, run)
  expect_identical(full$result, "finished", label = paste(full$output, collapse = "\n"))
  expect_equal(full$checks, floor(3000 / 64))
  cut <- interrupt_at(3, run)
  expect_identical(cut$result, "interrupted", label = paste(cut$output, collapse = "\n"))
  expect_equal(cut$checks, 3)
  expect_equal(cut$after, exp(-1 / 2), tolerance = 1e-6)
})

test_that("a featurization stops at an interrupt between batches of blocks", {
  # batches of 2^22 / (256 D) blocks of 256 rows per thread: 4 blocks at
  # D = 4000, so 40,000 rows (157 blocks) take ceiling(157 / 4) = 40 checks
  # after the result's 1.28 GB are mapped (20 checks, one per 64 MB)
  run <- 'x <- matrix(runif(40000 * 10), 40000, 10)
m <- rff_map(10, D = 4000)
run <- function() invisible(rff_features(x, map = m, threads = 1))'
  full <- interrupt_at(0, run)
  expect_identical(full$result, "finished", label = paste(full$output, collapse = "\n"))
  expect_equal(full$checks, 20 + ceiling(157 / 4))
  cut <- interrupt_at(25, run)
  expect_identical(cut$result, "interrupted", label = paste(cut$output, collapse = "\n"))
  expect_equal(cut$checks, 25)
  expect_equal(cut$after, exp(-1 / 2), tolerance = 1e-6)
})

test_that("Nystrom and TensorSketch featurizations stop at an interrupt", {
  # Nystrom: a feature costs D / 16 Fourier ones, so batches are
  # 2^22 / (256 * 200 * 200 / 16) = 6 blocks: 16 blocks take 3 checks after
  # the one of the 6.5 MB result; TensorSketch at D = 200: 81 blocks a batch
  for (kind in c("nystrom", "sketch")) {
    run <- sprintf('x <- matrix(runif(4096 * 3), 4096, 3)
m <- if ("%s" == "nystrom") rff_map(3, landmarks = x[1:200, ]) else
  rff_map(3, D = 200, kernel = "polynomial", degree = 3)
run <- function() invisible(rff_features(x, map = m, threads = 1))', kind)
    full <- interrupt_at(0, run)
    expect_identical(full$result, "finished", label = paste(full$output, collapse = "\n"))
    expect_equal(full$checks, if (kind == "nystrom") 1 + 3 else 1 + 1)
    cut <- interrupt_at(2, run)
    expect_identical(cut$result, "interrupted", label = paste(cut$output, collapse = "\n"))
    expect_equal(cut$checks, 2)
    expect_equal(cut$after, exp(-1 / 2), tolerance = 1e-6)
  }
})

test_that("an interrupted streamed ridge fit releases its buffers", {
  run <- 'x <- matrix(runif(2e5 * 4), ncol = 4)
y <- x[, 1]
run <- function(rows = seq_len(nrow(x))) {
  rff_ridge(x[rows, ], y[rows], D = 800, lambda = 1e-3, chunk_size = 1000,
            progress = FALSE, threads = 1)
}
invisible(run(1:100))   # loads and compiles what a fit uses, before measuring'
  cut <- interrupt_at(5, run)
  expect_identical(cut$result, "interrupted", label = paste(cut$output, collapse = "\n"))
  expect_equal(cut$checks, 5)
  # the chunk buffer (1000 x 800 doubles, 6.4 MB) and Z'Z (800 x 800,
  # 5.1 MB) went with the interrupted call; R itself keeps about 1 MB of
  # vector cells after the first interrupt, whatever the sizes
  expect_lt(cut$held, 2)
  expect_equal(cut$after, exp(-1 / 2), tolerance = 1e-6)
})

test_that("the L-BFGS of a GLM in the span of its rows checks for interrupts every iteration", {
  run <- 'set.seed(1)
x <- matrix(rnorm(200), 100)
y <- factor(x[, 1] + rnorm(100) > 0)
m <- rff_map(2, D = 300, lengthscale = 1)
run <- function() rff_glm(x, y, map = m, lambda = 1e-4, standardize = FALSE,
                          progress = FALSE, threads = 1)
invisible(run())'
  full <- interrupt_at(0, run)
  expect_identical(full$result, "finished", label = paste(full$output, collapse = "\n"))
  # featurization, then one check an iteration: many more than 10
  expect_gt(full$checks, 10)
  cut <- interrupt_at(8, run)
  expect_identical(cut$result, "interrupted", label = paste(cut$output, collapse = "\n"))
  expect_equal(cut$checks, 8)
  expect_equal(cut$after, exp(-1 / 2), tolerance = 1e-6)
})

test_that("the n x n product of a kernel-error replicate checks for interrupts every 256 columns", {
  # 1100 rows: panels of 256 columns, 5 checks in the product of each
  # replicate, one after it and those of the featurization (one batch)
  run <- 'x <- matrix(runif(1100 * 2), 1100, 2)
run <- function() invisible(rff_kernel_error(x, D = 50, reps = 2))'
  full <- interrupt_at(0, run)
  expect_identical(full$result, "finished", label = paste(full$output, collapse = "\n"))
  expect_gte(full$checks, 2 * (ceiling(1100 / 256) + 1))
  cut <- interrupt_at(3, run)
  expect_identical(cut$result, "interrupted", label = paste(cut$output, collapse = "\n"))
  expect_equal(cut$checks, 3)
  expect_equal(cut$after, exp(-1 / 2), tolerance = 1e-6)
  # against one product (and the exact kernel) of base R
  set.seed(9)
  x <- matrix(runif(600 * 2), 600, 2)
  m <- rff_map(2, D = 40)
  Z <- rff_features(x, map = m)
  K <- rff_kernel(x, map = m)
  e <- rff_kernel_error(x, map = m, keep = TRUE)
  expect_equal(attr(e, "estimate")[, , 1], unclass(tcrossprod(Z))[, ], tolerance = 1e-12,
               ignore_attr = TRUE)
  expect_equal(e$max_abs, max(abs(tcrossprod(Z) - K)), tolerance = 1e-10)
  y <- matrix(runif(300 * 2), 300, 2)
  e <- rff_kernel_error(x, y, map = m, keep = TRUE)
  Zy <- rff_features(y, map = m)
  expect_equal(attr(e, "estimate")[, , 1], unclass(tcrossprod(Z, Zy))[, ], tolerance = 1e-12,
               ignore_attr = TRUE)
})
