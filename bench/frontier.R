# Time against accuracy on many rows and classes: the default
# `rff_glm(lettr ~ ., train)` on mlbench::LetterRecognition (first 16,000
# rows train, the other 4,000 test, 26 classes) and the same call with
# smaller `D`, against kernlab::ksvm(lettr ~ ., train) (run before and after
# the rff fits; the ratio is to the mean of its two times) and
# ranger::ranger(lettr ~ ., train). A GLM pass costs n D K multiply-adds
# twice (Z B and Z'R), so on 26 classes the fit's time follows D; this
# table shows what each D costs and gains, and what a longer lambda path
# (`lambda_min_ratio = 1e-6, nlambda = 30`) does.
#
# Run from the package root after `make install` (rff in .build/lib):
#   Rscript bench/frontier.R                    # writes bench/RESULTS-frontier.md
#   Rscript bench/frontier.R --D 500,1000 --out FILE
# Everything runs in this one process, each fit once, from set.seed(1);
# times are system.time(...)[["elapsed"]] of the fit, prediction excluded.
# Installs nothing (tools/install-deps.sh installs mlbench, kernlab and
# ranger); a missing package skips its rows.
lib <- file.path(getwd(), ".build", "lib")
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))

args <- commandArgs(trailingOnly = TRUE)
arg_value <- function(flag, default) {
  if (!(flag %in% args)) return(default)
  v <- args[match(flag, args) + 1L]
  if (is.na(v) || startsWith(v, "--")) stop(flag, " needs a value")
  v
}
out <- arg_value("--out", file.path("bench", "RESULTS-frontier.md"))
Ds <- as.integer(strsplit(arg_value("--D", "400,500,600,800,1000"), ",", fixed = TRUE)[[1]])
if (anyNA(Ds) || any(Ds < 2L)) stop("--D needs feature counts of at least 2")

source(file.path("bench", "data-sets.R"))   # from(), command_line()
d <- from("mlbench", "LetterRecognition")
if (is.null(d)) {
  message("mlbench is not installed: nothing to measure")
  quit(save = "no")
}
train <- d[1:16000, ]
test <- d[-(1:16000), ]

# one fit, timed, with its test accuracy, and for rff its D and the
# lengthscale's multiple of the median heuristic
timed <- function(fit, predict_class) {
  set.seed(1)
  t <- system.time(m <- fit())[["elapsed"]]
  s <- if (inherits(m, "rff_glm")) m$lengthscale_search
  c(seconds = t, accuracy = mean(as.character(predict_class(m)) == as.character(test$lettr)),
    D = if (inherits(m, "rff_glm")) m$map$D else NA,
    multiple = if (is.null(s)) NA else s$table$multiple[s$best])
}
rows <- list()
add <- function(name, r) rows[[length(rows) + 1L]] <<- list(name = name, r = r)
run_ksvm <- function(label) {
  if (!requireNamespace("kernlab", quietly = TRUE)) return(NULL)
  r <- timed(function() kernlab::ksvm(lettr ~ ., train),
             function(m) kernlab::predict(m, test))
  add(label, r)
  message(sprintf("%s: %.1f s, %.2f%%", label, r[["seconds"]], 100 * r[["accuracy"]]))
  r[["seconds"]]
}
load_before <- readLines("/proc/loadavg", warn = FALSE)
k1 <- run_ksvm("`kernlab::ksvm(lettr ~ ., train)`, before")
# the default fit, smaller D, then (multiple not NA) the lengthscale given
# as a multiple of the default fit's median heuristic, in the standardized
# units the search works in, without the search
configs <- c(list(c(D = NA, multiple = NA)), lapply(Ds, function(D) c(D = D, multiple = NA)),
             list(c(D = 600, multiple = 0.5), c(D = NA, multiple = 0.5),
                  c(D = NA, multiple = sqrt(2) / 4)))
median_l <- NA
for (cfg in configs) {
  D <- cfg[["D"]]
  mult <- cfg[["multiple"]]
  given <- c(if (!is.na(D)) list(D = D), if (!is.na(mult)) list(lengthscale = mult * median_l))
  r <- timed(function() {
    m <- do.call(rff_glm, c(list(lettr ~ ., train, progress = FALSE), given))
    if (is.na(median_l)) median_l <<- m$lengthscale_search$median
    m
  }, function(m) predict(m, test, type = "class"))
  if (!is.na(mult)) r[["multiple"]] <- mult
  args_text <- paste(c(if (!is.na(D)) sprintf("D = %d", D),
                       if (!is.na(mult)) sprintf("lengthscale = %.3g * median", mult)), collapse = ", ")
  add(if (!nzchar(args_text)) "`rff_glm(lettr ~ ., train)` (default D)" else
        sprintf("`rff_glm(lettr ~ ., train, %s)`", args_text), r)
  message(sprintf("rff %s: %.1f s, %.2f%%", if (nzchar(args_text)) args_text else "defaults",
                  r[["seconds"]], 100 * r[["accuracy"]]))
}
# the default with a path 100 times longer at about the same spacing: the
# default's lambda_best is the last of its path here
r <- timed(function() rff_glm(lettr ~ ., train, progress = FALSE, lambda_min_ratio = 1e-6,
                              nlambda = 30), function(m) predict(m, test, type = "class"))
add("`rff_glm(lettr ~ ., train, lambda_min_ratio = 1e-6, nlambda = 30)`", r)
message(sprintf("rff longer path: %.1f s, %.2f%%", r[["seconds"]], 100 * r[["accuracy"]]))
k2 <- run_ksvm("`kernlab::ksvm(lettr ~ ., train)`, after")
if (requireNamespace("ranger", quietly = TRUE)) {
  r <- timed(function() ranger::ranger(lettr ~ ., train),
             function(m) predict(m, test)$predictions)
  add("`ranger::ranger(lettr ~ ., train)`", r)
}
load_after <- readLines("/proc/loadavg", warn = FALSE)

ksvm_mean <- mean(c(k1, k2))   # NaN without kernlab: no ratios
lines <- vapply(rows, function(x) {
  sprintf("| %s | %s | %s | %.1f | %s | %.2f |", x$name,
          if (is.na(x$r[["D"]])) "" else format(x$r[["D"]]),
          if (is.na(x$r[["multiple"]])) "" else sprintf("%.3g", x$r[["multiple"]]),
          x$r[["seconds"]],
          if (is.finite(ksvm_mean)) sprintf("%.2f", x$r[["seconds"]] / ksvm_mean) else "",
          100 * x$r[["accuracy"]])
}, "")
report <- c(
  "## Time against accuracy on many rows and classes (bench/frontier.R)", "",
  command_line(paste0("Rscript bench/frontier.R",
                      if ("--D" %in% args) paste0(" --D ", paste(Ds, collapse = ",")) else ""),
               load_before, load_after), "",
  "mlbench::LetterRecognition: first 16,000 rows train, the other 4,000 test, 26 classes. Each fit once in this process from `set.seed(1)`; `/ ksvm` is the time over the mean of ksvm's two runs; `lengthscale / median`: the multiple of the median heuristic that `lengthscale = \"auto\"` chose, or that was given (`median`: the median heuristic of the standardized inputs, `fit$lengthscale_search$median` of the default fit).", "",
  "| fit | D | lengthscale / median | seconds | / ksvm | test accuracy % |",
  "|---|---:|---:|---:|---:|---:|",
  lines)
writeLines(report, out)
cat(report, sep = "\n")
