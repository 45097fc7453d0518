# rff's own product kernel (src/gemm.c, src/reflect.c): its products against
# base R, both routes (options(rff.products) "auto" and "blas") against base
# R and each other, and results that do not depend on `threads`.

own_product <- function(a, b, ta = FALSE, tb = FALSE, beta = 0, c = NULL, tri = -1) {
  m <- if (ta) ncol(a) else nrow(a)
  n <- if (tb) nrow(b) else ncol(b)
  if (is.null(c)) c <- matrix(NaN, m, n)
  .Call(rff:::C_rff_own_product, a, b, c(ta, tb), beta, c, tri)
}
has_own <- function() !is.null(own_product(matrix(1), matrix(1)))

# f(a, b, ta, tb, A, B, C) for random A (m x k), B (k x n) and C (m x n),
# with op(a) = A and op(b) = B under each of the four transposes
each_transpose <- function(m, n, k, f) {
  A <- matrix(rnorm(m * k), m, k)
  B <- matrix(rnorm(k * n), k, n)
  C <- matrix(rnorm(m * n), m, n)
  for (ta in c(FALSE, TRUE)) for (tb in c(FALSE, TRUE)) {
    f(if (ta) t(A) else A, if (tb) t(B) else B, ta, tb, A, B, C)
  }
}

# the kernels on 512-bit registers (where the processor has AVX-512F) on or
# off for `code`; the AVX2 ones when off. Returns code's value; NULL (code
# not run) when `wide` is asked for and the processor lacks it.
set_wide <- function(on) .Call(rff:::C_rff_set_wide_products, on)
has_wide <- function() {
  old <- set_wide(NA)
  on.exit(set_wide(old))
  isTRUE(set_wide(TRUE))
}
with_kernel <- function(wide, code) {
  old <- set_wide(NA)
  on.exit(set_wide(old))
  if (!identical(set_wide(wide), wide)) return(NULL)
  force(code)
}
# each kernel this processor runs: the 512-bit one where it can, and AVX2
kernels <- function() if (has_wide()) c(TRUE, FALSE) else FALSE

# (the option reaches the C code when an exported function checks its
# `threads`; the products called here directly need it handed over)
with_products <- function(route, code) {
  old <- options(rff.products = route)
  on.exit({
    options(old)
    rff:::sync_products()
  })
  rff:::sync_products()
  force(code)
}

test_that("the own kernel computes op(a) op(b) + beta c for every shape and transpose", {
  skip_if_not(has_own(), "no own kernel here (it needs x86-64 with AVX2 and FMA)")
  set.seed(1)
  # sizes around the register block (8 x 6), the row panel (128), the
  # inner panel (256 terms) and the narrow products (at most 64 columns of
  # c, which read a in place)
  shapes <- rbind(c(1, 1, 1), c(7, 5, 3), c(8, 6, 256), c(9, 7, 257), c(13, 1, 40),
                  c(130, 131, 300), c(257, 20, 513), c(3, 200, 0), c(45, 64, 300),
                  c(19, 65, 10))
  for (w512 in kernels()) for (s in seq_len(nrow(shapes))) with_kernel(w512, {
    m <- shapes[s, 1]; n <- shapes[s, 2]; k <- shapes[s, 3]
    each_transpose(m, n, k, function(a, b, ta, tb, A, B, C) {
      # beta = 0 ignores c, NaN included, as the BLAS does
      expect_equal(own_product(a, b, ta, tb), A %*% B, tolerance = 1e-13,
                   info = paste(c(m, n, k, ta, tb), collapse = " "))
      expect_equal(own_product(a, b, ta, tb, beta = 1, c = C), C + A %*% B, tolerance = 1e-13)
      expect_equal(own_product(a, b, ta, tb, beta = -2.5, c = C), -2.5 * C + A %*% B,
                   tolerance = 1e-13)
    })
  })
})

test_that("narrow products sum each entry as the general kernel does", {
  skip_if_not(has_own(), "no own kernel here (it needs x86-64 with AVX2 and FMA)")
  # c with 64 columns reads a in place, with 65 it packs a: the first 64
  # columns are the same to the last bit, whatever the transposes
  set.seed(9)
  for (w512 in kernels()) for (mk in list(c(37, 300), c(257, 513), c(8, 7))) with_kernel(w512, {
    m <- mk[1]; k <- mk[2]
    A <- matrix(rnorm(m * k), m, k)
    B <- matrix(rnorm(k * 65), k, 65)
    for (ta in c(FALSE, TRUE)) for (tb in c(FALSE, TRUE)) {
      a <- if (ta) t(A) else A
      wide <- own_product(a, if (tb) t(B) else B, ta, tb)
      narrow <- own_product(a, if (tb) t(B[, 1:64]) else B[, 1:64], ta, tb)
      expect_identical(narrow, wide[, 1:64], info = paste(m, k, ta, tb))
      one <- own_product(a, if (tb) t(B[, 7, drop = FALSE]) else B[, 7, drop = FALSE], ta, tb)
      expect_identical(one, wide[, 7, drop = FALSE], info = paste(m, k, ta, tb))
      # a last panel of at most 4 columns (3; 26 = 3 x 8 + 2), and of more (13)
      for (nc in c(3, 13, 26)) {
        part <- own_product(a, if (tb) t(B[, 1:nc]) else B[, 1:nc], ta, tb)
        expect_identical(part, wide[, 1:nc], info = paste(m, k, ta, tb, nc))
      }
    }
  })
})

test_that("the kernel's test entry checks its arguments", {
  a <- matrix(1, 2, 2)
  expect_error(.Call(rff:::C_rff_own_product, a, a, c(NA, FALSE), 0, a, -1), "trans",
               class = "rff_error")
  expect_error(.Call(rff:::C_rff_own_product, a, a, c(FALSE, FALSE), 0, a, NA_real_), "tri")
  expect_error(.Call(rff:::C_rff_own_product, a, a, c(FALSE, FALSE), 0, a, -2), "tri",
               class = "rff_error")
  expect_error(.Call(rff:::C_rff_own_product, a, matrix(1, 3, 2), c(FALSE, FALSE), 0, a, -1),
               "conform", class = "rff_error")
})

test_that("the own kernel's triangle leaves the entries below it untouched", {
  skip_if_not(has_own(), "no own kernel here (it needs x86-64 with AVX2 and FMA)")
  set.seed(2)
  a <- matrix(rnorm(300 * 140), 300, 140)
  C <- matrix(rnorm(140 * 140), 140, 140)
  full <- crossprod(a)
  for (w512 in kernels()) for (tri in c(0, 3, 9, 200)) with_kernel(w512, {
    kept <- row(C) <= col(C) + tri
    want <- ifelse(kept, full, C)
    expect_equal(own_product(a, a, TRUE, FALSE, beta = 0, c = C, tri = tri), want,
                 tolerance = 1e-13, info = paste("tri", tri, w512))
  })
  # rows of a column block above its diagonal block, as rff_dsyrk_threads()
  # asks: columns 128..139 against rows 0..139
  blk <- own_product(a, a[, 129:140], TRUE, FALSE, c = matrix(0, 140, 12), tri = 128)
  want <- crossprod(a, a[, 129:140])
  want[row(want) > col(want) + 128] <- 0
  expect_equal(blk, want, tolerance = 1e-13)
})

test_that("the 512-bit kernels give the AVX2 kernels' products to the last bit", {
  skip_if_not(has_own() && has_wide(), "no AVX-512F here: only the AVX2 kernels run")
  expect_error(set_wide(NULL), "on", class = "rff_error")
  both <- function(f) list(with_kernel(TRUE, f()), with_kernel(FALSE, f()))
  same <- function(f, info) {
    r <- both(f)
    expect_identical(r[[1]], r[[2]], info = info)
  }
  set.seed(12)
  # rows around one and two blocks of 8 (16, 17, 23, 24), the row panel
  # (128) and the narrow route; columns around 6, two panels of 8 (16) and
  # 64; inner terms around the panel of 256
  for (m in c(1, 8, 15, 16, 17, 24, 131)) for (n in c(1, 6, 16, 17, 26, 64, 70)) {
    k <- sample(c(3, 256, 300), 1)
    each_transpose(m, n, k, function(a, b, ta, tb, A, B, C) {
      same(function() own_product(a, b, ta, tb, beta = 0.5, c = C), paste(m, n, k, ta, tb))
    })
  }
  # triangles: blocks wholly inside, across and outside the kept part
  a <- matrix(rnorm(400 * 150), 400, 150)
  C <- matrix(rnorm(150 * 150), 150, 150)
  for (tri in c(0, 1, 7, 8, 15, 16, 40)) {
    same(function() own_product(a, a, TRUE, FALSE, c = C, tri = tri), paste("tri", tri))
  }
  # a GLM pass's products on rff's threads, and whole fits
  Z <- matrix(rnorm(700 * 90), 700, 90)
  R <- matrix(rnorm(700 * 26), 700, 26)
  same(function() .Call(rff:::C_rff_rows_product, Z, R, TRUE, 2L), "Z'R")
  same(function() .Call(rff:::C_rff_rows_product, Z, R[1:90, ], FALSE, 2L), "Z B")
  x <- matrix(rnorm(600 * 3), 600, 3)
  y <- factor(cut(x[, 1] + x[, 2]^2, 4))
  m <- rff_map(3, D = 200, lengthscale = 1)
  same(function() coef(rff_glm(x, y, map = m, nlambda = 5, threads = 2)), "rff_glm")
  same(function() coef(rff_ridge(x, x[, 1]^2, map = m, threads = 2)), "rff_ridge")
})

test_that("options(rff.products) is checked and switches the route", {
  old <- options(rff.products = "fast")
  on.exit(options(old))
  expect_error(rff_blas_info(), "rff.products", class = "rff_error")
  options(rff.products = "blas")
  expect_identical(rff_blas_info()$products, "blas")
  options(rff.products = "auto")
  info <- rff_blas_info()
  expect_identical(info$products, if (has_own() && info$blas == "plain" &&
                                        rff:::is_reference_blas(info$library)) "rff" else "blas")
  expect_output(print(info), "rff's calls")
})

test_that("both product routes give the statistics, products and eigenpairs of base R", {
  set.seed(3)
  x <- matrix(rnorm(400 * 3), 400, 3)
  y <- cbind(sin(x[, 1]), x[, 2]^2)
  m <- rff_map(3, D = 300, lengthscale = 1.5)
  Z <- rff_features(x, map = m, threads = 1)
  wide <- matrix(rnorm(150 * 300), 150, 300)
  A <- crossprod(matrix(rnorm(500 * 200), 500, 200))
  res <- list()
  for (route in c("auto", "blas")) res[[route]] <- with_products(route, {
    # Z'Z in column blocks (syrk "T"), and threads do not change it
    s1 <- rff_stats(x, y, m, threads = 1)
    s2 <- rff_stats(x, y, m, threads = 2)
    expect_identical(s1$ZtZ, s2$ZtZ)
    zc <- cbind(Z, 1)
    expect_equal(s1$ZtZ, crossprod(Z), tolerance = 1e-12, info = route)
    expect_equal(s1$Zty, crossprod(Z, sweep(y, 2, s1$yshift)), tolerance = 1e-12)
    # aa' (syrk "N") and a'b of the thin eigenproblem, Z V of leave-one-out
    tp <- function(a, b, th) .Call(rff:::C_rff_ridge_thin_products, a, b, th)
    expect_equal(tp(wide, NULL, 2L), tcrossprod(wide), tolerance = 1e-12)
    expect_identical(tp(wide, NULL, 1L), tp(wide, NULL, 2L))
    expect_equal(tp(wide, wide[, 1:140], 2L), crossprod(wide, wide[, 1:140]), tolerance = 1e-12)
    # the error study's Z_x Z_x' (panels of 256 columns) and Z_x Z_y'
    xy <- matrix(rnorm(200 * 3), 200, 3)
    est <- attr(rff_kernel_error(x, map = m, keep = TRUE, threads = 2), "estimate")[, , 1]
    expect_equal(est, tcrossprod(Z), tolerance = 1e-12)
    est <- attr(rff_kernel_error(x, xy, map = m, keep = TRUE, threads = 2), "estimate")[, , 1]
    expect_equal(est, tcrossprod(Z, rff_features(xy, map = m, threads = 1)), tolerance = 1e-12)
    pj <- .Call(rff:::C_rff_ridge_project, wide, t(wide), 2L)
    expect_equal(pj, wide %*% t(wide), tolerance = 1e-12)
    expect_identical(pj, .Call(rff:::C_rff_ridge_project, wide, t(wide), 1L))
    # the eigenpairs: the back transformation by blocks of reflectors (own)
    # or by dormtr (BLAS)
    e <- .Call(rff:::C_rff_ridge_eigen, A, 2L)
    expect_identical(e, .Call(rff:::C_rff_ridge_eigen, A, 1L))
    expect_equal(e$values, eigen(A, symmetric = TRUE, only.values = TRUE)$values[200:1],
                 tolerance = 1e-12)
    V <- e$vectors
    expect_lt(max(abs(A %*% V - V %*% diag(e$values))), 1e-10 * max(e$values))
    expect_lt(max(abs(crossprod(V) - diag(200))), 1e-10)
    list(stats = s1, e = e,
         glm = rff_glm(x, factor(y[, 1] > 0), map = m, lambda = 1e-3, threads = 2))
  })
  # the routes differ by rounding only
  # (each eigenvector up to its sign: the tridiagonal matrices differ by
  # rounding)
  va <- res$auto$e$vectors
  vb <- res$blas$e$vectors
  expect_equal(va * rep(sign(colSums(va * vb)), each = nrow(va)), vb, tolerance = 1e-9)
  expect_equal(coef(res$auto$glm), coef(res$blas$glm), tolerance = 1e-6)
})

test_that("products in column blocks pack op(a) once: the sums of one call of the kernel", {
  skip_if_not(has_own(), "rff's own kernel does not run on this processor")
  set.seed(9)
  with_products("auto", {
    # 203 rows (not a multiple of 8; two panels of 128 rows), 520 terms
    # (three panels of 256), 300 columns of c (blocks 128, 128 and a narrow 44)
    a <- matrix(rnorm(203 * 520), 203, 520)
    b <- matrix(rnorm(520 * 300), 520, 300)
    # a b (rff_dgemm_threads "N"), against one call of the kernel and base R
    pj <- .Call(rff:::C_rff_ridge_project, a, b, 2L)
    expect_identical(pj, own_product(a, b))
    expect_equal(pj, a %*% b, tolerance = 1e-13)
    expect_identical(pj, .Call(rff:::C_rff_ridge_project, a, b, 1L))
    # a'b (dgemm "T"): op(a) = a' packed from the columns of a
    at <- t(a)
    tp <- function(a, b, th) .Call(rff:::C_rff_ridge_thin_products, a, b, th)
    expect_identical(tp(at, b, 2L), own_product(at, b, ta = TRUE))
    expect_equal(tp(at, b, 1L), crossprod(at, b), tolerance = 1e-13)
    # aa' (syrk "N", 203 x 203: blocks of 128 and 75 columns, each the first
    # c0 + w rows of the packed a): both triangles the full product's
    aa <- tp(a, NULL, 2L)
    expect_identical(aa, own_product(a, a, tb = TRUE))
    expect_identical(aa, tp(a, NULL, 1L))
    # a'a (syrk "T", the statistics' Z'Z) through rff_stats(): against base R
    x <- matrix(rnorm(700 * 2), 700, 2)
    m <- rff_map(2, D = 300, lengthscale = 1)
    Z <- rff_features(x, map = m, threads = 1)
    s <- rff_stats(x, x[, 1], m, threads = 2)
    expect_equal(s$ZtZ, crossprod(Z), tolerance = 1e-12)
  })
})

test_that("products in row blocks (a GLM pass's Z B and Z'R) on both routes, any threads", {
  set.seed(8)
  for (route in c("auto", "blas")) with_products(route, {
    # 300 rows: two full blocks of 128 and a part one; 26 and 1 columns
    for (shape in list(c(300, 70, 26), c(300, 130, 1), c(129, 257, 5), c(7, 3, 2),
                       c(600, 260, 26))) {
      Z <- matrix(rnorm(shape[1] * shape[2]), shape[1], shape[2])
      B <- matrix(rnorm(shape[2] * shape[3]), shape[2], shape[3])
      R <- matrix(rnorm(shape[1] * shape[3]), shape[1], shape[3])
      zb1 <- .Call(rff:::C_rff_rows_product, Z, B, FALSE, 1L)
      zb2 <- .Call(rff:::C_rff_rows_product, Z, B, FALSE, 2L)
      expect_equal(zb1, Z %*% B, tolerance = 1e-13)
      expect_identical(zb1, zb2)
      zr1 <- .Call(rff:::C_rff_rows_product, Z, R, TRUE, 1L)
      zr2 <- .Call(rff:::C_rff_rows_product, Z, R, TRUE, 2L)
      expect_equal(zr1, crossprod(Z, R), tolerance = 1e-13)
      expect_identical(zr1, zr2)
      if (shape[2] > 128) {
        # Z'R in blocks of 128 rows, R' packed once for all blocks (own
        # kernel): the same sums as one block alone, whose R' is packed for it
        expect_identical(zr1[1:128, , drop = FALSE],
                         .Call(rff:::C_rff_rows_product, Z[, 1:128], R, TRUE, 1L))
        last <- 129:shape[2]
        expect_identical(zr1[last, , drop = FALSE],
                         .Call(rff:::C_rff_rows_product, Z[, last, drop = FALSE], R, TRUE, 1L))
      }
    }
    expect_identical(.Call(rff:::C_rff_rows_product, matrix(0, 0, 3), matrix(1, 3, 2), FALSE, 2L),
                     matrix(0, 0, 2))
    expect_identical(.Call(rff:::C_rff_rows_product, matrix(0, 4, 0), matrix(0, 0, 2), FALSE, 2L),
                     matrix(0, 4, 2))
    expect_error(.Call(rff:::C_rff_rows_product, matrix(1, 4, 3), matrix(1, 2, 2), FALSE, 1L),
                 "3 rows")
    for (bad in list(NA, NULL, c(TRUE, FALSE), "T", 1)) {
      expect_error(.Call(rff:::C_rff_rows_product, diag(2), diag(2), bad, 1L), "trans")
    }
  })
})

test_that("eigenproblems of every size and the kept eigenpairs of a Gram matrix", {
  set.seed(4)
  # 33: one panel of the tridiagonalization and a column; 34 to 37: each
  # remainder of the symmetric product's groups of 4 columns and rows
  for (n in c(1, 2, 3, 33, 34, 35, 36, 37, 64, 65, 129, 300)) {
    A <- crossprod(matrix(rnorm(2 * n * n), 2 * n, n))
    e <- .Call(rff:::C_rff_ridge_eigen, A, 2L)
    ref <- eigen(A, symmetric = TRUE)
    expect_equal(e$values, rev(ref$values), tolerance = 1e-11, info = n)
    # eigenvectors up to sign
    s <- sign(colSums(e$vectors * ref$vectors[, n:1]))
    expect_equal(e$vectors * rep(s, each = n), ref$vectors[, n:1, drop = FALSE],
                 tolerance = 1e-8, info = n)
  }
  # a Gram matrix of rank 40: only the kept vectors are transformed
  B <- matrix(rnorm(300 * 40), 300, 40)
  K <- tcrossprod(B)
  g <- .Call(rff:::C_rff_gram_eigen, K, 1e-12, 2L, FALSE)
  ref <- eigen(K, symmetric = TRUE)
  expect_equal(g$values, ref$values[1:40], tolerance = 1e-10)
  expect_equal(abs(crossprod(g$left, ref$vectors[, 1:40])), diag(40), tolerance = 1e-8)
})
