# The default D on 401 to 2,000 rows: does the search settle on its 400
# scored features only where they do as well as the default D? For each
# data set, in one R process: the default fit (lengthscale "auto", D =
# NULL: the winner kept on 400 features when its first 200 score within 1%
# of them, else refitted with default_D(n) features), then the same call
# with D = default_D(n) given (always refitted). Both from the same seed,
# so the search is the same; the table gives the check's two scores, the
# decision, each fit's elapsed seconds (the median of 3 runs, the two calls
# alternating) and its test RMSE or accuracy.
# Regression (rff_ridge): quakes, 1,500 rows of ggplot2::diamonds
# (log(price) ~ .), mlbench.friedman1/2/3 (1,000 rows), ChickWeight,
# ggplot2::economics. Classification (rff_glm): mlbench's Vehicle,
# PimaIndiansDiabetes, BreastCancer, and spirals, twonorm, waveform.
# Splits 75/25 from set.seed(20261201).
#
# Run from the package root after `make install` (rff in .build/lib):
#   Rscript bench/features.R            # writes bench/RESULTS-features.md
# Options: --out FILE. Runs under the BLAS of its process.
lib <- file.path(getwd(), ".build", "lib")
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))
args <- commandArgs(trailingOnly = TRUE)
out <- if ("--out" %in% args) args[match("--out", args) + 1L] else "bench/RESULTS-features.md"
seed <- 20261201L

source(file.path("bench", "data-sets.R"))
sim <- function(f, n, ...) {
  if (!requireNamespace("mlbench", quietly = TRUE)) return(NULL)
  set.seed(seed)
  s <- f(n, ...)
  d <- data.frame(s$x)
  d$y <- if (is.null(s$classes)) s$y else s$classes
  split(d)
}
sets <- list(
  list(name = "quakes", formula = mag ~ ., data = function() split(quakes)),
  list(name = "ggplot2::diamonds, 1,500 rows", formula = log(price) ~ .,
       data = function() {
         d <- from("ggplot2", "diamonds")
         if (is.null(d)) return(NULL)
         set.seed(seed)
         split(as.data.frame(d)[sample(nrow(d), 1500L), ])
       }),
  list(name = "mlbench.friedman1", formula = y ~ .,
       data = function() sim(mlbench::mlbench.friedman1, 1000L, sd = 1)),
  list(name = "mlbench.friedman2", formula = y ~ .,
       data = function() sim(mlbench::mlbench.friedman2, 1000L, sd = 125)),
  list(name = "mlbench.friedman3", formula = y ~ .,
       data = function() sim(mlbench::mlbench.friedman3, 1000L, sd = 0.1)),
  list(name = "ChickWeight", formula = weight ~ .,
       data = function() {
         d <- as.data.frame(ChickWeight)
         d$Chick <- factor(as.character(d$Chick))
         split(d)
       }),
  list(name = "ggplot2::economics", formula = unemploy ~ .,
       data = function() {
         d <- from("ggplot2", "economics")
         if (is.null(d)) return(NULL)
         d <- as.data.frame(d)
         d$date <- as.numeric(d$date)
         split(d)
       }),
  list(name = "mlbench::Vehicle", formula = Class ~ .,
       data = function() if (!is.null(d <- from("mlbench", "Vehicle"))) split(d)),
  list(name = "mlbench::PimaIndiansDiabetes", formula = diabetes ~ .,
       data = function() if (!is.null(d <- from("mlbench", "PimaIndiansDiabetes"))) split(d)),
  list(name = "mlbench::BreastCancer", formula = Class ~ .,
       data = function() {
         d <- from("mlbench", "BreastCancer")
         if (is.null(d)) return(NULL)
         d <- stats::na.omit(d)
         d$Id <- NULL
         d[] <- lapply(d, function(v) if (is.ordered(v)) as.numeric(v) else v)
         split(d)
       }),
  list(name = "mlbench.spirals", formula = y ~ .,
       data = function() sim(mlbench::mlbench.spirals, 800L, cycles = 1.5, sd = 0.08)),
  list(name = "mlbench.twonorm", formula = y ~ .,
       data = function() sim(mlbench::mlbench.twonorm, 800L, d = 10)),
  list(name = "mlbench.waveform", formula = y ~ .,
       data = function() sim(mlbench::mlbench.waveform, 900L)))

# a first fit, untimed: the first call of a session pays for loading code
invisible(rff_ridge(mpg ~ ., mtcars, progress = FALSE))

fmt <- function(x, digits = 2) ifelse(is.na(x), "", formatC(x, format = "f", digits = digits))
rows <- list()
for (s in sets) {
  d <- s$data()
  if (is.null(d)) next
  y <- model.response(model.frame(s$formula, d$test))
  classify <- is.factor(y)
  fit_one <- function(D) {
    set.seed(seed)
    t <- system.time(f <- if (classify) {
      suppressWarnings(rff_glm(s$formula, d$train, D = D, progress = FALSE))
    } else rff_ridge(s$formula, d$train, D = D, progress = FALSE))[["elapsed"]]
    pred <- if (classify) predict(f, d$test, type = "class") else predict(f, d$test)
    m <- if (classify) 100 * mean(as.character(pred) == as.character(y)) else
      sqrt(mean((as.numeric(pred) - y)^2))
    list(fit = f, time = t, measure = m)
  }
  # alternating runs, each from the same seed: the median of 3 of each
  runs <- lapply(1:3, function(i) list(auto = fit_one(NULL),
                                       full = fit_one(rff:::default_D(nrow(d$train)))))
  auto <- runs[[1L]]$auto
  full <- runs[[1L]]$full
  auto$time <- stats::median(vapply(runs, function(r) r$auto$time, 0))
  full$time <- stats::median(vapply(runs, function(r) r$full$time, 0))
  fc <- auto$fit$lengthscale_search$features_check
  rows[[length(rows) + 1L]] <- data.frame(
    data = s$name, fit = if (classify) "rff_glm" else "rff_ridge", rows = nrow(d$train),
    score_200 = if (length(fc)) signif(fc[[1L]], 4) else NA,
    score_400 = if (length(fc)) signif(fc[[2L]], 4) else NA,
    ratio = if (length(fc)) fc[[1L]] / fc[[2L]] else NA,
    D = auto$fit$map$D, s_default = auto$time, s_full = full$time,
    measure = if (classify) "accuracy %" else "RMSE",
    default = auto$measure, full = full$measure, full_D = full$fit$map$D)
  cat(s$name, "done\n")
}
tab <- do.call(rbind, rows)
si <- sessionInfo()
lines <- c(
  "## The default D on 401 to 2,000 rows (bench/features.R)", "",
  sprintf("Command: `Rscript bench/features.R` (after `make install`). %s; BLAS %s; rff %s; %s UTC; load average before the run %s.",
          si$R.version$version.string, si$BLAS, packageVersion("rff"),
          format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"),
          paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")),
  "",
  paste("Each data set: the default fit (`D = NULL`, lengthscale \"auto\": the search's winner",
        "on its first 400 features is kept when its first 200 score within 1% of them, else",
        "refitted with default_D(n) features), then the same call with `D = default_D(n)` given.",
        "Scores: the search's criterion (ridge LOO MSE; for rff_glm, of the class indicators).",
        "Times: elapsed seconds of the fit, the median of 3 runs of each, the two calls alternating",
        "(after one untimed fit). Splits 75/25 from set.seed(20261201)."),
  "",
  "| data | fit | train rows | score, 200 features | score, 400 | ratio | D chosen | s, default | s, D given | measure | default | D given | D given is |",
  "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
for (i in seq_len(nrow(tab))) {
  r <- tab[i, ]
  lines <- c(lines, sprintf("| %s | %s | %d | %s | %s | %s | %d | %s | %s | %s | %s | %s | %d |",
                            r$data, r$fit, r$rows, format(r$score_200), format(r$score_400),
                            fmt(r$ratio, 4), r$D, fmt(r$s_default), fmt(r$s_full), r$measure,
                            fmt(r$default, if (r$measure == "RMSE") 4 else 1),
                            fmt(r$full, if (r$measure == "RMSE") 4 else 1), r$full_D))
}
writeLines(lines, out)
cat(lines, sep = "\n")
