# The default fits on mid-sized data sets that no default of rff was tuned
# on, against the two peers an analyst would otherwise pick,
# ranger::ranger(f, train) and kernlab::ksvm(f, train), all with their
# defaults: mlbench::Shuttle (58,000 rows, 7 classes), mlbench::DNA (3,186
# rows, 180 binary factors, 3 classes), kernlab::income (complete rows:
# 6,876, 13 factors, 9 income classes) and ggplot2::txhousing (complete
# rows: 7,126; median price ~ city (46 levels) + year + month + sales +
# listings + inventory, regression). 75/25 train/test splits from
# set.seed(20261205); each fit once in this process, from set.seed(1), one
# data set after the other; times are system.time(...)[["elapsed"]] of the
# fit, prediction excluded. `front`: whether a peer is both faster and at
# least as accurate (then rff's default is behind the front of the two).
#
# Run from the package root after `make install` (rff in .build/lib):
#   Rscript bench/untuned.R                 # writes bench/RESULTS-untuned.md
#   Rscript bench/untuned.R --out FILE [--only REGEX] [--tools rff,ranger,ksvm]
# Installs nothing (tools/install-deps.sh installs mlbench, kernlab, ggplot2
# and ranger); a missing package skips its rows.
lib <- file.path(getwd(), ".build", "lib")
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))

args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  i <- which(args == name)
  if (!length(i)) return(default)
  v <- args[i + 1L]
  if (is.na(v) || startsWith(v, "--")) stop(name, " needs a value")
  v
}
out <- opt("--out", file.path("bench", "RESULTS-untuned.md"))
only <- opt("--only", "")
tools <- strsplit(opt("--tools", "rff,ranger,ksvm"), ",")[[1]]

seed <- 20261205
source(file.path("bench", "data-sets.R"))   # split(), from(), command_line()
income <- function() {
  d <- from("kernlab", "income")
  if (is.null(d)) return(NULL)
  split(stats::na.omit(d))
}
txhousing <- function() {
  d <- from("ggplot2", "txhousing")
  if (is.null(d)) return(NULL)
  d <- as.data.frame(d)[, c("median", "city", "year", "month", "sales", "listings", "inventory")]
  d$city <- factor(d$city)
  split(stats::na.omit(d))
}
sets <- list(
  list(name = "mlbench::Shuttle", formula = Class ~ ., task = "classification",
       data = function() if (!is.null(d <- from("mlbench", "Shuttle"))) split(d)),
  list(name = "mlbench::DNA", formula = Class ~ ., task = "classification",
       data = function() if (!is.null(d <- from("mlbench", "DNA"))) split(d)),
  list(name = "kernlab::income", formula = INCOME ~ ., task = "classification", data = income),
  list(name = "ggplot2::txhousing", formula = median ~ ., task = "regression",
       data = txhousing))

# one fit, timed, with its test accuracy (%) or RMSE
timed <- function(fit, pred, test, y, task) {
  set.seed(1)
  t <- system.time(m <- fit())[["elapsed"]]
  p <- pred(m)
  score <- if (task == "classification") 100 * mean(as.character(p) == as.character(test[[y]])) else
    sqrt(mean((test[[y]] - p)^2))
  list(seconds = t, score = score)
}
rows <- character()
load_before <- readLines("/proc/loadavg", warn = FALSE)
for (s in sets) {
  if (nzchar(only) && !grepl(only, s$name)) next
  d <- s$data()
  if (is.null(d)) next
  tr <- d$train
  te <- d$test
  # test rows whose levels the training rows lack are dropped (no peer
  # predicts them)
  for (v in names(tr)[vapply(tr, is.factor, TRUE)]) te <- te[te[[v]] %in% unique(tr[[v]]), ]
  f <- s$formula
  y <- all.vars(f)[1L]
  cls <- s$task == "classification"
  fits <- list()
  if ("rff" %in% tools) {
    fits[[if (cls) "rff_glm()" else "rff_ridge()"]] <- function() {
      timed(function() if (cls) rff_glm(f, tr, progress = FALSE) else
        rff_ridge(f, tr, progress = FALSE),
        function(m) if (cls) predict(m, te, type = "class") else predict(m, te), te, y, s$task)
    }
  }
  if ("ranger" %in% tools && requireNamespace("ranger", quietly = TRUE)) {
    fits[["ranger()"]] <- function() {
      timed(function() ranger::ranger(f, tr), function(m) predict(m, te)$predictions, te, y,
            s$task)
    }
  }
  if ("ksvm" %in% tools && requireNamespace("kernlab", quietly = TRUE)) {
    fits[["ksvm()"]] <- function() {
      timed(function() kernlab::ksvm(f, tr), function(m) as.vector(kernlab::predict(m, te)),
            te, y, s$task)
    }
  }
  res <- lapply(fits, function(g) g())
  better <- function(a, b) if (cls) a >= b else a <= b
  for (nm in names(res)) {
    r <- res[[nm]]
    front <- ""
    if (startsWith(nm, "rff")) {
      peers <- res[setdiff(names(res), nm)]
      beaten <- vapply(peers, function(p) p$seconds <= r$seconds && better(p$score, r$score),
                       TRUE)
      front <- if (!length(peers)) "" else if (any(beaten))
        paste("behind", paste(names(peers)[beaten], collapse = ", ")) else "on the front"
    }
    rows <- c(rows, sprintf("| %s (%s rows) | %s | %.1f | %s | %s |", s$name,
                            format(nrow(tr), big.mark = ","), nm, r$seconds,
                            if (cls) sprintf("%.2f%%", r$score) else sprintf("RMSE %.4g", r$score),
                            front))
    message(tail(rows, 1L))
  }
}
load_after <- readLines("/proc/loadavg", warn = FALSE)

report <- c(
  "## Data sets no default was tuned on (bench/untuned.R)", "",
  command_line(paste(c("Rscript bench/untuned.R", args), collapse = " "), load_before,
               load_after), "",
  "Each fit once in this process from `set.seed(1)`, every argument at its default; 75/25 splits from `set.seed(20261205)` (test rows with a factor level the training rows lack dropped). Accuracy or RMSE on the test rows. `front`: \"behind X\" when peer X was both faster and at least as accurate.", "",
  "| data (train rows) | fit | seconds | test accuracy / RMSE | front |",
  "|---|---|---:|---:|---|",
  rows)
writeLines(report, out)
cat(report, sep = "\n")
