# Layer 3 (maps): drawing maps (rff_map()), maps drawn for data (Nystrom
# landmarks from the rows), the same draws at another lengthscale, and
# printing.

#' Draw a random Fourier feature map
#'
#' Draws the random frequencies (and, for `variant = "phase"`, the random
#' phases) of a feature map z(x) with E\[z(x)'z(y)\] = k(x, y) for a
#' shift-invariant kernel k (Bochner's theorem; Rahimi and Recht, 2007).
#' The map can then be applied to any data with [rff_features()].
#'
#' Frequencies are drawn from the kernel's spectral measure with R's random
#' number generator, so `set.seed()` makes a map reproducible. The
#' frequencies are drawn column by column (for the Matern kernel: `d`
#' normal draws, then one chi-square draw per frequency), then the `D`
#' phases; this order is fixed, so replicated error studies draw the
#' same maps as successive calls of `rff_map()`. The other samplers' draw
#' orders are given in [rff_samplers]; an [rff_spectral()] kernel's
#' `sample(m, d)` is called once, before the phases are drawn.
#'
#' Two kinds of maps are not made of frequencies: the TensorSketch of the
#' polynomial kernel ([rff_polynomial]) and Nystrom maps
#' (`sampler = "nystrom"`, from `landmarks`; [rff_nystrom]). They are
#' `"rff_map"` objects all the same, accepted wherever a map is.
#'
#' Kernels, with u = (x - y) / lengthscale:
#' \describe{
#'   \item{`"arccos"`}{the arc-cosine kernel of order `order` (Cho and Saul,
#'     2009), which is not shift-invariant; see [rff_arccos].}
#'   \item{an [rff_spectral()] object}{a user-defined spectral measure: its
#'     `sample(m, d)` is called and its result validated.}
#'   \item{`"gaussian"`}{exp(-|u|^2 / 2); omega ~ N(0, diag(1 / l^2)).}
#'   \item{`"laplace"`}{exp(-sum |u_k|), the product (L1) Laplace kernel;
#'     independent Cauchy(0, 1 / l_k) coordinates.}
#'   \item{`"matern"`}{Matern-`nu` of r = |u|_2; a multivariate t with
#'     2 `nu` degrees of freedom, one chi-square draw per frequency.
#'     `nu = 0.5` is the exponential kernel exp(-r).}
#'   \item{`"polynomial"`}{(x'y / l^2 + `offset`)^`degree`, not
#'     shift-invariant; TensorSketch features, see [rff_polynomial].}
#' }
#'
#' @param d Number of input columns.
#' @param D Number of features (even for `variant = "pair"` with random
#'   frequencies); for a Nystrom map, the number of landmarks.
#' @param kernel One of `"gaussian"`, `"laplace"`, `"matern"`, `"arccos"`,
#'   `"polynomial"`, or a user-defined spectral measure made by
#'   [rff_spectral()].
#' @param lengthscale A positive number, or one per input column (ARD).
#'   [rff_features()] and [rff_kernel()] also accept `"median"` (the median
#'   heuristic, see [rff_median_lengthscale()]); `rff_map()`, which sees no
#'   data, does not.
#' @param nu Smoothness of the Matern kernel, between 0.05 and 1e6; ignored
#'   by other kernels (which only need it positive). As `nu` grows the Matern
#'   kernel tends to the Gaussian kernel with the same lengthscale (their
#'   largest difference is about 0.23 / `nu`), so beyond the range use
#'   `kernel = "gaussian"`. Below it the kernel is close to a spike at 0 and
#'   its frequencies are astronomically large; near the lower end a
#'   frequency's scale is capped at about 1e154 (a cap reached with
#'   probability below 1e-15).
#' @param order Order of the arc-cosine kernel, 0 or 1; ignored by other
#'   kernels.
#' @param degree,offset Degree (a whole number from 1 to 30) and offset
#'   (>= 0) of the polynomial kernel; ignored by other kernels (which only
#'   need them valid).
#' @param variant `"pair"` (default): `D/2` frequencies, each giving a cosine
#'   and a sine feature. `"phase"`: `D` frequencies with uniform random
#'   phases, z_j(x) = sqrt(2/D) cos(omega_j'x + b_j).
#'   The arc-cosine kernel has no phases and accepts only `"pair"`; for
#'   the polynomial kernel and Nystrom maps the variant has no meaning
#'   (leave it at its default).
#' @param sampler How frequencies are drawn: `"iid"` (independent draws),
#'   `"orthogonal"` (orthogonal random features, radial kernels only) or
#'   `"qmc"` (randomized quasi-Monte Carlo); see [rff_samplers]. Maps drawn
#'   with `"iid"` are those of earlier versions, draw for draw. Or
#'   `"nystrom"`: a Nystrom map on `landmarks` ([rff_nystrom]).
#' @param landmarks For a Nystrom map, the landmarks: a numeric matrix (or
#'   data frame) with `d` columns and one row per feature. Giving them
#'   implies `sampler = "nystrom"`, and `D` is their number. Functions that
#'   see data draw them from it when `sampler = "nystrom"` and no
#'   `landmarks` are given.
#' @return An object of class `"rff_map"`: a list with `omega` (the `d` x `m`
#'   frequency matrix, lengthscale applied; m = D/2 for `"pair"`, D for
#'   `"phase"`), `phase` (length `D`, or `NULL` for `"pair"`), `D`, `d`,
#'   `kernel` (a name, or the [rff_spectral()] object itself), `lengthscale`
#'   (always numeric), `nu`, `order`, `variant` and `sampler`. A
#'   TensorSketch map has `hash` and `sign` instead of `omega` and `phase`
#'   (and `degree`, `offset`), a Nystrom map `landmarks`, `weights` and
#'   `rank` ([rff_polynomial], [rff_nystrom]).
#' @references Rahimi, A. and Recht, B. (2007). Random features for
#'   large-scale kernel machines. *Advances in Neural Information Processing
#'   Systems 20*.
#' @seealso [rff_features()] to apply the map, [rff_kernel()] for the exact
#'   kernel, [rff_samplers] for the samplers.
#' @examples
#' set.seed(1)
#' m <- rff_map(d = 3, D = 100, kernel = "matern", nu = 2.5, lengthscale = 2)
#' m
#' dim(m$omega)
#' # orthogonal frequencies: within a block of d, directions are orthogonal
#' o <- rff_map(d = 3, D = 6, sampler = "orthogonal")
#' round(crossprod(o$omega), 10)
#' rff_map(d = 3, D = 100, kernel = "arccos", order = 0)
#' rff_map(d = 3, D = 100, kernel = "polynomial", degree = 3)
#' rff_map(d = 2, landmarks = matrix(rnorm(20), 10, 2))
#' @export
rff_map <- function(d, D = 500, kernel = "gaussian", lengthscale = 1, nu = 1.5,
                    order = 1, degree = 2, offset = 1, variant = c("pair", "phase"),
                    sampler = "iid", landmarks = NULL) {
  check_required("d")
  if (!is.null(landmarks) || is_nystrom(sampler)) {
    return(landmark_map(d, D, !missing(D), kernel, lengthscale, nu, order, degree, offset,
                        variant, sampler, !missing(sampler), landmarks))
  }
  spec <- map_spec(d, D = D, kernel = kernel, lengthscale = lengthscale,
                   nu = nu, order = order, degree = degree, offset = offset,
                   variant = variant, sampler = sampler)
  # the d x D frequencies (at most) of a Fourier map
  if (!is_polynomial(spec$kernel)) check_alloc(spec$d, spec$D, arg = "D", what = "the frequencies")
  draw_map(spec)
}

# Draws a map from validated parameters (the "spec": every field of an
# rff_map but omega and phase). The C side reads the fields by name.
draw_map <- function(spec) {
  draws <- .Call(C_rff_draw_map, spec)
  structure(c(draws, spec), class = "rff_map")
}

# A map for the data x (a checked matrix) from the sampling arguments in
# args (those of rff_map() but d, as given by the caller): Nystrom
# landmarks are drawn from x unless given.
data_map <- function(x, args) {
  if (is_nystrom(args$sampler) && is.null(args$landmarks)) {
    D <- if (is.null(args$D)) eval(formals(rff_map)$D) else args$D
    args$landmarks <- draw_landmarks(x, D)
  }
  do.call(rff_map, c(list(d = ncol(x)), args))
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

map_line <- function(map) {
  sprintf("%d %s (%s, %s kernel, lengthscale %s)",
          map$D, map_kind(map), map$variant, kernel_label(map),
          paste(format(map$lengthscale, digits = 4), collapse = ", "))
}

#' @export
print.rff_map <- function(x, ...) {
  ls <- x$lengthscale
  ls_txt <- if (length(ls) == 1L) format(ls, digits = 4) else
    sprintf("%d values in [%s, %s] (ARD)", length(ls),
            format(min(ls), digits = 4), format(max(ls), digits = 4))
  cat(sprintf("<rff_map> %d %s of %d input column%s\n",
              x$D, map_kind(x), x$d, if (x$d == 1L) "" else "s"))
  cat(sprintf("  kernel:      %s\n", kernel_label(x)))
  cat(sprintf("  lengthscale: %s\n", ls_txt))
  if (is_nystrom(x$sampler)) {
    cat(sprintf("  landmarks:   %d, rank of K(L, L) %d\n", nrow(x$landmarks), x$rank))
  } else if (is_polynomial(x$kernel)) {
    cat(sprintf("  sketch:      %d count sketches of %d coordinates\n", x$degree, x$d + 1L))
  } else {
    cat(sprintf("  variant:     %s (%d frequencies), sampler: %s\n",
                x$variant, ncol(x$omega), x$sampler))
  }
  invisible(x)
}
