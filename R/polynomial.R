# Layer 2 (kernel parameters): the polynomial kernel (its documentation) and
# the check of a TensorSketch map's buckets and signs.

#' Polynomial kernels and their TensorSketch features
#'
#' `kernel = "polynomial"` is the dot-product kernel
#' \deqn{k(x, y) = (x'y / l^2 + c)^p}{k(x, y) = (x'y / l^2 + c)^p}
#' of `degree` p (a whole number from 1 to 30) and `offset` c >= 0, with
#' the inputs divided by `lengthscale` l as for the other kernels (one value
#' per column gives x' diag(1/l^2) y). It is not shift-invariant, so it has
#' no spectral measure: its random features are a TensorSketch (Pham and
#' Pagh, 2013) rather than Fourier features.
#'
#' With u = (x / l, sqrt(c)) (d + 1 coordinates), k(x, y) = (u'v)^p is the
#' inner product of the tensor powers u^(p) and v^(p). A TensorSketch
#' draws, for each of the p factors, a bucket h_i(k) in 0..D-1 and a sign
#' s_i(k) for every coordinate k, and maps u^(p) to the count sketch
#' \deqn{z_j(x) = \sum_{h_1(k_1) + \dots + h_p(k_p) \equiv j \;(\mathrm{mod}\; D)}
#'   s_1(k_1) \cdots s_p(k_p)\, u_{k_1} \cdots u_{k_p},}{z_j(x) = sum over
#'   (k_1, ..., k_p) with h_1(k_1) + ... + h_p(k_p) = j mod D of
#'   s_1(k_1) ... s_p(k_p) u_(k_1) ... u_(k_p),}
#' the circular convolution of the p count sketches of u. Every bucket and
#' sign is independent and uniform, so z(x)'z(y) is unbiased for
#' (u'v)^p. Its variance follows from writing the bucket indicator by the
#' discrete Fourier transform: with a = (u'v)^2, c = sum_k u_k^2 v_k^2,
#' b = |u|^2 |v|^2 - c, e = a - c and n = 1 + (D even),
#' \deqn{Var = \frac{n (a + b + e)^p + (D - n) ((a + b)^p + (a + e)^p) +
#'   (D^2 - 2D + n) a^p}{D^2} - a^p,}{Var = (n (a + b + e)^p + (D - n)
#'   ((a + b)^p + (a + e)^p) + (D^2 - 2 D + n) a^p) / D^2 - a^p,}
#' which for p = 1 is the count sketch's (|u|^2 |v|^2 + (u'v)^2 -
#' 2 sum_k u_k^2 v_k^2) / D, and is about ((a + b)^p + (a + e)^p - 2 a^p) / D
#' for large D.
#'
#' Why TensorSketch rather than the random Maclaurin features of Kar and
#' Karnick (2012), which multiply p Rademacher projections w_i'u per
#' feature: both are unbiased with variances of the same order, but a
#' Maclaurin feature costs p (d + 1) operations (p D (d + 1) per row),
#' while the sketch's convolution costs at most (p - 1) (d + 1) operations
#' per occupied bucket, (d + 1)^2 per row for p = 2 whatever D is; Pham and
#' Pagh report a lower error at equal D as well. It is also the estimator
#' of scikit-learn's `PolynomialCountSketch`, so the two can be compared
#' like for like. The convolution is computed directly, without FFTs,
#' vectorized over blocks of rows (see the package's source), which is
#' fastest for the moderate d and D of kernel regression.
#'
#' Map drawing: the buckets of the (d + 1) x p matrix `hash` column by
#' column (R's `R_unif_index()`, as [sample.int()] draws them), then the signs of
#' `sign` column by column (one uniform each), with R's random number
#' generator. The map's fields are `hash`, `sign`, `degree`, `offset`, the
#' lengthscale, `D`, `d`, `variant = "sketch"` and `sampler = "iid"`.
#' Samplers `"orthogonal"` and `"qmc"` do not apply; `"nystrom"` gives
#' Nystrom features of the polynomial kernel instead ([rff_nystrom]).
#' Features of data with large x'y / l^2 overflow for large degrees; they
#' are checked and an overflow is an [rff_error] naming `lengthscale`.
#'
#' @name rff_polynomial
#' @references Pham, N. and Pagh, R. (2013). Fast and scalable polynomial
#'   kernels via explicit feature maps. *Proceedings of the 19th ACM SIGKDD
#'   International Conference on Knowledge Discovery and Data Mining*,
#'   239-247.
#'
#'   Kar, P. and Karnick, H. (2012). Random feature maps for dot product
#'   kernels. *Proceedings of the 15th International Conference on
#'   Artificial Intelligence and Statistics*, 583-591.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(30), 10, 3)
#' K <- rff_kernel(x, kernel = "polynomial", degree = 3, offset = 1, lengthscale = 2)
#' all.equal(K, (tcrossprod(x) / 4 + 1)^3, check.attributes = FALSE)
#' Z <- rff_features(x, D = 4000, kernel = "polynomial", degree = 3, offset = 1,
#'                   lengthscale = 2)
#' max(abs(tcrossprod(Z) - K)) / max(abs(K))
NULL

check_sketch_map <- function(map, arg) {
  D <- check_count(map$D, paste0(arg, "$D"))
  d <- check_count(map$d, paste0(arg, "$d"))
  check_kernel_params(map, "polynomial", arg)
  h <- map$hash
  s <- map$sign
  p <- map$degree
  if (!is.matrix(h) || !is.integer(h) || !identical(dim(h), as.integer(c(d + 1, p))) ||
      anyNA(h) || any(h < 0L | h >= D)) {
    rff_abort(arg, sprintf(
      "`%s` is damaged: `hash` must be a %d x %d integer matrix of buckets 0..%d",
      arg, d + 1L, as.integer(p), D - 1L))
  }
  if (!is.matrix(s) || !is.double(s) || !identical(dim(s), as.integer(c(d + 1, p))) ||
      anyNA(s) || any(s != 1 & s != -1)) {
    rff_abort(arg, sprintf("`%s` is damaged: `sign` must be a %d x %d matrix of -1 and 1",
                           arg, d + 1L, as.integer(p)))
  }
  invisible(map)
}
