# The machinery every model fitted on random features shares: the map of a
# fit, streaming rows into statistics, the centered normal equations, the
# lambda path and its solves, GCV, and predictions with intercepts. A model
# family (ridge.R, cv.R) adds only what is its own: its arguments, its
# criterion and its result class.

# A fit's call as the user would write it: a method's call shown as a call
# of the generic `name`.
fit_call <- function(call, name) {
  call[[1L]] <- as.name(name)
  call
}

# ---- the map of a fit ----

# The one place maps are made for fitting: the given map, or rff_map(d, ...)
# with whatever sampling arguments rff_map() accepts (Nystrom landmarks
# drawn from the data x unless given).
fit_map <- function(d, map = NULL, ..., x = NULL) {
  args <- list(...)
  if (!is.null(map)) {
    check_no_sampling_args(names(args))
    check_map(map)
    if (map$d != d) {
      rff_abort("map", sprintf("`map` was drawn for %d input columns but `x` has %d",
                               map$d, d))
    }
    return(map)
  }
  check_map_args(args)
  if (is.null(x)) x <- matrix(0, 0L, d)
  data_map(x, args)
}

# The same draws at another lengthscale: omega has one row per input
# column, each divided by its lengthscale.
rescale_map <- function(map, lengthscale) {
  if (is_nystrom(map$sampler)) return(rescale_nystrom(map, lengthscale))
  if (is_polynomial(map$kernel)) {
    map$lengthscale <- lengthscale
    return(map)
  }
  d <- map$d
  map$omega <- map$omega * (rep_len(map$lengthscale, d) / rep_len(lengthscale, d))
  map$lengthscale <- lengthscale
  map
}

# ---- streaming rows into statistics ----

# Streams validated x (n x d) and y (n x q) through `map` into an
# "rff_stats". With a progress bar, the rows go to C in up to 50 steps of
# whole chunks, so the blocks are the same as without it.
accumulate_stats <- function(x, y, map, intercept, chunk_size, threads, progress) {
  n <- nrow(x)
  yshift <- colMeans(y)
  names(yshift) <- NULL
  nchunks <- ceiling(n / chunk_size)
  run <- function(from, to) {
    .Call(C_rff_ridge_stats, x, y, yshift, map, c(from, to), chunk_size, threads)
  }
  if (!progress || nchunks < 2) {
    s <- run(0, n)
  } else {
    steps <- min(nchunks, 50)
    bounds <- pmin(round(seq(0, nchunks, length.out = steps + 1L)) * chunk_size, n)
    pb <- utils::txtProgressBar(min = 0, max = n, style = 3)
    on.exit(close(pb))
    s <- NULL
    for (i in seq_len(steps)) {
      part <- run(bounds[i], bounds[i + 1L])
      s <- if (is.null(s)) part else Map(`+`, s, part)
      utils::setTxtProgressBar(pb, bounds[i + 1L])
    }
  }
  new_stats(s$ZtZ, s$Zty, s$zsum, s$ysum, s$yty, yshift, n, map, intercept,
            colnames(y))
}

# ---- normal equations, lambda path, solves ----

# Centered (intercept) or raw normal equations from statistics: A = Z'Z,
# b = Z'y, yy = y'y, with the means used for the intercept.
normal_equations <- function(s) {
  n <- s$n
  if (s$intercept) {
    zbar <- s$zsum / n
    ybar_shifted <- s$ysum / n
    list(A = s$ZtZ - n * tcrossprod(zbar),
         b = s$Zty - n * outer(zbar, ybar_shifted),
         yy = pmax(s$yty - n * ybar_shifted^2, 0),
         zbar = zbar, ybar = s$yshift + ybar_shifted, n = n)
  } else {
    list(A = s$ZtZ, b = s$Zty + outer(s$zsum, s$yshift),
         yy = s$yty + 2 * s$yshift * s$ysum + n * s$yshift^2,
         zbar = NULL, ybar = NULL, n = n)
  }
}

# The lambda values of a path from check_path(): those given, or `nlambda`
# log-spaced decreasing values from trace(A) / n down to `ratio` times that.
lambda_values <- function(path, A, n) {
  if (!is.null(path$lambda)) return(path$lambda)
  lmax <- sum(diag(A)) / n
  if (!(lmax > 0)) lmax <- 1
  lmax * exp(seq(0, log(path$ratio), length.out = path$nlambda))
}

# Coefficients (D x q x L), intercepts (q x L), df (L), rss (L x q) at each
# of the L values of `lambda`, from the normal equations: one Cholesky solve
# for one value, one eigendecomposition for several.
solve_path <- function(sys, lambda) {
  A <- sys$A
  n <- sys$n
  D <- nrow(A)
  q <- ncol(sys$b)
  L <- length(lambda)
  beta <- array(0, c(D, q, L))
  rss <- matrix(0, L, q)
  df <- numeric(L)
  if (L == 1L) {
    method <- "cholesky"
    r <- .Call(C_rff_ridge_chol, A, sys$b, n * lambda)
    if (r$info != 0L) singular_abort(lambda)
    beta[, , 1L] <- r$coefficients
    df[1L] <- D - n * lambda * r$trace_inv
    Ab <- A %*% r$coefficients
    rss[1L, ] <- sys$yy - 2 * colSums(r$coefficients * sys$b) +
      colSums(r$coefficients * Ab)
  } else {
    method <- "eigen"
    e <- .Call(C_rff_ridge_eigen, A)
    s <- pmax(e$values, 0)
    V <- e$vectors
    u <- crossprod(V, sys$b)
    for (i in seq_len(L)) {
      den <- s + n * lambda[i]
      if (any(den <= 0)) singular_abort(lambda[i])
      w <- 1 / den
      beta[, , i] <- V %*% (u * w)
      df[i] <- sum(s * w)
      rss[i, ] <- sys$yy - colSums(u^2 * (w^2 * (s + 2 * n * lambda[i])))
    }
  }
  rss <- pmax(rss, 0)
  intercept <- matrix(0, q, L)
  if (!is.null(sys$zbar)) {
    for (i in seq_len(L)) {
      intercept[, i] <- sys$ybar - drop(crossprod(matrix(beta[, , i], D, q), sys$zbar))
    }
    df <- df + 1
  }
  list(beta = beta, intercept = intercept, lambda = lambda, df = df, rss = rss,
       method = method)
}

singular_abort <- function(lambda) {
  rff_abort("lambda", sprintf(
    "Z'Z + n * lambda * I is singular at `lambda` = %s; use a positive `lambda`",
    format(lambda)))
}

# GCV = n RSS / (n - df)^2 (L x q; infinite when df >= n) and the index of
# the lambda with the smallest GCV summed over responses.
gcv_select <- function(rss, df, n) {
  gcv <- n * rss / pmax(n - df, 0)^2
  gcv[!is.finite(gcv)] <- Inf
  best <- which.min(rowSums(gcv))
  if (length(best) == 0L) best <- 1L
  list(gcv = gcv, best = best)
}

# ---- predictions ----

# beta as a D x q x L array and intercepts as q x L, whatever q is.
coef_array <- function(object) {
  b <- object$coefficients
  if (length(dim(b)) == 2L) array(b, c(nrow(b), 1L, ncol(b))) else b
}
intercept_matrix <- function(object) {
  matrix(object$intercept, ncol = length(object$lambda))
}

# Predictions (n x q x k array) at lambda indices `idx` for a validated
# double matrix x, streamed through the map.
predict_rows <- function(object, x, idx, chunk_size = NULL, threads = NULL) {
  B <- coef_array(object)[, , idx, drop = FALSE]
  D <- dim(B)[1L]
  q <- dim(B)[2L]
  k <- dim(B)[3L]
  if (is.null(chunk_size)) chunk_size <- default_chunk_size(D)
  if (is.null(threads)) threads <- default_threads()
  P <- .Call(C_rff_ridge_predict, x, object$map, matrix(B, D, q * k),
             chunk_size, threads)
  a0 <- intercept_matrix(object)[, idx, drop = FALSE]
  P <- P + rep(as.vector(a0), each = nrow(x))
  array(P, c(nrow(x), q, k))
}

# z(x)'beta + intercept for `newdata` at the requested lambdas, shaped by
# shape_by_lambda(): what predict() returns for a linear model.
predict_linear <- function(object, newdata, lambda, chunk_size, threads) {
  idx <- lambda_index(object, lambda)
  x <- newdata_matrix(object, newdata)
  if (!is.null(chunk_size)) chunk_size <- check_count(chunk_size, "chunk_size", lo = 1)
  threads <- check_threads(threads)
  P <- predict_rows(object, x, idx, chunk_size, threads)
  shape_by_lambda(P, rownames(x), object$response,
                  format(object$lambda[idx], digits = 4))
}

# An m x q x k array (rows, responses, lambdas) as the user expects it: a
# named vector for one response at one lambda, a matrix when q or k is one.
shape_by_lambda <- function(a, rows, response, lambda) {
  m <- dim(a)[1L]
  q <- dim(a)[2L]
  k <- dim(a)[3L]
  if (q == 1L && k == 1L) return(stats::setNames(a[, 1L, 1L], rows))
  if (q == 1L) return(matrix(a, m, k, dimnames = list(rows, lambda)))
  if (k == 1L) return(matrix(a, m, q, dimnames = list(rows, response)))
  dimnames(a) <- list(rows, response, lambda)
  a
}

# The fitted values and residuals at lambda_best, kept in the fit.
add_fitted <- function(fit, x, y, chunk_size, threads) {
  f <- predict_rows(fit, x, fit$best, chunk_size, threads)[, , 1L]
  f <- matrix(f, nrow(x), dimnames = list(rownames(x), colnames(y)))
  r <- y - f
  rownames(r) <- rownames(x)
  if (ncol(f) == 1L) {
    f <- stats::setNames(f[, 1L], rownames(x))
    r <- stats::setNames(r[, 1L], rownames(x))
  }
  fit$fitted.values <- f
  fit$residuals <- r
  fit$xnames <- colnames(x)
  fit
}

no_data_abort <- function() {
  rff_abort("object", "`object` was fitted from statistics and keeps no fitted values; use predict(object, newdata)")
}

# Indices of the requested lambdas in the fitted path (NULL: the best).
lambda_index <- function(object, lambda) {
  if (is.null(lambda)) return(object$best)
  lambda <- check_lambda(lambda)
  idx <- vapply(lambda, function(l) {
    i <- which(abs(object$lambda - l) <= 1e-8 * pmax(abs(l), abs(object$lambda)))
    if (length(i)) i[1L] else NA_integer_
  }, integer(1))
  if (anyNA(idx)) {
    rff_abort("lambda", sprintf(
      "`lambda` = %s is not in the fitted path; refit with `lambda = %s` (the fit keeps only the coefficients of its own lambda values)",
      format(lambda[is.na(idx)][1L]), format(lambda[is.na(idx)][1L])))
  }
  idx
}

# ---- inputs: formulas and new data ----

# The model frame of a formula fit, as stats::lm() builds it: `call` is the
# method's match.call(expand.dots = FALSE), evaluated in `env`. Gives x (the
# model matrix without its intercept column), y, whether the formula has an
# intercept, and in `model` what predict() needs to rebuild x.
formula_frame <- function(call, env) {
  m <- match(c("formula", "data", "subset", "na.action"), names(call), 0L)
  mf <- call[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, env)
  mt <- attr(mf, "terms")
  y <- stats::model.response(mf, "numeric")
  if (is.null(y)) rff_abort("formula", "`formula` must have a response")
  x <- stats::model.matrix(mt, mf)
  contrasts <- attr(x, "contrasts")
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  if (ncol(x) == 0L) rff_abort("formula", "`formula` must have at least one predictor")
  list(x = x, y = y, intercept = attr(mt, "intercept") == 1L,
       model = list(terms = mt, xlevels = stats::.getXlevels(mt, mf),
                    contrasts = contrasts, na.action = attr(mf, "na.action")))
}

# newdata as a double matrix with the training columns.
newdata_matrix <- function(object, newdata) {
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata) && !is.list(newdata)) {
      rff_abort("newdata", sprintf(
        "`newdata` must be a data frame for a fit made with a formula, got %s",
        show_value(newdata)))
    }
    tt <- stats::delete.response(object$terms)
    x <- tryCatch({
      mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass,
                               xlev = object$xlevels)
      stats::model.matrix(tt, mf, contrasts.arg = object$contrasts)
    }, error = function(e) {
      rff_abort("newdata", paste0("`newdata` does not fit the model: ", conditionMessage(e)))
    })
    x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
    return(check_x(x, "newdata"))
  }
  x <- check_x(newdata, "newdata")
  xn <- object$xnames
  if (!is.null(xn) && !is.null(colnames(x))) {
    miss <- setdiff(xn, colnames(x))
    if (length(miss)) {
      rff_abort("newdata", sprintf("`newdata` lacks the column%s %s used in the fit",
                                   if (length(miss) > 1L) "s" else "",
                                   paste0("\"", miss, "\"", collapse = ", ")))
    }
    x <- x[, xn, drop = FALSE]
  }
  if (ncol(x) != object$map$d) {
    rff_abort("newdata", sprintf("`newdata` has %d column%s but the model was fitted on %d",
                                 ncol(x), if (ncol(x) == 1L) "" else "s", object$map$d))
  }
  x
}

# ---- printing ----

map_line <- function(map) {
  sprintf("%d %s (%s, %s kernel, lengthscale %s)",
          map$D, map_kind(map), map$variant, kernel_label(map),
          paste(format(map$lengthscale, digits = 4), collapse = ", "))
}

# The first lines a fit prints: what it is, the call, the map.
cat_fit_header <- function(title, call, map) {
  cat(title, "\n", sep = "")
  if (!is.null(call)) cat("Call: ", paste(deparse(call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("  %s\n", map_line(map)))
}
