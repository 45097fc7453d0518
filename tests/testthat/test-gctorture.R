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
  list(routine = "rff_trig",
       call = quote(rff:::trig_kernels(c(-3e6, -1, 0, 2, 1e7)))),
  list(routine = "rff_kernel",
       call = quote(rff_kernel(torture_x, torture_x[1:2, ], kernel = "matern", nu = 1.3)))
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
