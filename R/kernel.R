#' Exact shift-invariant kernel matrix
#'
#' Computes K\[i, j\] = kappa((x_i - y_j) / lengthscale) exactly, for the
#' kernels of [rff_map()]; all are normalized so that kappa(0) = 1. The
#' Matern kernel is 2^(1-nu) / Gamma(nu) (sqrt(2 nu) r)^nu
#' K_nu(sqrt(2 nu) r), with closed forms used for nu = 1/2, 3/2, 5/2.
#'
#' @inheritParams rff_features
#' @param y A second set of points with the same columns as `x`; `NULL`
#'   (default) means `x`.
#' @param map An `"rff_map"`; when given, its kernel, lengthscale and `nu`
#'   are used, and `kernel`, `lengthscale`, `nu` may not be given.
#' @return The `nrow(x)` x `nrow(y)` kernel matrix, with the row names of
#'   `x` and `y` as dimnames.
#' @seealso [rff_features()] for its random-feature approximation.
#' @examples
#' x <- matrix(c(0, 1, 2), ncol = 1)
#' rff_kernel(x)                      # exp(-delta^2 / 2)
#' rff_kernel(x, kernel = "matern", nu = 0.5, lengthscale = 2)  # exp(-delta / 2)
#' @export
rff_kernel <- function(x, y = NULL, kernel = "gaussian", lengthscale = 1,
                       nu = 1.5, map = NULL) {
  x <- check_x(x)
  y <- if (is.null(y)) x else check_x(y, "y")
  if (!is.null(map)) {
    check_no_sampling_args(supplied_args(c("kernel", "lengthscale", "nu"), environment()))
    check_map(map)
    check_x_matches_map(x, map)
    kernel <- map$kernel
    lengthscale <- map$lengthscale
    nu <- map$nu
  } else {
    kernel <- check_kernel(kernel)
    nu <- check_positive(nu, "nu")
  }
  if (ncol(y) != ncol(x)) {
    rff_abort("y", sprintf("`y` has %d columns but `x` has %d", ncol(y), ncol(x)))
  }
  lengthscale <- check_lengthscale(lengthscale, ncol(x))
  check_alloc(nrow(x), nrow(y), arg = "y")
  K <- .Call(C_rff_kernel, x, y, kernel, lengthscale, nu)
  dimnames(K) <- list(rownames(x), rownames(y))
  K
}
