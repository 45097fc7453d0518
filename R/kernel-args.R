# Layer 2 (kernel parameters): the kernels, variants and samplers the package
# knows, the checks of their parameters, and what kind of map each gives (for
# dispatch and printing).

rff_kernels <- c("gaussian", "laplace", "matern", "arccos", "polynomial")

rff_variants <- c("pair", "phase")

rff_samplers <- c("iid", "orthogonal", "qmc", "nystrom")

# A kernel name, or a user-defined spectral measure made by rff_spectral().
check_kernel <- function(kernel, arg = "kernel") {
  if (inherits(kernel, "rff_spectral")) return(check_spectral(kernel, arg))
  if (is.list(kernel)) {
    rff_abort(arg, sprintf(
      "`%s` must be a kernel name or an object made by rff_spectral(), got %s",
      arg, show_value(kernel)))
  }
  check_string(kernel, arg, rff_kernels)
}

check_spectral <- function(kernel, arg = "kernel") {
  if (!is.list(kernel) || !is.function(kernel$sample) || !is.function(kernel$kappa) ||
      !is.character(kernel$name) || length(kernel$name) != 1L) {
    rff_abort(arg, sprintf(
      "`%s` is a damaged rff_spectral object: it needs functions `sample` and `kappa` and a `name`",
      arg))
  }
  kernel
}

# The Matern smoothness: a positive number, within [nu_range] for the Matern
# kernel (the other kernels ignore it).
nu_range <- c(0.05, 1e6)

check_nu <- function(nu, kernel) {
  nu <- check_positive(nu, "nu")
  if (identical(kernel, "matern") && (nu < nu_range[1L] || nu > nu_range[2L])) {
    rff_abort("nu", sprintf(paste0(
      "`nu` must be between %g and %g for the Matern kernel, got %s; as nu grows ",
      "the kernel tends to the Gaussian (kernel = \"gaussian\")"),
      nu_range[1L], nu_range[2L], format(nu)))
  }
  nu
}

check_order <- function(order) {
  if (!is_number(order) || length(order) != 1L || is.na(order) || !order %in% c(0, 1)) {
    rff_abort("order", sprintf("`order` must be 0 or 1, got %s", show_value(order)))
  }
  as.integer(order)
}

check_degree <- function(degree) {
  check_count(degree, "degree", lo = 1, hi = 30)
}

check_kernel_offset <- function(offset) {
  if (!is_number(offset) || length(offset) != 1L || is.na(offset) || !is.finite(offset) ||
      offset < 0) {
    rff_abort("offset", sprintf("`offset` must be a non-negative finite number, got %s",
                                show_value(offset)))
  }
  as.double(offset)
}

check_lengthscale <- function(lengthscale, d) {
  if (identical(lengthscale, "median")) {
    rff_abort("lengthscale", paste0(
      "`lengthscale` \"median\" needs the data: give `x` to rff_features() or ",
      "rff_kernel(), which compute it; rff_map() knows only `d`"))
  }
  if (!is_number(lengthscale) || length(lengthscale) == 0L ||
      anyNA(lengthscale) || any(!is.finite(lengthscale)) || any(lengthscale <= 0)) {
    bad <- if (is_number(lengthscale) && length(lengthscale) > 0L) {
      lengthscale[is.na(lengthscale) | !is.finite(lengthscale) | lengthscale <= 0][1L]
    } else lengthscale
    rff_abort("lengthscale", sprintf(
      "`lengthscale` must be positive and finite, got %s", show_value(bad)))
  }
  if (length(lengthscale) != 1L && length(lengthscale) != d) {
    rff_abort("lengthscale", sprintf(
      "`lengthscale` must have length 1 or %d (one per column of `x`), got length %d",
      d, length(lengthscale)))
  }
  as.double(lengthscale)
}

# The samplers each kernel supports, and the arc-cosine kernel's one variant.
check_sampler_kernel <- function(sampler, kernel, variant) {
  spectral <- inherits(kernel, "rff_spectral")
  if (spectral && sampler != "iid") {
    rff_abort("sampler", sprintf(
      "`sampler` \"%s\" needs a kernel whose spectral law the package knows; a user-defined rff_spectral() kernel supports only \"iid\"",
      sampler))
  }
  if (!spectral && sampler == "orthogonal" && !kernel %in% c("gaussian", "matern", "arccos")) {
    rff_abort("sampler", sprintf(
      "`sampler` \"orthogonal\" needs a radial kernel (\"gaussian\", \"matern\", \"arccos\"), got kernel \"%s\"",
      kernel))
  }
  if (!spectral && kernel == "arccos" && variant != "pair") {
    rff_abort("variant", sprintf(
      "`variant` \"%s\" has no meaning for the arc-cosine kernel, which has no phases; use \"pair\"",
      variant))
  }
  sampler
}

check_variant <- function(variant) {
  # the default is the whole choice vector, as in match.arg()
  if (identical(variant, rff_variants)) variant <- "pair"
  check_string(variant, "variant", rff_variants)
}

check_sampler <- function(sampler) check_string(sampler, "sampler", rff_samplers)

# TRUE for a kernel k(x, y) = kappa(x - y) (everything but "arccos" and
# "polynomial").
is_shift_invariant <- function(kernel) {
  !identical(kernel, "arccos") && !identical(kernel, "polynomial")
}

# A kernel for which Proposition 2 holds: built-in or rff_spectral(), but
# not the arc-cosine kernel (no kappa(x - y)).
check_shift_invariant <- function(kernel, arg = "kernel") {
  kernel <- check_kernel(kernel, arg)
  if (!is_shift_invariant(kernel)) {
    rff_abort(arg, sprintf(paste0(
      "`%s` must be a shift-invariant kernel: \"%s\" is not (k(x, y) is no ",
      "function kappa(x - y)), so Proposition 2 does not apply to it"), arg, kernel))
  }
  kernel
}

is_polynomial <- function(kernel) identical(kernel, "polynomial")

is_nystrom <- function(sampler) identical(sampler, "nystrom")

# A map that is not made of frequencies (TensorSketch or Nystrom).
is_other_map <- function(map) is_nystrom(map$sampler) || is_polynomial(map$kernel)

# What a map is made of, for printing: "random Fourier features", ...
map_kind <- function(map) {
  if (is_nystrom(map$sampler)) return("Nystrom features")
  if (is_polynomial(map$kernel)) return("TensorSketch features")
  "random Fourier features"
}

# "Matern (nu = 1.5)", "Arc-cosine (order 1)", ... from a map or a spec.
kernel_label <- function(spec) {
  kernel <- spec$kernel
  if (inherits(kernel, "rff_spectral")) return(sprintf("%s (rff_spectral)", kernel$name))
  if (kernel == "matern") return(sprintf("Matern (nu = %s)", format(spec$nu)))
  if (kernel == "arccos") return(sprintf("Arc-cosine (order %s)", format(spec$order)))
  if (kernel == "polynomial") {
    return(sprintf("Polynomial (degree %s, offset %s)", format(spec$degree),
                   format(spec$offset)))
  }
  paste0(toupper(substring(kernel, 1, 1)), substring(kernel, 2))
}

# The parameters of the map's kernel that its features need.
check_kernel_params <- function(map, kernel, arg) {
  if (identical(kernel, "arccos") &&
      (!is_number(map$order) || length(map$order) != 1L || !isTRUE(map$order %in% c(0, 1)))) {
    rff_abort(paste0(arg, "$order"), sprintf(
      "`%s$order` must be 0 or 1 for an arc-cosine map, got %s", arg, show_value(map$order)))
  }
  if (identical(kernel, "polynomial")) {
    tryCatch({
      check_degree(map$degree)
      check_kernel_offset(map$offset)
    }, rff_error = function(e) {
      rff_abort(arg, sprintf("`%s` is damaged: %s", arg, conditionMessage(e)))
    })
  }
  if (identical(kernel, "matern")) {
    tryCatch(check_nu(map$nu, kernel), rff_error = function(e) {
      rff_abort(arg, sprintf("`%s` is damaged: %s", arg, conditionMessage(e)))
    })
  }
  invisible(TRUE)
}
