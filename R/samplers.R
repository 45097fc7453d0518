# Layer 4 (users of maps): the samplers' documentation and the randomized
# Halton sequence.

#' Samplers of the random frequencies
#'
#' Argument `sampler` of [rff_map()] and [rff_features()] chooses how the
#' frequencies omega_1, ..., omega_m are drawn. Every sampler gives each
#' frequency the kernel's spectral law, so z(x)'z(y) stays an unbiased
#' estimate of k(x, y); they differ in how the frequencies depend on each
#' other, hence in the variance.
#'
#' \describe{
#'   \item{`"iid"`}{Independent draws (Rahimi and Recht, 2007). Every kernel.}
#'   \item{`"orthogonal"`}{Orthogonal random features (Yu et al., 2016), for
#'     the radial kernels `"gaussian"`, `"matern"` and `"arccos"`. The
#'     frequencies come in blocks of `d`: the directions of a block are the
#'     columns of a random orthogonal matrix Q (the QR decomposition G = QR of
#'     a `d` x `d` standard normal matrix, with the columns of Q multiplied by
#'     the signs of diag(R), which makes Q Haar-distributed; LAPACK
#'     `dgeqrf`/`dorgqr`), and their norms are drawn independently from the
#'     kernel's radial law (Gaussian: chi with `d` degrees of freedom;
#'     Matern: the norm of a multivariate t). The last block is truncated when
#'     `d` does not divide the number of frequencies. Draw order per block:
#'     the `d^2` normals of G, column by column, then one norm per frequency.
#'     Frequencies of one block are exactly orthogonal (for a scalar
#'     lengthscale), which lowers the variance of the kernel estimate, most
#'     when the lengthscale is large compared with the distances in the data.}
#'   \item{`"qmc"`}{Randomized quasi-Monte Carlo (Avron et al., 2016), for
#'     every built-in kernel. Point j of a Halton sequence in s dimensions (the
#'     k-th coordinate in base the k-th prime b) is scrambled, each
#'     coordinate by a random linear permutation of its digits,
#'     a -> (h a + g) mod b, and shifted by a uniform random
#'     vector modulo 1 (Cranley-Patterson rotation), then pushed through the
#'     inverse CDF of the spectral measure: normal quantiles (Gaussian,
#'     arc-cosine), Cauchy quantiles (Laplace), or normal quantiles and one
#'     chi-square quantile (Matern: s = d + 1). The random shift makes each
#'     point uniform on the unit cube, so the estimate stays unbiased, while
#'     the points fill the cube more evenly than independent ones. With
#'     `variant = "phase"` the phases are one more dimension of the sequence
#'     (b_j = 2 pi u_j). Random draws: s shifts, then for each dimension
#'     its h (in 1..b-1) and g (in 0..b-1).}
#' }
#'
#' User-defined kernels ([rff_spectral()]) support only `"iid"`. Measured
#' variance reductions for the Gaussian kernel in `d = 8` are in the
#' package's benchmark notes (`bench/RESULTS-samplers.md` in the sources).
#'
#' @name rff_samplers
#' @references
#' Yu, F. X., Suresh, A. T., Choromanski, K., Holtmann-Rice, D. and Kumar, S.
#' (2016). Orthogonal random features. *Advances in Neural Information
#' Processing Systems 29*.
#'
#' Avron, H., Sindhwani, V., Yang, J. and Mahoney, M. W. (2016).
#' Quasi-Monte Carlo feature maps for shift-invariant kernels. *Journal of
#' Machine Learning Research* 17(120), 1-38.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(40 * 8), 40, 8)
#' K <- rff_kernel(x, lengthscale = 4)
#' gram_mse <- function(sampler) mean(replicate(50, {
#'   Z <- rff_features(x, D = 32, lengthscale = 4, sampler = sampler)
#'   mean((tcrossprod(Z) - K)^2)
#' }))
#' sapply(c("iid", "orthogonal", "qmc"), gram_mse)
NULL

# n points of the Halton sequence in s dimensions, scrambled and shifted
# with R's RNG when randomize is TRUE (the points the "qmc" sampler uses).
halton <- function(n, s, randomize = TRUE) {
  .Call(C_rff_halton, as.integer(n), as.integer(s), randomize)
}
