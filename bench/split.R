# User and system CPU time of rff_features() on workload F1 (n = 50,000,
# d = 10, D = 1000, 1 thread): medians of 9 calls. System time is mostly the
# kernel zeroing the freshly allocated result. Run: Rscript bench/split.R
.libPaths(c(file.path(getwd(), ".build", "lib"), .libPaths()))
library(rff)
set.seed(1)
n <- 50000; d <- 10; D <- 1000
x <- matrix(rnorm(n * d), n, d)
for (v in c("phase", "pair")) {
  m <- rff_map(d, D = D, variant = v, lengthscale = sqrt(d))
  t <- replicate(9, {
    invisible(gc())
    st <- system.time(rff_features(x, map = m, threads = 1))
    c(st[["elapsed"]], st[["user.self"]], st[["sys.self"]])
  })
  cat(sprintf("F1 %-5s elapsed %.3f s  user %.3f s  sys %.3f s\n", v,
              median(t[1, ]), median(t[2, ]), median(t[3, ])))
}
