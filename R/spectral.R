# Layer 2 (kernel parameters): user-defined shift-invariant kernels from their
# spectral measure (rff_spectral()), and the validated calls of their
# functions.

#' A user-defined shift-invariant kernel from its spectral measure
#'
#' Describes a shift-invariant kernel kappa(x - y), kappa(0) = 1, by a
#' sampler of its spectral measure mu (Bochner's theorem:
#' kappa(delta) = E cos(omega'delta), omega ~ mu) and the kernel itself. The
#' object is accepted wherever `kernel` is: [rff_map()], [rff_features()],
#' [rff_kernel()], so a spectral law the package does not ship can be used
#' with the same interface.
#'
#' Both functions are for unit lengthscale; the package applies
#' `lengthscale` (frequencies are divided by it, offsets are divided by it
#' before `kappa` sees them). The object is stored as the map's `kernel`, so
#' a map carries its own kernel. Frequencies are drawn in R, by calling
#' `sample(m, d)` with R's random number generator in the state
#' `set.seed()` left it, so maps are reproducible; only `sampler = "iid"` is
#' available (the orthogonal and QMC samplers need the radial law or the
#' inverse CDF of the measure). What the functions return is checked:
#' `sample` must give a finite numeric `d` x `m` matrix, `kappa` a single
#' finite number; otherwise an [rff_error] naming `kernel` is raised.
#' [rff_kernel()] calls `kappa` once per pair of rows (in R), which is slow
#' for large matrices.
#'
#' @param sample `function(m, d)` returning a `d` x `m` numeric matrix whose
#'   columns are `m` independent frequencies drawn from the spectral measure
#'   of the kernel with unit lengthscale.
#' @param kappa `function(delta)` returning the kernel at one offset `delta`
#'   (a numeric vector of length `d`), unit lengthscale, with kappa(0) = 1.
#' @param name A short name used when printing.
#' @return An object of class `"rff_spectral"`: a list with `sample`,
#'   `kappa` and `name`.
#' @seealso [rff_map()].
#' @examples
#' # the Gaussian kernel written by hand
#' gauss <- rff_spectral(
#'   sample = function(m, d) matrix(rnorm(m * d), d, m),
#'   kappa = function(delta) exp(-sum(delta^2) / 2),
#'   name = "hand-made Gaussian")
#' gauss
#' set.seed(1)
#' x <- matrix(rnorm(10), 5, 2)
#' Z <- rff_features(x, D = 2000, kernel = gauss, lengthscale = 2)
#' max(abs(tcrossprod(Z) - rff_kernel(x, kernel = gauss, lengthscale = 2)))
#'
#' # a kernel the package does not ship: the product of d sinc kernels,
#' # kappa(delta) = prod(sin(delta_k) / delta_k), whose spectral measure is
#' # uniform on [-1, 1]^d
#' sinc <- rff_spectral(
#'   sample = function(m, d) matrix(runif(m * d, -1, 1), d, m),
#'   kappa = function(delta) prod(ifelse(delta == 0, 1, sin(delta) / delta)),
#'   name = "sinc")
#' Z <- rff_features(x, D = 4000, kernel = sinc)
#' max(abs(tcrossprod(Z) - rff_kernel(x, kernel = sinc)))
#' @export
rff_spectral <- function(sample, kappa, name = "user-defined") {
  check_required(c("sample", "kappa"))
  if (!is.function(sample)) {
    rff_abort("sample", sprintf("`sample` must be a function(m, d), got %s", show_value(sample)))
  }
  if (!is.function(kappa)) {
    rff_abort("kappa", sprintf("`kappa` must be a function(delta), got %s", show_value(kappa)))
  }
  if (!is.character(name) || length(name) != 1L || is.na(name)) {
    rff_abort("name", sprintf("`name` must be a single string, got %s", show_value(name)))
  }
  structure(list(sample = sample, kappa = kappa, name = name), class = "rff_spectral")
}

#' @export
print.rff_spectral <- function(x, ...) {
  cat(sprintf("<rff_spectral> user-defined shift-invariant kernel \"%s\"\n", x$name))
  invisible(x)
}

# Unit-lengthscale frequencies (d x m) from the user's sampler, validated.
# Called from C (rff_spec_draw) when a map is drawn.
draw_spectral <- function(kernel, m, d) {
  w <- tryCatch(kernel$sample(m, d), error = function(e) {
    rff_abort("kernel", sprintf(
      "`kernel`'s sample(m = %d, d = %d) failed: %s", m, d, conditionMessage(e)))
  })
  if (!is_number(w) && !(is.matrix(w) && (is.double(w) || is.integer(w)))) {
    rff_abort("kernel", sprintf(
      "`kernel`'s sample(m, d) must return a numeric d x m matrix, got %s", show_value(w)))
  }
  if (is.null(dim(w)) && d == 1L && length(w) == m) w <- matrix(w, 1L, m)
  if (!is.matrix(w) || nrow(w) != d || ncol(w) != m) {
    got <- if (is.matrix(w)) sprintf("a %d x %d matrix", nrow(w), ncol(w)) else show_value(w)
    rff_abort("kernel", sprintf(
      "`kernel`'s sample(m = %d, d = %d) must return a %d x %d matrix (one frequency per column), got %s",
      m, d, d, m, got))
  }
  if (anyNA(w) || any(!is.finite(w))) {
    rff_abort("kernel", "`kernel`'s sample(m, d) returned missing or infinite values")
  }
  storage.mode(w) <- "double"
  attributes(w) <- list(dim = c(d, m))
  w
}

# kappa at each row of u (offsets already divided by the lengthscale),
# validated: one finite number per offset.
spectral_kappa <- function(kernel, u) {
  vapply(seq_len(nrow(u)), function(i) {
    v <- tryCatch(kernel$kappa(u[i, ]), error = function(e) {
      rff_abort("kernel", sprintf("`kernel`'s kappa(delta) failed: %s", conditionMessage(e)))
    })
    if (!is_number(v) || length(v) != 1L || is.na(v) || !is.finite(v)) {
      rff_abort("kernel", sprintf(
        "`kernel`'s kappa(delta) must return one finite number, got %s", show_value(v)))
    }
    as.double(v)
  }, numeric(1))
}
