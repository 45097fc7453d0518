# Layer 5 (the model pipeline): the columns of a data frame as a formula fit
# takes them: their types (logical, dates and times made numeric; lists and
# complex numbers refused), factors with a single level in the rows fitted
# (their terms dropped), and at predict() the levels a factor did not have
# in training (coded as none of the known levels, NA, or an error).

# A classed message of the package: class `c(class, "rff_message",
# "message", "condition")`, with the fields of `...`.
rff_inform <- function(class, msg, ...) {
  message(structure(class = c(class, "rff_message", "message", "condition"),
                    list(message = paste0(msg, "\n"), call = NULL, ...)))
}

# The predictor variables of a model frame: names of its columns that are
# variables of `mt` other than the response and the offsets.
frame_predictors <- function(mf, mt) {
  idx <- seq_len(length(attr(mt, "variables")) - 1L)
  idx <- setdiff(idx, c(attr(mt, "response"), attr(mt, "offset")))
  names(mf)[idx]
}

# Reads a formula's model frame (`mf_call`, in `env`); an error of R's
# model.frame() (a variable not found, a list column) becomes an rff_error
# naming `data` and keeping R's words, which name the variable.
read_frame <- function(mf_call, env) {
  tryCatch(eval(mf_call, env), error = function(e) {
    rff_abort("data", paste0("the model frame of `formula` and `data` could not be built: ",
                             conditionMessage(e)))
  })
}

# The predictor columns of a training frame in the types the model matrix
# takes: Date and date-times (POSIXt) as numbers (days and seconds since
# 1970-01-01, with a message); character and logical left to
# model.matrix() (a factor of the values seen, and the 0/1 dummy `xTRUE`
# of levels FALSE and TRUE, which a constant logical column cannot make
# fail); list, complex and non-numeric matrix columns are refused naming
# the column. Gives the frame and `coerced`, the kind of each converted
# column ("Date", "POSIXt"; NULL when none), which predict() applies to
# new data.
coerce_frame <- function(mf, mt) {
  coerced <- character()
  for (v in frame_predictors(mf, mt)) {
    col <- mf[[v]]
    kind <- column_kind(col)
    if (kind == "bad") {
      rff_abort("data", sprintf(
        "the column `%s` is %s; the predictors must be numeric, logical, factors, character, dates or date-times",
        v, describe_column(col)))
    }
    if (kind %in% c("Date", "POSIXt")) {
      mf[[v]] <- coerce_column(col, kind)
      coerced[[v]] <- kind
    }
  }
  times <- names(coerced)
  if (length(times)) {
    rff_inform("rff_time_columns", sprintf(
      "%s %s enter%s the model as numbers (days for a Date, seconds for a date-time, since 1970-01-01)",
      if (length(times) > 1L) "the columns" else "the column",
      paste0("`", times, "`", collapse = ", "), if (length(times) > 1L) "" else "s"),
      columns = times)
  }
  list(frame = mf, coerced = if (length(coerced)) coerced else NULL)
}

column_kind <- function(col) {
  if (is.matrix(col) && !is.numeric(col) && !is.logical(col)) return("bad")
  if (is.factor(col) || is.character(col)) return("factor")
  if (inherits(col, "Date")) return("Date")
  if (inherits(col, "POSIXt")) return("POSIXt")
  if (is.list(col) || is.complex(col) || is.raw(col)) return("bad")
  if (is.logical(col)) return("logical")
  if (is.numeric(col)) return("numeric")
  "bad"
}

describe_column <- function(col) {
  if (is.data.frame(col)) return("a data frame")
  if (is.list(col)) return("a list")
  if (is.matrix(col)) return(sprintf("a %s matrix", typeof(col)))
  sprintf("of type %s", typeof(col))
}

coerce_column <- function(col, kind) {
  switch(kind,
         Date = as.double(unclass(as.Date(col))),
         POSIXt = as.double(unclass(as.POSIXct(col))))
}

# The columns of new data converted as in training (`coerced`). A column
# that cannot be read as its training type is an rff_error naming it.
coerce_newdata <- function(mf, coerced) {
  for (v in intersect(names(coerced), names(mf))) {
    kind <- coerced[[v]]
    col <- mf[[v]]
    out <- tryCatch(suppressWarnings(coerce_column(col, kind)), error = function(e) NULL)
    if (is.null(out) || sum(is.na(out)) > sum(is.na(col))) {
      rff_abort("newdata", sprintf("the column `%s` of `newdata` must be %s, as in the training data",
                                   v, if (kind == "Date") "a Date" else "a date-time"))
    }
    mf[[v]] <- out
  }
  mf
}

# Factors (and character columns) with fewer than two levels among the rows
# fitted cannot vary, so the terms they enter are dropped from the model,
# with a message of class "rff_dropped_terms" naming them; the fit goes on,
# and predict() no longer reads the column. Gives the frame and terms of
# the model that remains.
drop_single_levels <- function(mf, mt) {
  vars <- frame_predictors(mf, mt)
  one <- vapply(vars, function(v) {
    col <- mf[[v]]
    (is.factor(col) || is.character(col)) && length(unique(col[!is.na(col)])) < 2L
  }, logical(1))
  single <- vars[one]
  if (!length(single)) return(list(frame = mf, terms = mt))
  # (the rows of "factors" are the variables in the frame's order, written
  # as a formula writes them)
  fac <- attr(mt, "factors")
  labels <- attr(mt, "term.labels")
  gone <- colSums(fac[match(single, names(mf)), , drop = FALSE] != 0) > 0
  seen <- vapply(single, function(v) {
    u <- unique(as.character(mf[[v]][!is.na(mf[[v]])]))
    if (length(u)) sprintf("only \"%s\"", u) else "no value"
  }, character(1))
  msg <- sprintf("%s %s: %s dropped from the model (a factor needs two levels in the rows fitted)",
                 if (length(single) > 1L) "the factors" else "the factor",
                 paste0("`", single, "` (", seen, ")", collapse = ", "),
                 if (sum(gone) > 1L) paste0("the terms ", paste(labels[gone], collapse = ", "), " are")
                 else paste0("the term ", labels[gone], " is"))
  if (all(gone)) {
    rff_abort("formula", sprintf(
      "`formula` has no predictor left: %s %s a single level in the rows fitted, and a factor needs two",
      paste0("`", single, "` (", seen, ")", collapse = ", "), if (length(single) > 1L) "have" else "has"))
  }
  vars_all <- vapply(as.list(attr(mt, "variables"))[-1L], deparse_var, character(1),
                     backtick = TRUE)
  off <- vars_all[attr(mt, "offset")]
  lhs <- if (attr(mt, "response") > 0L) vars_all[attr(mt, "response")] else NULL
  rhs <- c(labels[!gone], off)
  f <- stats::as.formula(paste(c(lhs, "~", paste(rhs, collapse = " + "),
                                 if (attr(mt, "intercept") == 0L) "- 1"), collapse = " "),
                         env = environment(mt))
  mt2 <- stats::terms(f)
  kept <- vapply(as.list(attr(mt2, "variables"))[-1L], deparse_var, character(1))
  extra <- names(mf)[startsWith(names(mf), "(")]
  mf2 <- mf[c(kept, extra)]
  attr(mf2, "terms") <- mt2
  attr(mf2, "na.action") <- attr(mf, "na.action")
  rff_inform("rff_dropped_terms", msg, factors = single, terms = labels[gone])
  list(frame = mf2, terms = mt2)
}

# A variable of a formula as text: with `backtick`, as a formula writes it
# (`my var`); else as model.frame() names its column (backticks only
# inside calls).
deparse_var <- function(e, backtick = FALSE) {
  paste(deparse(e, width.cutoff = 500L, backtick = backtick || (!is.symbol(e) && is.language(e))),
        collapse = " ")
}

# The level given to values of new data that no training row had: the
# model matrix codes it with the contrasts of the training levels extended
# by one row equidistant from every level's coding (with
# contr.treatment, 1/2 on each dummy), or, where a term codes the factor
# by indicators of all its levels, with all those indicators zero.
unseen_level <- ".rff_unseen_level."

# The factors of a new model frame on their training levels (`xlevels`),
# the values no training row had on the unseen level.
# Gives the frame, the contrasts for model.matrix(), what was `found` (each
# factor's new levels and their number of rows) and the `rows` that had one.
newdata_levels <- function(mf, xlevels, contrasts) {
  found <- list()
  rows <- logical(nrow(mf))
  for (v in intersect(names(xlevels), names(mf))) {
    lv <- xlevels[[v]]
    col <- as.character(mf[[v]])
    new <- !is.na(col) & !(col %in% lv)
    if (any(new)) {
      found[[v]] <- list(levels = unique(col[new]), rows = sum(new))
      rows <- rows | new
      col[new] <- unseen_level
      contrasts[[v]] <- unseen_contrasts(contrasts[[v]], lv)
      mf[[v]] <- factor(col, levels = c(lv, unseen_level))
    } else {
      mf[[v]] <- factor(col, levels = lv)
    }
  }
  list(frame = mf, contrasts = contrasts, found = found, rows = rows)
}

# What predict() does with the rows whose factors had levels no training
# row had (`found` by newdata_levels() and newdata_scores()), by
# `new_levels`: "none" (coded as none of the known levels) and "na" (the
# rows predicted NA) with one warning of class "rff_new_levels", "error"
# an rff_error.
new_levels_signal <- function(found, new_levels, n_rows) {
  what <- vapply(names(found), function(v) {
    lv <- found[[v]]$levels
    sprintf("`%s` has %s not seen in training (%s%s, in %d row%s)", v,
            if (length(lv) > 1L) sprintf("%d levels", length(lv)) else "a level",
            paste0("\"", utils::head(lv, 5L), "\"", collapse = ", "),
            if (length(lv) > 5L) ", ..." else "", found[[v]]$rows,
            if (found[[v]]$rows > 1L) "s" else "")
  }, character(1))
  what <- paste(what, collapse = "; ")
  if (new_levels == "error") {
    rff_abort("newdata", paste0("`newdata` does not fit the model: ", what,
                                " (new_levels = \"none\" predicts them as none of the known levels)"))
  }
  how <- if (new_levels == "none") "predicted as none of the known levels" else "predicted NA"
  warning(structure(class = c("rff_new_levels", "rff_warning", "warning", "condition"), list(
    message = sprintf("`newdata`: %s; %s (`new_levels`: \"none\", \"na\" or \"error\")",
                      what, if (n_rows > 1L) paste("those rows", how) else paste("that row", how)),
    call = NULL, levels = lapply(found, `[[`, "levels"), rows = n_rows)))
}

# The contrast matrix of the training levels `lv` (from a contrast's name,
# a function or a matrix, as model.matrix() recorded it) with a last row
# for the unseen level: the point of the levels' affine hull at equal
# distance from every level's row (its circumcentre).
unseen_contrasts <- function(spec, lv) {
  k <- length(lv)
  C <- if (is.matrix(spec)) spec else {
    fun <- if (is.null(spec)) getOption("contrasts")[[1L]] else spec
    if (is.character(fun)) fun <- get(fun, mode = "function")
    fun(lv)
  }
  C <- as.matrix(C)
  rownames(C) <- lv
  Q <- C[-1L, , drop = FALSE] - rep(C[1L, ], each = k - 1L)
  rhs <- rowSums(Q^2) / 2
  a <- tryCatch(solve(tcrossprod(Q), rhs), error = function(e) rep(1 / k, k - 1L))
  centre <- C[1L, ] + drop(crossprod(Q, a))
  out <- rbind(C, centre)
  rownames(out) <- c(lv, unseen_level)
  out
}

# The ordered factors ranked in training (`levels`) in a new model frame:
# the rank of each value among the training levels; a value not among
# them (`found`, in `rows`) gets the middle rank (k + 1) / 2, at equal
# distance from the first and the last level.
newdata_scores <- function(mf, levels) {
  found <- list()
  rows <- logical(nrow(mf))
  for (v in names(levels)) {
    col <- mf[[v]]
    codes <- as.double(match(as.character(col), levels[[v]]))
    new <- !is.na(col) & is.na(codes)
    if (any(new)) {
      found[[v]] <- list(levels = unique(as.character(col)[new]), rows = sum(new))
      rows <- rows | new
      codes[new] <- (length(levels[[v]]) + 1) / 2
    }
    mf[[v]] <- codes
  }
  list(frame = mf, found = found, rows = rows)
}
