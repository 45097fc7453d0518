# Layer 5 (the model pipeline): what is the family's own in a GLM fit: the
# response coded for it, the deviance of each row, classes, and the
# cross-validation measures.

# The response coded for the family: y (0/1 doubles, counts, or integer
# class codes 1..K), K (coefficient columns), the levels and the family.
glm_response <- function(y, family, n) {
  given <- !identical(family, c("binomial", "multinomial", "poisson"))
  if (given) family <- check_string(family, "family", c("binomial", "multinomial", "poisson"))
  if (is.data.frame(y) || (is.matrix(y) && ncol(y) != 1L)) {
    rff_abort("y", sprintf("`y` must be one response (a vector or factor), got %s",
                           if (is.data.frame(y)) "a data frame" else
                             sprintf("a matrix with %d columns", ncol(y))))
  }
  if (is.matrix(y)) y <- y[, 1L]
  if (length(y) != n) {
    rff_abort("y", sprintf("`y` must have one value per row of `x` (%d), got %d", n, length(y)))
  }
  if (anyNA(y)) rff_abort("y", sprintf("`y` must not contain missing values (%d found)", sum(is.na(y))))
  if (is.character(y)) y <- factor(y)
  if (is.logical(y)) y <- factor(y, levels = c(FALSE, TRUE))
  if (is.numeric(y) && !(given && family == "poisson")) {
    if (!all(is.finite(y))) rff_abort("y", "`y` must be finite")
    if (all(y %in% c(0, 1))) {
      y <- factor(y, levels = c(0, 1))
    } else if (!given && all(y >= 0) && all(y == round(y))) {
      rff_abort("y", "`y` holds counts: give `family = \"poisson\"` (or a factor for classes)")
    } else {
      rff_abort("y", sprintf(paste0(
        "`y` must be a factor, logical, 0/1 or (for family \"poisson\") counts, got %s; ",
        "for a numeric response use rff_ridge()"), show_value(y)))
    }
  }
  if (is.factor(y)) {
    if (given && family == "poisson") {
      rff_abort("y", "family \"poisson\" needs non-negative integer counts, got a factor")
    }
    y <- droplevels(y)
    lev <- levels(y)
    if (length(lev) < 2L) {
      rff_abort("y", sprintf("`y` has one class (\"%s\"): a classifier needs at least two",
                             lev[1L]))
    }
    if (!given) family <- if (length(lev) == 2L) "binomial" else "multinomial"
    if (family == "binomial") {
      if (length(lev) > 2L) {
        rff_abort("family", sprintf(
          "family \"binomial\" needs two classes, `y` has %d; use family \"multinomial\"",
          length(lev)))
      }
      return(list(y = as.double(as.integer(y) - 1L), K = 1L, levels = lev,
                  family = family))
    }
    return(list(y = as.integer(y), K = length(lev), levels = lev, family = family))
  }
  if (!is.numeric(y)) {
    rff_abort("y", sprintf("`y` must be a factor, logical or numeric, got %s", show_value(y)))
  }
  if (!all(is.finite(y)) || any(y < 0) || any(y != round(y))) {
    rff_abort("y", "family \"poisson\" needs non-negative integer counts in `y`")
  }
  if (!any(y > 0)) rff_abort("y", "`y` has no positive count: the Poisson fit has no maximum")
  # exp(eta) of such counts overflows a double's range in the solver's
  # steps (a count of 1e300 ran 500 iterations to a convergence warning)
  if (max(y) > poisson_max_count) {
    rff_abort("y", sprintf(paste0(
      "`y` has a count of %s: family \"poisson\" takes counts up to %s (their logarithm ",
      "is the linear predictor; rescale them, or model log(y) with rff_ridge())"),
      format(max(y), digits = 3), format(poisson_max_count)))
  }
  list(y = as.double(y), K = 1L, levels = NULL, family = "poisson")
}

# The loss l_i of each row at eta (n x K) and its derivative dl_i / deta
# (n x K), as the pass in C (src/glm.c) computes them: log(1 + e^eta) - y eta
# (binomial), e^eta - y eta (Poisson), log(sum_k e^eta_k) - eta_y
# (multinomial).
glm_row_loss <- function(family, y, eta) {
  if (family == "binomial") {
    e <- eta[, 1L]
    return(list(loss = log1pexp(e) - y * e, grad = matrix(stats::plogis(e) - y)))
  }
  if (family == "poisson") {
    e <- eta[, 1L]
    mu <- exp(e)
    return(list(loss = mu - y * e, grad = matrix(mu - y)))
  }
  i <- cbind(seq_len(nrow(eta)), y)
  m <- eta[, 1L]
  for (k in seq_len(ncol(eta))[-1L]) m <- pmax(m, eta[, k])
  P <- exp(eta - m)
  s <- rowSums(P)
  P <- P / s
  P[i] <- P[i] - 1
  list(loss = m + log(s) - eta[i], grad = P)
}

# The deviance contribution 2 (l_i - l_i(saturated)) of each row at eta
# (n x K), for the response y of the problem.
glm_row_deviance <- function(family, y, eta) {
  l <- glm_row_loss(family, y, eta)$loss
  2 * (if (family == "poisson") l - poisson_saturated(y) else l)
}

# The Poisson loss mu - y log(mu) at the saturated model mu = y.
# The largest count a Poisson fit takes.
poisson_max_count <- 1e150

poisson_saturated <- function(y) ifelse(y > 0, y - y * log(y), 0)

# sum w_i l_i at the saturated model (0 for 0/1 and class responses).
saturated_loss <- function(family, y, w) {
  if (family != "poisson") return(0)
  sum(w * poisson_saturated(y))
}

# What the Poisson log-likelihood lacks beside -deviance / 2 (0 for the
# other families): the loglik is -deviance / 2 - this, the sum of w (y -
# y log y + log y!), the loss at the saturated model plus log y!.
saturated_loss_ll <- function(family, y, w) {
  if (family != "poisson") return(0)
  sum(w * (poisson_saturated(y) + lgamma(y + 1)))
}

# The predicted class (an integer code 1..K) from eta.
glm_class <- function(family, eta) {
  if (family == "multinomial") return(max.col(eta, ties.method = "first"))
  as.integer(eta[, 1L] > 0) + 1L
}

# Area under the ROC curve of scores s for 0/1 labels y with weights w (the
# weighted Mann-Whitney statistic; ties count one half).
weighted_auc <- function(y, s, w) {
  pos <- y == 1
  if (!any(pos & w > 0) || !any(!pos & w > 0)) return(NA_real_)
  o <- order(s)
  s <- s[o]; y <- y[o]; w <- w[o]
  grp <- match(s, unique(s))
  wp <- tapply(w * (y == 1), grp, sum)
  wn <- tapply(w * (y == 0), grp, sum)
  below <- cumsum(wn) - wn
  sum(wp * (below + wn / 2)) / (sum(wp) * sum(wn))
}

# The measures of cross-validation each family takes; the first is the
# default.
glm_measures <- list(binomial = c("deviance", "class", "auc"),
                     multinomial = c("deviance", "class"),
                     poisson = c("deviance", "mse"))

# The held-out measure of rows `rows` of a fit made without them, from its
# linear predictor `eta` (all rows): the weighted mean of the rows' values
# (glm_row_values()), or the AUC.
glm_measure <- function(prob, eta, rows, measure) {
  y <- prob$y[rows]
  w <- prob$w[rows]
  e <- eta[rows, , drop = FALSE]
  if (measure == "auc") return(weighted_auc(y, e[, 1L], w))
  sum(w * glm_row_values(prob$family, y, e, measure)) / sum(w)
}

# The standard error of glm_measure() as the weighted mean of the held-out
# rows' values, sqrt(n / (n - 1) sum w^2 (v - m)^2) / sum w over the n rows
# of positive weight (sd(v) / sqrt(n) for equal weights); NA for the AUC
# and for fewer than two rows.
glm_measure_se <- function(prob, eta, rows, measure) {
  w <- prob$w[rows]
  n <- sum(w > 0)
  if (measure == "auc" || n < 2L) return(NA_real_)
  v <- glm_row_values(prob$family, prob$y[rows], eta[rows, , drop = FALSE], measure)
  m <- sum(w * v) / sum(w)
  sqrt(n / (n - 1) * sum(w^2 * (v - m)^2)) / sum(w)
}

# Each row's value of a measure other than the AUC, from its eta.
glm_row_values <- function(family, y, e, measure) {
  switch(measure,
         deviance = glm_row_deviance(family, y, e),
         class = {
           truth <- if (family == "binomial") y + 1L else y
           (glm_class(family, e) != truth) + 0
         },
         mse = (y - exp(e[, 1L]))^2)
}

# The index of the best lambda by a CV measure (AUC: the largest).
best_by_measure <- function(cvm, measure) {
  v <- if (measure == "auc") -cvm else cvm
  i <- which.min(v)
  if (length(i) == 0L) 1L else i
}
