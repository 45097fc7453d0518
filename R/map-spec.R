# Layer 3 (maps): what a map is: the validated parameters it is drawn from
# (its spec) for every kind of map, and the check of a map given by the user
# or read back from a fit.

# The validated parameters a map is drawn from (the "spec": every field of an
# rff_map but omega and phase). rff_map() and every function that draws maps
# itself (rff_kernel_error()) validate their sampling arguments here.
map_spec <- function(d, D = 500, kernel = "gaussian", lengthscale = 1, nu = 1.5,
                     order = 1, degree = 2, offset = 1, variant = c("pair", "phase"),
                     sampler = "iid") {
  d <- check_count(d, "d")
  variant <- check_variant(variant)
  D <- check_count(D, "D", hi = 2^30)
  kernel <- check_kernel(kernel)
  sampler <- check_sampler(sampler)
  if (is_nystrom(sampler) || is_polynomial(kernel)) {
    return(more_map_spec(d, D, kernel, lengthscale, nu, order, degree, offset, variant,
                         sampler))
  }
  if (variant == "pair" && D %% 2L != 0L) {
    rff_abort("D", sprintf("`D` must be even for variant \"pair\", got %d", D))
  }
  lengthscale <- check_lengthscale(lengthscale, d)
  nu <- check_nu(nu, kernel)
  order <- check_order(order)
  check_degree(degree)
  check_kernel_offset(offset)
  check_sampler_kernel(sampler, kernel, variant)
  m <- if (variant == "pair") D %/% 2L else D
  if (as.double(d) * m > 2^31 - 1) {
    rff_abort("D", sprintf(
      "`D` is too large: %d x %d frequencies exceed what BLAS can index", d, m))
  }
  list(D = D, d = d, kernel = kernel, lengthscale = lengthscale,
       nu = nu, variant = variant, sampler = sampler, order = order)
}

# The spec of a map that is not made of frequencies: TensorSketch
# (polynomial kernel) or Nystrom (any kernel with an exact form). kernel and
# sampler are checked; variant must be left at "pair" (it has no meaning).
more_map_spec <- function(d, D, kernel, lengthscale, nu, order, degree, offset, variant,
                          sampler) {
  if (variant != "pair") {
    rff_abort("variant", sprintf(
      "`variant` \"%s\" has no meaning for %s; leave it at its default", variant,
      if (is_nystrom(sampler)) "Nystrom maps" else "the polynomial kernel's TensorSketch"))
  }
  if (!is_nystrom(sampler) && sampler != "iid") {
    rff_abort("sampler", sprintf(paste0(
      "`sampler` \"%s\" needs a spectral law; the polynomial kernel has none: use ",
      "\"iid\" (TensorSketch) or \"nystrom\""), sampler))
  }
  lengthscale <- check_lengthscale(lengthscale, d)
  nu <- check_nu(nu, kernel)
  order <- check_order(order)
  degree <- check_degree(degree)
  offset <- check_kernel_offset(offset)
  spec <- list(D = D, d = d, kernel = kernel, lengthscale = lengthscale, nu = nu,
               variant = if (is_nystrom(sampler)) "nystrom" else "sketch",
               sampler = sampler, order = order)
  if (is_polynomial(kernel)) {
    spec$degree <- degree
    spec$offset <- offset
  }
  spec
}

check_map <- function(map, arg = "map") {
  if (!inherits(map, "rff_map")) {
    rff_abort(arg, sprintf("`%s` must be an object made by rff_map(), got %s",
                           arg, show_value(map)))
  }
  if (is_other_map(map)) return(invisible(check_other_map(map, arg)))
  fields <- c("omega", "D", "d", "kernel", "lengthscale", "nu", "variant", "sampler")
  missing_fields <- setdiff(fields, names(map))
  if (length(missing_fields)) {
    rff_abort(arg, sprintf("`%s` is damaged: it has no %s", arg,
                           paste0("`", missing_fields, "`", collapse = ", ")))
  }
  D <- check_count(map$D, paste0(arg, "$D"))
  d <- check_count(map$d, paste0(arg, "$d"))
  variant <- check_string(map$variant, paste0(arg, "$variant"), rff_variants)
  kernel <- check_kernel(map$kernel, paste0(arg, "$kernel"))
  if (identical(kernel, "arccos")) {
    if (!is_number(map$order) || length(map$order) != 1L || !isTRUE(map$order %in% c(0, 1))) {
      rff_abort(paste0(arg, "$order"), sprintf(
        "`%s$order` must be 0 or 1 for an arc-cosine map, got %s", arg, show_value(map$order)))
    }
    if (variant != "pair") {
      rff_abort(paste0(arg, "$variant"), sprintf(
        "`%s$variant` must be \"pair\" for an arc-cosine map", arg))
    }
  }
  if (variant == "pair" && D %% 2L != 0L) {
    rff_abort(paste0(arg, "$D"), sprintf("`%s$D` must be even for a \"pair\" map, got %d", arg, D))
  }
  m <- if (variant == "pair") D / 2 else D
  om <- map$omega
  if (!is.matrix(om) || !is.double(om) || !identical(dim(om), c(d, as.integer(m))) ||
      any(!is.finite(om))) {
    rff_abort(arg, sprintf(
      "`%s` is damaged: `omega` must be a finite %d x %d double matrix", arg, d, as.integer(m)))
  }
  if (variant == "phase") {
    ph <- map$phase
    if (!is.double(ph) || length(ph) != D || any(!is.finite(ph))) {
      rff_abort(arg, sprintf("`%s` is damaged: `phase` must be %d finite numbers", arg, D))
    }
  } else if (!is.null(map$phase)) {
    rff_abort(arg, sprintf("`%s` is damaged: a \"pair\" map has no `phase`", arg))
  }
  # the stored lengthscale and nu label the map and rescale it (rff_cv())
  tryCatch(check_lengthscale(map$lengthscale, d), rff_error = function(e) {
    rff_abort(arg, sprintf("`%s` is damaged: %s", arg, conditionMessage(e)))
  })
  check_kernel_params(map, kernel, arg)
  invisible(map)
}

check_other_map <- function(map, arg) {
  nys <- is_nystrom(map$sampler)
  fields <- c("D", "d", "kernel", "lengthscale", "variant", "sampler",
              if (nys) c("landmarks", "weights") else c("hash", "sign", "degree", "offset"))
  missing_fields <- setdiff(fields, names(map))
  if (length(missing_fields)) {
    rff_abort(arg, sprintf("`%s` is damaged: it has no %s", arg,
                           paste0("`", missing_fields, "`", collapse = ", ")))
  }
  want <- if (nys) "nystrom" else "sketch"
  if (!identical(map$variant, want)) {
    rff_abort(paste0(arg, "$variant"), sprintf("`%s$variant` must be \"%s\" for %s", arg,
                                               want, map_kind(map)))
  }
  d <- check_count(map$d, paste0(arg, "$d"))
  tryCatch(check_lengthscale(map$lengthscale, d), rff_error = function(e) {
    rff_abort(arg, sprintf("`%s` is damaged: %s", arg, conditionMessage(e)))
  })
  if (nys) check_nystrom_map(map, arg) else check_sketch_map(map, arg)
}

check_nystrom_map <- function(map, arg) {
  D <- check_count(map$D, paste0(arg, "$D"))
  d <- check_count(map$d, paste0(arg, "$d"))
  kernel <- check_kernel(map$kernel, paste0(arg, "$kernel"))
  L <- map$landmarks
  W <- map$weights
  if (!is.matrix(L) || !is.double(L) || !identical(dim(L), c(D, d)) || any(!is.finite(L))) {
    rff_abort(arg, sprintf(
      "`%s` is damaged: `landmarks` must be a finite %d x %d double matrix", arg, D, d))
  }
  if (!is.matrix(W) || !is.double(W) || !identical(dim(W), c(D, D)) || any(!is.finite(W))) {
    rff_abort(arg, sprintf(
      "`%s` is damaged: `weights` must be a finite %d x %d double matrix", arg, D, D))
  }
  check_kernel_params(map, kernel, arg)
  invisible(map)
}

check_x_matches_map <- function(x, map, arg = "x") {
  if (ncol(x) != map$d) {
    rff_abort(arg, sprintf("`%s` has %d column%s but the map was drawn for %d",
                           arg, ncol(x), if (ncol(x) == 1L) "" else "s", map$d))
  }
}
