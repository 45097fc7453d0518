# Layer 7 (families): the fit of rff_glm_apply() over its session: the
# problem whose passes are rounds over the workers, the folds that are the
# chunks, the preconditioner's sample and the "rff_glm" object.

# The problem of glm_path() and glm_cv_path() (see glm_problem()) whose
# rows stay on the workers: its pass, start and total weight are rounds of
# the session `S`, summed in chunk order; `w` is NULL (all chunks) or
# list(out = j), chunk j left out.
glm_remote_problem <- function(S, info, map, intercept, chunk_size, threads) {
  k <- length(info$n)
  K <- info$K
  D <- map$D
  fam <- S$setup$family
  used <- function(w) if (is.null(w)) seq_len(k) else setdiff(seq_len(k), w$out)
  add <- function(res, ids, field) {
    out <- 0
    for (i in ids) out <- out + res[[i]][[field]]
    out
  }
  pass <- function(theta, w) {
    ids <- used(w)
    S$passes <- S$passes + 1L
    res <- S$round("pass", list(theta = theta), only = ids)
    G <- matrix(0, D, K)
    for (i in ids) G <- G + res[[i]]$grad
    list(loss = add(res, ids, "loss"), grad = G, grad0 = as.vector(add(res, ids, "grad0")),
         eta = NULL)
  }
  wsum <- function(w) sum(info$wsum[used(w)])
  start <- function(w) {
    ids <- used(w)
    W <- wsum(w)
    wy <- add(info$start, ids, "wy")
    if (fam == "multinomial") {
      a <- log(pmax(wy / W, 1e-10))
      return(a - mean(a))
    }
    ybar <- wy / W
    if (fam == "poisson") {
      if (!info$has_offset) return(log(max(ybar, 1e-10)))
      return(log(max(wy, 1e-300) / add(info$start, ids, "wexp")))
    }
    a <- stats::qlogis(min(max(ybar, 1e-10), 1 - 1e-10))
    if (info$has_offset) {
      for (it in 1:50) {  # Newton's method for the intercept beside the offset, as glm_start()
        res <- S$round("newton", list(a = a), only = ids)
        hg <- 0
        for (i in ids) hg <- hg + res[[i]]
        if (!(hg[1L] > 0)) break
        step <- hg[2L] / hg[1L]
        a <- a - step
        if (abs(step) < 1e-12) break
      }
    }
    a
  }
  list(pass = pass, start = start, wsum = wsum, family = fam, K = K, D = D, n = sum(info$n),
       W = wsum(NULL), saturated = function(w) add(info$start, used(w), "sat"), w = NULL,
       weights = NULL, offset = NULL, intercept = intercept,
       map = map, basis = NULL, Z = NULL, cached = info$cached)
}

# The chunks as the folds of glm_cv_path() (see glm_row_folds()): chunk j
# held out, its deviance measured by the worker that keeps it.
glm_remote_folds <- function(S, info) {
  list(k = length(info$n), wsum = info$wsum,
       weights = function(j) list(out = j),
       measure = function(j, fit, measure) {
         theta <- matrix(fit$coef[, , 1L], dim(fit$coef)[1L], dim(fit$coef)[2L])
         S$round("measure", list(theta = theta, measure = measure), only = j)[[j]]
       })
}

# The preconditioner's rows: the sample rff_glm() takes from all rows (the
# same evenly spaced rows), fetched from the chunks that hold them, as
# a problem of its own (for glm_precond() and the degrees of freedom).
glm_apply_sample <- function(S, info, map, chunk_size, threads, cache_mb, intercept) {
  n <- sum(info$n)
  m <- precond_rows(n, map$D)
  rows <- precond_sample(n, m)
  first <- cumsum(c(0, info$n))
  ci <- findInterval(rows, first[seq_along(info$n)] + 1)
  per <- split(rows - first[ci], ci)
  ids <- as.integer(names(per))
  per_chunk <- lapply(per, function(r) list(rows = r))
  res <- S$round("sample", list(per_chunk = per_chunk), only = ids)[ids]
  x <- do.call(rbind, lapply(res, `[[`, "x"))
  y <- unlist(lapply(res, `[[`, "y"))
  w <- if (all(vapply(res, function(r) is.null(r$w), TRUE))) NULL else
    unlist(lapply(res, function(r) if (is.null(r$w)) rep(1, length(r$y)) else r$w))
  off <- if (info$has_offset) do.call(rbind, lapply(res, `[[`, "offset"))
  glm_problem(x, y, S$setup$family, info$K, off, w, map, chunk_size, threads, cache_mb,
              intercept)
}

# The "rff_glm" object (see glm_result()) of the fit `r` (path, CV) whose
# rows stayed on the workers: the deviances from the chunks' sums, the
# training classification from a last round at lambda_best.
glm_apply_result <- function(S, r, info, prob, sp, control, intercept) {
  L <- length(r$lambda)
  best <- if (is.null(r$cv)) L else best_by_measure(r$cv$cvm, "deviance")
  # a cross-validated path: lambda_best solved on to the tolerance
  if (isTRUE(r$full$loose)) r$full <- glm_refine(prob, r$P, r$full, r$lambda, best, control)
  glm_convergence_warnings(r, control$maxit, "rff_glm_apply")
  full <- r$full
  K <- info$K
  D <- prob$D
  fam <- prob$family
  chunk_sum <- function(res, field = NULL) {
    out <- 0
    for (x in res) out <- out + (if (is.null(field)) x else x[[field]])
    out
  }
  sat <- chunk_sum(info$start, "sat")
  a <- if (intercept) glm_start(prob, NULL) else rep(0, K)
  null_dev <- chunk_sum(S$round("null", list(a = a)))
  theta <- matrix(full$coef[, , best], D + 1L, K)
  training <- list(sat_ll = chunk_sum(info$start, "sat_ll"))
  if (fam != "poisson") {
    fr <- S$round("final", list(theta = theta))
    tab <- chunk_sum(fr, "table")
    lev <- info$levels
    training$confusion <- as.table(matrix(tab, length(lev), length(lev),
                                          dimnames = list(predicted = lev, observed = lev)))
    training$accuracy <- chunk_sum(fr, "correct") / prob$W
  }
  coef <- full$coef[-1L, , , drop = FALSE]
  a0 <- matrix(full$coef[1L, , ], K, L)
  if (K == 1L) {
    coef <- matrix(coef, D, L)
    a0 <- drop(a0)
  } else {
    dimnames(coef) <- list(NULL, info$levels, NULL)
    dimnames(a0) <- list(info$levels, NULL)
  }
  fit <- list(coefficients = coef, intercept = a0, lambda = r$lambda,
              deviance = 2 * (full$loss - sat), null.deviance = null_dev,
              iterations = full$iter, converged = full$converged,
              cvm = if (is.null(r$cv)) NULL else r$cv$cvm,
              cvsd = if (is.null(r$cv)) NULL else r$cv$cvsd,
              measure = "deviance", folds = if (is.null(r$cv)) NULL else length(info$n),
              lambda_best = r$lambda[best], best = best, family = fam,
              levels = info$levels, linear.predictors = NULL, y = NULL, prior.weights = NULL,
              standardize = NULL, lengthscale_search = NULL, has_offset = info$has_offset,
              weighted = info$weighted, has_intercept = intercept, map = prob$map,
              n = sum(info$npos), xnames = NULL, cached = info$cached,
              df_sample = list(x = sp$x, y = sp$y, offset = sp$offset, w = sp$w, W = prob$W),
              training = training, chunks = info$n, passes = S$passes, rounds = S$rounds,
              workers = length(S$slots), reread = sort(unique(S$reread)))
  class(fit) <- c("rff_glm", "rff_fit")
  keep_fit_fields(fit)
}
