# Layer 5 (the model pipeline): the solves of ridge regression on features:
# centred normal equations from statistics, the lambda path, Cholesky and
# eigen solves (and the thin eigenproblem when rows are fewer than features),
# GCV and exact leave-one-out.

# Centered (intercept) or raw normal equations from statistics: A = Z'WZ,
# b = Z'Wy, yy = y'Wy, with the (weighted) means used for the intercept; n
# rows of total weight w (w = n without weights). The penalty is
# w * lambda * I, so that weights act only through their proportions.
normal_equations <- function(s) {
  n <- s$n
  w <- stats_wsum(s)
  if (s$intercept) {
    zbar <- s$zsum / w
    ybar_shifted <- s$ysum / w
    list(A = s$ZtZ - w * tcrossprod(zbar),
         b = s$Zty - w * outer(zbar, ybar_shifted),
         yy = pmax(s$yty - w * ybar_shifted^2, 0),
         zbar = zbar, ybar = s$yshift + ybar_shifted, n = n, w = w)
  } else {
    list(A = s$ZtZ, b = s$Zty + outer(s$zsum, s$yshift),
         yy = s$yty + 2 * s$yshift * s$ysum + w * s$yshift^2,
         zbar = NULL, ybar = NULL, n = n, w = w)
  }
}

# The normal equations of normal_equations() from the features Z (n x D) of
# the rows themselves, with responses y (n x q) and weights w (NULL: all 1),
# without the D x D matrix A = Zc'WZc (NULL here), which only a path solved
# by its thin eigenproblem (thin_eigen() of the same Z) can do without;
# `trace` is trace(A), for lambda_values().
dual_system <- function(Z, y, w, intercept) {
  n <- nrow(Z)
  wv <- if (is.null(w)) rep(1, n) else w
  W <- sum(wv)
  zbar <- ybar <- NULL
  if (intercept) {
    zbar <- colSums(Z * wv) / W
    ybar <- colSums(y * wv) / W
    Z <- Z - rep(zbar, each = n)
    y <- y - rep(ybar, each = n)
  }
  list(A = NULL, trace = sum(wv * Z^2), b = crossprod(Z, y * wv), yy = colSums(wv * y^2),
       zbar = zbar, ybar = ybar, n = if (is.null(w)) n else sum(w > 0), w = W)
}

# Normal equations of dual_system() that only score a path: neither the
# D x D matrix A nor its thin eigenproblem (`thin`).
scored_system <- function(sys) is.null(sys$A) && is.null(sys$thin)

# The D x D matrix A of normal equations: kept, or from their thin
# eigenproblem (`thin`, fewer rows than features: the eigenvalues `values`
# and left vectors `left` U of M M', M = W^1/2 Zc the weighted centred
# `features`), A = M'U U'M: equal to Zc'WZc up to the eigenvalues below
# 1e-12 of the largest, which gram_eigen() drops.
normal_matrix <- function(sys) {
  if (!is.null(sys$A)) return(sys$A)
  th <- sys$thin
  if (!is.matrix(th$left) || !is.matrix(th$features)) {
    rff_abort("object", paste0("`object` is damaged: `normal` must hold the matrix `A` ",
                               "or its thin eigenproblem `thin`"))
  }
  # A = V diag(s) V' with V = M'U S^-1/2: M'U U'M
  tcrossprod(crossprod(th$features, th$left))
}

# The lambda values of a path from check_path(): those given, or `nlambda`
# log-spaced decreasing values from trace(A) / w down to `ratio` times that
# (w: the total weight, n without weights); `trace`, when given, is trace(A)
# (the normal equations of dual_system() have no A).
lambda_values <- function(path, A, w, trace = NULL) {
  if (!is.null(path$lambda)) return(path$lambda)
  if (is.null(trace)) trace <- sum(diag(A))
  lmax <- trace / w
  if (!(lmax > 0)) lmax <- 1
  lmax * exp(seq(0, log(path$ratio), length.out = path$nlambda))
}

# The values that continue a data-driven path `lambda` (from
# lambda_values() or glm_lambda_values(), when `path$extend`) past its end
# at its own spacing, as many more as it has steps: down to ratio^2 times
# its first value, as many decades again. A fit takes them one block at a
# time while its best value is its last, as lengthscale_walk() takes the
# next multiple while its best candidate is at an end.
path_extension <- function(lambda, path) {
  L <- length(lambda)
  if (!isTRUE(path$extend) || L < 2L || !(lambda[L] > 0)) return(numeric())
  lambda[L] * (lambda[L] / lambda[L - 1L])^seq_len(L - 1L)
}

# Coefficients (D x q x L), intercepts (q x L), df (L), rss (L x q) at each
# of the L values of `lambda`, from the normal equations: one Cholesky solve
# for one value, one eigendecomposition for several (`eig`, when given: the
# nonzero part from thin_eigen(), or normal equations kept by their thin
# eigenproblem, `thin`; otherwise that of A), on `threads` cores. Without
# `coefficients` (a candidate scored and discarded) the coefficients and
# intercepts stay 0: df and rss need only the eigenpairs.
solve_path <- function(sys, lambda, eig = NULL, threads = 1L, coefficients = TRUE) {
  A <- sys$A
  n <- if (is.null(sys$w)) sys$n else sys$w
  D <- nrow(sys$b)
  q <- ncol(sys$b)
  L <- length(lambda)
  beta <- array(0, c(D, q, L))
  rss <- matrix(0, L, q)
  df <- numeric(L)
  if (is.null(eig) && !is.null(sys$thin)) {
    # normal equations by their thin eigenproblem: A has rank below D, so
    # Z'Z + n lambda I is singular at lambda = 0, as from the statistics
    eig <- sys$thin
    eig$threads <- threads
    if (any(lambda <= 0) && length(eig$values) < D) singular_abort(0)
  }
  if (L == 1L && is.null(eig)) {
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
    e <- if (is.null(eig)) .Call(C_rff_ridge_eigen, A, threads) else eig
    check_psd(e$values)
    s <- pmax(e$values, 0)
    V <- e$vectors
    # a thin eigenproblem with its features M = W^1/2 Zc and no vectors
    # V = M'U S^-1/2 (D x r): the path's coefficients are M' (U S^-1/2
    # diag(1 / (s + n lambda)) u), D x L for each response instead of D x r
    thin <- is.null(V) && !is.null(e$features)
    # no vectors nor features: a path scored from its thin eigenproblem
    # (thin_scores()); u = V'b = S^-1/2 U' M b
    u <- if (thin) crossprod(e$left, e$features %*% sys$b) / sqrt(s) else
      if (is.null(V)) e$u else crossprod(V, sys$b)
    Wd <- matrix(0, length(s), L)
    for (i in seq_len(L)) {
      den <- s + n * lambda[i]
      if (any(den <= 0)) singular_abort(lambda[i])
      w <- 1 / den
      Wd[, i] <- w
      df[i] <- sum(s * w)
      rss[i, ] <- sys$yy - colSums(u^2 * (w^2 * (s + 2 * n * lambda[i])))
    }
    if (!is.null(V) && coefficients) {
      # V (u * w_i) for every lambda in one product on `threads` cores (rff's
      # own kernel, rff_blas_info()): the columns of u * w_i side by side
      M <- u[, rep(seq_len(q), L), drop = FALSE] * Wd[, rep(seq_len(L), each = q), drop = FALSE]
      beta[] <- .Call(C_rff_ridge_project, V, M, threads)
    }
    if (thin && coefficients) {
      G <- 1 / outer(s, n * lambda, `+`)
      for (r in seq_len(q)) {
        C <- e$left %*% ((u[, r] / sqrt(s)) * G)
        beta[, r, ] <- .Call(C_rff_ridge_thin_products, e$features, C, e$threads)
      }
    }
  }
  rss <- pmax(rss, 0)
  eig <- if (method == "eigen") list(values = s, vectors = V, u = u, rows = e$rows) else NULL
  intercept <- matrix(0, q, L)
  if (method == "cholesky") thin <- FALSE
  if (!is.null(sys$zbar)) {
    # a path scored without its vectors has no coefficients, nor intercepts
    if (coefficients && (method == "cholesky" || !is.null(V) || thin)) {
      for (i in seq_len(L)) {
        intercept[, i] <- sys$ybar - drop(crossprod(matrix(beta[, , i], D, q), sys$zbar))
      }
    }
    df <- df + 1
  }
  # (`solver`: the eigenproblem as solved, for more lambda values of the
  # same path, path_extension())
  list(beta = beta, intercept = intercept, lambda = lambda, df = df, rss = rss,
       method = method, eigen = eig, solver = if (method == "eigen") e)
}

# Eigenvalues of a Gram matrix are >= 0 up to rounding (of order D eps of
# the largest); one below -1e-8 of the largest means the matrix is not a
# Gram matrix (statistics altered, or combined from incompatible parts).
check_psd <- function(values, arg = "x") {
  top <- max(abs(values), 0)
  if (length(values) && min(values) < -1e-8 * top) {
    rff_abort(arg, sprintf(paste0(
      "the cross-products `ZtZ` are not positive semidefinite (eigenvalue %s, the largest %s): ",
      "they are not the statistics of any rows (altered, or combined from incompatible parts)"),
      format(min(values), digits = 3), format(top, digits = 3)))
  }
  invisible(values)
}

# The nonzero eigenvalues and their eigenvectors of A = Zc'WZc from the
# n x n matrix (W^1/2 Zc)(W^1/2 Zc)' when there are fewer rows than
# features: O(n^2 D + n^3) instead of the O(D^3) of the D x D problem. Z is
# the n x D feature matrix, zbar the (weighted) column means (NULL without
# intercept), w the row weights or NULL. Eigenvalues below 1e-12 of the
# largest are dropped: they change no coefficient, and df by less than
# 1e-6 each over the lambda path. The products run on `threads` cores. With
# `rows = TRUE` the result also holds
# `rows`, the projections (z_i - zbar)'V of the rows themselves, in closed
# form: with (W^1/2 Zc)(W^1/2 Zc)' = U S U' and V = (W^1/2 Zc)' U S^-1/2,
# they are the rows of U S^1/2 / sqrt(w_i) (NA for rows of weight 0, whose
# projections it does not determine).
thin_eigen <- function(Z, zbar, w, rows = FALSE, threads = 1L, vectors = TRUE) {
  Zc <- weighted_centred(Z, zbar, w)
  out <- gram_eigen(.Call(C_rff_ridge_thin_products, Zc, NULL, threads), threads,
                    low_rank = TRUE)
  s <- out$values
  U <- out$left
  if (vectors) out$vectors <- thin_vectors(Zc, U, s, threads)
  if (rows) {
    P <- U * rep(sqrt(s), each = nrow(U))
    if (!is.null(w)) P <- P / sqrt(w)
    P[!is.finite(P)] <- NA
    out$rows <- P
  }
  out
}

# The nonzero eigenvalues `values` (decreasing) and eigenvectors `left` of
# an n x n Gram matrix (eigenvalues below 1e-12 of the largest dropped),
# with no right-hand vectors yet (`vectors`). The dropped eigenvalues'
# vectors are never formed (C rff_gram_eigen(), on `threads` cores); should
# a LAPACK step there fail, eigen() solves the whole problem. With
# `low_rank`, for K positive semidefinite by construction (the products of
# features), a numerical rank of at most n / 3 is found by K's pivoted
# Cholesky factor B (K = BB' + S, S of trace below 1e-12 of the largest
# eigenvalue), and the eigenpairs are those of BB', in O(n r^2).
gram_eigen <- function(K, threads = 1L, low_rank = FALSE) {
  e <- .Call(C_rff_gram_eigen, K, 1e-12, threads, low_rank)
  if (!is.null(e)) return(list(values = e$values, vectors = NULL, left = e$left))
  gram_eigen_full(K)
}

# gram_eigen() by eigen(): all n eigenvectors, the dropped ones discarded.
gram_eigen_full <- function(K) {
  e <- eigen(K, symmetric = TRUE)
  keep <- e$values > max(e$values, 0) * 1e-12
  list(values = e$values[keep], vectors = NULL, left = e$vectors[, keep, drop = FALSE])
}

# W^1/2 (Z - zbar) (zbar NULL: Z not centred; w NULL: unweighted).
weighted_centred <- function(Z, zbar, w) {
  Zc <- if (is.null(zbar)) Z else Z - rep(zbar, each = nrow(Z))
  if (is.null(w)) Zc else Zc * sqrt(w)
}

# The eigenvectors V = (W^1/2 Zc)' U S^-1/2 (D x r) of the thin eigenproblem
# from its left vectors U (n x r) and values s; Zc here already weighted.
thin_vectors <- function(Zc, U, s, threads = 1L) {
  V <- .Call(C_rff_ridge_thin_products, Zc, U, threads)
  V / rep(sqrt(s), each = nrow(V))
}

# A path's thin eigenproblem without its D x r vectors (thin_eigen(vectors =
# FALSE)), with what scoring the path needs: u = V'b = S^1/2 U' W^1/2 yc (the
# responses y, centred by ybar when given, weights w or NULL), from which
# solve_path() gets the residuals, degrees of freedom and leave-one-out
# errors but no coefficients.
thin_scores <- function(eig, y, ybar, w) {
  yc <- if (is.null(ybar)) y else y - rep(ybar, each = nrow(y))
  if (!is.null(w)) yc <- yc * sqrt(w)
  eig$u <- crossprod(eig$left, yc) * sqrt(eig$values)
  eig
}

# An orthonormal basis V (D x r) of the span of the rows of Z (n x D, fewer
# rows than features) and the rows in it, X = Z V (n x r). From the
# eigenproblem of the distinct rows' Gram matrix Z Z' = U S U' (rff's
# product kernel and eigensolver): V = Z'U S^-1/2 for the eigenvalues
# above 1e-12 of the largest (directions of the rows below 1e-6 of their
# largest singular value are left out: rows linearly dependent on the
# others leave the span r < n dimensions), then made orthonormal to
# rounding by one step of Cholesky QR (V'V = R'R, V <- V R^-1: the
# eigenvectors of the smallest kept eigenvalues are orthogonal only to
# about 1e-16 / 1e-12 of it); S^-1/2 and R^-1 are taken together (r x r),
# so V = Z'U (S^-1/2 R^-1) is one product. Rows of Z that repeat an earlier one exactly
# (`first`, from first_equal_rows() of the inputs, whose features they
# are) are left out of the Gram matrix; X holds every row. LINPACK's QR
# of Z' (R's qr()), used before, took 0.5 s of the 1.1 s of rff_glm() on
# 634 rows of mlbench::Vehicle (D = 1000) on the reference BLAS. It is the
# fallback when the Gram matrix has no positive eigenvalue or V'V no
# Cholesky factor.
row_basis <- function(Z, first = NULL, threads = 1L) {
  Zd <- Z[distinct_rows(first, nrow(Z)), , drop = FALSE]
  e <- gram_eigen(.Call(C_rff_ridge_thin_products, Zd, NULL, threads), threads, low_rank = TRUE)
  V <- NULL
  if (length(e$values) && all(is.finite(e$values)) && all(e$values > 0)) {
    W <- .Call(C_rff_ridge_thin_products, Zd, e$left, threads)
    s <- 1 / sqrt(e$values)
    # (W S^-1/2)'(W S^-1/2) = R'R
    R <- tryCatch(chol(.Call(C_rff_ridge_thin_products, W, W, threads) * outer(s, s)),
                  error = function(err) NULL)
    if (!is.null(R)) V <- .Call(C_rff_ridge_project, W, s * backsolve(R, diag(nrow(R))), threads)
  }
  if (is.null(V)) return(row_basis_qr(Z, first))
  list(X = .Call(C_rff_ridge_project, Z, V, threads), V = V)
}

# The rows of n that are the first of their kind (`first`, from
# first_equal_rows(); NULL: all of them).
distinct_rows <- function(first, n) {
  if (is.null(first)) seq_len(n) else which(first == seq_len(n))
}

# row_basis() by the QR factorization of Z' (R's qr(), LINPACK's dqrdc2):
# Z'[, p] = Q R with the pivot p moving to the end the rows of Z whose
# remainder is below 1e-6 of their norm; then Z[p, ] Q = R', so X is R'
# with its rows put back in order. Repeated rows (`first`) are left out of
# the factorization, where dqrdc2 turns such copies into NaN, and take
# their first's coordinates.
row_basis_qr <- function(Z, first = NULL) {
  distinct <- distinct_rows(first, nrow(Z))
  q <- qr(t(Z[distinct, , drop = FALSE]), tol = 1e-6)
  r <- max(1L, q$rank)
  R <- qr.R(q)[seq_len(r), , drop = FALSE]
  X <- matrix(0, length(distinct), r)
  X[q$pivot, ] <- t(R)
  if (length(distinct) < nrow(Z)) X <- X[match(first, distinct), , drop = FALSE]
  list(X = X, V = qr.Q(q)[, seq_len(r), drop = FALSE])
}

# For each row of x (n x d, finite), the index of the first row exactly
# equal to it (itself when none is): rows sorted in lexicographic order,
# equal neighbours compared with ==.
first_equal_rows <- function(x) {
  n <- nrow(x)
  if (n < 2L) return(seq_len(n))
  o <- do.call(order, unname(lapply(seq_len(ncol(x)), function(j) x[, j])))
  xs <- x[o, , drop = FALSE]
  same <- c(FALSE, rowSums(xs[-1L, , drop = FALSE] != xs[-n, , drop = FALSE]) == 0)
  group <- cumsum(!same)
  # order() is stable: the first of a group is its smallest index
  lead <- o[!same]
  out <- integer(n)
  out[o] <- lead[group]
  out
}

singular_abort <- function(lambda) {
  if (lambda > 0) {
    # Z'Z is positive semi-definite for any features: not so these statistics
    rff_abort("lambda", sprintf(paste0(
      "Z'Z + n * lambda * I is not positive definite at `lambda` = %s: Z'Z is not ",
      "the cross-product of any features (damaged statistics?)"), format(lambda)))
  }
  rff_abort("lambda", sprintf(
    "Z'Z + n * lambda * I is singular at `lambda` = %s; use a positive `lambda`",
    format(lambda)))
}

# GCV = n RSS / (n - df)^2 (L x q; infinite when df >= n) and the index of
# the lambda with the smallest GCV summed over responses. With weights of
# total w, RSS is weighted and GCV = n^2 RSS / (w (n - df)^2): the weighted
# mean squared residual over (1 - df / n)^2.
gcv_select <- function(rss, df, n, w = n) {
  gcv <- n^2 * rss / (w * pmax(n - df, 0)^2)
  gcv[!is.finite(gcv)] <- Inf
  best <- which.min(rowSums(gcv))
  if (length(best) == 0L) best <- 1L
  list(gcv = gcv, best = best)
}

# Leave-one-out cross-validation of a lambda path, exact for ridge on the
# features: with H the hat matrix (a linear smoother), the LOO residual of
# row i is r_i / (1 - h_ii). From the eigendecomposition of the path
# (`p$eigen`) and the features of the rows (streamed once more, in blocks
# of at most 512 rows),
# h_ii(lambda) = w_i (p_i' diag(1 / (s + w lambda)) p_i + 1/w) with p_i =
# V'(z_i - zbar), at O(D^2) per row plus O(D) per row and lambda. When the
# rows are those of a thin eigenproblem (`p$eigen$rows`, see thin_eigen()),
# the p_i are known and nothing is streamed; rows of weight 0 add nothing
# to the criterion and are left out. Rows `x`, `y`, `weights` are in the
# kernel's units; the result is the (weighted) mean squared LOO residual,
# L x q. Unlike GCV, which replaces every h_ii by their mean, it stays right
# when leverages are uneven (heavy-tailed inputs). With `row_errors`, the
# result carries attribute "rows": the rows' weighted squared LOO residuals
# summed over the responses, nrow(x) x L (0 for rows of weight 0), whose
# means over rows are the criterion's (ard_keep() pairs them).
loo_path <- function(sys, p, map, x, y, weights, chunk_size, threads, row_errors = FALSE) {
  e <- p$eigen
  L <- length(p$lambda)
  q <- ncol(y)
  G <- 1 / outer(e$values, sys$w * p$lambda, `+`)
  out <- matrix(0, L, q)
  per_row <- if (row_errors) matrix(0, nrow(x), L)
  # the responses in groups whose L columns each make at most 2048 columns
  # (at least one response a group): one product per group and block of rows
  per <- max(1L, 2048L %/% L)
  groups <- split(seq_len(q), (seq_len(q) - 1L) %/% per)
  # for each group, u_r * G side by side (D x L nr): its fitted values at
  # every lambda are P M; made once while all groups' take at most
  # loo_groups_mb, else for each block of rows (memory D x 2048)
  group_m <- function(rs) {
    e$u[, rep(rs, each = L), drop = FALSE] * G[, rep(seq_len(L), length(rs)), drop = FALSE]
  }
  Ms <- if (8 * as.double(nrow(G)) * L * q <= loo_groups_mb * 2^20) lapply(groups, group_m)
  if (!is.double(y)) storage.mode(y) <- "double"
  ybar <- if (!is.null(sys$ybar)) as.double(sys$ybar)
  add_rows <- function(rows, P) {
    rows <- as.integer(rows)
    b <- length(rows)
    w <- if (is.null(weights)) rep(1, b) else weights[rows]
    # the products on `threads` cores (and rff's own kernel, rff_blas_info())
    h <- w * (.Call(C_rff_ridge_project, P^2, G, threads) +
                if (is.null(sys$zbar)) 0 else 1 / sys$w)
    for (gi in seq_along(groups)) {
      rs <- groups[[gi]]
      f <- .Call(C_rff_ridge_project, P, if (is.null(Ms)) group_m(rs) else Ms[[gi]], threads)
      # sum w ((y - ybar - f) / (1 - h))^2 over the rows, for each lambda and
      # response (infinite where h >= 1 - 1e-12), in C: without the b x L nr
      # residuals R would make
      s <- .Call(C_rff_loo_block, f, y, rows, rs, w, h, ybar,
                 if (row_errors) per_row[rows, , drop = FALSE])
      out[, rs] <<- out[, rs] + s[[1L]]
      if (row_errors) per_row[rows, ] <<- s[[2L]]
    }
  }
  if (!is.null(e$rows)) {
    rows <- if (is.null(weights)) seq_len(nrow(x)) else which(weights > 0)
    add_rows(rows, e$rows[rows, , drop = FALSE])
  } else {
    # blocks of at most 512 rows: a block's features, their centred copy and
    # projections are each 512 x D, a fraction of the D x D the fit holds
    block <- min(chunk_size, 512L)
    for (from in seq(1L, nrow(x), by = block)) {
      rows <- from:min(nrow(x), from + block - 1L)
      Z <- .Call(C_rff_features, x[rows, , drop = FALSE], map, threads)
      if (!is.null(sys$zbar)) Z <- Z - rep(sys$zbar, each = length(rows))
      # (Z - zbar) V on `threads` cores (fixed column blocks)
      add_rows(rows, .Call(C_rff_ridge_project, Z, e$vectors, threads))
    }
  }
  out <- out / if (is.null(weights)) nrow(x) else sum(weights)
  if (row_errors) attr(out, "rows") <- per_row
  out
}

# The memory (MB) loo_path() may hold the products' right-hand sides of all
# responses in (26 classes, D = 1224 and 50 lambdas: 13 MB).
loo_groups_mb <- 64

# Rows on which the LOO criterion is estimated: all up to 5,000, else 5,000
# evenly spaced ones (the criterion is a mean over rows). The same rows for
# every fit on the same rows, so the candidates of a search are compared
# on the same rows: drawn afresh for each, the rows' own spread decided
# between candidates (on 20,000 rows of ggplot2::diamonds the four
# candidates' scores went 0.01184, 0.01247, 0.01184, 0.01278, up and down
# along the lengthscales).
loo_rows <- function(n) if (n <= 5000L) seq_len(n) else round(seq(1, n, length.out = 5000L))
