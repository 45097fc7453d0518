# lengthscale = "ard" against the isotropic default, and how factor dummies
# enter the kernel, on a small panel of regression sets, with kernlab's
# defaults beside them. Every fit in this one R process, 75/25 splits from
# set.seed(seed) for each seed; test RMSE and elapsed seconds of the fit
# (prediction excluded).
#   iso       rff_ridge(formula, train)                    (the default:
#             numeric columns standardized, factor dummies centred, 0/1)
#   ard       rff_ridge(formula, train, lengthscale = "ard")
#   iso_std   every model-matrix column standardized, dummies too (the
#             default before this version; standardize = FALSE on the
#             model matrix so prepared)
#   iso_fac1  numeric columns standardized, the dummies of each factor
#             divided by sqrt(sum_j p_j (1 - p_j)) (p_j: the dummies' means),
#             so that a factor adds on average as much squared distance
#             between two rows (2) as one standardized numeric input
#   ksvm, gausspr   kernlab::ksvm(formula, train), kernlab::gausspr(formula, train)
# Data: MASS::Cars93 (Price ~ Type + Origin + DriveTrain + MPG.city +
# Horsepower + EngineSize + Weight + Length), mlbench::Ozone (V4 ~ .,
# complete rows), MASS::Boston (medv ~ .), mtcars (mpg ~ .), airquality
# (Ozone ~ ., complete rows), ggplot2::mpg (hwy ~ displ + year + cyl +
# trans + drv + class, trans without its details as in the regression
# vignette), mlbench::mlbench.friedman1 (1000 train / 500
# test, sd = 1; inputs 6 to 10 are noise). Test rows with a factor level
# absent from the training rows are dropped.
# Run from the package root with rff installed in .build/lib:
#   Rscript bench/ard.R [--seeds 3] [--out bench/RESULTS-ard.md]
lib <- Sys.getenv("RFF_BENCH_LIB", file.path(getwd(), ".build", "lib"))
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages({
  library(rff)
  library(kernlab)
})
args <- commandArgs(TRUE)
opt <- function(name, default) {
  i <- match(name, args)
  if (is.na(i)) default else args[i + 1L]
}
nseeds <- as.integer(opt("--seeds", "3"))
out <- opt("--out", "bench/RESULTS-ard.md")
options(rff.blas_hint = FALSE)

data(Ozone, package = "mlbench")
sets <- list(
  Cars93 = list(f = Price ~ Type + Origin + DriveTrain + MPG.city + Horsepower + EngineSize +
                  Weight + Length, d = MASS::Cars93),
  Ozone = list(f = V4 ~ ., d = na.omit(Ozone)),
  Boston = list(f = medv ~ ., d = MASS::Boston),
  mtcars = list(f = mpg ~ ., d = mtcars),
  airquality = list(f = Ozone ~ ., d = na.omit(airquality)),
  mpg = list(f = hwy ~ displ + year + cyl + trans + drv + class, d = local({
    m <- as.data.frame(ggplot2::mpg)
    m$trans <- sub("\\(.*", "", m$trans)
    m[] <- lapply(m, function(v) if (is.character(v)) factor(v) else v)
    m
  })),
  friedman1 = list(f = y ~ ., d = NULL)
)
# friedman1: whether ARD ranks the five true inputs X1..X5 most relevant
ranked <- integer()

# The model matrix of `f` on train and test with numeric columns
# standardized (train's moments) and the dummies of each factor left 0/1
# (`mode = "raw"`), standardized (`"std"`) or scaled so that the factor
# weighs like one numeric input (`"fac1"`).
prepared <- function(f, train, test, mode) {
  tt <- delete.response(terms(f, data = train))
  mf <- model.frame(tt, train, drop.unused.levels = TRUE)
  X <- model.matrix(tt, mf)
  Xt <- model.matrix(tt, model.frame(tt, test, xlev = .getXlevels(tt, mf)))
  asg <- attr(X, "assign")
  X <- X[, -1, drop = FALSE]
  Xt <- Xt[, -1, drop = FALSE]
  asg <- asg[-1]
  labs <- attr(tt, "term.labels")
  for (k in unique(asg)) {
    j <- which(asg == k)
    if (is.numeric(train[[labs[k]]]) || mode == "std") {
      # column by column (a factor's dummies each to unit variance in "std")
      for (jj in j) {
        mu <- mean(X[, jj])
        s <- sd(X[, jj])
        if (!(s > 0)) s <- 1
        X[, jj] <- (X[, jj] - mu) / s
        Xt[, jj] <- (Xt[, jj] - mu) / s
      }
    } else if (mode == "fac1") {
      p <- colMeans(X[, j, drop = FALSE])
      s <- sqrt(sum(p * (1 - p)))
      X[, j] <- X[, j] / s
      Xt[, j] <- Xt[, j] / s
    }
  }
  list(x = X, xt = Xt)
}

timed <- function(expr) {
  t <- system.time(v <- expr)[["elapsed"]]
  list(value = v, seconds = t)
}

rows <- list()
for (name in names(sets)) {
  s <- sets[[name]]
  for (seed in seq_len(nseeds)) {
    set.seed(seed)
    if (name == "friedman1") {
      tr <- mlbench::mlbench.friedman1(1000, sd = 1)
      te <- mlbench::mlbench.friedman1(500, sd = 1)
      train <- data.frame(tr$x, y = tr$y)
      test <- data.frame(te$x, y = te$y)
    } else {
      d <- s$d
      i <- sample(nrow(d), round(0.75 * nrow(d)))
      train <- d[i, ]
      test <- d[-i, ]
      # test rows with a factor level the training rows lack are dropped
      # (no model can predict them; Ozone's 31 days of the month)
      used <- if ("." %in% all.vars(s$f)) names(d) else all.vars(s$f)
      for (v in intersect(used, names(d)[vapply(d, is.factor, TRUE)])) {
        test <- test[test[[v]] %in% unique(train[[v]]), ]
      }
    }
    yname <- all.vars(s$f)[1L]
    yt <- test[[yname]]
    rmse <- function(p) sqrt(mean((yt - p)^2))
    fits <- list(
      iso = function() {
        set.seed(seed); f <- rff_ridge(s$f, train, progress = FALSE); rmse(predict(f, test))
      },
      ard = function() {
        set.seed(seed); f <- rff_ridge(s$f, train, lengthscale = "ard", progress = FALSE)
        if (name == "friedman1") {
          top <- names(sort(rff_relevance(f), decreasing = TRUE))[1:5]
          ranked <<- c(ranked, sum(top %in% paste0("X", 1:5)))
        }
        rmse(predict(f, test))
      },
      iso_std = function() {
        p <- prepared(s$f, train, test, "std")
        set.seed(seed); f <- rff_ridge(p$x, train[[yname]], standardize = FALSE,
                                       progress = FALSE)
        rmse(predict(f, p$xt))
      },
      iso_fac1 = function() {
        p <- prepared(s$f, train, test, "fac1")
        set.seed(seed); f <- rff_ridge(p$x, train[[yname]], standardize = FALSE,
                                       progress = FALSE)
        rmse(predict(f, p$xt))
      },
      ksvm = function() {
        set.seed(seed); f <- ksvm(s$f, data = train); rmse(predict(f, test))
      },
      gausspr = function() {
        set.seed(seed); f <- suppressMessages(gausspr(s$f, data = train))
        rmse(predict(f, test))
      })
    for (m in names(fits)) {
      r <- timed(fits[[m]]())
      rows[[length(rows) + 1L]] <- data.frame(data = name, seed = seed, method = m,
                                              rmse = r$value, seconds = r$seconds)
      cat(sprintf("%-10s seed %d %-8s rmse %8.4f  %7.2f s\n", name, seed, m, r$value,
                  r$seconds))
    }
  }
}
res <- do.call(rbind, rows)
dir.create(file.path(".build", "bench"), showWarnings = FALSE, recursive = TRUE)
saveRDS(res, file.path(".build", "bench", "RESULTS-ard.rds"))
methods <- c("iso", "ard", "iso_std", "iso_fac1", "ksvm", "gausspr")
tab <- function(col) {
  a <- tapply(res[[col]], list(res$data, res$method), mean)[names(sets), methods]
  a
}
rm_tab <- tab("rmse")
s_tab <- tab("seconds")
wins <- sapply(names(sets), function(n) {
  r <- res[res$data == n, ]
  a <- r$rmse[r$method == "ard"]
  b <- r$rmse[r$method == "iso"]
  sprintf("%d/%d", sum(a < b), length(a))
})
md <- c("# lengthscale = \"ard\" and the factor coding, against the isotropic default",
        "",
        sprintf("`Rscript bench/ard.R --seeds %d` (%s; %s BLAS; %d cores). Means over %d random 75/25 splits (friedman1: fresh 1000/500 draws) of the test RMSE, then of the fit's elapsed seconds. `ard wins`: splits where ard's RMSE is below iso's.",
                nseeds, format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
                basename(extSoftVersion()[["BLAS"]]), parallel::detectCores(), nseeds),
        "", "## Test RMSE", "",
        paste0("| data | ", paste(methods, collapse = " | "), " | ard wins |"),
        paste0("|", paste(rep("---", length(methods) + 2L), collapse = "|"), "|"),
        vapply(names(sets), function(n) paste0("| ", n, " | ",
                                               paste(sprintf("%.3f", rm_tab[n, ]), collapse = " | "),
                                               " | ", wins[[n]], " |"), ""),
        "", "## Seconds per fit", "",
        paste0("| data | ", paste(methods, collapse = " | "), " |"),
        paste0("|", paste(rep("---", length(methods) + 1L), collapse = "|"), "|"),
        vapply(names(sets), function(n) paste0("| ", n, " | ",
                                               paste(sprintf("%.2f", s_tab[n, ]), collapse = " | "),
                                               " |"), ""),
        "", sprintf("friedman1: of the five inputs ARD ranked most relevant, %s were the five true ones (X1..X5), per draw.",
                    paste(ranked, collapse = ", ")))
writeLines(md, out)
cat(md, sep = "\n")
