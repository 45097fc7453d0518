# Layer 4 (users of maps): the variance of the random-feature estimate
# (Proposition 2) and the Hoeffding tail bound.

#' Variance of the random-feature kernel estimate (Proposition 2)
#'
#' The variance of the estimate z(x)'z(x + delta) of kappa(delta) over the
#' random draw of one map with `D` features (Sutherland and Schneider, 2015,
#' Proposition 2):
#' \deqn{Var_{phase} = (1 + \kappa(2\delta)/2 - \kappa(\delta)^2) / D}{
#'       Var(phase) = (1 + kappa(2 delta) / 2 - kappa(delta)^2) / D}
#' \deqn{Var_{pair} = (1 + \kappa(2\delta) - 2\kappa(\delta)^2) / D}{
#'       Var(pair) = (1 + kappa(2 delta) - 2 kappa(delta)^2) / D}
#' for `variant = "phase"` (`D` frequencies with random phases) and
#' `"pair"` (`D/2` frequencies, cosine and sine features), with kappa the
#' exact kernel ([rff_kernel()]). It holds for every shift-invariant kernel
#' of the package; for `sampler = "iid"` maps.
#'
#' @inheritParams rff_map
#' @param delta Offsets x - x': a numeric vector (one offset per element,
#'   d = 1) or a matrix or data frame with one offset per row.
#' @param D Number of features: a positive whole number, or one per offset,
#'   or several for a single offset (even for `variant = "pair"`).
#' @return The variances, one per offset (or per value of `D`).
#' @references Sutherland, D. J. and Schneider, J. (2015). On the error of
#'   random Fourier features. *Proceedings of the 31st Conference on
#'   Uncertainty in Artificial Intelligence*, 862-871.
#' @seealso [rff_kernel_error()] to simulate the estimates,
#'   [rff_tail_bound()].
#' @examples
#' # Gaussian, l = 1, delta = 1: D * Var is 0.69979 (phase), 0.39958 (pair)
#' 100 * rff_variance(1, D = 100, variant = "phase")
#' 100 * rff_variance(1, D = 100, variant = "pair")
#' # standard deviation along a grid of D, Matern 3/2 in two dimensions
#' sqrt(rff_variance(matrix(c(0.5, 1), 1), D = c(100, 400, 1600),
#'                   kernel = "matern", nu = 1.5))
#' @export
rff_variance <- function(delta, D, kernel = "gaussian", lengthscale = 1,
                         nu = 1.5, variant = c("pair", "phase")) {
  check_required(c("delta", "D"))
  delta <- check_x(delta, "delta")
  variant <- check_variant(variant)
  D <- check_feature_counts(D, variant)
  kernel <- check_shift_invariant(kernel)
  lengthscale <- check_lengthscale(lengthscale, ncol(delta))
  nu <- check_nu(nu, kernel)
  k <- nrow(delta)
  if (length(D) != 1L && k != 1L && length(D) != k) {
    rff_abort("D", sprintf(
      "`D` must have length 1 or one value per offset (%d), got length %d", k, length(D)))
  }
  spec <- list(kernel = kernel, lengthscale = lengthscale, nu = nu)
  k1 <- kernel_kappa(delta, spec)
  k2 <- kernel_kappa(2 * delta, spec)
  v <- if (variant == "phase") 1 + k2 / 2 - k1^2 else 1 + k2 - 2 * k1^2
  # kappa(2 delta) <= 1 can round a zero variance to a tiny negative one
  out <- pmax(v, 0) / D
  names(out) <- if (length(out) == k) rownames(delta) else NULL
  out
}

#' Hoeffding bound on the pointwise approximation error
#'
#' An upper bound on P(|z(x)'z(x') - k(x, x')| >= eps) for one map with `D`
#' features, from Hoeffding's inequality: the estimate is a mean of `D`
#' terms in \[-2, 2\] (`variant = "phase"`) or of `D/2` terms in \[-1, 1\]
#' (`"pair"`), so
#' \deqn{P \le 2 \exp(-D \epsilon^2 / 8)}{P <= 2 exp(-D eps^2 / 8)} (phase),
#' \deqn{P \le 2 \exp(-D \epsilon^2 / 4)}{P <= 2 exp(-D eps^2 / 4)} (pair),
#' for every kernel, offset and dimension. Values above 1 are returned as
#' they are (the bound is then void).
#'
#' @param D Number of features (positive whole numbers).
#' @param eps Error levels (positive numbers); `D` and `eps` are recycled to
#'   a common length.
#' @param variant `"pair"` (default) or `"phase"`.
#' @return The bounds, one per pair of `D` and `eps`.
#' @seealso [rff_variance()], [rff_kernel_error()].
#' @examples
#' rff_tail_bound(D = c(100, 1000), eps = 0.2)
#' rff_tail_bound(D = 1000, eps = c(0.1, 0.2), variant = "phase")
#' # D needed for P(|error| >= 0.05) <= 0.01 with pairs
#' ceiling(4 * log(2 / 0.01) / 0.05^2)
#' @export
rff_tail_bound <- function(D, eps, variant = c("pair", "phase")) {
  check_required(c("D", "eps"))
  variant <- check_variant(variant)
  D <- check_feature_counts(D, variant)
  if (!is_number(eps) || length(eps) == 0L || anyNA(eps) ||
      any(!is.finite(eps)) || any(eps <= 0)) {
    bad <- if (is_number(eps) && length(eps) > 0L) {
      eps[is.na(eps) | !is.finite(eps) | eps <= 0][1L]
    } else eps
    rff_abort("eps", sprintf("`eps` must be positive finite numbers, got %s",
                             show_value(bad)))
  }
  n <- max(length(D), length(eps))
  if (n %% length(D) != 0L || n %% length(eps) != 0L) {
    rff_abort("eps", sprintf("`D` (length %d) and `eps` (length %d) do not recycle to a common length",
                             length(D), length(eps)))
  }
  2 * exp(-D * eps^2 / if (variant == "phase") 8 else 4)
}
