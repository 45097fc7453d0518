# Every registered .Call routine, once, under gctorture(TRUE): a missing
# PROTECT shows up as a crash or a result that differs from the same call
# made without gctorture. `routine` names what each call exercises, and the
# last test insists that every registered routine is covered.
set.seed(1)
torture_x <- matrix(rnorm(12), 6, 2)
torture_calls <- list(
  list(routine = "rff_draw_map",
       call = quote({ set.seed(2); rff_map(2, D = 6, kernel = "matern", nu = 0.7) })),
  list(routine = "rff_draw_map",
       call = quote({ set.seed(2); rff_map(2, D = 5, variant = "phase") })),
  list(routine = "rff_features",
       call = quote({ set.seed(3); rff_features(torture_x, D = 8, kernel = "laplace") })),
  list(routine = "rff_kernel_spec",
       call = quote(rff_kernel(torture_x, torture_x[1:2, ], kernel = "matern", nu = 1.3))),
  list(routine = "rff_kernel_spec",
       call = quote(rff_kernel(torture_x, kernel = "arccos", order = 1))),
  list(routine = "rff_draw_map",
       call = quote({ set.seed(4); rff_map(3, D = 10, sampler = "orthogonal", kernel = "matern") })),
  list(routine = "rff_draw_map",
       call = quote({ set.seed(4); rff_map(3, D = 10, sampler = "qmc", kernel = "laplace",
                                           variant = "phase") })),
  list(routine = "rff_draw_map",
       call = quote({
         set.seed(5)
         k <- rff_spectral(function(m, d) matrix(rnorm(m * d), d, m),
                           function(delta) exp(-sum(delta^2) / 2))
         rff_features(torture_x, D = 6, kernel = k)
       })),
  list(routine = "rff_kernel_error",
       call = quote({ set.seed(7); rff_kernel_error(torture_x, D = c(4, 8), reps = 2, keep = TRUE) })),
  list(routine = "rff_kernel_error",
       call = quote({ set.seed(7); rff_kernel_error(torture_x, torture_x[1:3, ], D = 6,
                                                     kernel = "arccos", order = 0) })),
  list(routine = "rff_kernel_error",
       call = quote({ set.seed(7); rff_kernel_error(torture_x, torture_x[1:3, ], D = 5,
                                                     variant = "phase", kernel = "laplace") })),
  list(routine = "rff_ridge_stats",
       call = quote({ set.seed(8); rff_stats(torture_x, torture_x[, 1], rff_map(2, D = 6)) })),
  list(routine = "rff_ridge_eigen",
       call = quote({ set.seed(8); fit <- rff_ridge(torture_x, torture_x[, 2], D = 6, nlambda = 3); fit })),
  list(routine = "rff_ridge_chol",
       call = quote({ set.seed(8); rff_ridge(torture_x, cbind(1, torture_x[, 2]), D = 6, lambda = c(0.1, 1)) })),
  list(routine = "rff_ridge_predict",
       call = quote({ set.seed(8); fit <- rff_ridge(torture_x, torture_x[, 2], D = 6, lambda = 0.1)
                      predict(fit, torture_x[1:3, ]) })),
  list(routine = "rff_halton",
       call = quote({ set.seed(6); rff:::halton(7, 3) }))
)

test_that("every entry point gives the same result under gctorture", {
  for (tc in torture_calls) {
    ref <- eval(tc$call)
    gctorture(TRUE)
    got <- tryCatch(eval(tc$call), error = function(e) e)
    gctorture(FALSE)
    expect_identical(got, ref, label = tc$routine)
  }
})

test_that("the gctorture calls cover every registered routine", {
  registered <- names(getDLLRegisteredRoutines("rff")$.Call)
  covered <- unique(vapply(torture_calls, `[[`, "", "routine"))
  expect_setequal(covered, registered)
})
