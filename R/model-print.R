# Layer 5 (the model pipeline): the pieces every fit prints.

# Numbers printed in one style: significant digits, no scientific notation
# for ordinary magnitudes.
fmt <- function(v, digits) format(signif(v, digits), digits = digits, big.mark = ",")

# The first lines a fit prints: what it is, the call, the map.
cat_fit_header <- function(title, call, map) {
  cat(title, "\n", sep = "")
  if (!is.null(call)) cat("Call: ", paste(deparse(call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("  %s\n", map_line(map)))
}

# The lines about the modelling settings a fit prints: standardization,
# the lengthscale search, offset.
cat_model_lines <- function(x, digits) {
  if (!is.null(x$standardize)) {
    cat(sprintf("  inputs standardized (%d column%s centred and scaled to unit variance)\n",
                length(x$standardize$scale), if (length(x$standardize$scale) == 1L) "" else "s"))
  }
  s <- x$lengthscale_search
  if (!is.null(s)) {
    # a cross-validation's ARD candidate is the last row, of multiple NA
    cand <- trimws(fmt(s$table$lengthscale, digits))
    iso <- if (is.null(s$ard)) rep(TRUE, length(cand)) else !is.na(s$table$multiple)
    cand[!iso] <- "ARD"
    cat(sprintf("  lengthscale %s chosen by %s among %s%s\n",
                cand[s$best], s$criterion, paste(cand, collapse = ", "),
                if (is.null(s$median)) "" else sprintf(
                  " (median heuristic %s x %s)", fmt(s$median, digits),
                  paste(format(round(s$table$multiple[iso], 2)), collapse = ", "))))
    if (!is.null(s$features) && s$features < x$map$D) {
      cat(sprintf("  candidates scored on the first %d of the %d features\n", s$features, x$map$D))
    }
    fc <- s$features_check
    if (length(fc) == 2L) {
      kept <- isTRUE(s$D == s$features)
      cat(sprintf("  %s %s features (%s %s on %s, %s on %s)\n",
                  if (kept) "kept the" else "refitted with all features: the winner's error fell on",
                  if (kept) names(fc)[2L] else paste("its first", names(fc)[2L]),
                  s$criterion, fmt(fc[[1L]], digits), names(fc)[1L], fmt(fc[[2L]], digits),
                  names(fc)[2L]))
    }
  }
  a <- s$ard
  if (!is.null(a)) {
    z <- if (is.null(a$z) || is.na(a$z)) "" else sprintf(", paired z %s", fmt(a$z, 3L))
    verdict <- if (a$kept) "kept" else if (z == "") "not kept, no better than isotropic" else
      sprintf("not kept, not %s standard errors better than isotropic", ard_margin_se)
    cat(sprintf("  ARD (one lengthscale per column, by the log evidence on %d rows): %s (%s %s, isotropic %s%s)\n",
                a$rows, verdict, s$criterion, fmt(a$score, digits),
                fmt(a$score_isotropic, digits), z))
  }
  if (isTRUE(x$has_offset)) cat("  with an offset\n")
}

# The relevance of each input (rff_relevance()), most relevant first, when
# the columns have lengthscales of their own.
cat_relevance <- function(rel, digits) {
  if (is.null(rel) || length(unique(rel)) < 2L) return(invisible())
  cat("\nRelevance (1 / lengthscale, standardized inputs), most relevant first:\n")
  print(signif(sort(rel, decreasing = TRUE), digits))
}

# "lambda_best = 0.01 (GCV over 50 values)" or "lambda = 0.01 (given)".
lambda_line <- function(x, digits) {
  L <- length(x$lambda)
  if (L == 1L) return(sprintf("lambda = %s (given)", fmt(x$lambda, digits)))
  crit <- if (is.null(x$criterion)) "GCV" else x$criterion
  sprintf("lambda_best = %s (%s over %d %svalues)", fmt(x$lambda_best, digits), crit, L,
          if (isTRUE(x$lambda_given)) "given " else "")
}

# The label of a cross-validation measure.
measure_label <- function(measure) {
  switch(measure, mse = "mean squared error", deviance = "deviance per row",
         class = "misclassification rate", auc = "AUC")
}

glm_family_label <- function(family) {
  switch(family, binomial = "logistic", multinomial = "multinomial", poisson = "Poisson")
}
