# Layer 5 (the model pipeline), its first steps, shared by every family: the
# checked arguments of a fit, the modelling defaults (standardization, D, the
# lengthscale candidates), and the map of a fit.

# A fit's call as the user would write it: a method's call shown as a call
# of the generic `name`.
fit_call <- function(call, name) {
  call[[1L]] <- as.name(name)
  call
}

# The arguments every fit from data shares, checked in the order of the
# signatures: x, y (by the model's `response` checker), lambda, intercept,
# the rest of the path (lambda again, a no-op; `extend`: see check_path()),
# threads, progress.
check_fit_args <- function(x, y, lambda, intercept, nlambda, lambda_min_ratio,
                           threads, progress, response = check_y, extend = FALSE) {
  x <- check_x(x)
  y <- response(y, nrow(x))
  lambda <- check_lambda(lambda)
  intercept <- check_flag(intercept, "intercept")
  list(x = x, y = y, path = check_path(lambda, nlambda, lambda_min_ratio, extend),
       intercept = intercept, threads = check_threads(threads),
       progress = check_flag(progress, "progress"))
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

# Candidate lengthscales for rff_cv(): a list of scalars or per-column
# vectors; "median" is the median heuristic of x (the kernel's inputs).
check_candidates <- function(lengthscale, d, x = NULL) {
  if (identical(lengthscale, "median") && !is.null(x)) return(list(median_lengthscale(x)))
  if (is.character(lengthscale)) lengthscale <- resolve_lengthscale(lengthscale, x)
  cand <- if (is.list(lengthscale)) lengthscale else as.list(lengthscale)
  if (!length(cand)) rff_abort("lengthscale", "`lengthscale` must have at least one candidate")
  lapply(cand, check_lengthscale, d = d)
}

# Centre and scale of each column of x (weighted means and standard
# deviations with weights; the plain sd() without). A constant column gets
# scale 1, so that it is centred to zero and plays no part in the kernel,
# and a message says so. Columns are divided by their largest absolute
# value and weights by theirs first, so that neither the weighted sums nor
# the squared deviations overflow (columns spread over 1e154 and more).
standardization <- function(x, weights = NULL) {
  n <- nrow(x)
  w <- if (is.null(weights)) rep(1, n) else weights / max(weights)
  W <- sum(w)
  big <- apply(abs(x), 2L, max)
  big[!(big > 0)] <- 1
  xs <- x / rep(big, each = n)
  center <- colSums(xs * w) / W
  dev <- xs - rep(center, each = n)
  npos <- sum(w > 0)
  scale <- sqrt(colSums(w * dev^2) / W * npos / max(npos - 1, 1))
  constant <- !is.finite(scale) | scale <= 1e-10 * pmax(abs(center), 1e-300)
  center <- center * big
  scale <- pmin(scale * big, .Machine$double.xmax)
  if (any(constant)) {
    nm <- colnames(x)
    if (is.null(nm)) nm <- character(ncol(x))
    nm[!nzchar(nm)] <- paste0("column ", which(!nzchar(nm)))
    message(sprintf(
      "standardize: %s %s constant; %s centred to zero and take%s no part in the kernel",
      paste0("\"", nm[constant], "\"", collapse = ", "),
      if (sum(constant) > 1L) "are" else "is", if (sum(constant) > 1L) "they are" else "it is",
      if (sum(constant) > 1L) "" else "s"))
    scale[constant] <- 1
  }
  names(center) <- names(scale) <- colnames(x)
  list(center = center, scale = scale)
}

# x in the units the kernel sees: (x - center) / scale, or x itself.
standardize_rows <- function(x, std) {
  if (is.null(std)) return(x)
  out <- (x - rep(std$center, each = nrow(x))) / rep(std$scale, each = nrow(x))
  dimnames(out) <- dimnames(x)
  out
}

# The default number of features for n rows: sqrt(n) log(n) (Rudi and
# Rosasco, 2017), at least 1000 and at most 3000, and no more than keeps
# the n D^2 flops of Z'Z below 2e12; even, for "pair" maps. (At most 2000
# before Z'Z ran on rff's own product kernel; ggplot2::diamonds, 40,455
# rows, now gets 2134: bench/RESULTS-speed.md, "Default fits on small data".)
default_D <- function(n) {
  D <- sqrt(n) * log(max(n, 2))
  D <- min(max(D, 1000), 3000, sqrt(2e12 / n))
  as.integer(max(2, 2 * round(D / 2)))
}

# The range of j in the multiples 2^(j / 2) of the median heuristic that
# the downhill walk of lengthscale = "auto" may reach (lengthscale_walk()):
# 1/8 to 16.
auto_steps <- c(-6L, 8L)

# The multiples the walk may visit.
auto_multipliers <- 2^(seq(auto_steps[1L], auto_steps[2L]) / 2)

# The walk stops after a step that improves the criterion by less than this
# fraction of it: far below the sampling error of a cross-validated error.
auto_flat <- 1e-3

# Rows on which lengthscale = "auto" scores its candidates in rff_ridge():
# all of them up to 10,000; beyond, as many as keep the statistics of k
# candidates, each on `scored` features, at about twice the cost of the
# final fit's on D features (at least 10,000). With D = 2000 and the 1,000
# features a large search scores on, that is all rows: the best lengthscale
# shrinks as rows are added, and a subsample chooses one too long
# (ggplot2::diamonds, D = 2000: 10,000 of its 40,455 rows chose test RMSE
# 0.117, all rows 0.104).
auto_rows <- function(n, k, D = 1, scored = D) {
  if (n <= 10000L) return(n)
  keep <- floor(2 * as.double(n) * D^2 / (k * as.double(scored)^2))
  as.integer(min(n, max(10000, keep)))
}

# What every model fit from data prepares, from the checked arguments `a`
# of check_fit_args(): weights, offset and standardization checked and
# applied (x in the kernel's units), and the map (for lengthscale "auto":
# the base map and the candidate lengthscales). The family says how the
# response takes an offset: the gaussian response less the offset (n x q);
# the GLM families keep the response as check_fit_args() coded it and the
# offset (n x 1) on the linear predictor.
model_setup <- function(a, standardize, weights, offset, map, args, caller,
                        family = "gaussian") {
  n <- nrow(a$x)
  standardize <- check_flag(standardize, "standardize")
  weights <- check_weights(weights, n)
  # weights act through their proportions: divided by the largest, so that
  # neither 1e-310 (subnormal sums) nor 1e308 (overflowing sums) change the fit
  given <- weights
  if (!is.null(weights)) weights <- weights / max(weights)
  gaussian <- identical(family, "gaussian")
  offset <- check_offset(offset, n, if (gaussian) ncol(a$y) else 1L, family)
  y <- if (gaussian && !is.null(offset)) a$y - offset else a$y
  std <- if (standardize) standardization(a$x, weights) else NULL
  # a formula's factor dummies keep their 0/1 scale (centred only): scaled
  # to unit variance, rare levels dominated the distances (bench/RESULTS-ard.md)
  dummies <- attr(a$x, "rff_dummies")
  if (!is.null(std) && length(dummies) == ncol(a$x) && any(dummies)) std$scale[dummies] <- 1
  x <- standardize_rows(a$x, std)
  # the model matrix's terms ("ard" learns one lengthscale for each)
  groups <- attr(a$x, "rff_groups")
  c(list(x = x, y = y, weights = weights, weights_given = given, groups = groups,
         weight_scale = if (is.null(given)) 1 else max(given), offset = offset, std = std),
    model_map(x, map, args, caller))
}

# A map given for a fit: checked, with no sampling arguments beside it, and
# drawn for the d input columns of the fit.
fit_map <- function(d, map, ...) {
  check_no_sampling_args(names(list(...)))
  check_map(map)
  if (map$d != d) {
    rff_abort("map", sprintf("`map` was drawn for %d input columns but `x` has %d",
                             map$d, d))
  }
  map
}

# The map of a model fit from the (standardized) inputs x: the given map;
# or one drawn with the arguments of rff_map() in `args`, with the data's
# defaults: D = default_D(n) and lengthscale "auto". A numeric or "median"
# lengthscale gives the map; "auto" gives `map` drawn at lengthscale 1 (the
# common random numbers) and the `candidates` to rescale it to: the median
# heuristic times auto_multipliers, which the downhill walk visits. The
# arc-cosine kernel, which a lengthscale only rescales (lambda absorbs
# that), takes "auto" as 1. "ard" is "auto" with `ard = TRUE`: the
# isotropic search first, then ard_select() (frequency maps only).
# `default_D`: D was not given (the search may then settle for fewer
# features, select_lengthscale()).
model_map <- function(x, map, args, caller) {
  if (!is.null(map)) {
    return(list(map = do.call(fit_map, c(list(ncol(x), map), args)), candidates = NULL))
  }
  check_map_args(args, caller)
  default_features <- is.null(args$D) && is.null(args$landmarks)
  if (is.null(args$D)) {
    # given landmarks fix D: one feature per landmark
    args$D <- if (is.null(args$landmarks)) default_D(nrow(x)) else NROW(args$landmarks)
  }
  ls <- if ("lengthscale" %in% names(args)) args$lengthscale else "auto"
  ard <- identical(ls, "ard")
  if (ard) {
    check_ard_args(args)
    ls <- "auto"
  }
  if (identical(ls, "auto")) {
    args$lengthscale <- 1
    if (identical(args$kernel, "arccos")) {
      return(list(map = data_map(x, args), candidates = NULL))
    }
    l0 <- median_lengthscale(x)
    base <- data_map(x, args)
    return(list(map = base, candidates = as.list(l0 * auto_multipliers), median = l0,
                ard = ard, default_D = default_features))
  }
  args$lengthscale <- resolve_lengthscale(ls, x)
  list(map = data_map(x, args), candidates = NULL)
}

# The modelling settings a fit from data keeps for predict() and print():
# the standardization, whether there was an offset, the weights' total,
# and the lengthscale search of "auto".
add_model_info <- function(fit, m, search) {
  fit["standardize"] <- list(m$std)
  fit$has_offset <- !is.null(m$offset)
  fit$weighted <- !is.null(m$weights)
  # the fit's RSS and normal equations are those of the weights divided by
  # this; summary() and predict() report sigma for the weights given
  if (!is.null(m$weights)) fit$weight_scale <- m$weight_scale
  fit$lengthscale_search <- search
  fit
}
