# Layer 1 (foundations; calls nothing above it): the classed error rff_error,
# and the checks of arguments that need no kernel, map or model: numbers,
# strings, flags, inputs, responses, lambda paths, weights and offsets.

#' Errors raised by rff
#'
#' Every argument error raised by the package is a condition of class
#' `c("rff_error", "error", "condition")`. Its message names the offending
#' argument and says what was wrong; the field `arg` holds the argument's
#' name, so callers can catch these errors with
#' `tryCatch(..., rff_error = function(e) ...)`.
#'
#' @name rff_error
#' @examples
#' e <- tryCatch(rff_map(2, lengthscale = -1), rff_error = function(e) e)
#' class(e)
#' conditionMessage(e)
#' e$arg
NULL

rff_abort <- function(arg, ..., call = error_call()) {
  msg <- paste0(...)
  cond <- structure(
    list(message = msg, call = call, arg = arg),
    class = c("rff_error", "error", "condition")
  )
  stop(cond)
}

# The outermost call of an rff_*() function (the one the user made), shown
# with the message; internal helpers (check_*, rff_abort) are skipped.
error_call <- function() {
  calls <- sys.calls()
  for (cl in calls) {
    f <- cl[[1L]]
    if (is.name(f) && startsWith(as.character(f), "rff_") &&
        !identical(as.character(f), "rff_abort")) {
      return(cl)
    }
  }
  NULL
}

show_value <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.function(x)) return("a function")
  if (is.list(x) && !is.data.frame(x)) return(sprintf("a list of length %d", length(x)))
  if (is.data.frame(x)) return("a data frame")
  if (is.factor(x)) return("a factor")
  if (length(x) == 0L) return(sprintf("an empty %s vector", typeof(x)))
  if (length(x) > 1L) return(sprintf("a %s vector of length %d", typeof(x), length(x)))
  if (is.character(x)) return(sprintf("\"%s\"", x))
  format(x)
}

# Errors naming the first of `args` that the caller did not supply.
check_required <- function(args, env = parent.frame()) {
  for (a in args) {
    if (eval(call("missing", as.name(a)), env)) rff_abort(a, sprintf("`%s` is required", a))
  }
  invisible(TRUE)
}

is_number <- function(x) {
  (is.double(x) || is.integer(x)) && !is.object(x)
}

# A whole number >= lo (and <= hi), returned as an integer.
check_count <- function(x, arg, lo = 1, hi = .Machine$integer.max) {
  if (!is_number(x) || length(x) != 1L || is.na(x) || !is.finite(x) ||
      x != round(x) || x < lo || x > hi) {
    rff_abort(arg, sprintf("`%s` must be a whole number between %s and %s, got %s",
                           arg, format(lo), format(hi), show_value(x)))
  }
  as.integer(x)
}

check_positive <- function(x, arg) {
  if (!is_number(x) || length(x) != 1L || is.na(x) || !is.finite(x) || x <= 0) {
    rff_abort(arg, sprintf("`%s` must be a positive finite number, got %s",
                           arg, show_value(x)))
  }
  as.double(x)
}

check_string <- function(x, arg, choices) {
  if (!is.character(x) || length(x) != 1L || is.na(x)) {
    rff_abort(arg, sprintf("`%s` must be one of %s, got %s", arg,
                           paste0("\"", choices, "\"", collapse = ", "),
                           show_value(x)))
  }
  if (!x %in% choices) {
    rff_abort(arg, sprintf("`%s` must be one of %s, got \"%s\"", arg,
                           paste0("\"", choices, "\"", collapse = ", "), x))
  }
  x
}

check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    rff_abort(arg, sprintf("`%s` must be TRUE or FALSE, got %s", arg, show_value(x)))
  }
  x
}

# x as a double matrix: a numeric matrix, a numeric data frame or a vector;
# with na_ok, missing values (not infinite ones) are let through; with
# empty_ok, zero rows (new data to predict for, as predict.lm takes them).
check_x <- function(x, arg = "x", na_ok = FALSE, empty_ok = FALSE) {
  if (is.data.frame(x)) {
    ok <- vapply(x, function(col) is_number(col) || is.logical(col), logical(1))
    if (!all(ok)) {
      rff_abort(arg, sprintf("`%s` must have only numeric columns; column \"%s\" is %s",
                             arg, names(x)[!ok][1L], class(x[[which(!ok)[1L]]])[1L]))
    }
    rn <- attr(x, "row.names")
    x <- as.matrix(x)
    if (is.integer(rn)) rownames(x) <- NULL
  } else if (is.vector(x) && is_number(x)) {
    x <- matrix(x, ncol = 1L, dimnames = list(names(x), NULL))
  } else if (!(is.matrix(x) && (is_number(x) || is.logical(x)))) {
    rff_abort(arg, sprintf("`%s` must be a numeric matrix, data frame or vector, got %s",
                           arg, show_value(x)))
  }
  if (nrow(x) == 0L && !empty_ok) rff_abort(arg, sprintf("`%s` must have at least one row", arg))
  if (ncol(x) == 0L) rff_abort(arg, sprintf("`%s` must have at least one column", arg))
  if (is.logical(x) && !all(is.na(x))) storage.mode(x) <- "double"
  if (!is.double(x)) storage.mode(x) <- "double"
  if (na_ok) {
    if (any(is.infinite(x))) rff_abort(arg, sprintf("`%s` must not contain infinite values", arg))
  } else if (anyNA(x) || any(!is.finite(x))) {
    rff_abort(arg, sprintf("`%s` must not contain missing or infinite values", arg))
  }
  x
}

# Errors if any of the named sampling arguments was supplied along with map.
check_no_sampling_args <- function(supplied) {
  if (length(supplied)) {
    rff_abort("map", sprintf(
      "`map` fixes the features; do not also give %s",
      paste0("`", supplied, "`", collapse = ", ")))
  }
}

# Names among `args` that the caller of `env`'s function supplied explicitly.
supplied_args <- function(args, env) {
  args[!vapply(args, function(a) eval(call("missing", as.name(a)), env), logical(1))]
}

# Numbers of features for the theory helpers: positive whole numbers, even
# for "pair" (D/2 frequencies).
check_feature_counts <- function(D, variant, arg = "D") {
  if (!is_number(D) || length(D) == 0L) {
    rff_abort(arg, sprintf("`%s` must be positive whole numbers, got %s", arg, show_value(D)))
  }
  bad <- is.na(D) | !is.finite(D) | D < 1 | D != round(D)
  if (any(bad)) {
    rff_abort(arg, sprintf("`%s` must be positive whole numbers, got %s",
                           arg, show_value(D[bad][1L])))
  }
  if (variant == "pair" && any(D %% 2 != 0)) {
    rff_abort(arg, sprintf("`%s` must be even for variant \"pair\", got %s",
                           arg, format(D[D %% 2 != 0][1L])))
  }
  as.double(D)
}

# A factor, logical or character response asks for classification, which
# ridge regression is not: say what to use instead.
check_response_kind <- function(y, arg = "y") {
  kind <- if (is.factor(y)) "a factor" else if (is.logical(y)) "logical" else
    if (is.character(y)) "character" else NULL
  if (is.data.frame(y)) {
    bad <- vapply(y, function(v) is.factor(v) || is.logical(v) || is.character(v), logical(1))
    if (any(bad)) kind <- "a data frame with non-numeric columns"
  }
  if (!is.null(kind)) {
    rff_abort(arg, sprintf(paste0(
      "the response (`%s`) is %s: rff_ridge() and rff_cv() fit regression (gaussian) models. ",
      "For classification use rff_glm() (family \"binomial\" or \"multinomial\"); ",
      "to treat the classes as numbers ",
      "by least squares, give a numeric response explicitly, e.g. as.numeric(y == \"yes\")"),
      arg, kind))
  }
  invisible(y)
}

# y as an n x q double matrix (a vector is one response).
check_y <- function(y, n, arg = "y") {
  check_response_kind(y, arg)
  if (is.data.frame(y)) y <- as.matrix(y)
  if (!(is_number(y) || is.logical(y)) && !(is.matrix(y) && is.numeric(y))) {
    rff_abort(arg, sprintf("`%s` must be a numeric vector or matrix, got %s", arg, show_value(y)))
  }
  nm <- if (is.matrix(y)) colnames(y) else NULL
  rows <- if (is.matrix(y)) nrow(y) else length(y)
  if (rows != n) {
    rff_abort(arg, sprintf("`%s` must have one value per row of `x` (%d), got %d",
                           arg, n, rows))
  }
  y <- matrix(as.double(y), nrow = n, dimnames = list(NULL, nm))
  if (ncol(y) == 0L) rff_abort(arg, sprintf("`%s` must have at least one column", arg))
  if (anyNA(y) || any(!is.finite(y))) {
    rff_abort(arg, sprintf("`%s` must not contain missing or infinite values (%d found)",
                           arg, sum(!is.finite(y))))
  }
  # sums of squares of larger values overflow
  if (length(y) && max(abs(y)) > 1e140) {
    rff_abort(arg, sprintf(paste0(
      "`%s` has values as large as %s, whose sums of squares overflow; rescale `%s` ",
      "(the fit is linear in it)"), arg, format(max(abs(y)), digits = 3), arg))
  }
  y
}

check_lambda <- function(lambda, arg = "lambda") {
  if (is.null(lambda)) return(NULL)
  if (!is_number(lambda) || length(lambda) == 0L) {
    rff_abort(arg, sprintf("`%s` must be NULL or non-negative numbers, got %s",
                           arg, show_value(lambda)))
  }
  bad <- is.na(lambda) | !is.finite(lambda) | lambda < 0
  if (any(bad)) {
    rff_abort(arg, sprintf("`%s` must be non-negative and finite, got %s",
                           arg, format(lambda[bad][1L])))
  }
  as.double(lambda)
}

# predict()'s `new_levels`: what a row with a factor level no training row
# had gets (new_levels_signal()).
check_new_levels <- function(new_levels) {
  check_string(new_levels, "new_levels", c("none", "na", "error"))
}

check_ratio <- function(r) {
  if (!is_number(r) || length(r) != 1L || !is.finite(r) || r <= 0 || r >= 1) {
    rff_abort("lambda_min_ratio", sprintf(
      "`lambda_min_ratio` must be a number in (0, 1), got %s", show_value(r)))
  }
  as.double(r)
}

# The lambda path asked for: given values, or the length and range of a
# path chosen from the data (see lambda_values()); `extend`: a path chosen
# from the data may continue past its range while its best value is its
# last (path_extension(); fits pass it when `lambda_min_ratio` was not
# given).
check_path <- function(lambda, nlambda, lambda_min_ratio, extend = FALSE) {
  lambda <- check_lambda(lambda)
  list(lambda = lambda,
       nlambda = check_count(nlambda, "nlambda", lo = 1, hi = 10000),
       ratio = check_ratio(lambda_min_ratio), extend = is.null(lambda) && isTRUE(extend))
}

# Row weights: NULL, or one non-negative finite number per row, not all zero
# (unless `zero_ok`: the weights of one block among several).
check_weights <- function(weights, n, arg = "weights", zero_ok = FALSE) {
  if (is.null(weights)) return(NULL)
  if (!is_number(weights) || length(weights) != n) {
    rff_abort(arg, sprintf("`%s` must be NULL or %d non-negative numbers (one per row), got %s",
                           arg, n, show_value(weights)))
  }
  if (anyNA(weights) || any(!is.finite(weights)) || any(weights < 0)) {
    rff_abort(arg, sprintf("`%s` must be non-negative and finite", arg))
  }
  if (!zero_ok && !any(weights > 0)) rff_abort(arg, sprintf("`%s` must not all be zero", arg))
  as.double(weights)
}

# An offset: NULL, or one number per row (or an n x q matrix, one column per
# response), as an n x q matrix: subtracted from a gaussian response before
# fitting, added to the linear predictor of the binomial and Poisson
# families (q = 1); the multinomial family takes none.
check_offset <- function(offset, n, q, family = "gaussian") {
  if (is.null(offset)) return(NULL)
  if (identical(family, "multinomial")) {
    rff_abort("offset", "offsets are taken by the binomial and Poisson families, not by \"multinomial\"")
  }
  if (!(is_number(offset) || (is.matrix(offset) && is.numeric(offset))) ||
      !(length(offset) == n || (is.matrix(offset) && identical(dim(offset), c(as.integer(n), as.integer(q)))))) {
    rff_abort("offset", sprintf("`offset` must be NULL or %d numbers (one per row), got %s",
                                n, show_value(offset)))
  }
  if (anyNA(offset) || any(!is.finite(offset))) {
    rff_abort("offset", "`offset` must not contain missing or infinite values")
  }
  matrix(as.double(offset), n, q)
}

# An error for arguments given to a method that takes none.
check_no_dots <- function(dots) {
  if (length(dots)) {
    nm <- names(dots)
    rff_abort("...", sprintf("`...` must be empty; got %s",
                             if (is.null(nm) || !nzchar(nm[1L])) "an unnamed argument"
                             else sprintf("`%s`", nm[1L])))
  }
}

# `read` of rff_stats_apply() and rff_glm_apply(): a function of one chunk.
check_read <- function(read) {
  if (!is.function(read)) {
    rff_abort("read", sprintf("`read` must be a function of one chunk, got %s",
                              show_value(read)))
  }
  invisible(read)
}

# `timeout` of rff_stats_apply() and rff_glm_apply(): seconds a worker of a
# socket cluster may take over one job or round (Inf: no limit).
check_timeout <- function(timeout) {
  if (!is_number(timeout) || length(timeout) != 1L || is.na(timeout) || !(timeout > 0)) {
    rff_abort("timeout", sprintf(
      "`timeout` must be a positive number of seconds (Inf: no limit), got %s",
      show_value(timeout)))
  }
  as.double(timeout)
}
