# Layer 5 (the model pipeline): the check of a fit before it predicts or is
# summarized. A fit read from a file may have been altered: every field a
# prediction reads must be there under its exact name and be of the right
# kind, and the class must be that of the fields (a GLM's family, levels
# and coefficient shape agree), so that no damaged fit predicts silently.

# The fields a fit holds even when they are NULL (no standardization, a fit
# from a matrix, no column names): without them a prediction would silently
# skip a step. keep_fit_fields() gives them to a new fit.
fit_nullable_fields <- c("standardize", "terms", "xnames")
# ... and for a fit made with a formula, what rebuilds the model matrix
formula_fields <- c("xlevels", "contrasts", "offset_arg", "ordered")
glm_families <- c("binomial", "multinomial", "poisson")

keep_fit_fields <- function(fit) {
  need <- c(fit_nullable_fields, if (!is.null(fit[["terms", exact = TRUE]])) formula_fields)
  for (f in setdiff(need, names(fit))) fit[f] <- list(NULL)
  # (a fit from statistics has no offset)
  if (is.null(fit[["has_offset", exact = TRUE]])) fit$has_offset <- FALSE
  fit
}

# `object` checked as a fit of its class (`arg`: the argument it came in).
# Fits made before the parent class "rff_fit" carry fewer fields; their
# fields are checked where present.
check_fit <- function(object, arg = "object") {
  damaged <- function(what) rff_abort(arg, sprintf("`%s` is damaged: %s", arg, what))
  if (!is.list(object)) damaged(sprintf("it must be a fit (a list), got %s", show_value(object)))
  field <- function(f) object[[f, exact = TRUE]]
  nm <- names(object)
  glm <- inherits(object, "rff_glm")
  if (glm && !"family" %in% nm) {
    damaged("it is classed \"rff_glm\" but holds no `family`: it is not a GLM fit")
  }
  if (!glm && "family" %in% nm) {
    damaged(sprintf("it holds the `family` of a GLM but is classed \"%s\"", class(object)[1L]))
  }
  if (inherits(object, "rff_fit")) {
    need <- c("map", "lambda", "coefficients", "intercept", "best", "has_offset",
              fit_nullable_fields, if (!is.null(field("terms"))) formula_fields,
              if (glm) c("family", "levels", "has_intercept"))
    miss <- setdiff(need, nm)
    if (length(miss)) {
      damaged(sprintf("it lacks the field%s %s that predict() reads", if (length(miss) > 1L) "s" else "",
                      paste0("`", miss, "`", collapse = ", ")))
    }
    ho <- field("has_offset")
    if (!is.logical(ho) || length(ho) != 1L || is.na(ho)) damaged("`has_offset` must be TRUE or FALSE")
    tt <- field("terms")
    if (!is.null(tt) && !inherits(tt, "terms")) damaged("`terms` must be the terms of its formula")
    if (!is.null(tt) && !is.list(field("xlevels"))) damaged("`xlevels` must be a list of factor levels")
    if (!glm && isTRUE(field("weighted")) && "weight_scale" %in% nm &&
        (!is_number(field("weight_scale")) || length(field("weight_scale")) != 1L ||
         !is.finite(field("weight_scale")) || field("weight_scale") <= 0)) {
      damaged("`weight_scale` must be one positive number")
    }
  }
  tryCatch(check_map(field("map"), "map"), rff_error = function(e) {
    damaged(sprintf("its map: %s", conditionMessage(e)))
  })
  map <- field("map")
  D <- map$D
  lambda <- field("lambda")
  L <- length(lambda)
  if (!is_number(lambda) || L == 0L || any(!is.finite(lambda)) || any(lambda < 0)) {
    damaged("`lambda` must be non-negative finite numbers")
  }
  B <- field("coefficients")
  if (!is.double(B) || !length(dim(B)) %in% 2:3 || dim(B)[1L] != D ||
      dim(B)[length(dim(B))] != L || any(!is.finite(B))) {
    damaged(sprintf("`coefficients` must be finite, with %d rows and %d lambda values", D, L))
  }
  a0 <- field("intercept")
  if (!is_number(a0) || length(a0) != length(B) / D || any(!is.finite(a0))) {
    damaged(sprintf("`intercept` must be %d finite numbers", length(B) / D))
  }
  best <- field("best")
  if (!is_number(best) || length(best) != 1L || !isTRUE(best %in% seq_len(L))) {
    damaged(sprintf("`best` must be an index of the %d lambda values", L))
  }
  if (glm) check_glm_fields(object, B, damaged)
  std <- field("standardize")
  if (!is.null(std)) {
    d <- map$d
    if (!is.list(std) || !is_number(std$center) || !is_number(std$scale) ||
        length(std$center) != d || length(std$scale) != d ||
        any(!is.finite(std$center)) || any(!is.finite(std$scale)) || any(std$scale <= 0)) {
      damaged(sprintf("`standardize` must hold %d finite centers and positive scales", d))
    }
  }
  check_fit_normal(field("normal"), D, damaged)
  invisible(object)
}

# A GLM's family, its levels and the shape of its coefficients agree: one
# column of coefficients for "binomial" (two levels) and "poisson" (none), a
# D x K x L array for "multinomial" with its K >= 3 levels.
check_glm_fields <- function(object, B, damaged) {
  fam <- object[["family", exact = TRUE]]
  if (!is.character(fam) || length(fam) != 1L || !fam %in% glm_families) {
    damaged(sprintf("`family` must be one of %s, got %s",
                    paste0("\"", glm_families, "\"", collapse = ", "), show_value(fam)))
  }
  lev <- object[["levels", exact = TRUE]]
  K <- if (length(dim(B)) == 3L) dim(B)[2L] else 1L
  want <- switch(fam, binomial = 2L, multinomial = K, poisson = 0L)
  if (fam == "multinomial" && (length(dim(B)) != 3L || K < 3L)) {
    damaged("a multinomial fit's `coefficients` must be a D x K x lambda array of K >= 3 classes")
  }
  if (fam != "multinomial" && length(dim(B)) == 3L && K != 1L) {
    damaged(sprintf("a %s fit has one column of coefficients per lambda, got %d", fam, K))
  }
  if (fam == "poisson") {
    if (!is.null(lev)) damaged("a Poisson fit has no `levels`")
  } else if (!is.character(lev) || length(lev) != want || anyNA(lev) || anyDuplicated(lev)) {
    damaged(sprintf("a %s fit's `levels` must be %d distinct class names, got %s",
                    fam, want, show_value(lev)))
  }
  hi <- object[["has_intercept", exact = TRUE]]
  if ("has_intercept" %in% names(object) && (!is.logical(hi) || length(hi) != 1L || is.na(hi))) {
    damaged("`has_intercept` must be TRUE or FALSE")
  }
}

# The normal equations a ridge fit keeps (to solve at other lambdas and for
# standard errors): a finite D x D matrix and D rows of right-hand sides, or
# their thin eigenproblem.
check_fit_normal <- function(sys, D, damaged) {
  if (!is.null(sys$A) && (!is.double(sys$A) || !identical(dim(sys$A), c(D, D)) ||
                          any(!is.finite(sys$A)) || !is.double(sys$b) ||
                          NROW(sys$b) != D || any(!is.finite(sys$b)))) {
    damaged(sprintf("`normal` must hold a finite %d x %d matrix `A` and %d rows `b`", D, D, D))
  }
  if (!is.null(sys) && scored_system(sys)) {
    damaged("`normal` must hold the matrix `A` or its thin eigenproblem `thin`")
  }
  th <- sys$thin
  finite_matrix <- function(a) is.double(a) && is.matrix(a) && all(is.finite(a))
  if (!is.null(th) && (!is.list(th) || !finite_matrix(th$left) || !finite_matrix(th$features) ||
                       ncol(th$features) != D || nrow(th$features) != nrow(th$left) ||
                       !is.double(th$values) || length(th$values) != ncol(th$left) ||
                       any(!is.finite(th$values)) || any(th$values <= 0) ||
                       !is.double(sys$b) || NROW(sys$b) != D || any(!is.finite(sys$b)))) {
    damaged(sprintf(paste0("`normal$thin` must hold finite `features` (n x %d), their left ",
                           "vectors `left` and positive `values`"), D))
  }
}
