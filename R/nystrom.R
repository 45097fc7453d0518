# Layer 3 (maps): Nystrom maps: landmarks given or drawn, and the thresholded
# K(L, L)^(-1/2) they are weighted by.

#' Nystrom feature maps
#'
#' `sampler = "nystrom"` makes a feature map from `D` landmarks
#' L_1, ..., L_D instead of random frequencies (Williams and Seeger, 2001):
#' \deqn{z(x) = K(x, L) W, \quad W = K(L, L)^{-1/2},}{z(x) = K(x, L) W,
#'   W = K(L, L)^(-1/2),}
#' so that z(x)'z(y) = K(x, L) K(L, L)^+ K(L, y), the kernel projected on the
#' span of the landmarks' features: exact whenever x or y is a landmark, and
#' close to k(x, y) wherever the landmarks cover the data. Where random
#' Fourier features spread their D functions over the whole input space,
#' Nystrom features spend them where the data are, which usually gives a
#' smaller kernel and regression error at the same D on data that lie near
#' a lower-dimensional set, at the price of O(D^2) work per row (the product
#' with W) instead of O(D d).
#'
#' Landmarks are given (`landmarks =`, a matrix with `D` rows, in the units
#' of the data: the lengthscale is applied to them as to the data), or drawn
#' uniformly without replacement from the rows of the data with R's random
#' number generator ([sample.int()]) wherever the data are at hand:
#' [rff_features()] (from `x`), [rff_ridge()] and [rff_cv()] (from `x`, so
#' the landmarks of [rff_cv()] are drawn from all rows, held-out folds
#' included; they see no response), and [rff_kernel_error()] (from `x`,
#' afresh for every replicate). [rff_map()] sees no data and needs
#' `landmarks`. Giving `landmarks` implies `sampler = "nystrom"`.
#'
#' Every kernel with an exact form works: `"gaussian"`, `"laplace"`,
#' `"matern"`, `"arccos"`, `"polynomial"` and [rff_spectral()] kernels
#' (whose `kappa` is then called in R, on one thread, for every row and
#' landmark: slow for large data). `variant` has no meaning here (leave it
#' at its default).
#'
#' W is computed once, when the map is made, from the eigendecomposition
#' K(L, L) = U diag(lambda) U' (LAPACK `dsyevr`, through [eigen()]):
#' W = U diag(f(lambda)) U' with f(lambda) = lambda^(-1/2) for the
#' eigenvalues above sqrt(.Machine$double.eps) times the largest one, and 0
#' for the others (the threshold of `MASS::ginv()`). Kernel matrices of
#' close landmarks are numerically singular; dropping their tiny
#' eigenvalues keeps the features from amplifying rounding errors by up to
#' 1e8, and leaves z(x)'z(y) = K(x, L) K(L, L)^+ K(L, y) with the
#' pseudo-inverse of the thresholded matrix. The map's `rank` counts the
#' eigenvalues kept; the features are always `D` columns (W is symmetric,
#' as in scikit-learn's `Nystroem`), so ridge regression sees D features of
#' which only `rank` directions are non-zero.
#'
#' Featurization is in C: for each block of rows, the kernel against the
#' landmarks (vectorized over the rows) and one `dgemm` with W, over the
#' same blocked loop and threads as the other maps. The Matern kernel with
#' a `nu` other than 1/2, 3/2, 5/2 and below 50 runs on one thread (R's
#' Bessel function, which it needs, may warn, which only R's main thread may
#' do).
#'
#' A Nystrom map is an `"rff_map"` like the others: [rff_features()],
#' [rff_ridge()], [rff_stats()], [rff_cv()] (the landmarks are kept across
#' the candidate lengthscales and W recomputed for each), [predict()],
#' [rff_kernel()] and [rff_kernel_error()] accept it. Its fields are
#' `landmarks` (D x d), `weights` (W, D x D), `rank`, and the kernel
#' parameters, `D`, `d`, `variant = "nystrom"` and `sampler = "nystrom"`.
#'
#' @name rff_nystrom
#' @references Williams, C. K. I. and Seeger, M. (2001). Using the Nystrom
#'   method to speed up kernel machines. *Advances in Neural Information
#'   Processing Systems 13*.
#'
#'   Drineas, P. and Mahoney, M. W. (2005). On the Nystrom method for
#'   approximating a Gram matrix for improved kernel-based learning.
#'   *Journal of Machine Learning Research* 6, 2153-2175.
#' @seealso [rff_samplers] for random frequencies.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(400), 200, 2)
#' K <- rff_kernel(x, lengthscale = 2)
#' Zn <- rff_features(x, D = 40, sampler = "nystrom", lengthscale = 2)
#' Zf <- rff_features(x, D = 40, lengthscale = 2)
#' c(nystrom = max(abs(tcrossprod(Zn) - K)), fourier = max(abs(tcrossprod(Zf) - K)))
#' # given landmarks: exact at the landmarks
#' m <- rff_map(2, landmarks = x[1:10, ], lengthscale = 2)
#' Z <- rff_features(x[1:10, ], map = m)
#' max(abs(tcrossprod(Z) - K[1:10, 1:10]))
#' # a ridge fit on Nystrom features, landmarks drawn from x
#' y <- sin(x[, 1]) + rnorm(200, sd = 0.1)
#' fit <- rff_ridge(x, y, D = 40, sampler = "nystrom", lengthscale = 2, progress = FALSE)
#' predict(fit, x[1:3, ])
NULL

# Eigenvalues of K(L, L) at or below this times the largest are dropped.
nystrom_tol <- sqrt(.Machine$double.eps)

# The Nystrom map of a spec (from map_spec(), sampler "nystrom") and its
# landmarks (a checked D x d matrix).
nystrom_map <- function(spec, landmarks) {
  L <- landmarks
  dimnames(L) <- NULL
  K <- exact_kernel(L, L, spec)
  if (any(!is.finite(K))) {
    rff_abort("lengthscale", sprintf(paste0(
      "the kernel values between the landmarks overflow: `lengthscale` (smallest %s) ",
      "is too small for the scale of the landmarks"), format(min(spec$lengthscale))))
  }
  e <- eigen((K + t(K)) / 2, symmetric = TRUE)
  keep <- e$values > nystrom_tol * max(e$values[1L], 0)
  U <- e$vectors[, keep, drop = FALSE]
  W <- U %*% (t(U) / sqrt(e$values[keep]))
  structure(c(list(landmarks = L, weights = W, rank = sum(keep)), spec),
            class = "rff_map")
}

# D landmarks drawn uniformly without replacement from the rows of x.
draw_landmarks <- function(x, D) {
  D <- check_count(D, "D", hi = 2^30)
  if (D > nrow(x)) {
    rff_abort("D", sprintf(paste0(
      "`D` = %d landmarks cannot be drawn from the %d rows of the data; ",
      "use D <= %d, or give `landmarks`"), D, nrow(x), nrow(x)))
  }
  x[sample.int(nrow(x), D), , drop = FALSE]
}

# rff_map() with landmarks: D is their number (if D is given, it must be
# that number), and the sampler is "nystrom" (if given, it must be that).
landmark_map <- function(d, D, D_given, kernel, lengthscale, nu, order, degree, offset,
                         variant, sampler, sampler_given, landmarks) {
  d <- check_count(d, "d")
  # called with landmarks, or with sampler "nystrom"
  if (sampler_given && !is_nystrom(sampler)) {
    rff_abort("landmarks", sprintf(
      "`landmarks` are for `sampler` \"nystrom\", not %s", show_value(sampler)))
  }
  if (is.null(landmarks)) {
    rff_abort("landmarks", paste0(
      "`sampler` \"nystrom\" needs `landmarks`: rff_map() sees no data; give ",
      "`landmarks`, or let rff_features(), rff_ridge() or rff_cv() draw them from `x`"))
  }
  landmarks <- check_x(landmarks, "landmarks")
  if (ncol(landmarks) != d) {
    rff_abort("landmarks", sprintf("`landmarks` has %d column%s but `d` is %d",
                                   ncol(landmarks), if (ncol(landmarks) == 1L) "" else "s", d))
  }
  if (D_given) {
    D <- check_count(D, "D", hi = 2^30)
    if (D != nrow(landmarks)) {
      rff_abort("D", sprintf("`D` = %d but `landmarks` has %d rows (one feature per landmark)",
                             D, nrow(landmarks)))
    }
  }
  spec <- map_spec(d, D = nrow(landmarks), kernel = kernel, lengthscale = lengthscale,
                   nu = nu, order = order, degree = degree, offset = offset,
                   variant = variant, sampler = "nystrom")
  check_alloc(spec$D, spec$D, arg = "landmarks", what = "the landmarks' Gram matrix")
  nystrom_map(spec, landmarks)
}

# The kernel of an rff_spectral Nystrom map between the rows of x and the
# landmarks; called from C (rff_nystrom_user) for chunks of rows.
nystrom_user_kernel <- function(map, x) exact_kernel(x, map$landmarks, map)

# The same landmarks at another lengthscale: W is recomputed.
rescale_nystrom <- function(map, lengthscale) {
  spec <- map[setdiff(names(map), c("landmarks", "weights", "rank"))]
  spec$lengthscale <- lengthscale
  nystrom_map(unclass(spec), map$landmarks)
}
