# The round-trip cost of a PSOCK cluster, with and without the "no-delay"
# socket option (TCP_NODELAY, which turns off Nagle's algorithm): a bare
# parallel::clusterCall() returning 602 doubles, repeated, and a kernel
# logistic fit by rff_glm_apply() on 2 workers against rff_glm() in this
# process. A cluster with no-delay on both ends is made with
#   options(socketOptions = "no-delay")       # this process's end
#   parallel::makePSOCKcluster(2, rscript_args = c("-e", shQuote("options(socketOptions='no-delay')")))
# Writes a markdown table to stdout (bench/RESULTS-psock.md keeps it).
#   Rscript bench/psock-rounds.R [--lib=DIR] [--reps=50]
args <- commandArgs(trailingOnly = TRUE)
opt <- function(name, default) {
  a <- grep(paste0("^--", name, "="), args, value = TRUE)
  if (length(a)) sub(paste0("^--", name, "="), "", a[1L]) else default
}
lib <- opt("lib", ".build/lib")
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))
reps <- as.integer(opt("reps", "50"))

make_cluster <- function(nodelay) {
  options(socketOptions = if (nodelay %in% c("master", "both")) "no-delay" else NULL)
  ra <- if (nodelay == "both") c("-e", shQuote("options(socketOptions='no-delay')")) else NULL
  cl <- parallel::makePSOCKcluster(2, rscript_args = ra)
  parallel::clusterCall(cl, function(p) invisible(.libPaths(p)), .libPaths())
  cl
}

set.seed(1)
dir <- tempfile("psock")
dir.create(dir)
files <- file.path(dir, sprintf("part-%d.rds", 1:4))
for (f in files) {
  x <- matrix(runif(2000 * 3, -1, 1), 2000, 3)
  saveRDS(list(x = x, y = factor(rowSums(x^2) + rnorm(2000, sd = 0.2) < 1)), f)
}
m <- rff_map(3, D = 300, lengthscale = 0.5)
all_x <- do.call(rbind, lapply(files, function(f) readRDS(f)$x))
all_y <- unlist(lapply(files, function(f) as.character(readRDS(f)$y)))
lambda <- 10^-(2:5)

set.seed(2)
t_in <- system.time(ref <- rff_glm(all_x, factor(all_y), map = m, lambda = lambda,
                                   foldid = rep(1:4, each = 2000), standardize = FALSE,
                                   threads = 1))[["elapsed"]]
rows <- list()
for (nd in c("none", "master", "both")) {
  cl <- make_cluster(nd)
  v <- runif(602)
  t_call <- system.time(for (i in seq_len(reps)) parallel::clusterCall(cl, function(v) v, v))[["elapsed"]]
  set.seed(2)
  t_fit <- system.time(fit <- rff_glm_apply(files, readRDS, m, lambda = lambda, cluster = cl))[["elapsed"]]
  parallel::stopCluster(cl)
  rows[[nd]] <- data.frame(
    no_delay = switch(nd, none = "off", master = "this process only", both = "both ends"),
    ms_per_clusterCall = round(1000 * t_call / reps, 2), fit_rounds = fit$rounds,
    fit_s = round(t_fit, 2), ms_per_round = round(1000 * t_fit / fit$rounds, 1),
    max_coef_diff = signif(max(abs(coef(fit) - coef(ref))), 2))
}
options(socketOptions = NULL)
unlink(dir, recursive = TRUE)
out <- do.call(rbind, rows)
cat(sprintf("In-process rff_glm() (1 thread), same CV path over the 4 chunks as folds: %.2f s\n\n", t_in))
cat("| no-delay | ms per clusterCall (602 doubles) | fit rounds | fit s | ms per round | max coef diff to rff_glm |\n")
cat("|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(out))) cat("|", paste(unlist(out[i, ]), collapse = " | "), "|\n")
