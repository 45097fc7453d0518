# rff under a threaded BLAS: the BLAS is found, held at one thread inside
# rff's parallel regions, given whole products with `threads` threads of its
# own, and given back its setting afterwards (also after an interrupt);
# results are identical for every `threads`. Run in a
# child R process that loads Debian's OpenBLAS (tools/install-deps.sh
# installs it without changing the default BLAS). Speed belongs to the
# benchmark (make bench), not here.

openblas_dir <- "/usr/lib/x86_64-linux-gnu/openblas-pthread"

run_openblas_child <- function(code) {
  old <- Sys.getenv(c("R_LD_LIBRARY_PATH", "LD_LIBRARY_PATH", "OPENBLAS_NUM_THREADS",
                      "RFF_PRODUCTS"), unset = NA)
  on.exit(for (v in names(old)) {
    if (is.na(old[[v]])) Sys.unsetenv(v) else do.call(Sys.setenv, as.list(old[v]))
  })
  Sys.setenv(R_LD_LIBRARY_PATH = paste(openblas_dir, file.path(R.home(), "lib"), sep = ":"),
             LD_LIBRARY_PATH = openblas_dir, OPENBLAS_NUM_THREADS = "2",
             RFF_PRODUCTS = "auto")   # (the default decision under OpenBLAS)
  run_child(code, timeout = 120)
}

test_that("rff_blas_info() reports the BLAS and the threads a call uses", {
  info <- rff_blas_info(threads = 1)
  expect_s3_class(info, "rff_blas_info")
  expect_true(info$blas %in% c("plain", "openblas", "blis", "mkl"))
  # OpenBLAS and BLIS get whole products; the others fixed column blocks
  expect_identical(info$split, if (info$blas %in% c("openblas", "blis")) "blas" else "blocks")
  expect_identical(info$threads, 1L)
  expect_false(info$forked)
  expect_gte(info$blas_threads, 1L)
  expect_output(print(info), "rff's calls: 1 thread")
  expect_error(rff_blas_info(threads = 0), class = "rff_error")
})

test_that("OMP_THREAD_LIMIT caps the threads a call uses, and results do not change", {
  set.seed(1)
  x <- matrix(rnorm(2000 * 4), 2000, 4)
  y <- cbind(sin(x[, 1]), x[, 2])
  m <- rff_map(4, D = 200)
  ref <- list(Z = rff_features(x, map = m, threads = 2),
              s = rff_stats(x, y, map = m, chunk_size = 700, threads = 2),
              p = predict(rff_ridge(x, y, map = m, lambda = 1e-3, threads = 2, progress = FALSE),
                          x, threads = 2))
  inputs <- tempfile(fileext = ".rds")
  result <- tempfile(fileext = ".rds")
  on.exit(unlink(c(inputs, result)))
  saveRDS(list(x = x, y = y, m = m), inputs)
  old <- Sys.getenv("OMP_THREAD_LIMIT", unset = NA)
  Sys.setenv(OMP_THREAD_LIMIT = "1")
  res <- run_child(sprintf('
a <- readRDS(%s)
saveRDS(list(threads = rff_blas_info(threads = 2)$threads,
             Z = rff_features(a$x, map = a$m, threads = 2),
             s = rff_stats(a$x, a$y, map = a$m, chunk_size = 700, threads = 2),
             p = predict(rff_ridge(a$x, a$y, map = a$m, lambda = 1e-3, threads = 2,
                                   progress = FALSE), a$x, threads = 2)), %s)
cat("DONE\\n")
', deparse(inputs), deparse(result)))
  if (is.na(old)) Sys.unsetenv("OMP_THREAD_LIMIT") else Sys.setenv(OMP_THREAD_LIMIT = old)
  expect_true(res$status == 0L && any(res$output == "DONE"),
              label = paste(res$output, collapse = "\n"))
  got <- readRDS(result)
  expect_identical(got$threads, 1L)
  expect_identical(got$Z, ref$Z)
  expect_identical(got$s, ref$s)
  expect_identical(got$p, ref$p)
})

test_that("under OpenBLAS results are identical for 1 and 2 threads and the BLAS setting is restored", {
  skip_on_os(c("windows", "mac"))
  if (!file.exists(file.path(openblas_dir, "libblas.so.3"))) {
    skip(paste("OpenBLAS is not installed in", openblas_dir, "(tools/install-deps.sh installs it)"))
  }
  res <- run_openblas_child('
info <- rff_blas_info()
stopifnot(info$blas == "openblas", info$blas_threads == 2L, info$split == "blas")
stopifnot(any(grepl("handed whole to the BLAS on 2 threads", capture.output(print(rff_blas_info(2))))))
set.seed(1)
x <- matrix(rnorm(3000 * 5), 3000, 5)
y <- cbind(sin(x[, 1]), cos(x[, 2]))
xw <- matrix(rnorm(600 * 520), 600, 520)   # wide inputs featurize with dgemm
m <- rff_map(5, D = 300)
mw <- rff_map(520, D = 40, lengthscale = 20)
ma <- rff_map(5, D = 300, kernel = "arccos")
m40 <- rff_map(5, D = 40)
y45 <- matrix(rnorm(400 * 45), 400)   # more responses than features
mD <- lapply(c(3, 17, 62, 129, 255, 513), function(D) rff_map(5, D = D, variant = "phase"))
run <- function(th) list(
  Z = rff_features(x, map = m, threads = th),
  Zw = rff_features(xw, map = mw, threads = th),
  Za = rff_features(x, map = ma, threads = th),
  s = rff_stats(x, y, map = m, chunk_size = 700, threads = th),
  s45 = rff_stats(x[1:400, ], y45, map = m40, chunk_size = 150, threads = th),
  # the cross-product handed whole to the BLAS, for widths around its blocking
  sD = lapply(mD, function(mm) rff_stats(x, y[, 1], map = mm, chunk_size = 1000, threads = th)),
  fit = coef(rff_ridge(x, y, map = m, lambda = c(1e-3, 1e-2), threads = th, progress = FALSE)),
  p = predict(rff_ridge(x, y, map = m, lambda = 1e-3, threads = th, progress = FALSE), x,
              threads = th),
  e = rff_kernel_error(x[1:200, ], map = m, threads = th, keep = TRUE),
  e2 = rff_kernel_error(x[1:200, ], x[201:350, ], map = m, threads = th, keep = TRUE))
r1 <- run(1)
stopifnot(rff_blas_info()$blas_threads == 2L)
r2 <- run(2)
for (nm in names(r1)) if (!identical(r1[[nm]], r2[[nm]])) stop("differs: ", nm)
# the statistics are right, not only repeatable
Z <- rff_features(x, map = m)
stopifnot(isTRUE(all.equal(r2$s$ZtZ, crossprod(Z), tolerance = 1e-12)))
stopifnot(isTRUE(all.equal(attr(r2$e, "estimate")[, , 1], tcrossprod(Z[1:200, ]), tolerance = 1e-12)),
          isTRUE(all.equal(attr(r2$e2, "estimate")[, , 1], tcrossprod(Z[1:200, ], Z[201:350, ]),
                           tolerance = 1e-12)))
# an interrupt inside a call gives the BLAS its setting back
.Call(rff:::C_rff_runtime_info, 3, 2L)
r <- tryCatch(rff_stats(x, y, map = m, chunk_size = 100, threads = 2), interrupt = function(e) "interrupted")
stopifnot(identical(r, "interrupted"), rff_blas_info()$blas_threads == 2L)
cat("DONE\\n")
')
  expect_equal(res$status, 0L, label = paste(res$output, collapse = "\n"))
  expect_true(any(res$output == "DONE"), label = paste(res$output, collapse = "\n"))
})

test_that("under OpenBLAS the narrow products of a GLM pass run on rff's kernel", {
  skip_on_os(c("windows", "mac"))
  if (!file.exists(file.path(openblas_dir, "libblas.so.3"))) {
    skip(paste("OpenBLAS is not installed in", openblas_dir, "(tools/install-deps.sh installs it)"))
  }
  res <- run_openblas_child('
stopifnot(rff_blas_info()$blas == "openblas")
own <- function(a, b, ta) {
  m <- if (ta) ncol(a) else nrow(a)
  .Call(rff:::C_rff_own_product, a, b, c(ta, FALSE), 0, matrix(NaN, m, ncol(b)), -1)
}
if (is.null(own(matrix(1), matrix(1), FALSE))) { cat("NOKERNEL\\n"); quit(save = "no") }
set.seed(3)
# Z B and Z\'R of a pass: 700 rows (blocks of 128 rows or features), 26 and
# 64 columns (narrow); 65 columns stay on the BLAS
Z <- matrix(rnorm(700 * 300), 700)
for (K in c(1, 3, 26, 64)) {
  B <- matrix(rnorm(300 * K), 300)
  R <- matrix(rnorm(700 * K), 700)
  for (th in 1:2) {
    zb <- .Call(rff:::C_rff_rows_product, Z, B, FALSE, th)
    zr <- .Call(rff:::C_rff_rows_product, Z, R, TRUE, th)
    if (!identical(zb, own(Z, B, FALSE)) || !identical(zr, own(Z, R, TRUE))) stop("not the kernel: ", K)
    stopifnot(isTRUE(all.equal(zb, Z %*% B, tolerance = 1e-13)),
              isTRUE(all.equal(zr, crossprod(Z, R), tolerance = 1e-13)))
  }
}
# (OpenBLAS sums in another order: its products differ from the kernel\'s
# in the last bits)
B65 <- matrix(rnorm(300 * 65), 300)
z65 <- .Call(rff:::C_rff_rows_product, Z, B65, FALSE, 2L)
stopifnot(isTRUE(all.equal(z65, Z %*% B65, tolerance = 1e-13)), !identical(z65, own(Z, B65, FALSE)))
# options(rff.products = "blas") keeps them on OpenBLAS
.Call(rff:::C_rff_set_own_products, FALSE)
B <- matrix(rnorm(300 * 26), 300)
zb <- .Call(rff:::C_rff_rows_product, Z, B, FALSE, 2L)
stopifnot(isTRUE(all.equal(zb, Z %*% B, tolerance = 1e-13)), !identical(zb, own(Z, B, FALSE)))
.Call(rff:::C_rff_set_own_products, TRUE)
# a multinomial fit is the same on 1 and 2 threads
x <- matrix(rnorm(900 * 4), 900)
y <- factor(max.col(cbind(x[, 1], x[, 2]^2, sin(3 * x[, 3]))))
fit <- function(th) {
  set.seed(5)
  f <- rff_glm(x, y, D = 60, lengthscale = 1.5, threads = th, progress = FALSE)
  list(coef(f), f$lambda_best)
}
stopifnot(identical(fit(1), fit(2)))
cat("DONE\\n")
')
  expect_equal(res$status, 0L, label = paste(res$output, collapse = "\n"))
  if (any(res$output == "NOKERNEL")) skip("rff's own kernel does not run on this processor")
  expect_true(any(res$output == "DONE"), label = paste(res$output, collapse = "\n"))
})

test_that("the default threads leave out the cores other processes are running on", {
  old <- options(rff.threads = NULL)
  on.exit(options(old))
  # the run queue of /proc/loadavg less this process's own running threads
  expect_identical(rff:::running_others("0.52 0.61 0.70 3/812 4242", c("R", "S", "S")), 2L)
  expect_identical(rff:::running_others("0.52 0.61 0.70 3/812 4242", c("R", "R", "S")), 1L)
  # the reading thread itself is running, whatever its stat said
  expect_identical(rff:::running_others("1.00 1.00 1.00 1/90 7", character()), 0L)
  # the state follows the command name, which may hold ") "
  expect_identical(rff:::task_state("4242 (R) S 1 4242 4242 0 -1"), "S")
  expect_identical(rff:::task_state("4243 (odd) name) R 1 4242 4242 0 -1"), "R")
  expect_identical(rff:::task_state(character()), "")
  busy <- rff:::busy_cores()
  expect_true(is.integer(busy) && length(busy) == 1L && busy >= 0L)
  n <- rff:::default_threads()
  expect_true(n >= 1L && n <= rff:::detected_cores())
  all_cores <- rff:::default_threads(busy = 0L)
  expect_identical(rff:::default_threads(busy = 1L), max(1L, all_cores - 1L))
  expect_identical(rff:::default_threads(busy = 1000L), 1L)
  # a thread count given by option is used as it is
  options(rff.threads = 3L)
  expect_identical(rff:::default_threads(), 3L)
})
