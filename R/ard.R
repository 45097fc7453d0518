# Layer 6 (engines): lengthscale = "ard": one lengthscale per input column
# and the ridge penalty chosen by maximizing the log evidence of the
# Bayesian linear model on the features (the sparse-spectrum Gaussian
# process), with its gradient from one streamed pass in C (src/ard.c).

# Rows on which "ard" optimizes the evidence: all of them up to this, else
# a random subsample of this many (each evaluation costs O(n D min(n, D))).
ard_max_rows <- 2000L

# Features on which "ard" optimizes the evidence at most: the map's first
# ones (the same draws, so the same kernel, estimated less finely); the
# final fit uses all of them.
ard_max_features <- 500L

# The first D features of a Fourier map (its first frequencies, and
# phases): a map of the same kernel and draws with fewer features.
ard_submap <- function(map, D) {
  if (D >= map$D) return(map)
  m <- if (map$variant == "pair") D %/% 2L else D
  map$omega <- map$omega[, seq_len(m), drop = FALSE]
  if (!is.null(map$phase)) map$phase <- map$phase[seq_len(D)]
  map$D <- as.integer(D)
  map
}

# Iterations of L-BFGS-B at most (each one evaluation or a few).
ard_maxit <- 50L

# optim()'s relative tolerance on the criterion, in units of the machine
# epsilon: 1e10 stops within about 2e-6 of the log evidence, far below
# the differences between lengthscales that matter.
ard_factr <- 1e10

# The prior of each log-lengthscale: normal about the isotropic choice's
# log, with this standard deviation (a lengthscale e^2 = 7.4 times longer
# or shorter costs 2 nats): without it the evidence overfits its d
# hyperparameters on small data sets (bench/RESULTS-ard.md).
ard_prior_sd <- 2

# How far the lengthscales may move from the isotropic start: from 1/20
# of it to 1e4 times it (an irrelevant input drifts to the upper bound).
ard_range <- c(1 / 20, 1e4)

# Whether a map's lengthscales act by rescaling random frequencies, so that
# "ard" and its gradient apply: Fourier maps of a shift-invariant kernel
# (gaussian, laplace, matern, an rff_spectral() law) from the "iid",
# "orthogonal" or "qmc" samplers. Arc-cosine, polynomial and Nystrom maps
# are refused by check_ard_args().
ard_map_ok <- function(kernel, sampler) {
  !is_nystrom(sampler) && !is_polynomial(kernel) && !identical(kernel, "arccos")
}

check_ard_args <- function(args) {
  kernel <- if (is.null(args$kernel)) "gaussian" else args$kernel
  sampler <- if (is.null(args$sampler)) "iid" else args$sampler
  if (!is.null(args$landmarks) || !ard_map_ok(kernel, sampler)) {
    what <- if (!is.null(args$landmarks) || is_nystrom(sampler)) "a Nystrom map" else
      sprintf("the %s kernel", kernel)
    rff_abort("lengthscale", sprintf(paste0(
      "`lengthscale` \"ard\" learns lengthscales that rescale random frequencies; ",
      "%s has none: give the lengthscales (one per column) instead"), what))
  }
  invisible(args)
}

# The negative log evidence of y (n x q) under y = Z beta (+ intercept) +
# e, beta ~ N(0, s2 / alpha I), e_i ~ N(0, s2 / w_i), the intercept flat
# (so Z and y are centred) and the noise variance s2 profiled out, for each
# response (alpha shared), up to a constant:
#   F = sum_k n' / 2 log Q_k + q / 2 (log |A + alpha I| - D log alpha),
#   Q_k = yc_k'W yc_k - b_k'(A + alpha I)^-1 b_k,
# with A = Zc'W Zc, b = Zc'W yc and n' the rows of positive weight (less
# one with an intercept); s2 = Q_k / n' and lambda = alpha / sum(w). With
# `grad`, the gradient in (log lengthscale, log alpha). With fewer rows
# than features, the same criterion from the n x n matrix K = Zt Zt'
# (Zt = W^(1/2) Zc): log |A + alpha I| - D log alpha = log |K + alpha I|
# - n log alpha and Q_k = alpha yt'(K + alpha I)^-1 yt.
ard_evidence <- function(x, y, w, map, alpha, intercept, chunk_size, threads,
                         grad = TRUE) {
  n <- nrow(x)
  q <- ncol(y)
  D <- map$D
  W <- sum(w)
  npos <- sum(w > 0) - intercept
  ybar <- if (intercept) colSums(y * w) / W else numeric(q)
  yc <- y - rep(ybar, each = n)
  if (n <= D) {
    Z <- .Call(C_rff_features, x, map, threads)
    zbar <- if (intercept) colSums(Z * w) / W else numeric(D)
    Zt <- sqrt(w) * (Z - rep(zbar, each = n))
    yt <- sqrt(w) * yc
    U <- chol(tcrossprod(Zt) + diag(alpha, n))
    S <- chol2inv(U)
    u <- S %*% yt
    Q <- alpha * colSums(yt * u)
    value <- sum(npos / 2 * log(Q)) + q / 2 * (2 * sum(log(diag(U))) - n * log(alpha))
    if (!grad) return(list(value = value, Q = Q, npos = npos))
    c <- npos * alpha / (2 * Q)
    GK <- q / 2 * S - u %*% (c * t(u))
    Tm <- sqrt(w) * (2 * GK %*% Zt)
    # dF/dZ. With an intercept, Z enters through Z - 1 zbar' as well, adding
    # -w (1'Tm) / W; that term is 0: Zt' sqrt(w) = 0 and yt' sqrt(w) = 0
    # (weighted centring), so S sqrt(w) = sqrt(w) / alpha, u' sqrt(w) = 0
    # and 1'Tm = 2 sqrt(w)' GK Zt = 0
    dZ <- Tm
    gl <- .Call(C_rff_ard_gradient, x, map, dZ, NULL, NULL, NULL, NULL, NULL,
                as.integer(chunk_size), threads)
    da <- sum(npos / (2 * Q) * (Q / alpha - alpha * colSums(u^2))) +
      q / 2 * (sum(diag(S)) - n / alpha)
  } else {
    st <- .Call(C_rff_ridge_stats, x, y, ybar, w, map, c(0, n), as.integer(chunk_size),
                threads)
    zbar <- if (intercept) st$zsum / W else numeric(D)
    A <- st$ZtZ - W * tcrossprod(zbar)
    b <- st$Zty - outer(zbar, st$ysum)
    yy <- st$yty - if (intercept) st$ysum^2 / W else 0
    U <- chol(A + diag(alpha, D))
    Minv <- chol2inv(U)
    beta <- Minv %*% b
    Q <- yy - colSums(b * beta)
    value <- sum(npos / 2 * log(Q)) + q / 2 * (2 * sum(log(diag(U))) - D * log(alpha))
    if (!grad) return(list(value = value, Q = Q, npos = npos))
    c <- npos / (2 * Q)
    G <- 2 * (beta %*% (c * t(beta))) + q * Minv
    g <- -beta * rep(2 * c, each = D)
    gl <- .Call(C_rff_ard_gradient, x, map, NULL, zbar, G, g, yc, w,
                as.integer(chunk_size), threads)
    da <- sum(c * colSums(beta^2)) + q / 2 * (sum(diag(Minv)) - D / alpha)
  }
  list(value = value, gradient = c(gl, alpha * da), Q = Q, npos = npos)
}

# The "ard" search: L-BFGS-B (stats::optim) on the log-lengthscales and log
# alpha of ard_evidence(), started from the isotropic lengthscale `l0` and
# alpha0 = lambda0 * sum(w) (lambda0 = NULL: the evidence's best lambda at
# l0), on the prepared data `m` (x, y, weights) and
# its base map (lengthscale 1: every lengthscale rescales the same draws,
# so the objective is smooth and reproducible). On more than ard_max_rows
# rows, a random subsample; at most the first `features` features; a
# normal prior of standard deviation `prior_sd` on each log-lengthscale
# about log(l0). The optimum is accepted only when its evidence
# is at least the start's. Returns the lengthscales (named by column), the
# penalty lambda the evidence chose, the noise variance(s), the criterion
# at the start and at the end, and optim()'s counts.
ard_optimize <- function(m, l0, lambda0, intercept, chunk_size, threads,
                         features = ard_max_features, prior_sd = ard_prior_sd) {
  n <- nrow(m$x)
  d <- ncol(m$x)
  rows <- if (n > ard_max_rows) sort(sample.int(n, ard_max_rows)) else seq_len(n)
  x <- m$x[rows, , drop = FALSE]
  y <- m$y[rows, , drop = FALSE]
  w <- if (is.null(m$weights)) rep(1, length(rows)) else m$weights[rows]
  W <- sum(w)
  base <- ard_submap(m$map, features)
  cache <- new.env(parent = emptyenv())
  tau <- prior_sd
  # one lengthscale per group of columns (the terms of a formula: a
  # factor's dummies share one), G in all
  groups <- if (length(m$groups) == d) m$groups else seq_len(d)
  G <- max(groups)
  eval_at <- function(theta) {
    if (!identical(theta, cache$theta)) {
      map <- rescale_map(base, exp(theta[groups]))
      r <- ard_evidence(x, y, w, map, exp(theta[G + 1L]), intercept, chunk_size, threads)
      # the log-normal prior of the lengthscales about the isotropic l0
      dev <- theta[seq_len(G)] - log(l0)
      r$evidence <- -r$value
      r$value <- r$value + sum(dev^2) / (2 * tau^2)
      r$gradient <- c(rowsum(r$gradient[seq_len(d)], groups, reorder = TRUE)[, 1L] +
                        dev / tau^2, r$gradient[d + 1L])
      cache$res <- r
      cache$theta <- theta
    }
    cache$res
  }
  if (is.null(lambda0)) {
    # no penalty to start from: the evidence's best at the isotropic l0
    map0 <- rescale_map(base, l0)
    lambda0 <- exp(stats::optimize(function(la) {
      ard_evidence(x, y, w, map0, exp(la) * W, intercept, chunk_size, threads,
                   grad = FALSE)$value
    }, log(c(1e-8, 10)), tol = 0.05)$minimum)
  }
  alpha0 <- max(lambda0 * W, 1e-10 * W)
  theta0 <- c(rep(log(l0), G), log(alpha0))
  lower <- c(rep(log(l0 * ard_range[1L]), G), log(alpha0) - log(1e8))
  upper <- c(rep(log(l0 * ard_range[2L]), G), log(alpha0) + log(1e8))
  start <- eval_at(theta0)
  # a criterion that is not finite (a response fitted exactly, such as a
  # constant) leaves nothing to optimize: the start is kept
  opt <- if (is.finite(start$value)) tryCatch(
    stats::optim(theta0, function(t) eval_at(t)$value, function(t) eval_at(t)$gradient,
                 method = "L-BFGS-B", lower = lower, upper = upper,
                 control = list(maxit = ard_maxit, factr = ard_factr)),
    error = function(e) NULL)
  if (is.null(opt)) opt <- list(par = theta0, counts = c(`function` = 1L, gradient = 1L),
                                convergence = 52L)
  theta <- opt$par
  end <- eval_at(theta)
  accepted <- is.finite(end$value) && end$value <= start$value
  if (!accepted) {
    theta <- theta0
    end <- start
  }
  ls <- exp(theta[groups])
  names(ls) <- colnames(m$x)
  alpha <- exp(theta[G + 1L])
  list(lengthscale = ls, lambda = alpha / W, sigma2 = end$Q / end$npos,
       evidence = c(start = start$evidence, end = end$evidence),
       criterion = c(start = start$value, end = end$value), accepted = accepted,
       counts = opt$counts, convergence = opt$convergence, rows = length(rows),
       features = base$D, start = l0)
}

# "ard" after the isotropic search of select_lengthscale() (`search`):
# the evidence optimized from its best lengthscale and lambda, then the
# ARD lengthscales scored by the same criterion and rows as the isotropic
# candidates (fit_rows(..., score_only = TRUE)); they are kept by
# ard_keep(). The search gains `ard` (ard_optimize()'s result, the scores,
# the paired z statistic and whether it was kept); when kept, its fit (or
# eigenproblem) replaces the isotropic one.
ard_select <- function(m, search, fit_rows, intercept, chunk_size, threads) {
  best <- search$best
  ard <- ard_optimize(m, search$table$lengthscale[best], search$table$lambda[best],
                      intercept, chunk_size, threads)
  sub <- search$subset
  score_map <- if (is.null(search$features)) m$map else ard_submap(m$map, search$features)
  f <- fit_rows(rescale_map(score_map, unname(ard$lengthscale)), sub, score_only = TRUE,
                row_errors = TRUE, partial = score_map$D < m$map$D || length(sub) < nrow(m$x))
  g <- if (f$criterion == "LOO") f$loo else f$gcv
  g <- if (is.matrix(g)) rowSums(g) else g
  ard$score <- g[f$best]
  ard$score_isotropic <- search$table[[4L]][best]
  ard$z <- ard_paired_z(f$loo_row_errors, search$errors)
  ard$kept <- ard_keep(ard$score, ard$score_isotropic, ard$z)
  f$loo_row_errors <- NULL
  if (ard$kept) {
    full <- length(sub) == nrow(m$x) && score_map$D == m$map$D
    scored <- scored_system(f$normal)
    search$fit <- if (full && !scored) f else NULL
    search$eig <- if (full && scored) f$eigen else NULL
  }
  search$ard <- ard
  search
}

# How many standard errors of the paired difference the LOO error of "ard"
# must be below the isotropic choice's to be kept. Its G + 1
# hyperparameters are tuned on the evidence of the same rows, which makes
# its LOO error optimistic: on the panel of bench/RESULTS-ard.md it was
# below the isotropic one's on every split, z from -0.1 to -11, on splits
# where its test error was higher as well (Cars93 and Boston, z down to
# -2.9) as where it was lower (Ozone -2.9 to -3.7, friedman1 below -9).
ard_margin_se <- 3

# The paired z statistic of two fits' LOO errors on the same rows
# (`errors` and `errors_isotropic`: each row's weighted squared LOO
# residual at the fit's best lambda): the mean difference over its
# standard error, negative when "ard" is better. NA when either is missing
# (the GCV criterion has no per-row errors), or not finite; -Inf when the
# differences are all equal and negative, Inf when all equal and not.
ard_paired_z <- function(errors, errors_isotropic) {
  if (is.null(errors) || is.null(errors_isotropic) ||
      length(errors) != length(errors_isotropic) || length(errors) < 2L) return(NA_real_)
  d <- errors - errors_isotropic
  if (!all(is.finite(d))) return(NA_real_)
  se <- stats::sd(d) / sqrt(length(d))
  if (se == 0) return(if (mean(d) < 0) -Inf else Inf)
  mean(d) / se
}

# The acceptance rule of "ard" against the isotropic choice (smaller
# scores are better): with per-row LOO errors (z from ard_paired_z()),
# kept only when its mean LOO error is at least ard_margin_se standard
# errors below the isotropic choice's; without them (GCV), when its score
# is no worse.
ard_keep <- function(score, score_isotropic, z = NA_real_) {
  if (!is.finite(score) || score > score_isotropic) return(FALSE)
  if (is.na(z)) return(TRUE)
  z <= -ard_margin_se
}

# The lengthscale a search chose: the ARD lengthscales when kept, else the
# isotropic candidate.
search_lengthscale <- function(search) {
  if (isTRUE(search$ard$kept)) return(unname(search$ard$lengthscale))
  search$table$lengthscale[search$best]
}
