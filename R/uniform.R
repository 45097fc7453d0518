# Layer 4 (users of maps): the uniform (sup-norm) bound on the approximation
# error and its inverse, the D that reaches a given error.

#' Uniform (sup-norm) bound on the kernel approximation error
#'
#' `rff_uniform_bound()` bounds the probability that a random Fourier
#' feature map with `D` features misses the kernel by `eps` or more
#' *anywhere* on a set M of diameter `diameter` in `d` dimensions:
#' P(sup over x, y in M of |z(x)'z(y) - k(x, y)| >= eps). `rff_uniform_D()`
#' inverts it: the smallest `D` whose bound is at most `prob`.
#'
#' The bound follows the covering argument of Rahimi and Recht (2007,
#' Claim 1), refined as in Sutherland and Schneider (2015) by treating the
#' two variants separately. For a random, differentiable g on a ball B of
#' radius R in d dimensions: if |g(a)| < t/2 at the centres a of an r-net of
#' B (at most (1 + 2R/r)^d points, a volume argument) and the Lipschitz
#' constant L of g is below t/(2r), then |g| < t on all of B. Hoeffding's
#' inequality bounds the first failure at each centre, Markov's inequality
#' the second through E\[L^2\], and the radius r is chosen to minimize the
#' sum (numerically, with `stats::uniroot()`; the minimum over r is unique).
#' With sigma^2 = E|omega|^2 the second moment of the spectral measure
#' (lengthscale applied):
#' \describe{
#'   \item{`"pair"`}{z(x)'z(y) = s(x - y) = (2/D) sum_j cos(omega_j'(x - y)),
#'     a mean of D/2 terms in \[-1, 1\], and x - y lies in the ball of
#'     radius `diameter` around 0. The Lipschitz constant of s - kappa is at
#'     most (2/D) sum_j |omega_j| + E|omega|, whose second moment is at most
#'     4 sigma^2 for any draw, so
#'     \deqn{P \le \min_r \; 2 (1 + 2\ell/r)^d e^{-D\epsilon^2/16} +
#'       16 \sigma^2 r^2 / \epsilon^2.}{P <= min over r of
#'       2 (1 + 2 l / r)^d exp(-D eps^2 / 16) + 16 sigma^2 r^2 / eps^2.}}
#'   \item{`"phase"`}{z(x)'z(y) = s1(x - y) + s2(x + y), with
#'     s1(delta) = (1/D) sum_j cos(omega_j'delta) (mean kappa) and
#'     s2(u) = (1/D) sum_j cos(omega_j'u + 2 b_j) (mean 0), so the error
#'     reaches `eps` only if |s1 - kappa| or |s2| reaches eps/2 somewhere:
#'     the first on the ball of radius `diameter` around 0 (E\[L^2\] <=
#'     4 sigma^2), the second on a ball of radius 2 `diameter` containing
#'     M + M (E\[L^2\] <= sigma^2), each a mean of D terms in \[-1, 1\]:
#'     \deqn{P \le \min_r \left[2 (1 + 2\ell/r)^d e^{-D\epsilon^2/32} +
#'       64 \sigma^2 r^2/\epsilon^2\right] + \min_r \left[2 (1 + 4\ell/r)^d
#'       e^{-D\epsilon^2/32} + 16 \sigma^2 r^2/\epsilon^2\right].}{P <= min
#'       over r of [2 (1 + 2 l / r)^d exp(-D eps^2 / 32) + 64 sigma^2 r^2 /
#'       eps^2] + min over r of [2 (1 + 4 l / r)^d exp(-D eps^2 / 32) +
#'       16 sigma^2 r^2 / eps^2].}}
#' }
#' (with l = `diameter`; a single ball of radius r >= R covers B, so r is
#' also compared with R, where the net is one point). As a function of D
#' the bound behaves like (sigma l / eps)^(2d/(d+2)) exp(-D eps^2 /
#' (8 (d + 2))) for pairs and exp(-D eps^2 / (16 (d + 2))) for random
#' phases, the shape of Rahimi and Recht's
#' 2^8 (sigma l / eps)^2 exp(-D eps^2 / (4 (d + 2))); the constants differ
#' because Rahimi and Recht bound E\[L^2\] by sigma^2 through an expectation
#' taken at a point that itself depends on the draw, which the bound of
#' 4 sigma^2 used here does not need. So D of order
#' d eps^-2 log(sigma l / eps) features suffice for a uniform error `eps`.
#'
#' sigma^2 is sum_k 1 / l_k^2 for the Gaussian kernel and
#' nu / (nu - 1) sum_k 1 / l_k^2 for the Matern kernel with nu > 1 (E\[1/u\]
#' = 1 / (2 nu - 2) for u ~ chi^2 with 2 nu degrees of freedom). The
#' Laplace kernel (Cauchy frequencies) and the Matern kernels with nu <= 1
#' (t frequencies with at most 2 degrees of freedom) have no second spectral
#' moment: their kernels are not differentiable at 0, sigma is infinite and
#' the argument gives nothing; they are an [rff_error], as are kernels that
#' are not shift-invariant (`"arccos"`, `"polynomial"`) and user-defined
#' [rff_spectral()] kernels, whose sigma the package cannot know.
#'
#' The bound is for i.i.d. frequencies (`sampler = "iid"`), and like every
#' union bound it is loose: the simulated frequency of a sup error of `eps`
#' is usually far below it (see the convergence vignette).
#'
#' @inheritParams rff_map
#' @param D Number of features (positive whole numbers; even for `"pair"`).
#' @param eps Error levels (positive numbers). `D` and `eps` (for
#'   `rff_uniform_D()`: `eps` and `prob`) are recycled to a common length.
#' @param d Input dimension.
#' @param diameter Diameter of the set M in which x and y lie (for data
#'   scaled to the unit cube in d dimensions, sqrt(d)).
#' @param kernel `"gaussian"` or `"matern"` (with `nu > 1`).
#' @param lengthscale A positive number, or one per input column.
#' @param variant `"phase"` (default) or `"pair"`.
#' @param prob Target probabilities, in (0, 1).
#' @return `rff_uniform_bound()`: the bounds (values above 1 are returned as
#'   they are: the bound is then void). `rff_uniform_D()`: the smallest
#'   numbers of features (even for `"pair"`) with a bound of at most `prob`,
#'   as doubles (they can exceed the integer range).
#' @references Rahimi, A. and Recht, B. (2007). Random features for
#'   large-scale kernel machines. *Advances in Neural Information Processing
#'   Systems 20*.
#'
#'   Sutherland, D. J. and Schneider, J. (2015). On the error of random
#'   Fourier features. *Proceedings of the 31st Conference on Uncertainty in
#'   Artificial Intelligence*, 862-871.
#' @seealso [rff_tail_bound()] for one point, [rff_kernel_error()] for the
#'   simulated sup error.
#' @examples
#' # P(sup error over [0, 4] >= 0.1) for the Gaussian kernel, l = 1
#' rff_uniform_bound(D = c(1e4, 3e4, 1e5), eps = 0.1, d = 1, diameter = 4)
#' # features needed for a sup error below 0.1 with probability 0.99
#' rff_uniform_D(eps = 0.1, prob = 0.01, d = 1, diameter = 4, variant = "pair")
#' # in 10 dimensions, data in the unit cube
#' rff_uniform_D(eps = 0.1, prob = 0.01, d = 10, diameter = sqrt(10),
#'               kernel = "matern", nu = 2.5, lengthscale = 0.5)
#' # the simulated frequency of a sup error of 0.05 or more is far below
#' # the bound for 0.05 (void) and the bound for 0.1
#' set.seed(1)
#' err <- rff_kernel_error(seq(0, 4, by = 0.02), y = 0, D = 20000, reps = 50,
#'                         variant = "pair")
#' mean(err$max_abs >= 0.05)
#' rff_uniform_bound(20000, c(0.05, 0.1), d = 1, diameter = 4, variant = "pair")
#' @export
rff_uniform_bound <- function(D, eps, d, diameter, kernel = "gaussian",
                              lengthscale = 1, nu = 1.5, variant = "phase") {
  check_required(c("D", "eps", "d", "diameter"))
  a <- uniform_args(d, diameter, kernel, lengthscale, nu, variant)
  D <- check_feature_counts(D, a$variant)
  eps <- check_positive_numbers(eps, "eps")
  n <- recycled_length(D, eps, "D", "eps")
  D <- rep_len(D, n)
  eps <- rep_len(eps, n)
  vapply(seq_len(n), function(i) uniform_bound_value(D[i], eps[i], a), numeric(1))
}

#' @rdname rff_uniform_bound
#' @export
rff_uniform_D <- function(eps, prob, d, diameter, kernel = "gaussian",
                          lengthscale = 1, nu = 1.5, variant = "phase") {
  check_required(c("eps", "prob", "d", "diameter"))
  a <- uniform_args(d, diameter, kernel, lengthscale, nu, variant)
  eps <- check_positive_numbers(eps, "eps")
  prob <- check_positive_numbers(prob, "prob")
  if (any(prob >= 1)) {
    rff_abort("prob", sprintf("`prob` must be below 1, got %s", format(prob[prob >= 1][1L])))
  }
  n <- recycled_length(eps, prob, "eps", "prob")
  eps <- rep_len(eps, n)
  prob <- rep_len(prob, n)
  vapply(seq_len(n), function(i) uniform_D_value(eps[i], prob[i], a), numeric(1))
}

# The validated setting of a uniform bound, with sigma^2 = E|omega|^2.
uniform_args <- function(d, diameter, kernel, lengthscale, nu, variant) {
  d <- check_count(d, "d")
  diameter <- check_positive(diameter, "diameter")
  kernel <- check_kernel(kernel)
  if (inherits(kernel, "rff_spectral")) {
    rff_abort("kernel", paste0(
      "`kernel` is a user-defined rff_spectral() kernel: the bound needs the second ",
      "moment sigma^2 = E|omega|^2 of its spectral measure, which the package does not know"))
  }
  if (!is_shift_invariant(kernel)) {
    rff_abort("kernel", sprintf(paste0(
      "`kernel` \"%s\" is not shift-invariant (k(x, y) is no function kappa(x - y)): ",
      "the uniform bound is for random Fourier features of shift-invariant kernels"), kernel))
  }
  nu <- check_nu(nu, kernel)
  if (kernel == "laplace") {
    rff_abort("kernel", paste0(
      "`kernel` \"laplace\" has Cauchy frequencies, whose second moment ",
      "sigma^2 = E|omega|^2 is infinite (the kernel has a corner at 0), so the ",
      "covering argument gives no uniform bound"))
  }
  if (kernel == "matern" && nu <= 1) {
    rff_abort("nu", sprintf(paste0(
      "`nu` = %s: the Matern kernel's frequencies are t with 2 nu <= 2 degrees of ",
      "freedom, whose second moment sigma^2 = E|omega|^2 is infinite, so the ",
      "covering argument gives no uniform bound; it needs nu > 1"), format(nu)))
  }
  lengthscale <- check_lengthscale(lengthscale, d)
  variant <- check_string(variant, "variant", rff_variants)
  inv_l2 <- sum(1 / rep_len(lengthscale, d)^2)
  sigma2 <- if (kernel == "matern") inv_l2 * nu / (nu - 1) else inv_l2
  if (!is.finite(sigma2)) {
    rff_abort("lengthscale", sprintf(
      "`lengthscale` (smallest %s) is too small: sigma^2 = E|omega|^2 overflows",
      format(min(lengthscale))))
  }
  list(d = d, diameter = diameter, sigma2 = sigma2, variant = variant)
}

check_positive_numbers <- function(x, arg) {
  if (!is_number(x) || length(x) == 0L || anyNA(x) || any(!is.finite(x)) || any(x <= 0)) {
    bad <- if (is_number(x) && length(x) > 0L) x[is.na(x) | !is.finite(x) | x <= 0][1L] else x
    rff_abort(arg, sprintf("`%s` must be positive finite numbers, got %s", arg, show_value(bad)))
  }
  as.double(x)
}

recycled_length <- function(a, b, arg_a, arg_b) {
  n <- max(length(a), length(b))
  if (n %% length(a) != 0L || n %% length(b) != 0L) {
    rff_abort(arg_b, sprintf("`%s` (length %d) and `%s` (length %d) do not recycle to a common length",
                             arg_a, length(a), arg_b, length(b)))
  }
  n
}

# min over r > 0 of exp(log_a) N(r) + exp(log_b) r^2, N(r) = (1 + 2 R / r)^d
# the size of an r-net of a ball of radius R in d dimensions (1 for r >= R),
# computed on the log scale (t = log r) so that nothing under- or overflows
# on the way. Below R the derivative in t has the sign of -h(t),
# h(t) = log_a + log(2 d R) + (d - 1) log(1 + 2 R e^-t) - 3 t - log(2 b),
# which decreases: its root is the one minimum.
net_bound <- function(log_a, log_b, R, d) {
  log_net <- function(t) log1pexp(log(2 * R) - t)   # log(1 + 2 R / r)
  f <- function(t) exp(log_a + d * log_net(t)) + exp(log_b + 2 * t)
  one_ball <- exp(log_a) + exp(log_b + 2 * log(R))
  h <- function(t) log_a + log(2 * d * R) + (d - 1) * log_net(t) - 3 * t - log(2) - log_b
  hi <- log(R)
  if (h(hi) >= 0) return(min(one_ball, f(hi)))
  # h(t) >= the same with log(2 R) - t for log(1 + 2 R e^-t): linear in t,
  # and positive at lo
  lo <- (log_a + log(2 * d * R) + (d - 1) * log(2 * R) - log(2) - log_b) / (d + 2) - 1
  lo <- min(lo, hi - 1)
  t <- stats::uniroot(h, c(lo, hi), tol = 1e-12 * max(1, abs(lo)))$root
  min(one_ball, f(t))
}

# log(1 + exp(z)) without overflow
uniform_bound_value <- function(D, eps, a) {
  l <- a$diameter
  log_s2 <- log(a$sigma2) - 2 * log(eps)     # log(sigma^2 / eps^2)
  if (a$variant == "pair") {
    return(net_bound(log(2) - D * eps^2 / 16, log(16) + log_s2, l, a$d))
  }
  log_a <- log(2) - D * eps^2 / 32
  net_bound(log_a, log(64) + log_s2, l, a$d) + net_bound(log_a, log(16) + log_s2, 2 * l, a$d)
}

# The smallest D (even for "pair") with a bound of at most prob: doubling,
# then bisection (the bound decreases in D).
uniform_D_value <- function(eps, prob, a) {
  step <- if (a$variant == "pair") 2 else 1
  bound <- function(m) uniform_bound_value(m * step, eps, a)
  lo <- 0
  hi <- 1
  while (bound(hi) > prob) {
    lo <- hi
    hi <- 2 * hi
    if (hi > 2^60) {
      rff_abort("eps", sprintf("`eps` = %s is too small: no D below 2^60 reaches `prob` = %s",
                               format(eps), format(prob)))
    }
  }
  while (hi - lo > 1) {
    mid <- floor((lo + hi) / 2)
    if (bound(mid) > prob) lo <- mid else hi <- mid
  }
  hi * step
}
