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
#' is sqrt(2/D) cos(omega_j'x + b_j). Rows are computed in blocks in C,
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
#' @param map An `"rff_map"` from [rff_map()] or from an earlier call. When
#'   given, no new map is drawn, and none of `D`, `kernel`, `lengthscale`,
#'   `nu`, `variant`, `sampler` may be given.
#' @param threads Number of threads; default `getOption("rff.threads")`,
#'   else all cores (at most 2 when `_R_CHECK_LIMIT_CORES_` is set).
#' @return A double matrix with `nrow(x)` rows and `D` columns, with the map
#'   as attribute `"rff_map"`.
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
#' @export
rff_features <- function(x, D = 500, kernel = "gaussian", lengthscale = 1,
                         nu = 1.5, variant = "pair", sampler = "iid",
                         map = NULL, threads = NULL) {
  x <- check_x(x)
  threads <- check_threads(threads)
  if (is.null(map)) {
    map <- rff_map(ncol(x), D = D, kernel = kernel, lengthscale = lengthscale,
                   nu = nu, variant = variant, sampler = sampler)
  } else {
    check_no_sampling_args(supplied_args(
      c("D", "kernel", "lengthscale", "nu", "variant", "sampler"), environment()))
    check_map(map)
    check_x_matches_map(x, map)
  }
  check_alloc(nrow(x), map$D)
  Z <- .Call(C_rff_features, x, map, threads)
  if (!is.null(rownames(x))) rownames(Z) <- rownames(x)
  attr(Z, "rff_map") <- map
  Z
}

# Names among `args` that the caller of `env`'s function supplied explicitly.
supplied_args <- function(args, env) {
  args[!vapply(args, function(a) eval(call("missing", as.name(a)), env), logical(1))]
}

check_x_matches_map <- function(x, map, arg = "x") {
  if (ncol(x) != map$d) {
    rff_abort(arg, sprintf("`%s` has %d column%s but the map was drawn for %d",
                           arg, ncol(x), if (ncol(x) == 1L) "" else "s", map$d))
  }
}

# An n x D result must be allocatable: stop before asking for it.
check_alloc <- function(n, D, arg = "D") {
  cells <- as.double(n) * D
  if (cells > 2^52) {
    rff_abort(arg, sprintf("`%s` is too large: a %s x %s result cannot be allocated", arg, n, D))
  }
  gb <- cells * 8 / 2^30
  limit <- getOption("rff.max_gb", Inf)
  if (gb > limit) {
    rff_abort(arg, sprintf(
      "`%s` is too large: the %s x %s result needs %s GB, more than options(rff.max_gb = %s)",
      arg, n, D, format(gb, digits = 3), format(limit)))
  }
  invisible(TRUE)
}

# cos and sin as the featurization kernels compute them (columns cos from the
# cosine-only loop, then cos and sin from the sine-cosine loop); for tests.
trig_kernels <- function(x) .Call(C_rff_trig, as.double(x))
