# Where the time of rff_glm(estimator = "ls") goes on LetterRecognition
# (16,000 training rows, 26 classes; test: the last 4,000), and what D buys:
# the stages' seconds against their flop counts (Z'Z: n D^2; the D x D
# eigendecomposition: about 4/3 D^3 for the tridiagonal reduction on the
# BLAS plus 2 D^3 for the back transformation), on 20,000 x 16 Gaussian
# inputs; then the fit at the lengthscale given (0.25, 0.35 and 0.5 times
# the median heuristic) for D = 1224 (the default), 2000 and 3000, and the
# default search's choice.
#
# Run from the package root after `make install`:
#   Rscript bench/ls-frontier.R    # writes bench/RESULTS-ls-frontier.md
lib <- file.path(getwd(), ".build", "lib")
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))
seed <- 20261202
source(file.path("bench", "data-sets.R"))
out <- file.path("bench", "RESULTS-ls-frontier.md")
before <- readLines("/proc/loadavg")

stages <- NULL
for (D in c(1224, 2000, 3000)) {
  set.seed(1)
  x <- matrix(rnorm(20000 * 16), 20000, 16)
  m <- rff_map(16, D = D)
  t1 <- system.time(st <- rff_stats(x, x[, 1], map = m, progress = FALSE))[["elapsed"]]
  t2 <- system.time(e <- .Call(rff:::C_rff_ridge_eigen, st$ZtZ, 2L))[["elapsed"]]
  stages <- rbind(stages, data.frame(D = D, stats_s = t1, stats_gflops = 2e4 * D^2 / t1 / 1e9,
                                     eigen_s = t2, eigen_gflops = (4 / 3 + 2) * D^3 / t2 / 1e9))
}
print(stages)

letter <- from("mlbench", "LetterRecognition")
tr <- letter[1:16000, ]
te <- letter[16001:20000, ]
logloss <- function(f) {
  P <- predict(f, te, type = "response")
  -mean(log(pmax(P[cbind(seq_len(nrow(te)), as.integer(te$lettr))], 1e-15)))
}
one <- function(label, ...) {
  set.seed(1)
  t <- system.time(f <- rff_glm(lettr ~ ., tr, estimator = "ls", progress = FALSE, ...))[["elapsed"]]
  data.frame(fit = label, D = f$map$D, seconds = round(t, 2),
             accuracy = round(100 * mean(predict(f, te, type = "class") == te$lettr), 2),
             logloss = round(logloss(f), 4), lambda_index = sprintf("%d of %d", f$ls$best, length(f$ls$lambda)))
}
set.seed(1)
f0 <- rff_glm(lettr ~ ., tr, estimator = "ls", progress = FALSE)
med <- f0$lengthscale_search$median
fits <- one("default (lengthscale searched)")
for (D in c(1224, 2000, 3000)) for (k in c(0.25, 0.35, 0.5)) {
  fits <- rbind(fits, one(sprintf("lengthscale %.2f x median", k), D = D, lengthscale = k * med))
}
print(fits)
after <- readLines("/proc/loadavg")
md <- c("# rff_glm(estimator = \"ls\"): stages and the frontier in D on LetterRecognition", "",
        command_line("Rscript bench/ls-frontier.R", before, after), "",
        "Stages on 20,000 x 16 inputs (GF/s: the stage's flops over its seconds):", "",
        "| D | Z'Z (s) | Z'Z GF/s | eigen (s) | eigen GF/s |", "|---|---|---|---|---|",
        sprintf("| %d | %.2f | %.0f | %.2f | %.0f |", stages$D, stages$stats_s, stages$stats_gflops,
                stages$eigen_s, stages$eigen_gflops), "",
        "LetterRecognition fits (test accuracy and log-loss on the last 4,000 rows):", "",
        "| fit | D | seconds | accuracy (%) | log-loss | lambda_best |", "|---|---|---|---|---|---|",
        sprintf("| %s | %d | %.2f | %.2f | %.4f | %s |", fits$fit, fits$D, fits$seconds, fits$accuracy,
                fits$logloss, fits$lambda_index))
writeLines(md, out)
cat(md, sep = "\n")
