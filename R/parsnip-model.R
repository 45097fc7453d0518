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
#' Predictions have parsnip's types and column names: `"numeric"`
#' (`.pred`), `"class"` (`.pred_class`) and `"prob"` (`.pred_<level>`).
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
  fits <- list(regression = "rff_ridge", classification = "rff_glm")
  for (mode in names(fits)) {
    parsnip::set_model_mode("rff_model", mode)
    parsnip::set_model_engine("rff_model", mode = mode, eng = "rff")
    parsnip::set_dependency("rff_model", eng = "rff", pkg = "rff", mode = mode)
    parsnip::set_fit(model = "rff_model", eng = "rff", mode = mode, value = list(
      interface = "matrix", protect = c("x", "y"),
      func = c(pkg = "rff", fun = fits[[mode]]), defaults = list(progress = FALSE)))
    parsnip::set_encoding(model = "rff_model", eng = "rff", mode = mode, options = list(
      predictor_indicators = "traditional", compute_intercept = FALSE,
      remove_intercept = TRUE, allow_sparse_x = FALSE))
  }
  parsnip::set_model_arg(model = "rff_model", eng = "rff", parsnip = "penalty",
                         original = "lambda", func = list(pkg = "dials", fun = "penalty"),
                         has_submodel = FALSE)
  parsnip::set_model_arg(model = "rff_model", eng = "rff", parsnip = "lengthscale",
                         original = "lengthscale",
                         func = list(pkg = "rff", fun = "rff_lengthscale_param"),
                         has_submodel = FALSE)
  parsnip::set_model_arg(model = "rff_model", eng = "rff", parsnip = "D", original = "D",
                         func = list(pkg = "dials", fun = "num_comp"), has_submodel = FALSE)
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
