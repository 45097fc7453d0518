# The path every user off Linux x86-64 takes: rff's own product kernel
# switched off (RFF_PRODUCTS=blas, read in a fresh process), so that every
# product runs on R's BLAS. A sample of every model fitted in a child
# process on that path equals the same fits on this process's path to
# rounding; and the decision of ?rff_blas_info, from the BLAS found.

products_sample <- c(
  "set.seed(1)",
  "n <- 600; x <- matrix(rnorm(n * 3), n, 3)",
  "y <- sin(2 * x[, 1]) + x[, 2] * x[, 3] + rnorm(n, sd = 0.1)",
  "cls <- factor(ifelse(y > 0, 'hi', 'lo'))",
  "k3 <- cut(y, quantile(y, 0:3 / 3), include.lowest = TRUE, labels = c('a', 'b', 'c'))",
  "m <- rff_map(3, D = 300, lengthscale = 1)",
  "st <- rff_stats(x, y, map = m, threads = 2)",
  "r <- rff_ridge(x, y, map = m, threads = 2)",
  "g <- rff_glm(x, cls, map = m, lambda = 1e-3, threads = 2)",
  "g3 <- rff_glm(x, k3, map = m, lambda = 1e-3, threads = 2)",
  "set.seed(2); a <- rff_ridge(x, y, D = 200, threads = 2)",
  "K <- rff_kernel_error(x[1:80, ], D = 200, reps = 2)",
  "out <- list(ZZ = st$ZtZ, Zy = st$Zty, ridge = fitted(r), gcv = r$gcv,",
  "            glm = predict(g, x, type = 'link'), glm3 = predict(g3, x, type = 'response'),",
  "            auto = fitted(a), auto_ls = a$map$lengthscale, err = K$error,",
  "            products = rff_blas_info()$products, why = rff_blas_info()$why)"
)

test_that("with the own kernel off (RFF_PRODUCTS=blas) every model equals the default path to rounding", {
  file <- tempfile(fileext = ".rds")
  on.exit(unlink(file), add = TRUE)
  old <- Sys.getenv("RFF_PRODUCTS", unset = NA)
  on.exit(if (is.na(old)) Sys.unsetenv("RFF_PRODUCTS") else Sys.setenv(RFF_PRODUCTS = old),
          add = TRUE)
  Sys.setenv(RFF_PRODUCTS = "blas")
  res <- run_child(c(products_sample, sprintf("saveRDS(out, '%s')", file)), timeout = 300)
  expect_identical(res$status, 0L)
  off <- readRDS(file)
  expect_identical(off$products, "blas")
  expect_match(off$why, "RFF_PRODUCTS is \"blas\"", fixed = TRUE)
  Sys.unsetenv("RFF_PRODUCTS")
  on <- local({
    out <- NULL
    eval(parse(text = products_sample))
    out
  })
  for (f in c("ZZ", "Zy", "ridge", "gcv", "glm", "glm3", "auto", "auto_ls", "err")) {
    expect_equal(off[[f]], on[[f]], tolerance = 1e-7, label = f)
  }
})

test_that("a process takes the setting when rff is loaded, before any call checks its threads", {
  # (as a cluster worker does: it reaches the C code directly)
  old <- Sys.getenv("RFF_PRODUCTS", unset = NA)
  on.exit(if (is.na(old)) Sys.unsetenv("RFF_PRODUCTS") else Sys.setenv(RFF_PRODUCTS = old))
  Sys.setenv(RFF_PRODUCTS = "blas")
  res <- run_child("cat('OWN', .Call(rff:::C_rff_set_own_products, NA), '\\n')")
  expect_true(any(grepl("OWN FALSE", res$output)), label = paste(res$output, collapse = "\n"))
  # a bad value does not stop the package from loading; the first call says so
  Sys.setenv(RFF_PRODUCTS = "fastest")
  res <- run_child("r <- tryCatch(rff_blas_info(), rff_error = function(e) 'REFUSED'); cat(r, '\\n')")
  expect_true(any(grepl("REFUSED", res$output)), label = paste(res$output, collapse = "\n"))
})

test_that("the products follow the BLAS found (rff_blas_info()'s table)", {
  info <- rff_blas_info(threads = 1)
  found <- .Call(rff:::C_rff_blas_found)
  expect_true(found$blas %in% c("plain", "openblas", "blis", "mkl", "flexiblas"))
  expect_identical(found$blas, info$blas)
  trusted <- found$blas == "openblas" ||
    (found$blas == "plain" && rff:::is_reference_blas(info$library))
  setting <- rff:::products_setting()
  expect_identical(info$products == "rff", found$blas == "plain" && found$kernel &&
                     (setting == "rff" || (setting == "auto" && trusted)))
  expect_output(print(info), "products: ")
  # the reason, for every case of the table
  why <- rff:::products_reason
  expect_match(why("plain", "rff", TRUE, "auto", "/usr/lib/libblas.so.3"),
               "own kernel (libblas.so.3 is the reference BLAS", fixed = TRUE)
  expect_match(why("plain", "blas", TRUE, "auto", "/opt/lib/libveclib.dylib"),
               "libveclib.dylib is not the reference BLAS", fixed = TRUE)
  expect_match(why("plain", "blas", FALSE, "auto", ""), "needs an x86-64 processor", fixed = TRUE)
  expect_match(why("openblas", "blas", TRUE, "auto", "x"), "narrow products on rff's own kernel",
               fixed = TRUE)
  expect_match(why("flexiblas", "blas", TRUE, "auto", "x"), "FlexiBLAS runs its own threads",
               fixed = TRUE)
  expect_match(why("mkl", "blas", TRUE, "blas", "x"), "is \"blas\"", fixed = TRUE)
  # an optimized BLAS under an unknown name or place is not taken for the reference one
  for (p in c("/usr/lib/x86_64-linux-gnu/atlas/libblas.so.3",
              "/System/Library/Frameworks/Accelerate.framework/libBLAS.dylib",
              "/usr/lib64/libflexiblas.so.3", "", "C:/R/bin/x64/Rblas.dll")) {
    expect_false(rff:::is_reference_blas(p), label = p)
  }
  expect_true(rff:::is_reference_blas("/usr/lib/R/lib/libRblas.so"))
  old <- options(rff.products = "fast")
  on.exit(options(old))
  expect_rff_error(rff_blas_info(), "options(rff.products)", "must be \"auto\", \"blas\" or \"rff\"")
})
