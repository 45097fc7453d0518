# Mean squared Gram-matrix error of orthogonal and QMC features relative to
# i.i.d. features: Gaussian kernel, d = 8, n = 100 standard normal points,
# lengthscale by the median heuristic (and half of it), D = 2d, 8d, 32d,
# both variants, 500 independent maps per cell.
#
# Run from the package root after `make install`:
#   Rscript bench/samplers.R
# Prints a markdown table; its numbers are in bench/RESULTS-samplers.md.
.libPaths(c(".build/lib", .libPaths()))
library(rff)

set.seed(20161205)
d <- 8
n <- 100
reps <- 500
x <- matrix(rnorm(n * d), n, d)
l_median <- rff_median_lengthscale(x)

gram_mse <- function(K, D, lengthscale, variant, sampler) {
  vapply(seq_len(reps), function(r) {
    Z <- rff_features(x, D = D, lengthscale = lengthscale, variant = variant,
                      sampler = sampler, threads = 1)
    mean((tcrossprod(Z) - K)^2)
  }, numeric(1))
}

# ratio of means and its standard error (delta method, independent samples)
ratio <- function(new, iid) {
  r <- mean(new) / mean(iid)
  se <- r * sqrt(var(new) / (length(new) * mean(new)^2) +
                 var(iid) / (length(iid) * mean(iid)^2))
  sprintf("%.3f (%.3f)", r, se)
}

rows <- list()
for (ls in c(l_median, l_median / 2)) {
  K <- rff_kernel(x, lengthscale = ls)
  for (variant in c("pair", "phase")) for (mult in c(2, 8, 32)) {
    D <- mult * d
    iid <- gram_mse(K, D, ls, variant, "iid")
    orth <- gram_mse(K, D, ls, variant, "orthogonal")
    qmc <- gram_mse(K, D, ls, variant, "qmc")
    rows[[length(rows) + 1L]] <- data.frame(
      lengthscale = sprintf("%.3f", ls), variant = variant,
      D = sprintf("%d = %dd", D, mult),
      mse_iid = sprintf("%.3g", mean(iid)),
      orthogonal_over_iid = ratio(orth, iid),
      qmc_over_iid = ratio(qmc, iid))
  }
}
tab <- do.call(rbind, rows)
cat(sprintf("median heuristic lengthscale: %.4f; %d maps per cell\n\n", l_median, reps))
cat(paste0("| ", paste(names(tab), collapse = " | "), " |\n"))
cat(paste0("|", paste(rep("---", ncol(tab)), collapse = "|"), "|\n"))
for (i in seq_len(nrow(tab))) cat(paste0("| ", paste(unlist(tab[i, ]), collapse = " | "), " |\n"))
