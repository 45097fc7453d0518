# Checks of the conditions rff signals.

# The condition is an rff_error naming `arg` (its `arg` field), with
# `pattern` (by default `arg` in backticks) in its message, matched as is.
expect_rff_error <- function(expr, arg, pattern = paste0("`", arg, "`")) {
  e <- tryCatch(expr, rff_error = function(e) e)
  expect_s3_class(e, "rff_error")
  expect_identical(e$arg, arg)
  expect_match(conditionMessage(e), pattern, fixed = TRUE)
}

# The `arg` field of the rff_error that `expr` signals (the value of `expr`
# when it signals none).
rff_error_arg <- function(expr) tryCatch(expr, rff_error = function(e) e$arg)
