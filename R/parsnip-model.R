# Layer 9 (integrations): the parsnip model rff_model() with engine "rff":
# its specification, update() for tuning, and its registration with
# parsnip (fit, encoding and predictions per mode).

#' Random-feature kernel models for parsnip
#'
#' `rff_model()` is a parsnip model specification of kernel ridge
#' regression (mode `"regression"`, fitted by [rff_ridge()]) and kernel
#' logistic or multinomial regression (mode `"classification"`, fitted by
#' [rff_glm()], binomial for two classes and multinomial for more) on
#' random Fourier features, with the engine `"rff"`. Arguments left `NULL`
#' keep rff's own defaults, chosen from the data: lambda by leave-one-out
#' (ridge) or cross-validation (GLM), the lengthscale `"auto"`, D from n.
#' Any of them can be `tune::tune()`. Engine arguments
#' ([parsnip::set_engine()]) go to [rff_ridge()] or [rff_glm()]
#' (`kernel`, `standardize`, ...).
#'
#' parsnip builds the model matrix itself, so ordered factors reach the
#' kernel as [stats::model.matrix()]'s polynomial contrasts, not as the
#' ranks of their levels that rff's formula methods give them (see
#' [rff_ridge()]); in a workflow, `recipes::step_ordinalscore()` gives the
#' ranks.
#'
#' Case weights (hardhat's [hardhat::importance_weights()] and
#' [hardhat::frequency_weights()], given to [parsnip::fit()] as
#' `case_weights` or to a workflow with [workflows::add_case_weights()])
#' are the `weights` of [rff_ridge()] or [rff_glm()]. An odd `D` with the
#' default `variant = "pair"` is rounded up to the next even number (as in
#' [step_rff()]), so that any tuning grid of `D` fits.
#'
#' For tuning ([tune::tune_grid()]), `tunable()` gives `penalty` the range
#' 10^-6 to 1 (rff's lambda multiplies n times the identity beside Z'Z,
#' whose trace is at most n: at 1 the fit is mostly shrunk to its mean, and
#' rff's own lambda paths start there and go down to 10^-6), `D` 20 to
#' 1,000 features, and `lengthscale` 0.1 to 10 ([rff_lengthscale_param()],
#' on the inputs as the fit standardizes them: the median distance between
#' standardized rows is about sqrt(2 p) for p inputs).
#'
#' Predictions have parsnip's types and column names: `"numeric"`
#' (`.pred`), `"class"` (`.pred_class`) and `"prob"` (`.pred_<level>`),
#' with as many rows as `new_data` (zero rows included).
#' The model registers itself with parsnip when parsnip is loaded (rff does
#' not depend on it).
#'
#' @param mode `"unknown"`, `"regression"` or `"classification"`.
#' @param penalty The ridge penalty lambda (see [rff_ridge()]).
#' @param lengthscale The kernel's lengthscale (on the standardized inputs,
#'   as for [rff_ridge()]).
#' @param D The number of random features.
#' @param engine `"rff"`.
#' @param object An `rff_model` specification.
#' @param parameters A one-row data frame of parameter values (from tuning).
#' @param fresh Replace all arguments rather than update those given.
#' @param ... Not used by `update()` beyond parsnip's own engine arguments.
#' @return A model specification of class `c("rff_model", "model_spec")`.
#' @examples
#' if (requireNamespace("parsnip", quietly = TRUE)) {
#'   spec <- rff_model(mode = "regression", D = 40)
#'   fit <- parsnip::fit(spec, mpg ~ wt + hp, data = mtcars)
#'   predict(fit, mtcars[1:3, ])
#' }
#' @export
rff_model <- function(mode = "unknown", penalty = NULL, lengthscale = NULL, D = NULL,
                      engine = "rff") {
  need_package("parsnip", "mode")
  mode <- check_string(mode, "mode", c("unknown", "regression", "classification"))
  engine <- check_string(engine, "engine", "rff")
  if (!is.null(penalty) && !is.call(penalty)) check_lambda(penalty, "penalty")
  if (!is.null(lengthscale) && !is.call(lengthscale) && !identical(lengthscale, "auto") &&
      !identical(lengthscale, "median")) {
    check_lengthscale(lengthscale, length(lengthscale))
  }
  if (!is.null(D) && !is.call(D)) check_count(D, "D", hi = 2^30)
  register_parsnip_model()
  args <- list(penalty = rlang::enquo(penalty), lengthscale = rlang::enquo(lengthscale),
               D = rlang::enquo(D))
  parsnip::new_model_spec("rff_model", args = args, eng_args = NULL, mode = mode,
                          user_specified_mode = !missing(mode), method = NULL,
                          engine = engine, user_specified_engine = !missing(engine))
}

#' @rdname rff_model
#' @importFrom stats update
#' @export
update.rff_model <- function(object, parameters = NULL, penalty = NULL, lengthscale = NULL,
                             D = NULL, fresh = FALSE, ...) {
  args <- list(penalty = rlang::enquo(penalty), lengthscale = rlang::enquo(lengthscale),
               D = rlang::enquo(D))
  parsnip::update_spec(object = object, parameters = parameters, args_enquo_list = args,
                       fresh = fresh, cls = "rff_model", ...)
}

#' The fit behind the parsnip engine
#'
#' What [rff_model()]'s engine `"rff"` calls: [rff_ridge()] for a numeric
#' `y`, [rff_glm()] for a factor (binomial for two levels, multinomial for
#' more), with `weights` (parsnip's case weights) and `D` rounded up to an
#' even number for the default `variant = "pair"`. Call [rff_ridge()] or
#' [rff_glm()] directly instead.
#'
#' @param x A numeric matrix (parsnip's model matrix).
#' @param y The outcome: numeric (regression) or a factor (classification).
#' @param weights Case weights, or `NULL`.
#' @param D The number of features, or `NULL` (rff's default from n).
#' @param ... Further arguments of [rff_ridge()] or [rff_glm()].
#' @return An `rff_ridge` or `rff_glm` fit.
#' @keywords internal
#' @export
rff_parsnip_fit <- function(x, y, weights = NULL, D = NULL, ...) {
  check_required("x")
  check_required("y")
  args <- list(...)
  if (!is.null(D)) {
    D <- check_count(D, "D", hi = 2^30)
    pair <- is.null(args$variant) || identical(args$variant, "pair")
    if (pair && D %% 2L == 1L) D <- D + 1L
  }
  fit <- if (is.factor(y)) rff_glm else rff_ridge
  # (`progress` is FALSE unless the engine's arguments ask for it)
  if (is.null(args$progress)) args$progress <- FALSE
  args$D <- D
  do.call(fit, c(list(x = x, y = y, weights = weights), args))
}

# Class probabilities of a GLM fit as parsnip wants them: one column per
# level (parsnip names them .pred_<level>).
parsnip_prob <- function(result, object) {
  lev <- object$lvl
  if (!is.matrix(result)) result <- cbind(1 - result, result)
  colnames(result) <- lev
  tibble::as_tibble(as.data.frame(result, check.names = FALSE))
}

# Tells parsnip about rff_model() (once per session: parsnip keeps a
# registry and refuses to register a model twice).
register_parsnip_model <- function() {
  if ("rff_model" %in% parsnip::get_model_env()$models) return(invisible(FALSE))
  parsnip::set_new_model("rff_model")
  for (mode in c("regression", "classification")) {
    parsnip::set_model_mode("rff_model", mode)
    parsnip::set_model_engine("rff_model", mode = mode, eng = "rff")
    parsnip::set_dependency("rff_model", eng = "rff", pkg = "rff", mode = mode)
    parsnip::set_fit(model = "rff_model", eng = "rff", mode = mode, value = list(
      interface = "matrix", protect = c("x", "y", "weights"),
      func = c(pkg = "rff", fun = "rff_parsnip_fit"), defaults = list()))
    parsnip::set_encoding(model = "rff_model", eng = "rff", mode = mode, options = list(
      predictor_indicators = "traditional", compute_intercept = FALSE,
      remove_intercept = TRUE, allow_sparse_x = FALSE))
  }
  parsnip::set_model_arg(model = "rff_model", eng = "rff", parsnip = "penalty",
                         original = "lambda",
                         func = list(pkg = "dials", fun = "penalty", range = c(-6, 0)),
                         has_submodel = FALSE)
  parsnip::set_model_arg(model = "rff_model", eng = "rff", parsnip = "lengthscale",
                         original = "lengthscale",
                         func = list(pkg = "rff", fun = "rff_lengthscale_param"),
                         has_submodel = FALSE)
  parsnip::set_model_arg(model = "rff_model", eng = "rff", parsnip = "D", original = "D",
                         func = list(pkg = "dials", fun = "num_comp", range = c(20L, 1000L)),
                         has_submodel = FALSE)
  newdata <- list(object = quote(object$fit), newdata = quote(new_data))
  parsnip::set_pred(model = "rff_model", eng = "rff", mode = "regression", type = "numeric",
                    value = list(pre = NULL, post = NULL, func = c(fun = "predict"),
                                 args = newdata))
  parsnip::set_pred(model = "rff_model", eng = "rff", mode = "classification",
                    type = "class",
                    value = list(pre = NULL, post = function(result, object) unname(result),
                                 func = c(fun = "predict"),
                                 args = c(newdata, list(type = "class"))))
  parsnip::set_pred(model = "rff_model", eng = "rff", mode = "classification",
                    type = "prob",
                    value = list(pre = NULL, post = parsnip_prob, func = c(fun = "predict"),
                                 args = c(newdata, list(type = "response"))))
  invisible(TRUE)
}
