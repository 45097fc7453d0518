# expect_rff_error(): helper-conditions.R

test_that("rff_map() rejects bad arguments with a classed error", {
  expect_rff_error(rff_map(0), "d")
  expect_rff_error(rff_map(2.5), "d")
  expect_rff_error(rff_map("a"), "d")
  expect_rff_error(rff_map(2, D = 0), "D")
  expect_rff_error(rff_map(2, D = -4), "D")
  expect_rff_error(rff_map(2, D = 11), "D")
  expect_rff_error(rff_map(2, D = NA), "D")
  expect_rff_error(rff_map(2, D = Inf), "D")
  expect_rff_error(rff_map(2, D = 1e12), "D")
  expect_rff_error(rff_map(2, kernel = "rbf"), "kernel")
  expect_rff_error(rff_map(2, kernel = NA_character_), "kernel")
  expect_rff_error(rff_map(2, kernel = c("gaussian", "laplace")), "kernel")
  expect_rff_error(rff_map(2, lengthscale = -1), "lengthscale")
  expect_rff_error(rff_map(2, lengthscale = 0), "lengthscale")
  expect_rff_error(rff_map(2, lengthscale = Inf), "lengthscale")
  expect_rff_error(rff_map(2, lengthscale = NA), "lengthscale")
  expect_rff_error(rff_map(2, lengthscale = c(1, 2, 3)), "lengthscale")
  expect_rff_error(rff_map(2, lengthscale = "1"), "lengthscale")
  expect_rff_error(rff_map(2, kernel = "matern", nu = 0), "nu")
  expect_rff_error(rff_map(2, kernel = "matern", nu = -1), "nu")
  expect_rff_error(rff_map(2, kernel = "matern", nu = NaN), "nu")
  expect_rff_error(rff_map(2, variant = "both"), "variant")
  expect_rff_error(rff_map(2, sampler = "sobol"), "sampler")
  expect_match(conditionMessage(tryCatch(rff_map(2, lengthscale = -1), error = identity)),
               "`lengthscale` must be positive and finite, got -1", fixed = TRUE)
})

test_that("rff_features() rejects bad data and maps", {
  m <- rff_map(2, D = 4)
  expect_rff_error(rff_features(matrix(c(1, NA), 1, 2), map = m), "x")
  expect_rff_error(rff_features(matrix(c(1, Inf), 1, 2), map = m), "x")
  expect_rff_error(rff_features(matrix(c(1, NaN), 1, 2), map = m), "x")
  expect_rff_error(rff_features(matrix(1, 1, 3), map = m), "x")
  # zero rows: through a map, zero rows of features (new data, as
  # predict.lm takes it); a map is not drawn from them
  expect_identical(dim(rff_features(matrix(numeric(0), 0, 2), map = m)), c(0L, 4L))
  expect_rff_error(rff_features(matrix(numeric(0), 0, 3), map = m), "x")
  expect_rff_error(rff_features(matrix(numeric(0), 0, 2)), "x")
  expect_rff_error(rff_features(matrix(numeric(0), 3, 0)), "x")
  expect_rff_error(rff_features("a"), "x")
  expect_rff_error(rff_features(list(1, 2)), "x")
  expect_rff_error(rff_features(factor(1:3)), "x")
  expect_rff_error(rff_features(NULL), "x")
  expect_rff_error(rff_features(mean), "x")
  expect_rff_error(rff_features(data.frame(a = 1, b = "x")), "x")
  expect_rff_error(rff_features(matrix(1, 2, 2), map = m, D = 10), "map")
  expect_rff_error(rff_features(matrix(1, 2, 2), map = m, kernel = "laplace"), "map")
  expect_rff_error(rff_features(matrix(1, 2, 2), map = unclass(m)), "map")
  bad <- m; bad$omega <- bad$omega[, 1, drop = FALSE]
  expect_rff_error(rff_features(matrix(1, 2, 2), map = bad), "map")
  bad <- m; bad$omega[1] <- NA
  expect_rff_error(rff_features(matrix(1, 2, 2), map = bad), "map")
  bad <- m; bad$D <- 5L
  expect_rff_error(rff_features(matrix(1, 2, 2), map = bad), "map$D")
  bad <- m; bad$omega <- NULL
  expect_rff_error(rff_features(matrix(1, 2, 2), map = bad), "map")
  bad <- rff_map(2, D = 4, variant = "phase"); bad$phase <- bad$phase[-1]
  expect_rff_error(rff_features(matrix(1, 2, 2), map = bad), "map")
  expect_rff_error(rff_features(matrix(1, 2, 2), map = m, threads = 0), "threads")
  expect_rff_error(rff_features(matrix(1, 2, 2), D = 11), "D")
  expect_rff_error(rff_features(matrix(1, 2, 2), lengthscale = c(1, 2, 3)), "lengthscale")
  old <- options(rff.max_gb = 1e-6)
  on.exit(options(old))
  expect_rff_error(rff_features(matrix(1, 100, 2), map = rff_map(2, D = 1000)), "D")
})

test_that("results larger than memory are refused before allocation", {
  x <- seq_len(2e5) / 1e5
  old <- options(rff.max_gb = 100)
  on.exit(options(old))
  # 2e5 x 2e5 doubles are 298 GB; without `y` the error names `x`
  expect_rff_error(rff_kernel(x, kernel = "laplace"), "x")
  expect_rff_error(rff_kernel(x, x[1:1e5], kernel = "laplace"), "y")
  # the default limit is the physical memory, read once and cached: as if
  # the machine had 100 GB, whatever it has
  options(rff.max_gb = NULL)
  cache <- rff:::cores_cache
  mem <- cache$mem_gb
  on.exit(cache$mem_gb <- mem, add = TRUE)
  cache$mem_gb <- 100
  expect_rff_error(rff_kernel(x), "x")
  cache$mem_gb <- NULL
  mb <- rff:::physical_memory_gb()
  if (file.exists("/proc/meminfo")) {
    line <- grep("^MemTotal:", readLines("/proc/meminfo"), value = TRUE)
    expect_equal(mb, as.numeric(gsub("[^0-9]", "", line)) / 2^20)
  } else {
    expect_identical(mb, Inf)
  }
})

test_that("D x D statistics larger than memory are refused before allocation", {
  old <- options(rff.max_gb = 100)
  on.exit(options(old))
  x <- matrix(runif(20), 10, 2)
  y <- runif(10)
  # 2e5 x 2e5 doubles are 298 GB
  expect_rff_error(rff_ridge(x, y, D = 2e5, progress = FALSE), "D")
  expect_rff_error(rff_stats(x, y, map = rff_map(2, D = 2e5)), "map")
  expect_rff_error(rff_ridge(x, y, map = rff_map(2, D = 2e5), progress = FALSE, standardize = FALSE), "map")
  # 10 folds (+ 4 copies) of 4e4 x 4e4 statistics are 167 GB
  expect_rff_error(rff_cv(x, y, folds = 10, D = 4e4, progress = FALSE), "D")
  # frequencies BLAS cannot index
  expect_rff_error(rff_map(50000, D = 1e5), "D")
})

test_that("rff_kernel() rejects bad arguments", {
  expect_rff_error(rff_kernel(matrix(1, 2, 2), matrix(1, 2, 3)), "y")
  expect_rff_error(rff_kernel(matrix(1, 2, 2), "a"), "y")
  expect_rff_error(rff_kernel(matrix(NA_real_, 2, 2)), "x")
  expect_rff_error(rff_kernel(1:3, kernel = "cosine"), "kernel")
  expect_rff_error(rff_kernel(1:3, lengthscale = c(1, 2)), "lengthscale")
  expect_rff_error(rff_kernel(1:3, kernel = "matern", nu = -2), "nu")
})

test_that("the C routines re-check what they rely on", {
  expect_error(.Call(rff:::C_rff_features, matrix(1, 2, 2), list(), 1L))
  expect_error(.Call(rff:::C_rff_features, "a", rff_map(2, 4), 1L))
  spec <- list(D = 4L, d = 2L, kernel = "nope", lengthscale = 1, nu = 1.5, variant = "pair")
  expect_error(.Call(rff:::C_rff_draw_map, spec))
  expect_error(.Call(rff:::C_rff_draw_map, list()))
  spec$kernel <- "gaussian"; spec$D <- 5L
  expect_error(.Call(rff:::C_rff_draw_map, spec))
  expect_error(.Call(rff:::C_rff_kernel_exact, matrix(1, 2, 2), matrix(1, 2, 3),
                     list(kernel = "gaussian", lengthscale = 1, nu = 1.5)))
  expect_error(.Call(rff:::C_rff_halton, -1L, 2L, TRUE))
  # lengthscales that are not positive and finite
  for (l in list(0, -1, Inf, c(1, 0))) {
    expect_error(.Call(rff:::C_rff_kernel_exact, matrix(1, 2, 2), matrix(1, 2, 2),
                       list(kernel = "gaussian", lengthscale = l, nu = 1.5)), "lengthscale")
    spec <- list(D = 4L, d = 2L, kernel = "gaussian", lengthscale = l, nu = 1.5,
                 variant = "pair")
    expect_error(.Call(rff:::C_rff_draw_map, spec), "lengthscale")
  }
})

test_that("the arguments a fit from data shares are checked in signature order", {
  args <- function(...) {
    a <- list(x = matrix(1:6, 3), y = c(1, 2, 3), lambda = NULL, intercept = TRUE,
              nlambda = 5, lambda_min_ratio = 0.01, threads = 1, progress = FALSE)
    do.call(rff:::check_fit_args, utils::modifyList(a, list(...)))
  }
  a <- args(lambda = c(2L, 1L))
  expect_identical(a$x, matrix(as.double(1:6), 3))
  expect_identical(dim(a$y), c(3L, 1L))
  expect_identical(as.vector(a$y), c(1, 2, 3))
  expect_identical(a$path, list(lambda = c(2, 1), nlambda = 5L, ratio = 0.01, extend = FALSE))
  expect_identical(a[c("intercept", "threads", "progress")],
                   list(intercept = TRUE, threads = 1L, progress = FALSE))
  expect_rff_error(args(x = "a", y = 1:2), "x")
  expect_rff_error(args(y = 1:2, lambda = -1), "y")
  expect_rff_error(args(lambda = -1, intercept = NA), "lambda")
  expect_rff_error(args(intercept = NA, nlambda = 0), "intercept")
  expect_rff_error(args(nlambda = 0, lambda_min_ratio = 2), "nlambda")
  expect_rff_error(args(lambda_min_ratio = 2, threads = 0), "lambda_min_ratio")
  expect_rff_error(args(threads = 0, progress = NA), "threads")
  expect_rff_error(args(progress = NA), "progress")
})

test_that("memory pre-checks count copies and name the argument and the size", {
  old <- options(rff.max_gb = 10)
  on.exit(options(old))
  # 1e5 x 4e4 frequencies at most: 29.8 GB
  e <- tryCatch(rff_map(1e5, D = 4e4), rff_error = function(e) e)
  expect_identical(e$arg, "D")
  expect_match(conditionMessage(e), "would need 29.8 GB, more than the 10 GB allowed", fixed = TRUE)
  # dist() of 1e5 rows and median()'s copy: 2 x 37.3 GB
  e <- tryCatch(rff_median_lengthscale(matrix(0, 1e5, 2), max_rows = 1e5),
                rff_error = function(e) e)
  expect_identical(e$arg, "max_rows")
  expect_match(conditionMessage(e), ", 2 copies) would need 74.5 GB", fixed = TRUE)
  # the exact kernel and one estimate of 3e4 rows: 2 x 6.7 GB
  e <- tryCatch(rff_kernel_error(matrix(0, 3e4, 1), D = 4), rff_error = function(e) e)
  expect_identical(e$arg, "x")
  expect_match(conditionMessage(e), ", 2 copies) would need 13.4 GB", fixed = TRUE)
  options(rff.max_gb = 0.4)  # 2 x 0.22 GB
  expect_rff_error(rff_kernel_error(matrix(0, 3e3, 1), matrix(0, 1e4, 1), D = 4), "y")
  # a GLM's feature cache larger than memory is skipped: the features are
  # streamed, with the same fit
  set.seed(1)
  x <- matrix(rnorm(4000), 2000)
  y <- as.numeric(x[, 1] > 0)
  m <- rff_map(2, D = 20)
  options(rff.max_gb = 1e-4)  # 320 KB of features do not fit, the statistics do
  f <- rff_glm(x, y, map = m, lambda = 0.01, cache_mb = 1e6)
  expect_false(f$cached)
  options(rff.max_gb = NULL)
  g <- rff_glm(x, y, map = m, lambda = 0.01, cache_mb = 1e6)
  expect_true(g$cached)
  expect_equal(coef(f), coef(g), tolerance = 1e-6)
})

test_that("the default memory limit is what the process can take: available memory, ulimit -v", {
  skip_on_os("windows")
  skip_if(!file.exists("/proc/meminfo") || !nzchar(Sys.which("bash")))
  expect_lte(rff:::memory_limit_gb(), rff:::physical_memory_gb())
  line <- grep("^MemAvailable:", readLines("/proc/meminfo"), value = TRUE)
  avail <- as.numeric(gsub("[^0-9]", "", line)) / 2^20
  expect_lt(abs(rff:::available_memory_gb() - avail), 0.5 * avail)
  # under an address-space limit of 3 GB, 7.5 GB of frequencies are an
  # rff_error naming `D`, not R's "cannot allocate vector" (not under
  # AddressSanitizer, whose shadow memory needs more address space)
  skip_if(nzchar(Sys.getenv("ASAN_OPTIONS")), "ulimit -v under AddressSanitizer")
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(c(sprintf(".libPaths(%s)", paste(deparse(.libPaths()), collapse = "")),
               "library(rff)",
               "e <- tryCatch(rff_map(1e4, D = 1e5), error = function(e) e)",
               "cat(class(e)[1], e$arg, rff:::available_memory_gb() < 3, '\\n')"), script)
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- system2("bash", c("-c", shQuote(sprintf("ulimit -v 3000000; %s --vanilla %s",
                                                 shQuote(rscript), shQuote(script)))),
                 stdout = TRUE, stderr = TRUE)
  expect_true(any(grepl("^rff_error D TRUE", out)), label = paste(out, collapse = "\n"))
})
