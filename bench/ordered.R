# How ordered factors enter the kernel: the default fit with their ranks
# (the formula methods' coding) against model.matrix()'s polynomial
# contrasts (`C(x, contr.poly)` in the formula, the coding before), on
# ggplot2::diamonds (`log(price) ~ .`; cut, color and clarity are ordered),
# the 75/25 split of bench/defaults.R (set.seed(20261201)), over `--draws`
# (default 4) draws of the random features, set.seed(20261201 + k).
# Run from the package root after `make install`:
#   Rscript bench/ordered.R              # writes bench/RESULTS-ordered.md
# Options: --draws N, --out FILE.
args <- commandArgs(TRUE)
arg_value <- function(name, default) {
  i <- match(name, args)
  if (is.na(i)) default else args[i + 1L]
}
draws <- as.integer(arg_value("--draws", "4"))
out <- arg_value("--out", file.path("bench", "RESULTS-ordered.md"))
lib <- Sys.getenv("RFF_BENCH_LIB", file.path(getwd(), ".build", "lib"))
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))
options(rff.blas_hint = FALSE)
if (!requireNamespace("ggplot2", quietly = TRUE)) stop("bench/ordered.R needs ggplot2")
seed <- 20261201L
d <- as.data.frame(ggplot2::diamonds)
set.seed(seed)
rows <- sample(nrow(d), floor(0.75 * nrow(d)))
train <- d[rows, ]
test <- d[-rows, ]
codings <- list(
  ranks = log(price) ~ .,
  contrasts = log(price) ~ carat + C(cut, contr.poly) + C(color, contr.poly) +
    C(clarity, contr.poly) + depth + table + x + y + z)
res <- do.call(rbind, lapply(seq_len(draws), function(k) {
  do.call(rbind, lapply(names(codings), function(cd) {
    set.seed(seed + k)
    t <- system.time(fit <- rff_ridge(codings[[cd]], train, progress = FALSE))[["elapsed"]]
    rmse <- sqrt(mean((log(test$price) - predict(fit, test))^2))
    cat(sprintf("draw %d, %s: test RMSE %.4f, %.1f s\n", k, cd, rmse, t))
    data.frame(draw = k, coding = cd, rmse = rmse, seconds = t,
               columns = length(fit$standardize$center))
  }))
}))
wide <- reshape(res[c("draw", "coding", "rmse")], idvar = "draw", timevar = "coding",
                direction = "wide")
lines <- c("## Ordered factors as ranks or as contrasts (bench/ordered.R)", "",
           sprintf(paste0("Command: `Rscript bench/ordered.R --draws %d`, %s UTC, rff %s, %s; ",
                          "ggplot2::diamonds, `log(price) ~ .`, %d train and %d test rows. ",
                          "Columns of the kernel: ranks %d, contrasts %d."),
                   draws, format(Sys.time(), tz = "UTC", usetz = FALSE), packageVersion("rff"),
                   rff_blas_info()$blas, nrow(train), nrow(test),
                   res$columns[res$coding == "ranks"][1], res$columns[res$coding == "contrasts"][1]),
           "", "| draw | test RMSE, ranks | test RMSE, contrasts |", "|---:|---:|---:|",
           sprintf("| %d | %.4f | %.4f |", wide$draw, wide$rmse.ranks, wide$rmse.contrasts),
           sprintf("| mean | %.4f | %.4f |", mean(wide$rmse.ranks), mean(wide$rmse.contrasts)),
           "", sprintf("Ranks better in %d of %d draws; mean time %.1f s (ranks), %.1f s (contrasts).",
                       sum(wide$rmse.ranks < wide$rmse.contrasts), draws,
                       mean(res$seconds[res$coding == "ranks"]),
                       mean(res$seconds[res$coding == "contrasts"])), "")
writeLines(lines, out)
cat(lines, sep = "\n")
