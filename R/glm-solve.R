# Layer 6 (engines): the penalized likelihood fit of rff_glm() over a lambda
# path with warm starts, its cross-validation, the path's lambda values
# and the effective degrees of freedom.

# The path: lambda values in decreasing order, each started from the
# solution of the one before (from the third on, or from the line through
# the two before, when it is lower). `w` NULL: the problem's weights (a fold
# passes its training weights). Returns coefficients ((D + 1) x K x L, in
# the original coordinates), the loss, eta at the last lambda, iterations
# and convergence, and the solver's state at the last lambda (its inner
# coordinates `th` and curvature pairs `mem`, for glm_refine() and the
# folds' starts), and at the one before it (`before`: th, mem and eta). `start_eta`: the linear predictor at `start` (one
# lambda), which spares the start's product Z B in C (lbfgs_lambda()).
# `after(i, theta, mem, eta, converged)` sees each solution, its eta and whether it
# converged; TRUE ends the path there, a number k ends it after value k.
glm_path <- function(prob, lambda, P, control, w = NULL, start = NULL, after = NULL,
                     mem = NULL, start_eta = NULL) {
  W <- glm_wsum(prob, w)
  wp <- if (is.null(w)) prob$weights else w
  L <- length(lambda)
  K <- prob$K
  theta0 <- matrix(0, prob$D + 1L, K)
  if (prob$intercept && is.null(start)) {
    theta0[1L, ] <- glm_start(prob, if (is.null(w)) prob$w else w)
  }
  th <- to_inner(theta0, P$zbar)
  coef <- array(0, c(prob$D + 1L, K, L))
  loss <- numeric(L)
  iter <- integer(L)
  conv <- logical(L)
  mem0 <- mem
  cur <- NULL
  # the solver in C, which returns each solution's eta (n x K) with it:
  # the last two are kept for the next lambda's extrapolated start
  in_c <- is.null(start) && lbfgs_in_c(prob, P)
  eta1 <- NULL
  states <- vector("list", 3L)
  for (i in seq_len(L)) {
    if (!is.null(start)) {
      th <- to_inner(matrix(start[, , i], prob$D + 1L, K), P$zbar)
      cur <- if (!is.null(start_eta)) list(eta = start_eta)
      mem <- mem0
    } else if (!is.null(cur)) {
      # the same point under the new penalty
      B <- th[-1L, , drop = FALSE]
      dl <- lambda[i] - lambda[i - 1L]
      cur$f <- cur$f + dl / 2 * sum(B^2)
      cur$g[-1L, ] <- cur$g[-1L, , drop = FALSE] + dl * B
      if (i >= 3L && lambda[i] > 0 && lambda[i - 1L] < lambda[i - 2L]) {
        # the solutions before, extrapolated linearly in log lambda, when
        # that point is lower (the solver's iterations at small lambda
        # about halve)
        ex <- path_extrapolate(sol1, sol2, lambda[i - 2L], lambda[i - 1L], lambda[i])
        new <- if (in_c) {
          # eta is linear in the inner coordinates: the point's eta is the
          # same line through the solutions' etas, and its objective costs
          # no pass; the solver in C then starts from that eta alone, at
          # half a pass (the gradient's product)
          eta_ex <- path_extrapolate(eta1, eta2, lambda[i - 2L], lambda[i - 1L], lambda[i])
          list(f = glm_objective_eta(prob, ex, eta_ex, lambda[i], wp, W), eta = eta_ex)
        } else glm_eval(prob, ex, lambda[i], P, wp, W)
        if (is.finite(new$f) && new$f < cur$f) {
          th <- ex
          cur <- if (in_c) list(eta = new$eta) else new
        }
      }
    }
    r <- lbfgs_lambda(prob, th, lambda[i], P, wp, W, control, mem, cur = cur)
    sol2 <- if (i > 1L) sol1
    sol1 <- r$th
    if (in_c) {
      eta2 <- eta1
      eta1 <- r$cur$eta
    }
    th <- r$th
    mem <- r$mem
    cur <- r$cur
    theta <- from_inner(th, P$zbar)
    if (K > 1L) theta[1L, ] <- theta[1L, ] - mean(theta[1L, ])
    coef[, , i] <- theta
    loss[i] <- r$cur$loss
    iter[i] <- r$iter
    conv[i] <- r$converged
    eta <- r$cur$eta
    # the solver's state at the last three values, for glm_refine()
    states <- c(states[-1L], list(list(th = th, mem = mem, eta = eta)))
    stop <- if (!is.null(after)) after(i, theta, mem, eta, r$converged) else FALSE
    if (isTRUE(stop) || is.numeric(stop)) {
      # (a number: the values to keep, which ends the path before value i)
      keep <- seq_len(if (is.numeric(stop)) stop else i)
      if (length(keep) < i) states <- c(list(NULL), states[-3L])
      coef <- coef[, , keep, drop = FALSE]
      loss <- loss[keep]
      iter <- iter[keep]
      conv <- conv[keep]
      lambda <- lambda[keep]
      break
    }
  }
  last <- states[[3L]]
  list(coef = coef, loss = loss, iter = iter, converged = conv, eta = last$eta,
       lambda = lambda, mem = last$mem, th = last$th, before = states[[2L]])
}

# The memory (MB) the curvature pairs of a cross-validation's folds may
# hold between lambdas (glm_cv_path()): 41 MB for 5 folds of 2,000
# features and 26 classes; rff_glm_apply()'s folds are its chunks. The
# folds' etas (n x K each) have a budget of the same size.
fold_pairs_mb <- 256

# The start at lambda `l` of a path from its solutions `s1` at `l1` and
# `s2` at `l2` before it: the line through them, in log lambda.
path_extrapolate <- function(s1, s2, l2, l1, l) {
  s1 + (s1 - s2) * (log(l / l1) / log(l1 / l2))
}

# The total weight of the rows a fit uses: the problem's, or a fold's
# training weights `w` (from glm_row_folds(), or the problem's own folds).
glm_wsum <- function(prob, w) {
  if (is.function(prob$wsum)) return(prob$wsum(w))
  sum(if (is.null(w)) prob$w else w)
}

# The folds of a cross-validation of rows in memory, by `foldid`: their
# number k, the held-out weight of each, the training weights of fold j
# (the held-out rows weighted 0: nothing is copied and the passes are the
# same), the held-out measure of a fit of fold j (from its eta) and its
# standard error over the held-out rows. With `holdout`, only fold 1 is
# held out (k = 1): a validation on one held-out set. A problem whose rows
# live elsewhere (rff_glm_apply()) makes its own, with the same fields.
glm_row_folds <- function(prob, foldid, holdout = FALSE) {
  held <- lapply(seq_len(if (holdout) 1L else max(foldid)), function(j) which(foldid == j))
  list(k = length(held), wsum = vapply(held, function(h) sum(prob$w[h]), 0),
       weights = function(j) {
         w <- prob$w
         w[held[[j]]] <- 0
         w
       },
       measure = function(j, fit, measure) glm_measure(prob, fit$eta, held[[j]], measure),
       se = function(j, fit, measure) glm_measure_se(prob, fit$eta, held[[j]], measure))
}

# The path on all rows with its k-fold cross-validation over `folds`
# (glm_row_folds()): at each lambda, after the fit on all rows, each fold
# is fitted as the whole problem with its training weights, to 1000 times
# the tolerance of `control` (the held-out measure needs a few digits: on
# iris, mlbench::Vehicle, Sonar and 2,000 rows of LetterRecognition the
# chosen lambda was that of 100 times, the best CV deviance within 6e-4
# of it relatively, with 13-31% fewer passes), at most 1e-4, which binds
# at the default epsilon (at 1e-3 the passes fell by 11-49%, but the best
# CV deviance moved by up to 3% and Sonar's rff_cv() chose another
# lengthscale),
# and the measure is taken on its held-out rows. A fold starts from its
# own fit at the lambda before, moved by the change of the fit on all
# rows, with its own curvature pairs while all folds' pairs fit in
# fold_pairs_mb (else those of the fit on all rows); at the first lambda,
# and for the Poisson family (whose loss a moved start could make
# overflow), from the fit on all rows. The linear predictor is linear in
# the coefficients, so a solver in C (lbfgs_in_c()) gets the start's eta
# without the product Z B: the fit on all rows' eta, or the fold's own eta
# moved by the change of the fit on all rows' (for the multinomial family
# up to a constant added to every entry, the centring of the intercepts,
# which changes no probability), while the folds' etas fit in
# fold_pairs_mb too. With `stop_early`, the path stops
# once three consecutive lambdas have not improved on the best CV measure;
# the values past the `nominal` first (path_extension()) are taken one at a
# time while the last is the best, and not after a step that gained less
# than the fraction auto_flat, nor after one that did not converge (which
# is dropped), as lengthscale_walk() takes its steps.
# With one fold (a held-out set, glm_row_folds(holdout = TRUE)), cvsd is
# the standard error of the measure over the held-out rows. With `loose`,
# the path on all rows is solved to glm_path_loose times the tolerance of
# `control` (and `full$loose` says so), for glm_refine() to finish the
# lambda chosen; the progress
# stage of the path then spans `share` of what its parent has left.
# Returns the path (`full`) and cvm, cvsd per lambda.
glm_cv_path <- function(prob, lambda, P, control, folds, measure, progress = FALSE,
                        stop_early = FALSE, loose = FALSE, share = 1,
                        nominal = length(lambda)) {
  k <- folds$k
  L <- length(lambda)
  vals <- matrix(NA_real_, k, L)
  wj <- folds$wsum
  cv_control <- control
  cv_control$epsilon <- min(1000 * control$epsilon, 1e-4)
  sgn <- if (measure == "auc") -1 else 1
  conv <- TRUE
  cvm <- cvsd <- rep(NA_real_, L)
  # the progress of the path: a lambda costs more passes the smaller it is
  # (about 5 times the first at the last, measured on the default path)
  # (past the nominal path, the stage stays at its end)
  work <- cumsum(1 + 4 * (seq_len(nominal) - 1) / max(nominal - 1, 1))
  # one fold is a held-out set (cross-validation has at least 2)
  one_set <- k == 1L
  pb <- progress_stage(if (one_set) "validation over lambda (one held-out set)" else
                         sprintf("cross-validation over lambda (%d folds)", k), work[nominal],
                       progress && L > 1L, share = share)
  on.exit(pb$close(), add = TRUE)
  se <- rep(NA_real_, L)
  prev <- NULL
  fold_prev <- vector("list", k)
  moved <- prob$family != "poisson"
  # each fold's 10 curvature pairs: 20 coefficient matrices
  own_pairs <- 20 * 8 * k * (prob$D + 1) * prob$K <= fold_pairs_mb * 2^20
  # each fold's eta (n x K), and the fit on all rows' at the lambda before,
  # kept for the folds' moved starts (a start from the fit on all rows
  # takes its eta whatever the memory)
  in_c <- lbfgs_in_c(prob, P)
  etas <- in_c && 8 * (k + 1) * prob$n * prob$K <= fold_pairs_mb * 2^20
  prev_eta <- NULL
  after <- function(i, theta, mem, eta, converged) {
    conv_i <- converged
    for (j in seq_len(k)) {
      fp <- fold_prev[[j]]
      st <- st_eta <- NULL
      if (moved && !is.null(fp)) {
        st <- fp$theta + (theta - prev)
        if (!is.null(fp$eta)) st_eta <- fp$eta + (eta - prev_eta)
        if (!all(is.finite(st)) || (!is.null(st_eta) && !all(is.finite(st_eta)))) st <- NULL
      }
      if (is.null(st)) {  # from the fit on all rows
        st <- theta
        st_eta <- if (in_c) eta
      }
      fit <- glm_path(prob, lambda[i], P, cv_control, w = folds$weights(j),
                      start = array(st, c(dim(theta), 1L)),
                      mem = if (is.null(fp$mem)) mem else fp$mem, start_eta = st_eta)
      fold_prev[[j]] <<- list(theta = matrix(fit$coef[, , 1L], nrow(theta)),
                              mem = if (own_pairs) fit$mem, eta = if (etas) fit$eta)
      conv_i <- conv_i && all(fit$converged)
      vals[j, i] <<- folds$measure(j, fit, measure)
      if (one_set) se[i] <<- folds$se(j, fit, measure)
    }
    prev <<- theta
    prev_eta <<- if (etas) eta
    curve <- if (one_set) list(cvm = vals[1L, i], cvsd = se[i]) else
      cv_curve(vals[, i, drop = FALSE], wj)
    cvm[i] <<- curve$cvm
    cvsd[i] <<- curve$cvsd
    pb$set(work[min(i, nominal)])
    if (i > nominal) {
      # a value past the nominal path that did not converge is dropped
      if (!conv_i) return(i - 1L)
      b <- which.min(sgn * cvm[seq_len(i)])
      gain <- sgn * (cvm[i - 1L] - cvm[i])
      return(b < i || !(gain >= auto_flat * abs(cvm[i])))
    }
    conv <<- conv && conv_i
    if (i == nominal && i < L) return(which.min(sgn * cvm[seq_len(i)]) < i)
    if (!stop_early || i < 5L) return(FALSE)
    i - which.min(sgn * cvm[seq_len(i)]) >= 3L
  }
  path_control <- control
  if (loose) path_control$epsilon <- glm_path_loose * control$epsilon
  full <- glm_path(prob, lambda, P, path_control, after = after)
  full$loose <- loose
  keep <- seq_along(full$lambda)
  list(full = full, cvm = cvm[keep], cvsd = cvsd[keep], folds = vals[, keep, drop = FALSE],
       converged = conv)
}

# The path `full` of glm_cv_path(loose = TRUE) (on the problem `prob` with
# preconditioner `P`, at lambda values `lambda`) with its lambda `best`
# solved on to the tolerance of `control`: from its looser solution, and at
# the path's last two lambdas from the solver's own state there (its inner
# coordinates, curvature pairs and, in C, eta). The iterations add up;
# loss and convergence are the new solution's.
glm_refine <- function(prob, P, full, lambda, best, control) {
  L <- length(full$lambda)
  # the solver's own state at the last value or the one before (where an
  # extended path's best lies), else the coefficients alone
  st <- if (best == L) full else if (best == L - 1L) full$before
  th <- if (!is.null(st$th)) st$th else
    to_inner(matrix(full$coef[, , best], prob$D + 1L, prob$K), P$zbar)
  cur <- if (!is.null(st$eta) && lbfgs_in_c(prob, P)) list(eta = st$eta)
  r <- lbfgs_lambda(prob, th, lambda[best], P, prob$weights, glm_wsum(prob, NULL), control,
                    mem = st$mem, cur = cur)
  theta <- from_inner(r$th, P$zbar)
  if (prob$K > 1L) theta[1L, ] <- theta[1L, ] - mean(theta[1L, ])
  full$coef[, , best] <- theta
  full$loss[best] <- r$cur$loss
  full$iter[best] <- full$iter[best] + r$iter
  full$converged[best] <- r$converged
  full
}

# The lambda path of rff_glm(): the given values (sorted decreasing), or
# `nlambda` log-spaced values from lambda_max = max(mu) trace(C), the
# start's curvature times the total variance of the features (at which the
# fit uses about one degree of freedom), down to `ratio` times that.
glm_lambda_values <- function(path, P) {
  if (!is.null(path$lambda)) return(sort(path$lambda, decreasing = TRUE))
  lmax <- max(P$mu) * P$trace
  if (!(lmax > 0)) lmax <- 1
  lmax * exp(seq(0, log(path$ratio), length.out = path$nlambda))
}

# The effective degrees of freedom at one solution, trace((H + W lambda
# J)^-1 H) with H the Hessian of the weighted loss (J: identity on the
# features, 0 on the intercept), estimated on the preconditioner's sample
# of rows (exact when it holds all rows); for the multinomial family, the
# sum over classes of that trace for each class's diagonal block.
glm_df <- function(prob, theta, lambda, rows) {
  Zs <- if (is.null(prob$Z)) .Call(C_rff_features, prob$x[rows, , drop = FALSE], prob$map,
                                   prob$threads) else prob$Z[rows, , drop = FALSE]
  Zs <- cbind(1, Zs)
  w <- prob$w[rows]
  scale <- prob$W / sum(w)
  eta <- Zs %*% theta
  if (!is.null(prob$offset)) eta <- eta + prob$offset[rows, , drop = FALSE]
  hk <- switch(prob$family,
               binomial = { p <- stats::plogis(eta); p * (1 - p) },
               poisson = exp(eta),
               multinomial = { p <- exp(eta - apply(eta, 1L, max)); p <- p / rowSums(p); p * (1 - p) })
  Wl <- prob$W * lambda
  df <- 0
  for (k in seq_len(ncol(hk))) {
    H <- crossprod(Zs * sqrt(w * hk[, k])) * scale
    M <- H
    diag(M)[-1L] <- diag(M)[-1L] + Wl
    R <- tryCatch(chol(M), error = function(e) NULL)
    if (is.null(R)) return(NA_real_)
    df <- df + sum(diag(backsolve(R, backsolve(R, H, transpose = TRUE))))
  }
  df
}
