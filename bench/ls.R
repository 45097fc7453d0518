# The least-squares estimator of rff_glm() (estimator = "ls": ridge
# regression of the class indicators on the features, lambda by exact
# leave-one-out from one eigendecomposition, probabilities by a softmax
# calibration of the leave-one-out scores) against the default estimator
# (the penalized likelihood's lambda path, chosen on a held-out fifth) and
# ranger::ranger(probability = TRUE), each with its default arguments, on
# mid-sized classification sets: mlbench's LetterRecognition (first 16,000
# rows, test the last 4,000), Satellite, Shuttle, DNA and Vehicle (75/25
# splits). Test accuracy, test log-loss (probabilities floored at 1e-15)
# and the fit's elapsed seconds, each fit once from set.seed(1), in this
# one process, the fits of a set one after the other.
#
# Run from the package root after `make install` (rff in .build/lib):
#   Rscript bench/ls.R                 # writes bench/RESULTS-ls.md
#   Rscript bench/ls.R --out FILE [--sets Letter,Satellite]
lib <- file.path(getwd(), ".build", "lib")
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))

args <- commandArgs(trailingOnly = TRUE)
out <- if (length(i <- which(args == "--out"))) args[i + 1L] else file.path("bench", "RESULTS-ls.md")
only <- if (length(i <- which(args == "--sets"))) strsplit(args[i + 1L], ",")[[1]] else NULL
seed <- 20261202
source(file.path("bench", "data-sets.R"))

letter <- from("mlbench", "LetterRecognition")
sets <- list(
  list(name = "Letter", y = "lettr",
       d = if (!is.null(letter)) list(train = letter[1:16000, ], test = letter[16001:20000, ])),
  list(name = "Satellite", y = "classes", d = if (!is.null(s <- from("mlbench", "Satellite"))) split(s)),
  list(name = "Shuttle", y = "Class", d = if (!is.null(s <- from("mlbench", "Shuttle"))) split(s)),
  list(name = "DNA", y = "Class", d = if (!is.null(s <- from("mlbench", "DNA"))) split(s)),
  list(name = "Vehicle", y = "Class", d = if (!is.null(s <- from("mlbench", "Vehicle"))) split(s)))
if (!is.null(only)) sets <- Filter(function(s) s$name %in% only, sets)

logloss <- function(P, truth) {
  lv <- colnames(P)
  p <- P[cbind(seq_len(nrow(P)), match(as.character(truth), lv))]
  -mean(log(pmax(p, 1e-15)))
}
probs_rff <- function(m, test) {
  P <- predict(m, test, type = "response")
  if (is.null(dim(P))) P <- cbind(1 - P, P)
  if (length(dim(P)) == 3L) P <- P[, , 1L]
  colnames(P) <- m$levels
  P
}
run <- function(name, fit, probs, test, truth) {
  set.seed(1)
  t <- system.time(m <- fit())[["elapsed"]]
  P <- probs(m, test)
  cls <- colnames(P)[max.col(P, ties.method = "first")]
  data.frame(method = name, seconds = round(t, 2),
             accuracy = round(100 * mean(cls == as.character(truth)), 2),
             logloss = round(logloss(P, truth), 4))
}

rows <- list()
before <- readLines("/proc/loadavg")
for (s in sets) {
  if (is.null(s$d)) next
  f <- stats::as.formula(paste(s$y, "~ ."))
  tr <- s$d$train
  te <- s$d$test
  truth <- te[[s$y]]
  # (levels absent from the training rows are not predicted by any method)
  r <- rbind(
    run("rff_glm, estimator = \"ls\"", function() rff_glm(f, tr, estimator = "ls", progress = FALSE),
        probs_rff, te, truth),
    run("rff_glm (default)", function() rff_glm(f, tr, progress = FALSE), probs_rff, te, truth),
    if (requireNamespace("ranger", quietly = TRUE))
      run("ranger(probability = TRUE)",
          function() ranger::ranger(f, tr, probability = TRUE, num.threads = 2),
          function(m, test) predict(m, test)$predictions, te, truth))
  r <- cbind(set = sprintf("%s (%d train rows)", s$name, nrow(tr)), r)
  print(r, row.names = FALSE)
  rows[[length(rows) + 1L]] <- r
}
after <- readLines("/proc/loadavg")
res <- do.call(rbind, rows)
md <- c("# rff_glm(estimator = \"ls\") against the default estimator and ranger", "",
        command_line(paste(c("Rscript bench/ls.R", args), collapse = " "), before, after), "",
        "| set | method | seconds | test accuracy (%) | test log-loss |", "|---|---|---|---|---|",
        sprintf("| %s | %s | %.2f | %.2f | %.4f |", res$set, res$method, res$seconds, res$accuracy,
                res$logloss))
writeLines(md, out)
cat(md, sep = "\n")
