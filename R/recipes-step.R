# Layer 9 (integrations): the recipes step step_rff(): a random Fourier
# feature map drawn from the training rows at prep() and applied by bake(),
# with its tidy(), tunable(), required_pkgs() and print() methods.

#' Random Fourier features as a recipes step
#'
#' `step_rff()` creates a specification of a recipe step that replaces the
#' selected numeric columns by D random Fourier features of them (see
#' [rff_features()]). At [recipes::prep()] the map is drawn from the
#' training rows, with `lengthscale = "median"` resolved there (the median
#' heuristic, [rff_median_lengthscale()]) and kept in the map; every
#' [recipes::bake()] featurizes new rows through that same map, so
#' training and new rows get the same features. Draws use R's random
#' numbers: `set.seed()` before `prep()` makes them reproducible.
#'
#' The step does not standardize: put [recipes::step_normalize()] before it
#' when the columns have different units (the median heuristic is then on
#' comparable scales). An odd `D` with `variant = "pair"` is rounded up to
#' the next even number, so that tuning grids of `D` need no care.
#' `tunable()` lists `D` and `lengthscale`, so both can be set to
#' `tune::tune()` and tuned with `tune::tune_grid()`. `tidy()` of the step
#' gives one row per selected column with the map's `D`, `kernel`,
#' `lengthscale` (per column: the same value for an isotropic map) and
#' `variant`, or the requested values before `prep()`.
#'
#' @param recipe A recipe ([recipes::recipe()]).
#' @param ... Selectors of the numeric columns to featurize
#'   ([recipes::selections]).
#' @param D Number of features (even for `variant = "pair"`).
#' @param kernel,nu,variant,sampler As for [rff_features()].
#' @param lengthscale Positive numbers (one, or one per selected column), or
#'   `"median"` (from the training rows at `prep()`).
#' @param role The role of the new columns.
#' @param trained,map,columns Set by `prep()`; leave them alone.
#' @param prefix The new columns' names: `prefix` followed by a number.
#' @param keep_original_cols Keep the selected columns beside the features.
#' @param skip Skip the step when baking new data (see [recipes::bake()]).
#' @param id A unique identifier of the step.
#' @return The recipe with the step added.
#' @examples
#' if (requireNamespace("recipes", quietly = TRUE)) {
#'   rec <- recipes::recipe(mpg ~ ., data = mtcars)
#'   rec <- recipes::step_normalize(rec, recipes::all_numeric_predictors())
#'   rec <- step_rff(rec, recipes::all_numeric_predictors(), D = 20)
#'   set.seed(1)
#'   prepped <- recipes::prep(rec, training = mtcars[1:25, ])
#'   dim(recipes::bake(prepped, new_data = mtcars[26:32, ]))
#'   recipes::tidy(prepped, number = 2)
#' }
#' @export
step_rff <- function(recipe, ..., D = 500, kernel = "gaussian", lengthscale = "median",
                     nu = 1.5, variant = "pair", sampler = "iid", role = "predictor",
                     trained = FALSE, map = NULL, columns = NULL, prefix = "rff_",
                     keep_original_cols = FALSE, skip = FALSE, id = NULL) {
  check_required("recipe")
  need_package("recipes", "recipe")
  if (!inherits(recipe, "recipe")) {
    rff_abort("recipe", sprintf("`recipe` must be a recipe made by recipes::recipe(), got %s",
                                show_value(recipe)))
  }
  check_step_args(D, kernel, lengthscale, nu, variant, sampler)
  if (!is.character(prefix) || length(prefix) != 1L || is.na(prefix) || !nzchar(prefix)) {
    rff_abort("prefix", sprintf("`prefix` must be a non-empty string, got %s", show_value(prefix)))
  }
  keep_original_cols <- check_flag(keep_original_cols, "keep_original_cols")
  skip <- check_flag(skip, "skip")
  if (is.null(id)) id <- recipes::rand_id("rff")
  recipes::add_step(recipe, recipes::step(
    "rff", terms = rlang::enquos(...), role = role, trained = trained, D = D,
    kernel = kernel, lengthscale = lengthscale, nu = nu, variant = variant,
    sampler = sampler, map = map, columns = columns, prefix = prefix,
    keep_original_cols = keep_original_cols, skip = skip, id = id))
}

# The arguments of a step or model that draw a map, checked where they are
# values (a tune() placeholder is checked once it is replaced).
check_step_args <- function(D, kernel, lengthscale, nu, variant, sampler) {
  if (!is.call(D)) D <- check_count(D, "D", hi = 2^30)
  if (!is.call(lengthscale) && !identical(lengthscale, "median")) {
    if (is.character(lengthscale)) {
      rff_abort("lengthscale", sprintf("`lengthscale` must be positive numbers or \"median\", got %s",
                                       show_value(lengthscale)))
    }
    check_lengthscale(lengthscale, length(lengthscale))
  }
  if (!is.call(nu)) check_positive(nu, "nu")
  if (is.call(D)) D <- 2L
  map_spec(1L, D + (D %% 2L), kernel, 1, if (is.call(nu)) 1.5 else nu,
           variant = variant, sampler = sampler)
  invisible(NULL)
}

# An rff_error when an optional package is missing.
need_package <- function(pkg, arg) {
  if (!has_package(pkg)) {
    rff_abort(arg, sprintf("`%s` needs the %s package: install.packages(\"%s\")", arg, pkg, pkg))
  }
}

#' @exportS3Method recipes::prep
prep.step_rff <- function(x, training, info = NULL, ...) {
  cols <- recipes::recipes_eval_select(x$terms, training, info)
  check_step_args(x$D, x$kernel, x$lengthscale, x$nu, x$variant, x$sampler)
  bad <- cols[!vapply(training[cols], is.numeric, logical(1))]
  if (length(bad)) {
    rff_abort("...", sprintf("step_rff() featurizes numeric columns; `%s` is not numeric", bad[1L]))
  }
  map <- NULL
  if (length(cols)) {
    xt <- check_x(as.matrix(training[cols]), "training")
    D <- as.integer(x$D)
    if (x$variant == "pair" && D %% 2L == 1L) D <- D + 1L
    map <- data_map(xt, list(D = D, kernel = x$kernel, nu = x$nu, variant = x$variant,
                             sampler = x$sampler,
                             lengthscale = resolve_lengthscale(x$lengthscale, xt)))
  }
  x$trained <- TRUE
  x$map <- map
  x$columns <- cols
  x
}

#' @exportS3Method recipes::bake
bake.step_rff <- function(object, new_data, ...) {
  cols <- unname(object$columns)
  recipes::check_new_data(cols, object, new_data)
  if (!length(cols)) return(new_data)
  # a prepped step keeps the map it drew: without it bake() would draw
  # another (a saved recipe altered, or a step built by hand)
  tryCatch(check_map(object$map, "map"), rff_error = function(e) {
    rff_abort("object", sprintf("the prepped `step_rff` is damaged: its map: %s", conditionMessage(e)))
  })
  Z <- rff_features(check_x(as.matrix(new_data[cols]), "new_data", empty_ok = TRUE),
                    map = object$map)
  Z <- unclass(Z)
  attr(Z, "rff_map") <- NULL
  colnames(Z) <- recipes::names0(ncol(Z), object$prefix)
  Z <- tibble::as_tibble(Z)
  Z <- recipes::check_name(Z, new_data, object)
  new_data <- tibble::as_tibble(cbind(new_data, Z))
  recipes::remove_original_cols(new_data, object, cols)
}

#' @export
print.step_rff <- function(x, width = max(20, options()$width - 35), ...) {
  title <- sprintf("Random Fourier features (D = %s) from ",
                   if (is.null(x$map)) format(x$D) else x$map$D)
  recipes::print_step(x$columns, x$terms, x$trained, title, width)
  invisible(x)
}

#' @rdname step_rff
#' @param x A `step_rff` step.
#' @usage \method{tidy}{step_rff}(x, ...)
#' @exportS3Method generics::tidy
tidy.step_rff <- function(x, ...) {
  if (recipes::is_trained(x)) {
    cols <- unname(x$columns)
    m <- x$map
    ls <- if (is.null(m)) numeric() else rep_len(m$lengthscale, length(cols))
    out <- data.frame(terms = cols, D = rep(m$D, length(cols)),
                      kernel = rep(m$kernel, length(cols)), lengthscale = ls,
                      variant = rep(m$variant, length(cols)), stringsAsFactors = FALSE)
  } else {
    ls <- if (is.numeric(x$lengthscale) && length(x$lengthscale) == 1L) x$lengthscale else NA_real_
    out <- data.frame(terms = recipes::sel2char(x$terms), D = if (is.call(x$D)) NA_real_ else x$D,
                      kernel = x$kernel, lengthscale = ls, variant = x$variant,
                      stringsAsFactors = FALSE)
  }
  out$id <- rep(x$id, nrow(out))
  tibble::as_tibble(out)
}

#' @rdname step_rff
#' @usage \method{tunable}{step_rff}(x, ...)
#' @exportS3Method generics::tunable
tunable.step_rff <- function(x, ...) {
  tibble::tibble(
    name = c("D", "lengthscale"),
    call_info = list(list(pkg = "dials", fun = "num_comp", range = c(20L, 1000L)),
                     list(pkg = "rff", fun = "rff_lengthscale_param")),
    source = "recipe", component = "step_rff", component_id = x$id)
}

#' @rdname step_rff
#' @usage \method{required_pkgs}{step_rff}(x, ...)
#' @exportS3Method generics::required_pkgs
required_pkgs.step_rff <- function(x, ...) "rff"

#' A dials parameter for the lengthscale
#'
#' The tuning parameter that [step_rff()] and [rff_model()] list in
#' `tunable()` for their `lengthscale`: a quantitative dials parameter on
#' the log10 scale.
#'
#' @param range The range, in log10 units (the default: 0.1 to 10, for
#'   standardized inputs).
#' @param trans Its transformation (default log10).
#' @return A `dials` parameter (class `"quant_param"`).
#' @examples
#' if (requireNamespace("dials", quietly = TRUE)) rff_lengthscale_param()
#' @export
rff_lengthscale_param <- function(range = c(-1, 1), trans = NULL) {
  need_package("dials", "range")
  if (!is.numeric(range) || length(range) != 2L || anyNA(range) || range[1L] >= range[2L]) {
    rff_abort("range", sprintf("`range` must be two increasing numbers, got %s", show_value(range)))
  }
  if (is.null(trans)) trans <- scales::log10_trans()
  dials::new_quant_param(type = "double", range = range, inclusive = c(TRUE, TRUE),
                         trans = trans, label = c(lengthscale = "Lengthscale"),
                         finalize = NULL)
}
