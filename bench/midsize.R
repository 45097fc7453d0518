# Classifiers between 2,000 and 10,000 training rows: the default
# rff_glm(y ~ ., train), which chooses lambda_best on one held-out fifth of
# the rows above 2,000 rows, against the same call with `holdout = FALSE`
# (the 5-fold cross-validation over the path that the default made up to
# 10,000 rows before), the default with a path 100 times longer at the same
# spacing (`lambda_min_ratio = 1e-6, nlambda = 30`: is the default path's
# end, where lambda_best often lies, too early?), kernlab::ksvm(y ~ ., train) and
# ranger::ranger(y ~ ., train), each data set's fits one after the other in
# this process. Data: the first 4,000 and 8,000 rows of
# mlbench::LetterRecognition (test: its last 4,000), and 75/25 splits of
# mlbench::Satellite, kernlab::spam and 5,000 (ringnorm 4,000) rows drawn
# from mlbench's twonorm, waveform and ringnorm.
#
# Run from the package root after `make install` (rff in .build/lib):
#   Rscript bench/midsize.R                 # writes bench/RESULTS-midsize.md
#   Rscript bench/midsize.R --out FILE
# Each fit once, from set.seed(1); times are system.time(...)[["elapsed"]]
# of the fit, prediction excluded. Installs nothing (tools/install-deps.sh
# installs mlbench, kernlab and ranger); a missing package skips its rows.
lib <- file.path(getwd(), ".build", "lib")
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))

args <- commandArgs(trailingOnly = TRUE)
out <- if (length(i <- which(args == "--out"))) args[i + 1L] else
  file.path("bench", "RESULTS-midsize.md")
if (is.na(out) || startsWith(out, "--")) stop("--out needs a value")

seed <- 20261202
source(file.path("bench", "data-sets.R"))   # split(), from(), command_line()
drawn <- function(gen, n) {
  if (!requireNamespace("mlbench", quietly = TRUE)) return(NULL)
  set.seed(7)
  d <- as.data.frame(gen(n))
  split(d)
}
letter <- from("mlbench", "LetterRecognition")
sets <- list(
  list(name = "LetterRecognition, first 4,000 rows", y = "lettr",
       d = if (!is.null(letter)) list(train = letter[1:4000, ], test = letter[16001:20000, ])),
  list(name = "LetterRecognition, first 8,000 rows", y = "lettr",
       d = if (!is.null(letter)) list(train = letter[1:8000, ], test = letter[16001:20000, ])),
  list(name = "mlbench::Satellite", y = "classes",
       d = if (!is.null(s <- from("mlbench", "Satellite"))) split(s)),
  list(name = "kernlab::spam", y = "type", d = if (!is.null(s <- from("kernlab", "spam"))) split(s)),
  list(name = "mlbench.twonorm(5000)", y = "classes",
       d = drawn(mlbench::mlbench.twonorm, 5000)),
  list(name = "mlbench.waveform(5000)", y = "classes",
       d = drawn(mlbench::mlbench.waveform, 5000)),
  list(name = "mlbench.ringnorm(4000)", y = "classes",
       d = drawn(mlbench::mlbench.ringnorm, 4000)))

# one fit, timed, with its test accuracy and, for rff, lambda_best's place
# on its path
timed <- function(fit, predict_class, truth) {
  set.seed(1)
  t <- system.time(m <- fit())[["elapsed"]]
  list(seconds = t, accuracy = mean(as.character(predict_class(m)) == as.character(truth)),
       lambda = if (inherits(m, "rff_glm")) sprintf("%d of %d", match(m$lambda_best, m$lambda),
                                                    length(m$lambda)) else "")
}
rows <- character()
load_before <- readLines("/proc/loadavg", warn = FALSE)
for (s in sets) {
  if (is.null(s$d)) next
  tr <- s$d$train
  te <- s$d$test
  fo <- stats::as.formula(paste(s$y, "~ ."))
  truth <- te[[s$y]]
  # rff_glm(fo, tr, ...), timed
  rff <- function(...) {
    function() timed(function() rff_glm(fo, tr, ...),
                     function(m) predict(m, te, type = "class"), truth)
  }
  fits <- list(
    `rff_glm(), default` = rff(),
    `rff_glm(holdout = FALSE)` = rff(holdout = FALSE),
    `rff_glm(lambda_min_ratio = 1e-6, nlambda = 30)` = rff(lambda_min_ratio = 1e-6, nlambda = 30),
    `ksvm()` = if (requireNamespace("kernlab", quietly = TRUE)) {
      function() timed(function() kernlab::ksvm(fo, tr), function(m) kernlab::predict(m, te), truth)
    },
    `ranger()` = if (requireNamespace("ranger", quietly = TRUE)) {
      function() timed(function() ranger::ranger(fo, tr),
                       function(m) predict(m, te)$predictions, truth)
    })
  res <- lapply(Filter(Negate(is.null), fits), function(f) f())
  ks <- if (!is.null(res[["ksvm()"]])) res[["ksvm()"]]$seconds else NA
  for (nm in names(res)) {
    r <- res[[nm]]
    rows <- c(rows, sprintf("| %s (%s rows) | %s | %.1f | %s | %.2f | %s |", s$name,
                            format(nrow(tr), big.mark = ","), nm, r$seconds,
                            if (is.finite(ks)) sprintf("%.2f", r$seconds / ks) else "",
                            100 * r$accuracy, r$lambda))
    message(tail(rows, 1L))
  }
}
load_after <- readLines("/proc/loadavg", warn = FALSE)

report <- c(
  "## Classifiers on 2,000 to 10,000 rows (bench/midsize.R)", "",
  command_line("Rscript bench/midsize.R", load_before, load_after), "",
  "Each fit once in this process from `set.seed(1)`, all defaults; `holdout = FALSE` is the 5-fold cross-validation over the path that the default made on up to 10,000 rows before; `lambda_min_ratio = 1e-6, nlambda = 30` a path 100 times longer than the default's at about the same spacing. `/ ksvm`: the time over ksvm's on the same data; `lambda_best`: its place on the fit's path.", "",
  "| data (train rows) | fit | seconds | / ksvm | test accuracy % | lambda_best |",
  "|---|---|---:|---:|---:|---|",
  rows)
writeLines(report, out)
cat(report, sep = "\n")
