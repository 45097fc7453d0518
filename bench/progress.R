# Benchmark: the time left that the progress display of a default fit
# states (target 7 of the interactive-speed work: right within a factor of
# two from 10% of the work on). Each fit runs with `progress = TRUE` and the
# text display (its output discarded); every time the display is drawn, the
# elapsed time, the share of the work done and the time left it states
# (elapsed x (1 - share) / share, before rounding to whole seconds) are
# recorded. After the fit, each statement from 10% on is compared with the
# time that was really left; statements in the last second are left out
# (the display rounds to whole seconds: "about 1 s" with 0.2 s left).
# Workloads: `rff_glm(lettr ~ .)` on the first 2,000, 6,000 and 16,000 rows
# of mlbench::LetterRecognition (5 folds, then one held-out fold),
# `rff_glm(Class ~ .)` and `rff_cv(Class ~ ., family = "multinomial")` on
# mlbench::Vehicle, `rff_ridge(mag ~ .)` and
# `rff_cv(mag ~ .)` on quakes, `rff_ridge(log(price) ~ .)` on
# ggplot2::diamonds, under the BLAS of this process.
# Run after `make install`: `Rscript bench/progress.R` (writes
# bench/RESULTS-progress.md; `--out FILE` elsewhere).

args <- commandArgs(TRUE)
out <- if (length(i <- which(args == "--out"))) args[i + 1L] else
  file.path("bench", "RESULTS-progress.md")
lib <- file.path(getwd(), ".build", "lib")
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))
options(rff.blas_hint = FALSE, rff.progress = "txt", rff.progress_delay = 0)

ns <- asNamespace("rff")
trace_env <- new.env()
render <- get("progress_render", ns)
# every drawing of the display: its elapsed time, share done, time left
recorded <- function(d) {
  now <- proc.time()[["elapsed"]]
  frac <- min(max(d$done / d$total, 0), 1)
  trace_env$rows[[length(trace_env$rows) + 1L]] <- c(t = now - d$t0, frac = frac,
                                                       left = if (frac > 0) (now - d$t0) * (1 - frac) / frac else NA)
  render(d)
}
unlockBinding("progress_render", ns)
assign("progress_render", recorded, ns)

letter <- if (requireNamespace("mlbench", quietly = TRUE)) {
  e <- new.env()
  utils::data("LetterRecognition", package = "mlbench", envir = e)
  e$LetterRecognition
}
vehicle <- if (!is.null(letter)) {
  e <- new.env()
  utils::data("Vehicle", package = "mlbench", envir = e)
  e$Vehicle
}
work <- list(
  list(name = "quakes (1,000), `rff_ridge`", run = function() rff_ridge(mag ~ ., quakes, progress = TRUE)),
  list(name = "quakes (1,000), `rff_cv`", run = function() rff_cv(mag ~ ., quakes, progress = TRUE)))
if (!is.null(letter)) {
  work <- c(work, list(
    list(name = "mlbench::Vehicle (846), `rff_glm`",
         run = function() rff_glm(Class ~ ., vehicle, progress = TRUE)),
    list(name = "mlbench::Vehicle (846), `rff_cv(family = \"multinomial\")`",
         run = function() rff_cv(Class ~ ., vehicle, family = "multinomial", progress = TRUE))),
    lapply(c(2000L, 6000L, 16000L), function(n) list(
      name = sprintf("LetterRecognition (%s), `rff_glm`", format(n, big.mark = ",")),
      run = function() rff_glm(lettr ~ ., letter[seq_len(n), ], progress = TRUE))))
}

if (requireNamespace("ggplot2", quietly = TRUE)) {
  diamonds <- as.data.frame(ggplot2::diamonds)
  work <- c(work, list(list(name = "ggplot2::diamonds (53,940), `rff_ridge`",
                            run = function() rff_ridge(log(price) ~ ., diamonds, progress = TRUE))))
}

rows <- character()
for (w in work) {
  trace_env$rows <- list()
  set.seed(20261202)
  t0 <- proc.time()[["elapsed"]]
  invisible(capture.output(w$run()))
  total <- proc.time()[["elapsed"]] - t0
  tr <- as.data.frame(do.call(rbind, trace_env$rows))
  # the display's clock starts at the call's start (within milliseconds)
  tr$actual <- total - tr$t
  use <- tr$frac >= 0.1 & tr$frac < 1 & tr$actual >= 1
  ratio <- tr$left[use] / tr$actual[use]
  rng <- if (any(use)) sprintf("%.2f - %.2f", min(ratio), max(ratio)) else "n/a (under 1 s)"
  pass <- if (!any(use)) "n/a" else if (all(ratio >= 0.5 & ratio <= 2)) "pass" else "FAIL"
  at10 <- if (any(use)) {
    i <- which(use)[1L]
    sprintf("%.1f s stated, %.1f s left", tr$left[i], tr$actual[i])
  } else ""
  rows <- c(rows, sprintf("| %s | %.1f | %d | %s | %s | %s |", w$name, total, sum(use), rng, at10,
                          pass))
  message(tail(rows, 1L))
}

blas <- sessionInfo()$BLAS
lines <- c("## The time left stated by the progress display (bench/progress.R)", "",
           sprintf("Command: `Rscript bench/progress.R`, %s UTC; %d cores; BLAS %s.",
                   format(Sys.time(), tz = "UTC"), parallel::detectCores(), blas),
           "Each fit with all defaults and `progress = TRUE` (text display), `set.seed(20261202)`; LetterRecognition: its first rows. Stated: elapsed x (1 - share) / share at each drawing of the display from 10% of the work on, compared with the time really left (drawings in the last second left out). Target: within a factor of two (0.5 - 2).",
           "",
           "| fit | seconds | statements | stated / real | the first from 10% | target |",
           "|---|---:|---:|---|---|---|",
           rows)
writeLines(lines, out)
cat(lines, sep = "\n")
