# Helpers shared by the benchmarks that fit data sets (bench/defaults.R,
# bench/features.R), sourced from the package root: `split(d)` is the 75/25
# train/test split of a data frame from the script's fixed `seed`;
# `from(pkg, name)` a data set of a package, or NULL when the package is
# missing.
split <- function(d) {
  d <- as.data.frame(d)
  set.seed(seed)
  rows <- sample(nrow(d), floor(0.75 * nrow(d)))
  list(train = d[rows, , drop = FALSE], test = d[-rows, , drop = FALSE])
}
from <- function(pkg, name) {
  if (!requireNamespace(pkg, quietly = TRUE)) return(NULL)
  e <- new.env()
  utils::data(list = name, package = pkg, envir = e)
  get(name, envir = e)
}
