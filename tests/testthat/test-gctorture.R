# Every registered .Call routine, called directly under gctorture(TRUE): a
# missing PROTECT shows up as a crash or a result that differs from the
# same call made without gctorture. The arguments are prepared (and
# validated by the R wrappers' helpers) outside the torture, so only the C
# code runs under it. The last test insists that every registered routine
# is covered.
set.seed(1)
tx <- matrix(rnorm(12), 6, 2)
spec_of <- function(...) rff:::map_spec(2, ...)
gauss_spec <- rff_spectral(function(m, d) matrix(rnorm(m * d), d, m),
                           function(delta) exp(-sum(delta^2) / 2))
pair_map <- rff_map(2, D = 6, kernel = "matern", nu = 0.7)
phase_map <- rff_map(2, D = 5, variant = "phase", kernel = "laplace")
arccos_map <- rff_map(2, D = 6, kernel = "arccos", order = 0)
poly_map <- rff_map(2, D = 5, kernel = "polynomial", degree = 3)
nys_map <- rff_map(2, landmarks = tx[1:4, ], kernel = "matern", nu = 0.7)
nys_user_map <- rff_map(2, landmarks = tx[1:3, ], kernel = gauss_spec)
A <- crossprod(rff_features(tx, map = pair_map)) + diag(6) * 0.1
B <- matrix(rnorm(12), 6, 2)
torture_calls <- list(
  list("rff_draw_map", list(spec_of(D = 6, kernel = "matern", nu = 0.7))),
  list("rff_draw_map", list(spec_of(D = 5, variant = "phase"))),
  list("rff_draw_map", list(spec_of(D = 6, sampler = "orthogonal"))),
  list("rff_draw_map", list(spec_of(D = 5, sampler = "qmc", kernel = "laplace", variant = "phase"))),
  list("rff_draw_map", list(spec_of(D = 6, kernel = gauss_spec))),
  list("rff_features", list(tx, pair_map, 1L)),
  list("rff_features", list(tx, phase_map, 2L)),
  list("rff_features", list(tx, arccos_map, 1L)),
  list("rff_draw_map", list(spec_of(D = 5, kernel = "polynomial", degree = 3))),
  list("rff_features", list(tx, poly_map, 2L)),
  list("rff_features", list(tx, nys_map, 1L)),
  list("rff_features", list(tx, nys_user_map, 1L)),
  list("rff_kernel_exact", list(tx, tx[1:2, ], poly_map)),
  list("rff_kernel_error", list(tx, tx[1:2, ], rff_kernel(tx, tx[1:2, ], map = nys_map),
                                nys_map, 1L, TRUE, FALSE, 1L)),
  list("rff_ridge_stats", list(tx, cbind(tx[, 1]), 0, NULL, poly_map, c(0, 6), 4L, 1L)),
  list("rff_kernel_exact", list(tx, tx[1:2, ], pair_map)),
  list("rff_kernel_exact", list(tx, tx, arccos_map)),
  list("rff_kernel_error", list(tx, NULL, rff_kernel(tx, map = pair_map),
                                spec_of(D = 4), 2L, TRUE, TRUE, 1L)),
  list("rff_kernel_error", list(tx, tx[1:3, ], rff_kernel(tx, tx[1:3, ], map = phase_map),
                                phase_map, 1L, FALSE, FALSE, 2L)),
  list("rff_ridge_stats", list(tx, cbind(tx[, 1], 1), c(0.5, 1), NULL, pair_map, c(0, 6), 4L, 1L)),
  list("rff_ridge_stats", list(tx, cbind(tx[, 1], 1), c(0.5, 1), c(0, 1, 2, 0.5, 3, 1), pair_map, c(1, 6), 4L, 1L)),
  list("rff_ridge_chol", list(A, B, 0.1)),
  list("rff_ridge_eigen", list(A, 1L)),
  list("rff_ridge_eigen", list(A, 2L)),
  list("rff_gram_eigen", list(A, 1e-12, 2L, FALSE)),
  list("rff_gram_eigen", list(A, 0.5, 1L, FALSE)),
  list("rff_gram_eigen", list(tcrossprod(A[, 1:2]), 1e-12, 2L, TRUE)),
  list("rff_ridge_thin_products", list(B, NULL, 2L)),
  list("rff_ridge_thin_products", list(B, B, 1L)),
  list("rff_ridge_project", list(A, B, 2L)),
  list("rff_rows_product", list(A, B, FALSE, 2L)),
  list("rff_loo_block", list(matrix(rnorm(8), 2, 4), matrix(rnorm(10), 5, 2), c(4L, 1L),
                             c(2L, 1L), c(1, 0.5), matrix(c(0.1, 0.2, 0.3, 1), 2, 2),
                             c(0.5, -1), matrix(1, 2, 2))),
  list("rff_loo_block", list(matrix(rnorm(4), 2, 2), matrix(rnorm(10), 5, 2), c(4L, 1L),
                             2L, c(1, 0.5), matrix(c(0.1, 0.2, 0.3, 0.4), 2, 2), NULL, NULL)),
  list("rff_rows_product", list(B, A, TRUE, 1L)),
  list("rff_ridge_predict", list(tx, pair_map, B, 4L, 1L)),
  list("rff_halton", list(7L, 3L, TRUE)),
  list("rff_trig", list(c(-3e6, -1, 0, 2, 1e7))),
  list("rff_runtime_info", list(0, 2L)),
  # the switch read, and set to what it was (TRUE: wanted), and the kernel
  # alone
  list("rff_set_own_products", list(NA)),
  list("rff_blas_found", list()),
  list("rff_set_own_products", list(TRUE)),
  # the 512-bit kernels' switch, read
  list("rff_set_wide_products", list(NA)),
  list("rff_own_product", list(A, B, c(FALSE, FALSE), 0.5, matrix(1, nrow(A), ncol(B)), -1)),
  list("rff_glm_pass", list(tx, NULL, pair_map, c(0, 1, 1, 0, 1, 0), "binomial",
                            matrix(c(0.1, -0.2, 0, 0.3, 0, -0.1)), c(1, 2, 0, 1, 1, 3),
                            B[, 1, drop = FALSE], 0.2, 4L, 1L, TRUE)),
  list("rff_glm_pass", list(NULL, rff_features(tx, map = pair_map), pair_map,
                            c(1L, 2L, 2L, 1L, 2L, 1L), "multinomial", NULL, NULL, B,
                            c(0.1, -0.1), 4L, 2L, TRUE)),
  list("rff_glm_pass", list(tx, NULL, nys_map, c(0, 2, 1, 0, 3, 1), "poisson", NULL, NULL,
                            B[1:4, 1, drop = FALSE], 0.3, 4L, 1L, FALSE)),
  # the L-BFGS on 6 rows in a 3-dimensional span, 2 classes, with curvature
  # pairs and the current point handed in
  list("rff_glm_lbfgs", list(tx %*% matrix(c(1, 0.5, -0.3, 0.2, 1, 0.4), 2), c(1L, 2L, 2L, 1L, 2L, 1L),
                             "multinomial", NULL, c(1, 2, 0, 1, 1, 3), 8, matrix(0, 4, 2), 0.05,
                             c(2, 1e12), matrix(1 / (1:6 + 0.05), 3), diag(2), c(0.1, 0, -0.1), TRUE,
                             list(epsilon = 1e-8, maxit = 30L),
                             list(S = matrix(0.01 * (1:16), 8, 2), Y = matrix(0.02 * (16:1), 8, 2),
                                  lambda = 0.1), NULL, 2L, NULL)),
  # (its features left unturned: coefficients turned by V)
  list("rff_glm_lbfgs", list(tx, c(0, 1, 1, 0, 1, 0), "binomial", matrix(0.1, 6, 1), NULL, 6,
                             matrix(0, 3, 1), 0.01, 4, matrix(c(1.2, 0.8)), matrix(1), c(0, 0),
                             FALSE, list(epsilon = 1e-8, maxit = 30L), NULL,
                             list(f = 0.7, g = matrix(c(0, 0.1, -0.1)), eta = matrix(0.1, 6, 1),
                                  loss = 4.2), 1L, matrix(c(0.6, 0.8, -0.8, 0.6), 2))),
  # the ARD gradient from a given dF/dZ, and streamed from the statistics'
  # derivatives (weighted, two chunks, two threads)
  list("rff_ard_gradient", list(tx, pair_map, matrix(0.1 * (1:36), 6), NULL, NULL, NULL, NULL,
                                NULL, 4L, 1L)),
  list("rff_ard_gradient", list(tx, phase_map, NULL, rep(0.1, 5), diag(5) + 0.1, matrix(0.2, 5, 1),
                                matrix(c(-1, 0, 1, 2, -2, 0), 6), c(1, 2, 0, 1, 1, 3), 4L, 2L))
)

call_routine <- function(tc) {
  set.seed(99)   # routines that draw random numbers draw the same ones
  do.call(.Call, c(list(get(paste0("C_", tc[[1]]), asNamespace("rff"))), tc[[2]]))
}

test_that("every entry point gives the same result under gctorture", {
  for (tc in torture_calls) {
    ref <- call_routine(tc)
    gctorture(TRUE)
    got <- tryCatch(call_routine(tc), error = function(e) e)
    gctorture(FALSE)
    expect_identical(got, ref, label = tc[[1]])
  }
  # (rff_set_own_products(TRUE) above switched the kernel on behind
  # options(rff.products) and RFF_PRODUCTS: hand the setting back)
  state <- rff:::products_state
  state$opt <- NULL
  rff:::sync_products()
})

test_that("the gctorture calls cover every registered routine", {
  registered <- names(getDLLRegisteredRoutines("rff")$.Call)
  covered <- unique(vapply(torture_calls, `[[`, "", 1L))
  expect_setequal(covered, registered)
})
