# Layer 8 (methods): rff_relevance(), the relevance of each input column of
# a fit (its inverse lengthscale), and its dot chart.

#' Relevance of each input of a fit: inverse lengthscales
#'
#' The relevance of input column p is 1 / l_p, its inverse lengthscale in
#' the units the kernel sees (the standardized columns when the fit
#' standardized them; for a formula, the columns of the model matrix, so a
#' factor has one value per dummy column). Larger is more relevant: the
#' kernel varies faster along that input. With `lengthscale = "ard"` (see
#' [rff_ridge()]) every column has its own lengthscale, learned from the
#' data; an input the model ignores drifts to a lengthscale 1e4 times the
#' isotropic one, a relevance near zero. A fit with one lengthscale gives
#' the same relevance to every column.
#'
#' An input acting linearly also gets a long lengthscale (a slowly varying
#' kernel fits a straight line), so a small relevance says "nearly linear or
#' irrelevant", and only a near-zero one "irrelevant".
#'
#' @param fit A fit of [rff_ridge()], [rff_glm()] or [rff_cv()].
#' @return A named numeric vector, one value per input column.
#' @seealso [plot.rff_ridge()] with `type = "relevance"` for a dot chart.
#' @examples
#' set.seed(1)
#' x <- matrix(runif(600), 200, 3, dimnames = list(NULL, c("a", "b", "noise")))
#' y <- sin(4 * x[, 1]) + x[, 2] + rnorm(200, sd = 0.1)
#' fit <- rff_ridge(x, y, D = 200, lengthscale = "ard")
#' rff_relevance(fit)
#' @export
rff_relevance <- function(fit) {
  if (inherits(fit, "rff_cv")) fit <- fit$fit
  if (!inherits(fit, "rff_fit") || !inherits(fit$map, "rff_map")) {
    rff_abort("fit", sprintf("`fit` must be a fit of rff_ridge(), rff_glm() or rff_cv(), got %s",
                             show_value(fit)))
  }
  d <- fit$map$d
  rel <- 1 / rep_len(fit$map$lengthscale, d)
  names(rel) <- relevance_names(fit, d)
  rel
}

# The names of a fit's input columns: those of the ARD search, of the
# standardization or of the inputs, else x1, ..., xd.
relevance_names <- function(fit, d) {
  for (nm in list(names(fit$lengthscale_search$ard$lengthscale), names(fit$standardize$scale),
                  fit$xnames)) {
    if (length(nm) == d && all(nzchar(nm))) return(nm)
  }
  paste0("x", seq_len(d))
}

# A dot chart of rff_relevance(fit), most relevant input at the top, on a
# log axis when the values span more than a factor of 100 (ARD's ignored
# inputs sit four decades below the others).
plot_relevance <- function(fit, ...) {
  rel <- sort(rff_relevance(fit))
  spread <- max(rel) / min(rel)
  # a linear axis starts at 0, so that lengths compare as ratios
  args <- list(...)
  if (spread <= 100 && is.null(args$xlim)) args$xlim <- c(0, 1.04 * max(rel))
  main <- if (is.null(fit$lengthscale_search$ard)) "Input relevance" else "Input relevance (ARD)"
  do.call(graphics::dotchart, c(list(rel, labels = names(rel), pch = 19,
                                     xlab = "relevance (1 / lengthscale, standardized inputs)",
                                     main = main, log = if (spread > 100) "x" else ""), args))
  invisible(fit)
}
