# Layer 4 (users of maps): the arc-cosine kernels' documentation (their maps
# are drawn by rff_map(kernel = "arccos")).

#' Arc-cosine kernels
#'
#' `kernel = "arccos"` is the arc-cosine kernel of Cho and Saul (2009),
#' k_n(x, y) = 2 E\[step(w'x) step(w'y) (w'x)^n (w'y)^n\], w ~ N(0, I), of
#' order n = `order` (0 or 1). With theta the angle between x and y, its
#' closed forms are
#' \deqn{k_0(x, y) = 1 - \theta / \pi,}{k0(x, y) = 1 - theta / pi,}
#' \deqn{k_1(x, y) = |x| |y| (\sin\theta + (\pi - \theta)\cos\theta) / \pi.}{k1(x, y) = |x| |y| (sin theta + (pi - theta) cos theta) / pi.}
#' It is not shift-invariant (it depends on x and y, not only on x - y), so
#' the results about kappa(delta), such as the variance of Proposition 2 in
#' Sutherland and Schneider (2015), do not apply to it.
#'
#' Features: the map holds m = D/2 directions w_j ~ N(0, I) (drawn as for
#' the Gaussian kernel, by any of the [rff_samplers]), and each gives two
#' features, one for w_j and one for the antithetic direction -w_j:
#' \deqn{z_j(x) = \sqrt{2/D}\, step(w_j'x) (w_j'x)^n, \quad
#'   z_{j+m}(x) = \sqrt{2/D}\, step(-w_j'x) (-w_j'x)^n.}{z_j(x) = sqrt(2/D)
#'   step(w_j'x) (w_j'x)^n, z_(j+m)(x) = sqrt(2/D) step(-w_j'x) (-w_j'x)^n.}
#' Each feature has the form of Cho and Saul's with w ~ N(0, I), so
#' z(x)'z(y) is unbiased for k_n(x, y); pairing w with -w lowers its
#' variance to 2 (k_{2n}(x, y) - k_n(x, y)^2) / D (for order 0,
#' 2 k_0 (1 - k_0) / D, against 4 p (1 - p) / D, p = k_0 / 2, for D
#' independent directions), and makes z(x)'z(x) = 1 exactly for order 0
#' (x not 0), as cosine/sine pairs do for Fourier features. This is
#' `variant = "pair"`, the only variant: there are no phases, and
#' `variant = "phase"` is an error. step(t) is 1 for t > 0 and 0 otherwise,
#' so the features of x = 0 vanish and k_n(0, y) is taken to be 0.
#'
#' Lengthscale: as for the other kernels, the inputs are divided by
#' `lengthscale` (the frequencies are w_j / l), so the features estimate
#' k_n(x / l, y / l). A scalar l leaves k_0 unchanged and divides k_1 by
#' l^2; per-column lengthscales (ARD) change the angles.
#'
#' @name rff_arccos
#' @references Cho, Y. and Saul, L. K. (2009). Kernel methods for deep
#'   learning. *Advances in Neural Information Processing Systems 22*.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(30), 10, 3)
#' Z <- rff_features(x, D = 4000, kernel = "arccos", order = 1)
#' K <- rff_kernel(x, kernel = "arccos", order = 1)
#' max(abs(tcrossprod(Z) - K))
NULL
