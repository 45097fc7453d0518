# Layer 4 (users of maps): sufficient statistics of ridge regression:
# streaming rows into them (accumulate_stats()), rff_stats(), and combining
# them (c(), +).

#' Sufficient statistics for ridge regression on random features
#'
#' Streams the rows of `x` through the feature map in blocks of `chunk_size`
#' rows and accumulates what ridge regression needs: Z'Z, Z'y, the column
#' sums of Z and of y, the sums of squares of y, and n. The n x D feature
#' matrix Z is never held: memory beyond the inputs is O(D^2 +
#' `chunk_size` * D).
#'
#' Statistics are kept uncentered (centering for the intercept is done
#' algebraically when solving), so statistics of disjoint row blocks drawn
#' with the same `map` add up exactly: `c(s1, s2, ...)` or `s1 + s2` equals
#' the statistics of all rows together (up to rounding). A fit can thus be
#' spread over a `parallel` cluster (the workers may be on other hosts),
#' `future`, or any map-reduce engine, and finished with
#' [rff_ridge()] on the combined statistics; see the example.
#'
#' To keep sums of squares accurate when the response has a large mean, the
#' responses are accumulated after subtracting the block's mean (stored as
#' `yshift`); combining statistics re-expresses them around a common shift.
#'
#' @param x A numeric matrix, numeric data frame or vector (rows are
#'   observations).
#' @param y The response: a numeric vector with one value per row of `x`, or
#'   a matrix with one column per response.
#' @param map An `"rff_map"` from [rff_map()]. Every block of a fit must use
#'   the same map.
#' @param intercept Whether the fit made from these statistics has an
#'   (unpenalized) intercept.
#' @param chunk_size Rows per block; default about 16 MB of features
#'   (`2^21 / D` rows, at least 256).
#' @param threads Number of threads for featurization and for the blocked
#'   update of Z'Z; default as in [rff_features()]. Results do not depend on
#'   it.
#' @param progress Show progress when more than one block is streamed: a
#'   text bar ([utils::txtProgressBar()]), or through progressr's handlers
#'   (see [rff_progress]). `FALSE` silences both.
#' @param weights Optional non-negative row weights: the statistics become
#'   Z'WZ, Z'Wy, the weighted sums of Z, y and y^2, and the total weight
#'   (`wsum`), accumulated in C; [rff_ridge()] on them minimizes
#'   sum w_i (y_i - f(x_i))^2 + sum(w) lambda |beta|^2. Rows of weight zero
#'   do not count in `n`.
#' @return An object of class `"rff_stats"`: a list with `ZtZ` (D x D),
#'   `Zty` (D x q), `zsum` (length D), `ysum`, `yty` and `yshift` (length q:
#'   sums and sums of squares of y - yshift), `n`, `wsum` (the total
#'   weight; `n` without weights), `map`, `intercept` and `response` (the
#'   response names, or `NULL`).
#' @seealso [rff_ridge()] to fit from statistics.
#' @examples
#' set.seed(1)
#' x <- matrix(runif(400), 200, 2)
#' y <- sin(4 * x[, 1]) + x[, 2] + rnorm(200, sd = 0.1)
#' m <- rff_map(2, D = 100, lengthscale = 0.5)
#' # statistics of two halves, combined
#' s <- c(rff_stats(x[1:100, ], y[1:100], m), rff_stats(x[-(1:100), ], y[-(1:100)], m))
#' s
#' fit <- rff_ridge(s, lambda = 1e-4)
#' all.equal(coef(fit), coef(rff_ridge(x, y, lambda = 1e-4, map = m)))
#' \donttest{
#' # the same over a cluster of worker processes
#' cl <- parallel::makeCluster(2)
#' # workers search the same libraries (a wrapper: shipping the .libPaths
#' # closure itself would change only the workers' copy of it)
#' parallel::clusterCall(cl, function(p) invisible(.libPaths(p)), .libPaths())
#' invisible(parallel::clusterEvalQ(cl, library(rff)))
#' blocks <- split(seq_len(nrow(x)), rep(1:2, length.out = nrow(x)))
#' parts <- parallel::parLapply(cl, blocks, function(i, xs, ys, m)
#'   rff_stats(xs[i, , drop = FALSE], ys[i], m), xs = x, ys = y, m = m)
#' parallel::stopCluster(cl)
#' coef(rff_ridge(do.call(c, unname(parts)), lambda = 1e-4))[1:3]
#' }
#' @export
rff_stats <- function(x, y, map, intercept = TRUE, chunk_size = NULL,
                      threads = NULL, progress = FALSE, weights = NULL) {
  check_required(c("x", "y", "map"))
  x <- check_x(x)
  y <- check_y(y, nrow(x))
  check_map(map)
  check_x_matches_map(x, map)
  intercept <- check_flag(intercept, "intercept")
  # Z'Z and the cross-product of the augmented chunks it is read from
  check_stats_memory(map$D, 2, TRUE)
  chunk_size <- check_chunk_size(chunk_size, map$D)
  threads <- check_threads(threads)
  progress <- check_flag(progress, "progress")
  weights <- check_weights(weights, nrow(x))
  accumulate_stats(x, y, map, intercept, chunk_size, threads, progress, weights)
}

# Streams validated x (n x d) and y (n x q), with optional row weights,
# through `map` into an "rff_stats" (in a fit's progress display, a stage
# taking `share` of what is left of its parent). With a progress bar, the rows go to C
# in up to 50 steps of whole chunks, so the blocks are the same as without
# it. The statistics count as rows those of positive weight.
accumulate_stats <- function(x, y, map, intercept, chunk_size, threads, progress,
                             weights = NULL, share = 1) {
  n <- nrow(x)
  # rows of total weight zero add nothing, around any finite shift
  yshift <- if (is.null(weights) || !any(weights > 0)) colMeans(y) else
    colSums(y * weights) / sum(weights)
  names(yshift) <- NULL
  nchunks <- ceiling(n / chunk_size)
  started <- proc.time()[["elapsed"]]
  on.exit(blas_hint(proc.time()[["elapsed"]] - started), add = TRUE)
  run <- function(from, to) {
    .Call(C_rff_ridge_stats, x, y, yshift, weights, map, c(from, to), chunk_size,
          threads)
  }
  if (!(progress || progress_active()) || nchunks < 2) {
    s <- run(0, n)
  } else {
    steps <- min(nchunks, 50)
    bounds <- pmin(round(seq(0, nchunks, length.out = steps + 1L)) * chunk_size, n)
    # inside a fit's display, a stage of the candidate or fit it serves
    pb <- progress_stage("statistics", n, progress, share = share)
    on.exit(pb$close(), add = TRUE)
    s <- NULL
    for (i in seq_len(steps)) {
      part <- run(bounds[i], bounds[i + 1L])
      s <- if (is.null(s)) part else Map(`+`, s, part)
      pb$set(bounds[i + 1L])
    }
  }
  nrows <- if (is.null(weights)) n else sum(weights > 0)
  check_products_finite(s$ZtZ, s$Zty)
  new_stats(s$ZtZ, s$Zty, s$zsum, s$ysum, s$yty, yshift, nrows, map, intercept,
            colnames(y), wsum = s$wsum)
}

new_stats <- function(ZtZ, Zty, zsum, ysum, yty, yshift, n, map, intercept, response,
                      wsum = n) {
  structure(list(ZtZ = ZtZ, Zty = Zty, zsum = zsum, ysum = ysum, yty = yty,
                 yshift = yshift, n = n, wsum = wsum, map = map, intercept = intercept,
                 response = response),
            class = "rff_stats")
}

# Statistics are checked by class and contents: they travel between
# processes and files, and a fit from damaged ones would be NaN or wrong
# without a warning. `what` names them in messages ("`x`", "element 2 of
# `...`"). Z'Z must be symmetric with |Z'Z[i, j]| <= sqrt(Z'Z[i, i]
# Z'Z[j, j]) (Cauchy-Schwarz, which every Gram matrix satisfies).
check_stats <- function(stats, arg, what = sprintf("`%s`", arg)) {
  if (!inherits(stats, "rff_stats")) {
    rff_abort(arg, sprintf("%s must be an object made by rff_stats(), got %s",
                           what, show_value(stats)))
  }
  damaged <- function(msg) rff_abort(arg, sprintf("%s is damaged: %s", what, msg))
  tryCatch(check_map(stats$map, "map"), rff_error = function(e) {
    damaged(sprintf("its map: %s", conditionMessage(e)))
  })
  D <- stats$map$D
  finite_num <- function(v) is_number(v) && all(is.finite(v))
  q <- length(stats$ysum)
  if (q < 1L || !finite_num(stats$ysum) || !finite_num(stats$yty) || length(stats$yty) != q ||
      any(stats$yty < 0) || !finite_num(stats$yshift) || length(stats$yshift) != q) {
    damaged("`ysum`, `yty` (non-negative) and `yshift` must be finite, one per response")
  }
  n <- stats$n
  if (!is_number(n) || length(n) != 1L || !is.finite(n) || n < 0 || n != round(n)) {
    damaged(sprintf("`n` must be a whole number of rows >= 0, got %s", show_value(n)))
  }
  w <- stats$wsum
  if (!is.null(w) && (!is_number(w) || length(w) != 1L || !is.finite(w) || w < 0)) {
    damaged(sprintf("`wsum` must be a non-negative finite number, got %s", show_value(w)))
  }
  if (!is.logical(stats$intercept) || length(stats$intercept) != 1L || is.na(stats$intercept)) {
    damaged("`intercept` must be TRUE or FALSE")
  }
  A <- stats$ZtZ
  if (!is.matrix(A) || !is.double(A) || !identical(dim(A), c(D, D)) || any(!is.finite(A))) {
    damaged(sprintf("`ZtZ` must be a finite %d x %d double matrix (D = %d)", D, D, D))
  }
  dg <- diag(A)
  if (any(dg < 0) || max(abs(A - t(A))) > 1e-12 * max(dg, 0) ||
      any(abs(A) > sqrt(outer(dg, dg)) * (1 + 1e-8) + 1e-300)) {
    damaged("`ZtZ` is not a Gram matrix (symmetric, non-negative diagonal, |ZtZ[i, j]| <= sqrt(ZtZ[i, i] ZtZ[j, j]))")
  }
  if (!is.matrix(stats$Zty) || !is.double(stats$Zty) ||
      !identical(dim(stats$Zty), c(D, q)) || any(!is.finite(stats$Zty))) {
    damaged(sprintf("`Zty` must be a finite %d x %d double matrix", D, q))
  }
  if (!is.double(stats$zsum) || length(stats$zsum) != D || any(!is.finite(stats$zsum))) {
    damaged(sprintf("`zsum` must be %d finite numbers", D))
  }
  invisible(stats)
}

# ZtZ positive semidefinite (to 1e-8 of its largest diagonal entry): a
# Cholesky factor of ZtZ + 1e-8 max(diag) I exists.
check_gram_chol <- function(A, arg) {
  j <- 1e-8 * max(diag(A), 0)
  ok <- !inherits(tryCatch(chol(A + diag(j, nrow(A))), error = identity), "error")
  if (!ok) {
    rff_abort(arg, sprintf(paste0(
      "`%s` is damaged: its cross-products `ZtZ` are not positive semidefinite: they are not ",
      "the statistics of any rows (altered, or combined from incompatible parts)"), arg))
  }
  invisible(A)
}

# The total weight of statistics (statistics made before weights existed
# have none: their rows weigh 1).
stats_wsum <- function(s) if (is.null(s$wsum)) s$n else s$wsum

# The same statistics with the responses shifted by `to` instead of yshift.
shift_stats <- function(s, to) {
  delta <- s$yshift - to
  w <- stats_wsum(s)
  s$yty <- s$yty + 2 * delta * s$ysum + w * delta^2
  s$ysum <- s$ysum + w * delta
  s$Zty <- s$Zty + outer(s$zsum, delta)
  s$yshift <- to
  s
}

# Maps are the same when their numbers and settings are. A user-defined
# spectral kernel is compared by its name: its functions get new
# environments whenever statistics travel (serialization to and from a
# cluster worker), so identical() on the closures would refuse equal maps;
# the drawn frequencies and phases identify the draw.
same_map <- function(a, b) identical(map_content(a), map_content(b))

map_content <- function(map) {
  map <- unclass(map)
  if (inherits(map$kernel, "rff_spectral")) {
    map$kernel <- c(rff_spectral = map$kernel$name)
  }
  map
}

# Combines statistics of disjoint row blocks (sign = -1 removes a block
# from a total, as cross-validation does).
combine_stats <- function(parts, arg = "...", sign = NULL) {
  if (is.null(sign)) sign <- rep(1, length(parts))
  ref <- parts[[1L]]
  for (i in seq_along(parts)) {
    p <- parts[[i]]
    check_stats(p, arg, if (length(parts) > 1L) sprintf("element %d of `%s`", i, arg) else sprintf("`%s`", arg))
    if (!same_map(p$map, ref$map)) {
      rff_abort(arg, sprintf(
        "statistics from different maps cannot be combined (element %d differs from the first); build every block with the same `map`", i))
    }
    if (length(p$ysum) != length(ref$ysum)) {
      rff_abort(arg, sprintf(
        "statistics with different numbers of responses cannot be combined (%d and %d)",
        length(ref$ysum), length(p$ysum)))
    }
    if (!identical(p$intercept, ref$intercept)) {
      rff_abort(arg, "statistics with and without `intercept` cannot be combined")
    }
  }
  ws <- vapply(parts, stats_wsum, numeric(1))
  w <- sum(sign * ws)
  to <- if (w > 0) {
    colSums(do.call(rbind, lapply(seq_along(parts), function(i)
      sign[i] * ws[i] * parts[[i]]$yshift))) / w
  } else ref$yshift
  out <- shift_stats(ref, to)
  out$n <- 0
  out$wsum <- stats_wsum(out)
  for (i in seq_along(parts)) parts[[i]]$wsum <- ws[i]
  fields <- c("ZtZ", "Zty", "zsum", "ysum", "yty", "n", "wsum")
  for (f in fields) out[[f]] <- 0 * out[[f]]
  for (i in seq_along(parts)) {
    p <- shift_stats(parts[[i]], to)
    for (f in fields) out[[f]] <- out[[f]] + sign[i] * p[[f]]
  }
  out$chunks <- combined_chunks(parts, sign)
  out
}

# Per-chunk statistics (keep_chunks) survive c() when every part kept them
# and none is subtracted.
combined_chunks <- function(parts, sign) {
  kept <- lapply(parts, function(p) p$chunks)
  if (any(sign < 0) || any(vapply(kept, is.null, logical(1)))) return(NULL)
  do.call(c, unname(kept))
}

#' @rdname rff_stats
#' @param ... For `c()`: `"rff_stats"` objects of disjoint row blocks, all
#'   made with the same map (and the same `intercept`).
#' @export
c.rff_stats <- function(...) {
  parts <- list(...)
  parts <- parts[!vapply(parts, is.null, logical(1))]
  combine_stats(parts, "...")
}

#' @rdname rff_stats
#' @param e1,e2 `"rff_stats"` objects, for `e1 + e2`.
#' @export
`+.rff_stats` <- function(e1, e2) {
  if (missing(e2)) return(e1)
  if (!inherits(e1, "rff_stats")) check_stats(e1, "e1")
  if (!inherits(e2, "rff_stats")) check_stats(e2, "e2")
  combine_stats(list(e1, e2), "e2")
}

#' @export
print.rff_stats <- function(x, ...) {
  cat(sprintf("<rff_stats> ridge statistics of %s rows, %d features, %d response%s%s\n",
              format(x$n, big.mark = ","), x$map$D, length(x$ysum),
              if (length(x$ysum) == 1L) "" else "s",
              if (x$intercept) ", with intercept" else ""))
  cat(sprintf("  map: %s kernel, %d input column%s\n", kernel_label(x$map),
              x$map$d, if (x$map$d == 1L) "" else "s"))
  if (length(x$chunks)) cat(sprintf("  statistics of %d chunks kept\n", length(x$chunks)))
  invisible(x)
}

#' @export
nobs.rff_stats <- function(object, ...) object$n

# The features' cross-products of a fit are finite; features of kernels
# that grow with |x| (arc-cosine of order 1) can overflow them.
check_products_finite <- function(...) {
  if (!all(vapply(list(...), function(a) all(is.finite(a)), TRUE))) {
    rff_abort("x", paste0(
      "the features' cross-products overflow: `x` is too large for the map's features; ",
      "rescale `x` (or use standardize = TRUE)"))
  }
  invisible(TRUE)
}
