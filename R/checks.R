# Argument validation and the classed error helper. Every exported function
# validates its arguments here before anything reaches C.

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

# The Matern smoothness: a positive number, within [nu_range] for the Matern
# kernel (the other kernels ignore it).
nu_range <- c(0.05, 1e6)
check_nu <- function(nu, kernel) {
  nu <- check_positive(nu, "nu")
  if (identical(kernel, "matern") && (nu < nu_range[1L] || nu > nu_range[2L])) {
    rff_abort("nu", sprintf(paste0(
      "`nu` must be between %g and %g for the Matern kernel, got %s; as nu grows ",
      "the kernel tends to the Gaussian (kernel = \"gaussian\")"),
      nu_range[1L], nu_range[2L], format(nu)))
  }
  nu
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

rff_kernels <- c("gaussian", "laplace", "matern", "arccos", "polynomial")
rff_variants <- c("pair", "phase")
rff_samplers <- c("iid", "orthogonal", "qmc", "nystrom")

# A kernel name, or a user-defined spectral measure made by rff_spectral().
check_kernel <- function(kernel, arg = "kernel") {
  if (inherits(kernel, "rff_spectral")) return(check_spectral(kernel, arg))
  if (is.list(kernel)) {
    rff_abort(arg, sprintf(
      "`%s` must be a kernel name or an object made by rff_spectral(), got %s",
      arg, show_value(kernel)))
  }
  check_string(kernel, arg, rff_kernels)
}

check_spectral <- function(kernel, arg = "kernel") {
  if (!is.list(kernel) || !is.function(kernel$sample) || !is.function(kernel$kappa) ||
      !is.character(kernel$name) || length(kernel$name) != 1L) {
    rff_abort(arg, sprintf(
      "`%s` is a damaged rff_spectral object: it needs functions `sample` and `kappa` and a `name`",
      arg))
  }
  kernel
}

check_order <- function(order) {
  if (!is_number(order) || length(order) != 1L || is.na(order) || !order %in% c(0, 1)) {
    rff_abort("order", sprintf("`order` must be 0 or 1, got %s", show_value(order)))
  }
  as.integer(order)
}

# The samplers each kernel supports, and the arc-cosine kernel's one variant.
check_sampler_kernel <- function(sampler, kernel, variant) {
  spectral <- inherits(kernel, "rff_spectral")
  if (spectral && sampler != "iid") {
    rff_abort("sampler", sprintf(
      "`sampler` \"%s\" needs a kernel whose spectral law the package knows; a user-defined rff_spectral() kernel supports only \"iid\"",
      sampler))
  }
  if (!spectral && sampler == "orthogonal" && !kernel %in% c("gaussian", "matern", "arccos")) {
    rff_abort("sampler", sprintf(
      "`sampler` \"orthogonal\" needs a radial kernel (\"gaussian\", \"matern\", \"arccos\"), got kernel \"%s\"",
      kernel))
  }
  if (!spectral && kernel == "arccos" && variant != "pair") {
    rff_abort("variant", sprintf(
      "`variant` \"%s\" has no meaning for the arc-cosine kernel, which has no phases; use \"pair\"",
      variant))
  }
  sampler
}

check_variant <- function(variant) {
  # the default is the whole choice vector, as in match.arg()
  if (identical(variant, rff_variants)) variant <- "pair"
  check_string(variant, "variant", rff_variants)
}

check_sampler <- function(sampler) check_string(sampler, "sampler", rff_samplers)

check_lengthscale <- function(lengthscale, d) {
  if (identical(lengthscale, "median")) {
    rff_abort("lengthscale", paste0(
      "`lengthscale` \"median\" needs the data: give `x` to rff_features() or ",
      "rff_kernel(), which compute it; rff_map() knows only `d`"))
  }
  if (!is_number(lengthscale) || length(lengthscale) == 0L ||
      anyNA(lengthscale) || any(!is.finite(lengthscale)) || any(lengthscale <= 0)) {
    bad <- if (is_number(lengthscale) && length(lengthscale) > 0L) {
      lengthscale[is.na(lengthscale) | !is.finite(lengthscale) | lengthscale <= 0][1L]
    } else lengthscale
    rff_abort("lengthscale", sprintf(
      "`lengthscale` must be positive and finite, got %s", show_value(bad)))
  }
  if (length(lengthscale) != 1L && length(lengthscale) != d) {
    rff_abort("lengthscale", sprintf(
      "`lengthscale` must have length 1 or %d (one per column of `x`), got length %d",
      d, length(lengthscale)))
  }
  as.double(lengthscale)
}

# x as a double matrix: a numeric matrix, a numeric data frame or a vector;
# with na_ok, missing values (not infinite ones) are let through.
check_x <- function(x, arg = "x", na_ok = FALSE) {
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
  if (nrow(x) == 0L) rff_abort(arg, sprintf("`%s` must have at least one row", arg))
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

check_map <- function(map, arg = "map") {
  if (!inherits(map, "rff_map")) {
    rff_abort(arg, sprintf("`%s` must be an object made by rff_map(), got %s",
                           arg, show_value(map)))
  }
  if (is_other_map(map)) return(invisible(check_other_map(map, arg)))
  fields <- c("omega", "D", "d", "kernel", "lengthscale", "nu", "variant", "sampler")
  missing_fields <- setdiff(fields, names(map))
  if (length(missing_fields)) {
    rff_abort(arg, sprintf("`%s` is damaged: it has no %s", arg,
                           paste0("`", missing_fields, "`", collapse = ", ")))
  }
  D <- check_count(map$D, paste0(arg, "$D"))
  d <- check_count(map$d, paste0(arg, "$d"))
  variant <- check_string(map$variant, paste0(arg, "$variant"), rff_variants)
  kernel <- check_kernel(map$kernel, paste0(arg, "$kernel"))
  if (identical(kernel, "arccos")) {
    if (!is_number(map$order) || length(map$order) != 1L || !isTRUE(map$order %in% c(0, 1))) {
      rff_abort(paste0(arg, "$order"), sprintf(
        "`%s$order` must be 0 or 1 for an arc-cosine map, got %s", arg, show_value(map$order)))
    }
    if (variant != "pair") {
      rff_abort(paste0(arg, "$variant"), sprintf(
        "`%s$variant` must be \"pair\" for an arc-cosine map", arg))
    }
  }
  if (variant == "pair" && D %% 2L != 0L) {
    rff_abort(paste0(arg, "$D"), sprintf("`%s$D` must be even for a \"pair\" map, got %d", arg, D))
  }
  m <- if (variant == "pair") D / 2 else D
  om <- map$omega
  if (!is.matrix(om) || !is.double(om) || !identical(dim(om), c(d, as.integer(m))) ||
      any(!is.finite(om))) {
    rff_abort(arg, sprintf(
      "`%s` is damaged: `omega` must be a finite %d x %d double matrix", arg, d, as.integer(m)))
  }
  if (variant == "phase") {
    ph <- map$phase
    if (!is.double(ph) || length(ph) != D || any(!is.finite(ph))) {
      rff_abort(arg, sprintf("`%s` is damaged: `phase` must be %d finite numbers", arg, D))
    }
  } else if (!is.null(map$phase)) {
    rff_abort(arg, sprintf("`%s` is damaged: a \"pair\" map has no `phase`", arg))
  }
  invisible(map)
}

# Errors if any of the named sampling arguments was supplied along with map.
check_no_sampling_args <- function(supplied) {
  if (length(supplied)) {
    rff_abort("map", sprintf(
      "`map` fixes the features; do not also give %s",
      paste0("`", supplied, "`", collapse = ", ")))
  }
}

check_threads <- function(threads) {
  if (is.null(threads)) return(default_threads())
  check_count(threads, "threads", lo = 1, hi = 1024)
}

default_threads <- function() {
  opt <- getOption("rff.threads")
  if (!is.null(opt)) return(check_count(opt, "options(rff.threads)", lo = 1, hi = 1024))
  n <- detected_cores()
  limit <- Sys.getenv("_R_CHECK_LIMIT_CORES_", "")
  if (nzchar(limit) && !identical(tolower(limit), "false")) n <- min(n, 2L)
  as.integer(n)
}

# parallel::detectCores() starts a shell on some platforms, and the memory
# size needs a file read: ask once per session.
cores_cache <- new.env(parent = emptyenv())
detected_cores <- function() {
  if (is.null(cores_cache$n)) {
    n <- parallel::detectCores(logical = TRUE)
    cores_cache$n <- if (is.na(n) || n < 1L) 1L else as.integer(n)
  }
  cores_cache$n
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

# A kernel for which Proposition 2 holds: built-in or rff_spectral(), but
# not the arc-cosine kernel (no kappa(x - y)).
check_shift_invariant <- function(kernel, arg = "kernel") {
  kernel <- check_kernel(kernel, arg)
  if (!is_shift_invariant(kernel)) {
    rff_abort(arg, sprintf(paste0(
      "`%s` must be a shift-invariant kernel: \"%s\" is not (k(x, y) is no ",
      "function kappa(x - y)), so Proposition 2 does not apply to it"), arg, kernel))
  }
  kernel
}

# ---- ridge regression ----

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

# The lambda path asked for: given values, or the length and range of a
# path chosen from the data (see lambda_values()).
check_path <- function(lambda, nlambda, lambda_min_ratio) {
  list(lambda = check_lambda(lambda),
       nlambda = check_count(nlambda, "nlambda", lo = 1, hi = 10000),
       ratio = check_ratio(lambda_min_ratio))
}

# The arguments every fit from data shares, checked in the order of the
# signatures: x, y (by the model's `response` checker), lambda, intercept,
# the rest of the path (lambda again, a no-op), threads, progress.
check_fit_args <- function(x, y, lambda, intercept, nlambda, lambda_min_ratio,
                           threads, progress, response = check_y) {
  x <- check_x(x)
  y <- response(y, nrow(x))
  lambda <- check_lambda(lambda)
  intercept <- check_flag(intercept, "intercept")
  list(x = x, y = y, path = check_path(lambda, nlambda, lambda_min_ratio),
       intercept = intercept, threads = check_threads(threads),
       progress = check_flag(progress, "progress"))
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
# response), subtracted from the response before fitting.
check_offset <- function(offset, n, q) {
  if (is.null(offset)) return(NULL)
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

check_chunk_size <- function(chunk_size, D) {
  if (is.null(chunk_size)) return(default_chunk_size(D))
  check_count(chunk_size, "chunk_size", lo = 1)
}

# About 16 MB of features per block, and at least one featurization block.
default_chunk_size <- function(D) as.integer(max(256, floor(2^21 / D)))

check_stats <- function(stats, arg) {
  if (!inherits(stats, "rff_stats")) {
    rff_abort(arg, sprintf("`%s` must be an object made by rff_stats(), got %s",
                           arg, show_value(stats)))
  }
  invisible(stats)
}

# Sampling arguments passed through `...` must be arguments of rff_map();
# `caller` names the function the user called.
check_map_args <- function(args, caller = "rff_ridge") {
  allowed <- setdiff(names(formals(rff_map)), "d")
  nm <- names(args)
  if (is.null(nm)) nm <- rep("", length(args))
  bad <- nm[!nm %in% allowed]
  if (length(bad)) {
    what <- if (any(!nzchar(bad))) "an unnamed argument" else
      paste0("`", bad[nzchar(bad)][1L], "`")
    rff_abort(if (nzchar(bad[1L])) bad[1L] else "...", sprintf(
      "%s is not an argument of %s() or rff_map() (%s)", what, caller,
      paste0("`", allowed, "`", collapse = ", ")))
  }
  invisible(args)
}

check_ratio <- function(r) {
  if (!is_number(r) || length(r) != 1L || !is.finite(r) || r <= 0 || r >= 1) {
    rff_abort("lambda_min_ratio", sprintf(
      "`lambda_min_ratio` must be a number in (0, 1), got %s", show_value(r)))
  }
  as.double(r)
}

# Candidate lengthscales for rff_cv(): a list of scalars or per-column
# vectors; "median" is the median heuristic of x (the kernel's inputs).
check_candidates <- function(lengthscale, d, x = NULL) {
  if (identical(lengthscale, "median") && !is.null(x)) return(list(median_lengthscale(x)))
  if (is.character(lengthscale)) lengthscale <- resolve_lengthscale(lengthscale, x)
  cand <- if (is.list(lengthscale)) lengthscale else as.list(lengthscale)
  if (!length(cand)) rff_abort("lengthscale", "`lengthscale` must have at least one candidate")
  lapply(cand, check_lengthscale, d = d)
}

# Fold of each row: given, or drawn at random with sizes differing by at most one.
check_foldid <- function(foldid, folds, n) {
  if (is.null(foldid)) {
    k <- check_count(folds, "folds", lo = 2)
    if (n < k) {
      rff_abort("folds", sprintf("`folds` = %d needs at least as many rows, but `x` has %d",
                                 k, n))
    }
    return(sample(rep_len(seq_len(k), n)))
  }
  if (!is_number(foldid) || length(foldid) != n || anyNA(foldid) ||
      any(foldid != round(foldid)) || any(foldid < 1)) {
    rff_abort("foldid", sprintf("`foldid` must give a fold number (1, 2, ...) for each of the %d rows", n))
  }
  foldid <- as.integer(foldid)
  k <- max(foldid)
  if (k < 2L || length(unique(foldid)) != k) {
    rff_abort("foldid", sprintf("`foldid` must use every fold 1..k with k >= 2; it has %d distinct values up to %d",
                                length(unique(foldid)), k))
  }
  foldid
}

# The D x D statistics (and the solves' copies of them) must fit in memory:
# refuse before drawing features. `copies` counts the D x D matrices held.
check_stats_memory <- function(D, copies, map_given) {
  check_alloc(D, as.double(D) * copies, arg = if (map_given) "map" else "D")
}
