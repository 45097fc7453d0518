# The package's main job: reproduce the two convergence figures as PNG
# files, fit kernel ridge regression on real data, and print a summary.
# Usage: Rscript tools/demo.R [output folder]   (default: rff-demo)
library(rff)
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args)) args[1] else "rff-demo"
dir.create(out, showWarnings = FALSE, recursive = TRUE)
set.seed(2007)
cols <- c("#D55E00", "#0072B2")

# Figure 1: exact kernels and single random-phase approximations
delta <- seq(-4, 4, length.out = 801)
png(file.path(out, "figure1.png"), width = 900, height = 420, res = 110)
op <- par(mfrow = c(1, 2), mar = c(4, 4, 2, 1))
for (k in c("gaussian", "laplace")) {
  plot(delta, rff_kernel(delta, 0, kernel = k), type = "l", lwd = 2, ylim = c(-0.5, 1.3),
       xlab = expression(delta), ylab = expression(kappa(delta)),
       main = if (k == "gaussian") "Gaussian" else "Laplace")
  for (i in 1:2) {
    Z <- rff_features(c(0, delta), D = c(20, 500)[i], kernel = k, variant = "phase")
    lines(delta, Z[-1, ] %*% Z[1, ], col = cols[i])
  }
  legend("topright", c("exact", "D = 20", "D = 500"), col = c("black", cols),
         lwd = c(2, 1, 1), bty = "n", cex = 0.8)
}
par(op); invisible(dev.off())

# Figure 2: sd at delta = 1 (simulation and Proposition 2), mean sup error
Ds <- 2^(4:11)
reps <- 400
t_fig2 <- system.time({
  point <- lapply(c(phase = "phase", pair = "pair"), function(v)
    rff_kernel_error(x = 1, y = 0, D = Ds, reps = reps, variant = v, keep = TRUE))
  sup <- rff_kernel_error(x = seq(-4, 4, length.out = 401), y = 0, D = Ds, reps = reps,
                          variant = "phase")
})[["elapsed"]]
sim_sd <- sapply(point, function(e) tapply(attr(e, "estimate")[1, 1, ], e$D, sd))
theory_sd <- sapply(c(phase = "phase", pair = "pair"),
                    function(v) sqrt(rff_variance(1, D = Ds, variant = v)))
mean_sup <- tapply(sup$max_abs, sup$D, mean)
slope <- unname(coef(lm(log(mean_sup) ~ log(Ds)))[2])
png(file.path(out, "figure2.png"), width = 900, height = 420, res = 110)
op <- par(mfrow = c(1, 2), mar = c(4, 4, 2, 1))
matplot(Ds, sim_sd, log = "xy", pch = c(1, 2), col = cols, xlab = "D",
        ylab = "sd of the estimate", main = expression(delta == 1))
matlines(Ds, theory_sd, lty = 1, col = cols)
legend("topright", c("random phase", "pairs"), pch = c(1, 2), col = cols, lty = 1,
       bty = "n", cex = 0.8)
plot(Ds, mean_sup, log = "xy", pch = 19, xlab = "D", ylab = "mean max error",
     main = expression(abs(delta) <= 4))
lines(Ds, mean_sup[1] * (Ds / Ds[1])^(-1/2), lty = 2)
legend("topright", c("simulated", "slope -1/2"), pch = c(19, NA), lty = c(NA, 2),
       bty = "n", cex = 0.8)
par(op); invisible(dev.off())

# Kernel ridge regression on the Boston housing data
data(Boston, package = "MASS")
x <- scale(as.matrix(Boston[, setdiff(names(Boston), "medv")]))
y <- Boston$medv
test <- sample(nrow(x), 100)
rmse <- function(pred) sqrt(mean((y[test] - pred)^2))
t_cv <- system.time(cv <- rff_cv(x[-test, ], y[-test], folds = 10, D = 300,
  lengthscale = rff_median_lengthscale(x[-test, ]) * c(0.25, 0.5, 1, 2)))[["elapsed"]]
ell <- cv$lengthscale_best[[1]]
lam <- cv$lambda_best
t_rff <- system.time(fit <- rff_ridge(x[-test, ], y[-test], D = 1000, lengthscale = ell,
                                      lambda = lam, progress = FALSE))[["elapsed"]]
t_exact <- system.time({
  K <- rff_kernel(x[-test, ], lengthscale = ell)
  n <- nrow(K)
  Kc <- K - rowMeans(K) - rep(colMeans(K), each = n) + mean(K)
  alpha <- solve(Kc + n * lam * diag(n), y[-test] - mean(y[-test]))
  Kte <- rff_kernel(x[test, ], x[-test, ], lengthscale = ell)
  pred_exact <- mean(y[-test]) + (Kte - rowMeans(Kte) -
                  rep(colMeans(K), each = length(test)) + mean(K)) %*% alpha
})[["elapsed"]]

cat("rff demo\n========\n")
cat(sprintf("Figures written to %s/figure1.png and %s/figure2.png\n\n", out, out))
cat("Convergence (Gaussian kernel, 400 replications per D, D = 16..2048):\n")
cat(sprintf("  sd at delta = 1, largest deviation from Proposition 2: %.1f%%\n",
            100 * max(abs(sim_sd / theory_sd - 1))))
cat(sprintf("  variance ratio phase / pair at delta = 1: %.3f (theory %.3f)\n",
            mean(sim_sd[, "phase"]^2 / sim_sd[, "pair"]^2),
            rff_variance(1, 2, variant = "phase") / rff_variance(1, 2, variant = "pair")))
cat(sprintf("  slope of log mean sup error on log D: %.3f (theory -0.5); %.1f s\n\n",
            slope, t_fig2))
cat("Kernel ridge regression, Boston housing (406 train / 100 test rows):\n")
cat(sprintf("  rff_cv: lengthscale %.3g, lambda %.3g (%.1f s)\n", ell, lam, t_cv))
cat(sprintf("  test RMSE  rff_ridge D = 1000: %.3f (%.2f s)   exact KRR: %.3f (%.2f s)\n",
            rmse(predict(fit, x[test, ])), t_rff, rmse(pred_exact), t_exact))
