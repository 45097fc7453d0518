# A classification problem for the rff_glm() tests (test-glm*.R).
glm_data <- function(n = 400, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(2 * n), n, 2)
  list(x = x, off = runif(n, -0.5, 0.5), w = sample(1:3, n, replace = TRUE),
       yb = rbinom(n, 1, plogis(sin(2 * x[, 1]) + x[, 2])),
       cnt = rpois(n, exp(0.5 + 0.4 * sin(2 * x[, 1]))),
       cls = factor(c("a", "b", "c")[1 + (x[, 1] > 0) + (x[, 2] > 0.3)]))
}
tight <- list(epsilon = 1e-15, maxit = 2000)
