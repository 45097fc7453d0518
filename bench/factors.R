# How factor dummies enter the kernel: the isotropic default fit
# (lengthscale "auto") on the model matrix with the numeric columns
# standardized and the dummies standardized too ("std", the coding before
# this version), left 0/1 ("raw", the default now) or scaled so that each
# factor weighs like one numeric input ("fac1"; see prepared() in
# bench/ard.R), over 10 random 75/25 splits of MASS::Cars93 and
# mlbench::Ozone (test rows with a level absent from training dropped).
# Run from the package root with rff installed in .build/lib:
#   Rscript bench/factors.R
lib <- Sys.getenv("RFF_BENCH_LIB", file.path(getwd(), ".build", "lib"))
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))
options(rff.blas_hint = FALSE)
src <- readLines("bench/ard.R")
eval(parse(text = src[grep("^prepared <- function", src):(grep("^timed <- function", src) - 1L)]))
data(Ozone, package = "mlbench")
sets <- list(
  Cars93 = list(f = Price ~ Type + Origin + DriveTrain + MPG.city + Horsepower + EngineSize +
                  Weight + Length, d = MASS::Cars93),
  Cars93_12 = list(f = Price ~ Type + Origin + DriveTrain + AirBags + Cylinders +
                     Man.trans.avail + MPG.city + Horsepower + EngineSize + Weight + Length +
                     Wheelbase, d = MASS::Cars93),
  Ozone = list(f = V4 ~ ., d = na.omit(Ozone)))
for (nm in names(sets)) {
  s <- sets[[nm]]
  r <- t(sapply(1:10, function(seed) {
    d <- s$d
    set.seed(seed)
    i <- sample(nrow(d), round(0.75 * nrow(d)))
    tr <- d[i, ]
    te <- d[-i, ]
    used <- if ("." %in% all.vars(s$f)) names(d) else all.vars(s$f)
    for (v in intersect(used, names(d)[vapply(d, is.factor, TRUE)])) {
      te <- te[te[[v]] %in% unique(tr[[v]]), ]
    }
    yn <- all.vars(s$f)[1L]
    vapply(c("std", "raw", "fac1"), function(mode) {
      p <- prepared(s$f, tr, te, mode)
      set.seed(seed)
      f <- rff_ridge(p$x, tr[[yn]], standardize = FALSE, progress = FALSE)
      sqrt(mean((te[[yn]] - predict(f, p$xt))^2))
    }, 0)
  }))
  cat(sprintf("%-10s mean test RMSE: std %.3f, raw %.3f, fac1 %.3f; raw better than std in %d/10, fac1 in %d/10\n",
              nm, mean(r[, 1]), mean(r[, 2]), mean(r[, 3]), sum(r[, 2] < r[, 1]),
              sum(r[, 3] < r[, 1])))
}
