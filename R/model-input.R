# Layer 5 (the model pipeline): the inputs of fits and predictions: formulas
# and model frames as lm() has them, new data for predict(), and the checks of
# predict()'s arguments.

# The work of every formula method, called from the method itself: the
# model frame of the method's call, evaluated where the method was called,
# then the default method on it; the result gets the method's `call` and
# the frame's terms, levels and contrasts, which predict() needs (for a
# cross-validation, its refit gets them).
fit_formula <- function(fit_default, call, ..., .response = "numeric") {
  mc <- match.call(sys.function(-1L), sys.call(-1L), expand.dots = FALSE)
  env <- parent.frame(2L)
  if ("intercept" %in% names(list(...))) {
    rff_abort("intercept", "with a formula the intercept is set by the formula (`y ~ x - 1` has none); do not give `intercept`")
  }
  frame <- formula_frame(mc, env, .response)
  fit <- fit_default(frame$x, frame$y, intercept = frame$intercept,
                     weights = frame$weights, offset = frame$offset, ...)
  fit$call <- call
  cv <- inherits(fit, "rff_cv")
  if (cv) fit$fit$call <- call
  # (NULL fields kept: check_fit() requires them)
  for (f in names(frame$model)) {
    if (cv) fit$fit[f] <- list(frame$model[[f]]) else fit[f] <- list(frame$model[[f]])
  }
  fit
}

# The model frame of a formula fit, as stats::lm() builds it: `call` is the
# method's match.call(expand.dots = FALSE), evaluated in `env`. Gives x (the
# model matrix without its intercept column), y, whether the formula has an
# intercept, the weights and the offset (offset() terms and the `offset`
# argument), and in `model` what predict() needs to rebuild x.
formula_frame <- function(call, env, response = "numeric") {
  m <- match(c("formula", "data", "subset", "weights", "na.action", "offset"),
             names(call), 0L)
  mf <- call[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- read_frame(mf, env)
  mt <- attr(mf, "terms")
  y <- stats::model.response(mf)
  if (is.null(y)) rff_abort("formula", "`formula` must have a response")
  if (response == "numeric") {
    check_response_kind(y, "formula")
    y <- stats::model.response(mf, "numeric")
  }
  typed <- coerce_frame(mf, mt)
  mf <- typed$frame
  kept <- drop_single_levels(mf, mt)
  mf <- kept$frame
  mt <- kept$terms
  ord <- ordered_scores(mf, mt)
  mf <- ord$frame
  x <- stats::model.matrix(mt, mf)
  contrasts <- attr(x, "contrasts")
  keep <- colnames(x) != "(Intercept)"
  assign <- attr(x, "assign")[keep]
  x <- x[, keep, drop = FALSE]
  # the columns of each term (a factor's dummies): one lengthscale for
  # lengthscale = "ard"
  attr(x, "rff_groups") <- match(assign, unique(assign))
  # the columns of terms made of factors only (dummies): left unscaled by
  # standardize = TRUE (model_setup())
  fac <- attr(mt, "factors")
  if (length(fac)) {
    discrete <- vapply(rownames(fac), function(v) {
      col <- mf[[v]]
      is.factor(col) || is.character(col) || is.logical(col)
    }, logical(1))
    pure <- apply(fac != 0, 2L, function(used) all(discrete[used]))
    attr(x, "rff_dummies") <- unname(pure[assign])
  }
  if (ncol(x) == 0L) rff_abort("formula", "`formula` must have at least one predictor")
  list(x = x, y = y, intercept = attr(mt, "intercept") == 1L,
       weights = stats::model.weights(mf), offset = stats::model.offset(mf),
       model = list(terms = mt, xlevels = stats::.getXlevels(mt, mf),
                    contrasts = contrasts, na.action = attr(mf, "na.action"),
                    offset_arg = call$offset, ordered = ord$levels,
                    coerced = typed$coerced))
}

# The ordered factors among the predictors of a model frame enter the
# kernel as the ranks of their levels present (1, 2, ...): one numeric
# column each, standardized like any numeric input. model.matrix()'s
# polynomial contrasts would put every two levels at the same distance
# (the rows of contr.poly() are equidistant), so a Gaussian kernel would
# not see the order that a tree or a ranked score uses (ggplot2::diamonds,
# bench/ordered.R). Contrasts the user chose win: a factor with its own
# (`contrasts<-`, C()) and every ordered factor when options(contrasts)
# does not give "contr.poly" for them keep model.matrix()'s coding, as do
# offset() variables and the response. Gives the frame with the ranks and
# the levels of each ranked factor (NULL when there is none), which
# newdata_scores() needs.
ordered_scores <- function(mf, mt) {
  opt <- getOption("contrasts")
  poly <- if ("ordered" %in% names(opt)) opt[["ordered"]] else if (length(opt) >= 2L) opt[[2L]]
  if (!identical(poly, "contr.poly")) return(list(frame = mf, levels = NULL))
  vars <- frame_predictors(mf, mt)
  ranked <- vapply(vars, function(v) {
    is.ordered(mf[[v]]) && is.null(attr(mf[[v]], "contrasts"))
  }, logical(1))
  ord <- vars[ranked]
  if (!length(ord)) return(list(frame = mf, levels = NULL))
  levels <- stats::setNames(lapply(ord, function(v) levels(mf[[v]])), ord)
  for (v in ord) mf[[v]] <- as.double(as.integer(mf[[v]]))
  list(frame = mf, levels = levels)
}

# newdata as a double matrix with the training columns (missing values
# allowed), and the offset of its rows: from the formula's offset() terms
# and `offset` argument for a formula fit, from `newoffset` otherwise.
# Factor levels no training row had are handled by `new_levels`
# (new_levels_signal()); with "na" their rows are NA in `x`.
newdata_matrix <- function(object, newdata, newoffset = NULL, new_levels = "none") {
  offset <- NULL
  if (!is.null(object$terms)) {
    if (!is.data.frame(newdata) && !is.list(newdata)) {
      rff_abort("newdata", sprintf(
        "`newdata` must be a data frame for a fit made with a formula, got %s",
        show_value(newdata)))
    }
    if (!is.null(newoffset)) {
      rff_abort("newoffset", "a fit made with a formula takes its offset from `newdata` (its offset() terms and `offset` argument); do not give `newoffset`")
    }
    tt <- stats::delete.response(object$terms)
    mf <- tryCatch(stats::model.frame(tt, newdata, na.action = stats::na.pass),
                   error = function(e) {
      rff_abort("newdata", paste0("`newdata` does not fit the model: ", conditionMessage(e)))
    })
    offset <- stats::model.offset(mf)
    mf <- coerce_newdata(mf, object$coerced)
    lv <- newdata_levels(mf, object$xlevels, object$contrasts)
    sc <- newdata_scores(lv$frame, object$ordered)
    found <- c(lv$found, sc$found)
    unseen <- lv$rows | sc$rows
    if (length(found)) new_levels_signal(found, new_levels, sum(unseen))
    x <- tryCatch({
      if (!is.null(object$offset_arg)) {
        extra <- eval(object$offset_arg, newdata, environment(object$terms))
        offset <- if (is.null(offset)) extra else offset + extra
      }
      stats::model.matrix(tt, sc$frame, contrasts.arg = lv$contrasts)
    }, error = function(e) {
      rff_abort("newdata", paste0("`newdata` does not fit the model: ", conditionMessage(e)))
    })
    # (the indicator of the unseen level, where a term codes a factor by
    # indicators of all its levels: none of the known levels is all zeros)
    x <- x[, colnames(x) != "(Intercept)" & !grepl(unseen_level, colnames(x), fixed = TRUE),
           drop = FALSE]
    if (new_levels == "na") x[unseen, ] <- NA
    x <- check_x(x, "newdata", na_ok = TRUE, empty_ok = TRUE)
  } else {
    x <- check_x(newdata, "newdata", na_ok = TRUE, empty_ok = TRUE)
    xn <- object$xnames
    if (!is.null(xn) && !is.null(colnames(x))) {
      miss <- setdiff(xn, colnames(x))
      if (length(miss)) {
        rff_abort("newdata", sprintf("`newdata` lacks the column%s %s used in the fit",
                                     if (length(miss) > 1L) "s" else "",
                                     paste0("\"", miss, "\"", collapse = ", ")))
      }
      x <- x[, xn, drop = FALSE]
    }
    if (ncol(x) != object$map$d) {
      rff_abort("newdata", sprintf("`newdata` has %d column%s but the model was fitted on %d",
                                   ncol(x), if (ncol(x) == 1L) "" else "s", object$map$d))
    }
    if (isTRUE(object$has_offset)) {
      if (is.null(newoffset)) {
        rff_abort("newoffset", "the model was fitted with an `offset`: give the offset of the new rows as `newoffset`")
      }
      offset <- newoffset
    } else if (!is.null(newoffset)) {
      rff_abort("newoffset", "the model was fitted without an offset; do not give `newoffset`")
    }
  }
  if (!is.null(offset)) {
    if (!is_number(offset) || length(offset) != nrow(x)) {
      rff_abort(if (is.null(object$terms)) "newoffset" else "newdata", sprintf(
        "the offset of the new rows must be %d numbers, got %s", nrow(x), show_value(offset)))
    }
    offset <- as.double(offset)
  }
  list(x = x, offset = offset)
}

# The rows of newdata a prediction is made for, after `na.action`: `rows`
# (indices into newdata) and `ok` (those among them without missing
# values, which get predictions; the others get NA).
newdata_rows <- function(x, offset, na.action) {
  m <- nrow(x)
  ok <- stats::complete.cases(x)
  if (!is.null(offset)) ok <- ok & !is.na(offset)
  if (all(ok)) return(list(rows = seq_len(m), ok = ok))
  fun <- if (is.character(na.action)) get(na.action, mode = "function") else na.action
  if (!is.function(fun)) {
    rff_abort("na.action", sprintf("`na.action` must be a function such as na.pass or na.omit, got %s",
                                   show_value(na.action)))
  }
  probe <- data.frame(missing = ifelse(ok, 0, NA))
  kept <- tryCatch(fun(probe), error = function(e) {
    rff_abort("newdata", sprintf("`newdata` has missing values (row%s %s) and `na.action` refused them: %s",
                                 if (sum(!ok) > 1L) "s" else "",
                                 paste(utils::head(which(!ok), 5L), collapse = ", "),
                                 conditionMessage(e)))
  })
  omitted <- attr(kept, "na.action")
  rows <- if (is.null(omitted) || inherits(omitted, "exclude")) seq_len(m) else
    setdiff(seq_len(m), as.integer(omitted))
  list(rows = rows, ok = ok[rows])
}

# Names a predict() call gave that the method does not take: an rff_error
# naming them, and the right argument for the names glmnet and lm users
# type (`newx`, `s`, `x`). `call` is the call as typed (sys.call()), so that
# `s` is caught before R matches it to a longer argument by its prefix.
check_predict_call <- function(call, method, known) {
  nm <- names(as.list(call))[-1L]
  nm <- nm[!is.na(nm) & nzchar(nm)]
  aliases <- c(newx = "newdata", s = "lambda", x = "newdata", se = "se.fit",
               newoffset = "newoffset")
  for (a in nm) {
    if (a %in% known) next
    if (a %in% names(aliases) && aliases[[a]] %in% known) {
      rff_abort(a, sprintf("`%s` is not an argument of predict() for %s objects; use `%s`",
                           a, method, aliases[[a]]))
    }
    rff_abort(a, sprintf("`%s` is not an argument of predict() for %s objects (its arguments: %s)",
                         a, method, paste0("`", setdiff(known, "..."), "`", collapse = ", ")))
  }
  invisible(TRUE)
}

check_predict_type <- function(type, class_pointer = TRUE) {
  if (identical(type, c("response", "link"))) return("response")
  if (identical(type, "class")) {
    rff_abort("type", paste0(
      "`type` \"class\" is for classifiers; rff_ridge() fits a regression. ",
      "Use rff_glm() (kernel logistic or multinomial regression) for class predictions"))
  }
  check_string(type, "type", c("response", "link"))
}

check_interval <- function(interval) {
  if (identical(interval, c("none", "confidence", "prediction"))) return("none")
  check_string(interval, "interval", c("none", "confidence", "prediction"))
}

check_level <- function(level) {
  if (!is_number(level) || length(level) != 1L || is.na(level) || level <= 0 || level >= 1) {
    rff_abort("level", sprintf("`level` must be a number in (0, 1), got %s", show_value(level)))
  }
  as.double(level)
}
