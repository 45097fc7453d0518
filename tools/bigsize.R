# n * D above 2^31 through the streamed ridge fit (which never holds Z):
# one call on all rows must equal the statistics of two halves combined,
# and the fits from both must agree. Needs about 2 GB of memory.
# Usage: Rscript tools/bigsize.R   (make bigsize)
library(rff)
set.seed(31)
D <- 64L
n <- as.integer(2^31 / D) + 4097L       # n * D > 2^31
cat(sprintf("bigsize: n = %d rows, D = %d, n * D = %.4g (2^31 = %.4g)\n",
            n, D, as.double(n) * D, 2^31))
x <- matrix(runif(n), ncol = 1)
y <- sin(6 * x[, 1]) + rnorm(n, sd = 0.1)
map <- rff_map(1, D = D, lengthscale = 0.3)
t_all <- system.time(s_all <- rff_stats(x, y, map = map))[["elapsed"]]
h <- n %/% 2L
t_half <- system.time({
  s_half <- c(rff_stats(x[1:h, , drop = FALSE], y[1:h], map = map),
              rff_stats(x[(h + 1L):n, , drop = FALSE], y[(h + 1L):n], map = map))
})[["elapsed"]]
rel <- function(a, b) max(abs(a - b)) / max(abs(b))
d_ztz <- rel(s_half$ZtZ, s_all$ZtZ)
fit_all <- rff_ridge(s_all, lambda = 1e-6)
fit_half <- rff_ridge(s_half, lambda = 1e-6)
d_coef <- rel(coef(fit_half), coef(fit_all))
rmse <- sqrt(fit_all$rss[1] / n)
cat(sprintf("bigsize: Z'Z rel. diff %.2e, coefficients rel. diff %.2e, RMSE %.4f (noise sd 0.1)\n",
            d_ztz, d_coef, rmse))
cat(sprintf("bigsize: %.0f s for all rows, %.0f s for two halves\n", t_all, t_half))
ok <- s_all$n == n && d_ztz < 1e-10 && d_coef < 1e-8 && abs(rmse - 0.1) < 0.01
cat(if (ok) "bigsize: ok\n" else "bigsize: FAILED\n")
quit(status = if (ok) 0L else 1L)
