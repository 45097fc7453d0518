# Layer 4 (users of maps): feature matrices (rff_features()) and their use
# inside model formulas.

#' Random Fourier features of data
#'
#' Computes the n x D feature matrix Z whose rows are z(x_i), so that
#' `Z %*% t(Z)` is an unbiased estimate of the kernel matrix
#' ([rff_kernel()]). Draws a new map with [rff_map()] unless `map` is given;
#' reuse the map of the training data (`attr(Z, "rff_map")`) to featurize new
#' data consistently.
#'
#' For `variant = "pair"`, columns `1..D/2` are sqrt(2/D) cos(omega_j'x) and
#' columns `D/2+1..D` are sqrt(2/D) sin(omega_j'x); for `"phase"`, column j
#' is sqrt(2/D) cos(omega_j'x + b_j). For the arc-cosine kernel, see
#' [rff_arccos]; for the polynomial kernel, [rff_polynomial]; for Nystrom
#' features (`sampler = "nystrom"`, landmarks drawn from `x` unless given),
#' [rff_nystrom]. Rows are computed in blocks in C,
#' shared among `threads` OpenMP threads; results do not depend on the number
#' of threads. For inputs of up to 512 columns, projection and cos/sin are
#' computed together in one vectorized pass over each block (vectorized
#' cos/sin within a few units in the last place of the C library's, which
#' takes over for arguments beyond 1e6 in absolute value); wider inputs
#' project with the BLAS `dgemm` first. See the package README for how the
#' BLAS in use affects speed.
#'
#' @inheritParams rff_map
#' @param x A numeric matrix, a data frame of numeric columns, or a numeric
#'   vector (one column). Missing and infinite values are errors. Row names
#'   are kept.
#' @param lengthscale A positive number, one per column of `x` (ARD), or
#'   `"median"`: the median heuristic [rff_median_lengthscale()] computed
#'   from `x` (before the map is drawn) and stored in the map as a number.
#' @param map An `"rff_map"` from [rff_map()] or from an earlier call. When
#'   given, no new map is drawn, and none of `D`, `kernel`, `lengthscale`,
#'   `nu`, `order`, `degree`, `offset`, `variant`, `sampler`, `landmarks`
#'   may be given.
#' @param landmarks For `sampler = "nystrom"`: the landmarks, a matrix with
#'   the columns of `x`; by default `D` rows of `x` drawn at random
#'   ([rff_nystrom]).
#' @param threads Number of threads; default `getOption("rff.threads")`,
#'   else all cores (at most 2 when `_R_CHECK_LIMIT_CORES_` is set) less
#'   those other processes are running on when the call starts (Linux:
#'   the run queue of `/proc/loadavg`), at least one: OpenMP's threads wait
#'   for each other by spinning, and a thread on a busy core made a call
#'   slower than one thread (`quakes`' default fit beside a CPU hog on one
#'   of 2 cores: 1.33 times one thread's time). In a
#'   forked child process (`parallel::mclapply()`, `future::plan(multicore)`)
#'   every routine runs on one thread, since OpenMP's threads do not survive
#'   `fork()`.
#' @return A double matrix with `nrow(x)` rows (with `map`, new data of zero
#'   rows gives zero rows) and `D` columns, with the map
#'   as attribute `"rff_map"` and class `c("rff_features", "matrix")`.
#'   Inside a model formula, `lm(y ~ rff_features(x, D = 50), data)` (and
#'   [stats::glm()], or [stats::model.matrix()] with the terms of a model
#'   frame) keeps the map drawn at fit time, so [predict()] featurizes new
#'   data with the same map (a `makepredictcall()` method, as
#'   [splines::ns()] has).
#' @seealso [rff_map()], [rff_kernel()].
#' @examples
#' set.seed(42)
#' x <- matrix(rnorm(20), 10, 2)
#' Z <- rff_features(x, D = 2000, lengthscale = 1.5)
#' K <- rff_kernel(x, lengthscale = 1.5)
#' max(abs(tcrossprod(Z) - K))     # small: Z Z' approximates K
#' # new data through the same map
#' Znew <- rff_features(matrix(rnorm(4), 2, 2), map = attr(Z, "rff_map"))
#' dim(Znew)
#' # orthogonal frequencies, lengthscale by the median heuristic
#' Zo <- rff_features(x, D = 200, sampler = "orthogonal", lengthscale = "median")
#' attr(Zo, "rff_map")$lengthscale
#' @export
rff_features <- function(x, D = 500, kernel = "gaussian", lengthscale = 1,
                         nu = 1.5, order = 1, degree = 2, offset = 1, variant = "pair",
                         sampler = "iid", landmarks = NULL, map = NULL, threads = NULL) {
  check_required("x")
  # through a given map, new data of zero rows has zero rows of features
  x <- check_x(x, empty_ok = !is.null(map))
  threads <- check_threads(threads)
  sampling <- c("D", "kernel", "lengthscale", "nu", "order", "degree", "offset", "variant",
                "sampler", "landmarks")
  if (is.null(map)) {
    # the arguments given, so that rff_map() tells D and sampler given from
    # their defaults (Nystrom landmarks)
    args <- mget(supplied_args(sampling, environment()), envir = environment())
    args$lengthscale <- resolve_lengthscale(lengthscale, x)
    map <- data_map(x, args)
  } else {
    check_no_sampling_args(supplied_args(sampling, environment()))
    check_map(map)
    check_x_matches_map(x, map)
  }
  check_alloc(nrow(x), map$D, what = "the features")
  Z <- .Call(C_rff_features, x, map, threads)
  if (!is.null(rownames(x))) rownames(Z) <- rownames(x)
  attr(Z, "rff_map") <- map
  class(Z) <- c("rff_features", "matrix", "array")
  Z
}

#' @export
print.rff_features <- function(x, ...) {
  map <- attr(x, "rff_map")
  attr(x, "rff_map") <- NULL
  print(unclass(x), ...)
  cat(sprintf("<rff_features> %d x %d: %s\n", nrow(x), ncol(x), map_line(map)))
  invisible(x)
}

# Model formulas: lm(y ~ rff_features(x, ...)) keeps the map drawn at fit
# time in the terms' predvars, so predict() featurizes new data with it
# (as splines::ns() keeps its knots).
#' @importFrom stats makepredictcall
#' @export
makepredictcall.rff_features <- function(var, call) {
  # a feature matrix named in a formula (lm(y ~ Z)) is a symbol, not a call
  if (!is.call(call)) return(NextMethod())
  fun <- call[[1L]]
  # rff_features(...) or rff::rff_features(...)
  if (is.call(fun) && length(fun) == 3L && as.character(fun[[1L]]) %in% c("::", ":::")) {
    fun <- fun[[3L]]
  }
  if (!identical(fun, as.name("rff_features"))) return(NextMethod())
  call <- match.call(rff_features, call)
  call <- call[!names(call) %in% c("D", "kernel", "lengthscale", "nu", "order", "variant",
                                   "sampler", "map")]
  call$map <- attr(var, "rff_map")
  call
}

# cos and sin as the featurization kernels compute them (columns cos from the
# cosine-only loop, then cos and sin from the sine-cosine loop); for tests.
trig_kernels <- function(x) .Call(C_rff_trig, as.double(x))
