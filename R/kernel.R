# Layer 3 (maps): exact kernels (rff_kernel()) and kappa(delta) for the
# theory.

#' Exact kernel matrix
#'
#' Computes K\[i, j\] = kappa((x_i - y_j) / lengthscale) exactly, for the
#' shift-invariant kernels of [rff_map()]; all are normalized so that
#' kappa(0) = 1. The Matern kernel is 2^(1-nu) / Gamma(nu) (sqrt(2 nu) r)^nu
#' K_nu(sqrt(2 nu) r), with closed forms used for nu = 1/2, 3/2, 5/2. For
#' the arc-cosine kernel, K\[i, j\] = k(x_i / lengthscale, y_j / lengthscale)
#' by the closed forms of Cho and Saul (2009) (see [rff_arccos]); for the
#' polynomial kernel, (x_i'y_j / lengthscale^2 + offset)^degree
#' ([rff_polynomial]); for an [rff_spectral()] kernel, its `kappa` is
#' called at each scaled offset.
#'
#' @inheritParams rff_features
#' @param lengthscale A positive number, one per column (ARD), or
#'   `"median"`: the median heuristic computed from `x` only
#'   ([rff_median_lengthscale()]).
#' @param y A second set of points with the same columns as `x`; `NULL`
#'   (default) means `x`.
#' @param map An `"rff_map"`; when given, its kernel, lengthscale, `nu`,
#'   `order`, `degree` and `offset` are used, and none of them may be given.
#' @return The `nrow(x)` x `nrow(y)` kernel matrix, with the row names of
#'   `x` and `y` as dimnames.
#' @seealso [rff_features()] for its random-feature approximation.
#' @examples
#' x <- matrix(c(0, 1, 2), ncol = 1)
#' rff_kernel(x)                      # exp(-delta^2 / 2)
#' rff_kernel(x, kernel = "matern", nu = 0.5, lengthscale = 2)  # exp(-delta / 2)
#' # arc-cosine kernel of order 0: 1 - angle / pi
#' rff_kernel(rbind(c(1, 0), c(0, 1), c(-1, 0)), kernel = "arccos", order = 0)
#' # polynomial kernel (x'y + 1)^2
#' rff_kernel(x, kernel = "polynomial", degree = 2, offset = 1)
#' @export
rff_kernel <- function(x, y = NULL, kernel = "gaussian", lengthscale = 1,
                       nu = 1.5, order = 1, degree = 2, offset = 1, map = NULL) {
  check_required("x")
  x <- check_x(x)
  y_given <- !is.null(y)
  y <- if (y_given) check_x(y, "y") else x
  if (!is.null(map)) {
    check_no_sampling_args(supplied_args(c("kernel", "lengthscale", "nu", "order", "degree",
                                           "offset"), environment()))
    check_map(map)
    check_x_matches_map(x, map)
    kernel <- map$kernel
    lengthscale <- map$lengthscale
    nu <- map$nu
    order <- if (is.null(map$order)) 1L else map$order
    degree <- map$degree
    offset <- map$offset
  } else {
    kernel <- check_kernel(kernel)
    nu <- check_nu(nu, kernel)
    order <- check_order(order)
    degree <- check_degree(degree)
    offset <- check_kernel_offset(offset)
    lengthscale <- resolve_lengthscale(lengthscale, x)
  }
  if (ncol(y) != ncol(x)) {
    rff_abort("y", sprintf("`y` has %d columns but `x` has %d", ncol(y), ncol(x)))
  }
  lengthscale <- check_lengthscale(lengthscale, ncol(x))
  check_alloc(nrow(x), nrow(y), arg = if (y_given) "y" else "x", what = "the kernel matrix")
  spec <- list(kernel = kernel, lengthscale = lengthscale, nu = nu, order = order,
               degree = degree, offset = offset)
  K <- check_kernel_values(exact_kernel(x, y, spec), spec)
  dimnames(K) <- list(rownames(x), rownames(y))
  K
}

# An exact kernel matrix of a built-in kernel, refused when its values
# overflow (the polynomial and arc-cosine kernels on large inputs).
check_kernel_values <- function(K, spec) {
  if (!inherits(spec$kernel, "rff_spectral") && any(!is.finite(K))) {
    rff_abort("lengthscale", sprintf(paste0(
      "the kernel values overflow: `lengthscale` (smallest %s) is too small ",
      "for the scale of `x`"), format(min(spec$lengthscale))))
  }
  K
}

# The exact kernel matrix between the rows of x and y (checked double
# matrices) for the kernel parameters in spec (kernel, lengthscale, nu,
# order; a map will do).
exact_kernel <- function(x, y, spec) {
  if (inherits(spec$kernel, "rff_spectral")) {
    idx <- expand.grid(i = seq_len(nrow(x)), j = seq_len(nrow(y)))
    delta <- x[idx$i, , drop = FALSE] - y[idx$j, , drop = FALSE]
    u <- sweep(delta, 2L, rep_len(spec$lengthscale, ncol(x)), "/")
    return(matrix(spectral_kappa(spec$kernel, u), nrow(x), nrow(y)))
  }
  .Call(C_rff_kernel_exact, x, y, spec)
}

# kappa(delta) for a shift-invariant kernel: the kernel at each offset (rows
# of delta, or a vector when d = 1), with the kernel parameters in spec
# (kernel, lengthscale, nu, order; a map will do). One entry point for every
# kernel, built in or rff_spectral(). The arc-cosine kernel has no kappa.
kernel_kappa <- function(delta, spec) {
  delta <- as.matrix(delta)
  storage.mode(delta) <- "double"
  if (!is_shift_invariant(spec$kernel)) {
    rff_abort("kernel", sprintf(paste0(
      "`kernel` \"%s\" is not shift-invariant (k(x, y) is no function kappa(x - y)), ",
      "so Proposition 2 (the variance of shift-invariant features) does not apply to it"),
      spec$kernel))
  }
  as.vector(exact_kernel(delta, matrix(0, 1L, ncol(delta)), spec))
}
