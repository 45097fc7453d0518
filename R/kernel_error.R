# Layer 4 (users of maps): replicated studies of the kernel approximation
# error (rff_kernel_error()), their summaries and plots.

#' How well random features approximate the kernel
#'
#' Compares the random-feature estimate Z_x Z_y' of the kernel matrix with
#' the exact kernel matrix K ([rff_kernel()]), for one fixed map or for
#' `reps` independent maps, and summarizes the error E = Z_x Z_y' - K of
#' each replicate. This is the tool for convergence studies: how the error
#' falls with the number of features `D`, and how it depends on the kernel,
#' the variant and the sampler.
#'
#' With `map = NULL`, `reps` maps are drawn one after another from R's random
#' number generator, in C, for each value of `D` in turn (all replicates of
#' `D[1]`, then all of `D[2]`, ...). Replicate r of a single `D` uses exactly
#' the map that the r-th of `reps` successive calls of [rff_map()] (with the
#' same arguments, `d = ncol(x)`) would draw after the same [set.seed()], so
#' a study can be re-run, or inspected map by map. Only one replicate's
#' feature matrices exist at any time, so memory does not grow with `reps`;
#' the exact kernel is computed once. Maps that are not drawn from a
#' spectral law are made in R, one replicate at a time, in the same order:
#' TensorSketch maps of the polynomial kernel as [rff_map()] draws them, and
#' Nystrom maps (`sampler = "nystrom"`) from `D` landmarks drawn from the
#' rows of `x` with [sample.int()] for each replicate. Featurization uses `threads` OpenMP
#' threads; results do not depend on the thread count.
#'
#' Per replicate, with E the `n` x `m` error matrix (all entries, including
#' the diagonal when `y = NULL`):
#' \describe{
#'   \item{`max_abs`}{max |E\[i, j\]|, the sup error over the points;}
#'   \item{`mean_abs`}{the mean of |E\[i, j\]|;}
#'   \item{`rmse`}{sqrt(mean(E\[i, j\]^2));}
#'   \item{`rel_fro`}{||E||_F / ||K||_F (`Inf` or `NaN` if K is 0);}
#'   \item{`rel_spec`}{only when `y = NULL`: ||E||_2 / ||K||_2, the relative
#'     spectral-norm error of the Gram matrix, from the eigenvalues of the
#'     symmetric matrices E and K (LAPACK `dsyevr`). This costs O(n^3) per
#'     replicate (about half a second at n = 1000 with R's reference BLAS,
#'     eight times that at n = 2000), so it is computed only when `nrow(x)`
#'     is at most `getOption("rff.spectral_max_n", 1000)`, and is `NA`
#'     otherwise.}
#' }
#'
#' @inheritParams rff_features
#' @param x Points: a numeric matrix, a data frame of numeric columns, or a
#'   numeric vector (one column, so `x = 1` is the single point 1).
#' @param y Second set of points with the columns of `x` (a number or vector
#'   is one column: `y = 0` is the point 0 when `x` has one column); `NULL`
#'   (default) compares the Gram matrix of `x`.
#' @param map A fixed `"rff_map"`; then `reps` must be 1, and none of `D`,
#'   `kernel`, `lengthscale`, `nu`, `order`, `degree`, `offset`, `variant`,
#'   `sampler`, `landmarks` may be given.
#' @param landmarks For `sampler = "nystrom"`: fixed landmarks, used by
#'   every replicate (which then all have the same map). By default each
#'   replicate draws its `D` landmarks afresh from the rows of `x`
#'   ([rff_nystrom]), so `D` may not exceed `nrow(x)`.
#' @param D Number of features: one value, or several for a study over `D`
#'   (each even for `variant = "pair"`).
#' @param reps Number of independent maps per value of `D` (at least 1).
#' @param keep If `TRUE`, the estimates Z_x Z_y' are returned too, as the
#'   attribute `"estimate"` (an `n` x `m` x `nrow(result)` array, slice r
#'   for row r of the result), with the exact kernel matrix as the attribute
#'   `"exact"`.
#' @return An object of class `c("rff_kernel_error", "data.frame")`: one row
#'   per value of `D` and replicate, with columns `D`, `variant`, `rep`
#'   (replicate number within its `D`), `max_abs`, `mean_abs`, `rmse`,
#'   `rel_fro` and, for `y = NULL`, `rel_spec`. The attribute `"settings"`
#'   holds the kernel parameters and the sizes `n`, `m`, `d`.
#' @seealso [summary.rff_kernel_error()], [plot.rff_kernel_error()];
#'   [rff_variance()] and [rff_tail_bound()] for what theory predicts.
#' @examples
#' set.seed(1)
#' grid <- seq(-4, 4, length.out = 201)
#' # sup error over |delta| <= 4 of z(delta)'z(0), 50 maps for each D
#' err <- rff_kernel_error(x = grid, y = 0, D = c(50, 200, 800), reps = 50)
#' err
#' summary(err)
#' plot(err)                     # falls like D^(-1/2)
#'
#' # the estimates at one offset: their variance is Proposition 2's
#' est <- rff_kernel_error(x = 1, y = 0, D = 100, reps = 500, keep = TRUE)
#' c(simulated = var(attr(est, "estimate")[1, 1, ]),
#'   theory = rff_variance(1, D = 100))
#'
#' # Gram matrix of a data set, with the spectral-norm error
#' x <- matrix(rnorm(200), 100, 2)
#' rff_kernel_error(x, D = 300, kernel = "matern", nu = 2.5, reps = 5)
#' @export
rff_kernel_error <- function(x, y = NULL, map = NULL, D = 500,
                             kernel = "gaussian", lengthscale = 1, nu = 1.5, order = 1,
                             degree = 2, offset = 1, variant = "pair", sampler = "iid",
                             landmarks = NULL, reps = 1, keep = FALSE, threads = NULL) {
  check_required("x")
  x <- check_x(x)
  symmetric <- is.null(y)
  if (!symmetric) {
    y <- check_x(y, "y")
    if (ncol(y) != ncol(x)) {
      rff_abort("y", sprintf("`y` has %d column%s but `x` has %d", ncol(y),
                             if (ncol(y) == 1L) "" else "s", ncol(x)))
    }
  }
  reps <- check_count(reps, "reps")
  keep <- check_flag(keep, "keep")
  threads <- check_threads(threads)
  draw <- draw_map
  if (!is.null(map)) {
    check_no_sampling_args(supplied_args(
      c("D", "kernel", "lengthscale", "nu", "order", "degree", "offset", "variant", "sampler",
        "landmarks"), environment()))
    check_map(map)
    check_x_matches_map(x, map)
    if (reps != 1L) {
      rff_abort("reps", sprintf(
        "`reps` must be 1 when `map` is given (a fixed map has one error), got %d", reps))
    }
    specs <- list(map)
  } else {
    if (!is_number(D) || length(D) == 0L) {
      rff_abort("D", sprintf("`D` must be one or more whole numbers, got %s", show_value(D)))
    }
    lengthscale <- resolve_lengthscale(lengthscale, x)
    if (!is.null(landmarks)) {
      # given landmarks: one map, the same for every replicate
      landmark_args <- list(landmarks = landmarks, kernel = kernel, lengthscale = lengthscale,
                            nu = nu, order = order, degree = degree, offset = offset,
                            variant = variant)
      if (!missing(D)) landmark_args$D <- D
      if (!missing(sampler)) landmark_args$sampler <- sampler
      lmap <- do.call(rff_map, c(list(d = ncol(x)), landmark_args))
      draw <- function(spec) lmap
      specs <- list(unclass(lmap)[setdiff(names(lmap), c("landmarks", "weights", "rank"))])
    } else {
      specs <- lapply(D, function(D1) {
        map_spec(ncol(x), D = D1, kernel = kernel, lengthscale = lengthscale,
                 nu = nu, order = order, degree = degree, offset = offset,
                 variant = variant, sampler = sampler)
      })
      # Nystrom landmarks are drawn from x afresh for every replicate
      if (is_nystrom(sampler)) draw <- function(spec) nystrom_map(spec, draw_landmarks(x, spec$D))
    }
  }
  n <- nrow(x)
  m <- if (symmetric) n else nrow(y)
  for (s in specs) check_alloc(max(n, m), s$D, what = "the features")
  # the exact kernel and one replicate's estimate (and, for the spectral
  # norm, the eigensolver's copy), n x m each
  check_alloc(n, m, arg = if (symmetric) "x" else "y",
              copies = 2 + (symmetric && n <= spectral_max_n()), what = "the kernel matrix")
  total <- as.double(reps) * length(specs)
  # the result: one row of 8 columns per replicate
  check_alloc(total, 8, arg = "reps", what = "the table of errors")
  if (keep) check_alloc(as.double(n) * m, total, arg = "keep", what = "the kept approximations")
  # every spec has the same kernel parameters: the exact kernel is computed once
  K <- check_kernel_values(exact_kernel(x, if (symmetric) x else y, specs[[1L]]), specs[[1L]])
  dimnames(K) <- list(rownames(x), if (symmetric) rownames(x) else rownames(y))
  spectral <- symmetric && n <= spectral_max_n()

  parts <- lapply(specs, function(s) {
    error_replicates(x, y, K, s, reps, keep, spectral, threads, draw = draw)
  })
  errors <- do.call(rbind, lapply(parts, `[[`, "errors"))
  colnames(errors) <- c("max_abs", "mean_abs", "rmse", "rel_fro", "rel_spec")
  out <- data.frame(
    D = rep(vapply(specs, function(s) as.integer(s$D), integer(1)), each = reps),
    variant = rep(vapply(specs, `[[`, character(1), "variant"), each = reps),
    rep = rep(seq_len(reps), times = length(specs)),
    errors[, if (symmetric) 1:5 else 1:4, drop = FALSE],
    stringsAsFactors = FALSE
  )
  if (keep) {
    est <- array(unlist(lapply(parts, `[[`, "estimate"), use.names = FALSE),
                 dim = c(n, m, total))
    dimnames(est) <- list(rownames(x), if (symmetric) rownames(x) else rownames(y), NULL)
    attr(out, "estimate") <- est
    attr(out, "exact") <- K
  }
  s1 <- specs[[1L]]
  attr(out, "settings") <- list(kernel = s1$kernel, lengthscale = s1$lengthscale,
                                nu = s1$nu, order = s1$order, degree = s1$degree,
                                offset = s1$offset, sampler = s1$sampler, n = n, m = m,
                                d = ncol(x), symmetric = symmetric,
                                fixed_map = !is.null(map))
  class(out) <- c("rff_kernel_error", "data.frame")
  out
}

# Largest n for which the relative spectral-norm error of the Gram matrix is
# computed (one O(n^3) eigendecomposition per replicate).
spectral_max_n <- function() {
  check_count(getOption("rff.spectral_max_n", 1000L), "options(rff.spectral_max_n)",
              lo = 0)
}

# Whether the maps of a spec can be drawn in C (by rff_spec_draw(), as
# rff_map() draws them). Maps that cannot (e.g. a spectral measure given as
# an R function) are drawn in R by draw_map(), one replicate at a time.
drawable_in_c <- function(spec) {
  is.character(spec$kernel) && is.null(spec$omega) && !is_polynomial(spec$kernel) &&
    !is_nystrom(spec$sampler)
}

# The errors (and estimates) of `reps` replicates of one spec, or of a fixed
# map (reps = 1): list(errors = reps x 5 matrix, estimate = array or NULL).
# Maps not drawn in C are made by draw(spec), one replicate at a time.
error_replicates <- function(x, y, K, spec, reps, keep, spectral, threads,
                             in_c = drawable_in_c(spec), draw = draw_map) {
  if (inherits(spec, "rff_map") || in_c) {
    return(.Call(C_rff_kernel_error, x, y, K, spec, reps, keep, spectral, threads))
  }
  parts <- lapply(seq_len(reps), function(r) {
    .Call(C_rff_kernel_error, x, y, K, draw(spec), 1L, keep, spectral, threads)
  })
  list(errors = do.call(rbind, lapply(parts, `[[`, "errors")),
       estimate = if (keep) unlist(lapply(parts, `[[`, "estimate"), use.names = FALSE))
}

error_metrics <- c("max_abs", "mean_abs", "rmse", "rel_fro", "rel_spec")

# Means of every metric (and the number of replicates) per D and variant.
error_means <- function(object, fun = mean) {
  metrics <- intersect(error_metrics, names(object))
  groups <- unique(data.frame(D = object$D, variant = object$variant,
                              stringsAsFactors = FALSE))
  rows <- lapply(seq_len(nrow(groups)), function(g) {
    sel <- object$D == groups$D[g] & object$variant == groups$variant[g]
    vals <- vapply(metrics, function(k) fun(object[[k]][sel]), numeric(1))
    data.frame(groups[g, , drop = FALSE], reps = sum(sel), as.list(vals),
               stringsAsFactors = FALSE)
  })
  out <- do.call(rbind, rows)
  rownames(out) <- NULL
  out
}

study_label <- function(object) {
  st <- attr(object, "settings")
  if (is.null(st)) return("")
  sprintf("%s kernel, %d x %d points in %d dimension%s", kernel_label(st),
          st$n, st$m, st$d, if (st$d == 1L) "" else "s")
}

#' @export
print.rff_kernel_error <- function(x, digits = 4, ...) {
  if (is.null(attr(x, "settings")) || !all(c("D", "variant") %in% names(x))) {
    return(NextMethod())
  }
  Ds <- unique(x$D)
  cat(sprintf("<rff_kernel_error> %d replicate%s at D = %s (%s)\n", nrow(x),
              if (nrow(x) == 1L) "" else "s",
              paste(Ds, collapse = ", "),
              paste(unique(x$variant), collapse = ", ")))
  cat(" ", study_label(x), "\n", sep = "")
  if (nrow(x) == length(Ds)) {
    print(as.data.frame(unclass(x)[setdiff(names(x), "rep")],
                        stringsAsFactors = FALSE), digits = digits, row.names = FALSE)
  } else {
    cat("Means over replicates:\n")
    print(error_means(x), digits = digits, row.names = FALSE)
  }
  invisible(x)
}

#' Summarize a kernel-error study
#'
#' Per value of `D` (and variant): the number of replicates, and the mean,
#' standard deviation and standard error of the mean of every error
#' measure over replicates. When the study has several values of `D`, also
#' the slope of log(mean error) against log(D) fitted by least squares, for
#' every measure: Monte Carlo error falls like D^(-1/2), a slope of -1/2.
#'
#' @param object An `"rff_kernel_error"` from [rff_kernel_error()].
#' @param ... Unused.
#' @return An object of class `"summary.rff_kernel_error"`: a list with
#'   `mean`, `sd` and `se` (data frames with one row per `D` and variant),
#'   `slope` (named numeric, or `NULL` for a single `D`) and `settings`.
#' @examples
#' set.seed(2)
#' err <- rff_kernel_error(seq(-3, 3, by = 0.1), y = 0, D = c(100, 400), reps = 40)
#' s <- summary(err)
#' s
#' s$slope
#' @export
summary.rff_kernel_error <- function(object, ...) {
  means <- error_means(object)
  sds <- error_means(object, function(v) if (length(v) > 1L) stats::sd(v) else NA_real_)
  metrics <- intersect(error_metrics, names(object))
  ses <- sds
  ses[metrics] <- sds[metrics] / sqrt(sds$reps)
  slope <- NULL
  if (length(unique(means$D)) > 1L) {
    slope <- vapply(metrics, function(k) {
      ok <- is.finite(means[[k]]) & means[[k]] > 0
      if (length(unique(means$D[ok])) < 2L) return(NA_real_)
      unname(stats::coef(stats::lm(log(means[[k]][ok]) ~ log(means$D[ok])))[2L])
    }, numeric(1))
  }
  structure(list(mean = means, sd = sds, se = ses, slope = slope,
                 settings = attr(object, "settings"), label = study_label(object)),
            class = "summary.rff_kernel_error")
}

#' @export
print.summary.rff_kernel_error <- function(x, digits = 4, ...) {
  cat("Kernel approximation error by random Fourier features\n")
  if (nzchar(x$label)) cat(" ", x$label, "\n", sep = "")
  cat("\nMean over replicates:\n")
  print(x$mean, digits = digits, row.names = FALSE)
  if (any(x$sd$reps > 1L)) {
    cat("\nStandard deviation over replicates:\n")
    print(x$sd, digits = digits, row.names = FALSE)
  }
  if (!is.null(x$slope)) {
    cat("\nSlope of log(mean error) against log(D) (Monte Carlo rate: -0.5):\n")
    print(round(x$slope, 3))
  }
  invisible(x)
}

#' Plot a kernel-error study
#'
#' For a study over several values of `D`: the error of every replicate
#' (small grey points) and its mean per `D` (joined, one colour per variant)
#' against `D` on log-log axes, with a dashed reference line c D^(-1/2), c
#' fitted to the means by least squares on the log scale, so that a slope
#' other than -1/2 shows as a departure from the line. For a single `D`: a
#' histogram of the error over replicates, the mean marked.
#'
#' @param x An `"rff_kernel_error"` from [rff_kernel_error()].
#' @param which The error measure to plot: one of `"max_abs"` (default),
#'   `"mean_abs"`, `"rmse"`, `"rel_fro"`, `"rel_spec"`.
#' @param reference Draw the D^(-1/2) reference line?
#' @param ... Further graphical parameters for [graphics::plot()] or
#'   [graphics::hist()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(3)
#' err <- rff_kernel_error(seq(-4, 4, by = 0.1), y = 0, D = c(20, 80, 320),
#'                         reps = 30)
#' plot(err)
#' plot(err, which = "rmse", reference = FALSE)
#' @export
plot.rff_kernel_error <- function(x, which = "max_abs", reference = TRUE, ...) {
  which <- check_string(which, "which", intersect(error_metrics, names(x)))
  reference <- check_flag(reference, "reference")
  v <- x[[which]]
  if (!any(is.finite(v))) {
    rff_abort("which", sprintf("`%s` has no finite values to plot", which))
  }
  label <- switch(which,
    max_abs = "max |error|", mean_abs = "mean |error|", rmse = "RMS error",
    rel_fro = "relative Frobenius error", rel_spec = "relative spectral error")
  means <- error_means(x)
  if (length(unique(x$D)) == 1L) {
    graphics::hist(v, main = sprintf("D = %s, %d replicates", x$D[1L], length(v)),
                   xlab = label, ...)
    graphics::abline(v = mean(v, na.rm = TRUE), lty = 2)
    return(invisible(x))
  }
  ok <- is.finite(v) & v > 0
  graphics::plot(x$D[ok], v[ok], log = "xy", pch = 16, cex = 0.4,
                 col = grDevices::gray(0.6, 0.5), xlab = "D (number of features)",
                 ylab = label, main = study_label(x), ...)
  variants <- unique(means$variant)
  cols <- seq_along(variants)
  for (i in seq_along(variants)) {
    mv <- means[means$variant == variants[i], , drop = FALSE]
    mv <- mv[order(mv$D), , drop = FALSE]
    graphics::lines(mv$D, mv[[which]], type = "b", pch = 19, col = cols[i], lwd = 2)
    ok <- is.finite(mv[[which]]) & mv[[which]] > 0
    if (reference && any(ok)) {
      # c D^(-1/2) with c fitted to the means on the log scale
      c0 <- exp(mean(log(mv[[which]][ok]) + log(mv$D[ok]) / 2))
      graphics::lines(mv$D, c0 / sqrt(mv$D), lty = 2, col = cols[i])
    }
  }
  graphics::legend("topright", bty = "n",
                   legend = c(paste("mean,", variants), if (reference) "D^(-1/2)"),
                   col = c(cols, 1), lty = c(rep(1, length(variants)), if (reference) 2),
                   pch = c(rep(19, length(variants)), if (reference) NA))
  invisible(x)
}
