# Helpers shared by the benchmarks that fit data sets (bench/defaults.R,
# bench/features.R, bench/frontier.R, bench/midsize.R), sourced from the
# package root: `split(d)` is the 75/25 train/test split of a data frame
# from the script's fixed `seed`; `from(pkg, name)` a data set of a
# package, or NULL when the package is missing; `command_line(command,
# before, after)` a results file's line on the run: the command, the
# commit, the time, cores, BLAS and the load averages read from
# /proc/loadavg before and after.
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
command_line <- function(command, before, after) {
  commit <- tryCatch(system2("git", c("rev-parse", "--short", "HEAD"), stdout = TRUE,
                             stderr = FALSE),
                     error = function(e) character(), warning = function(w) character())
  field <- function(l) paste(strsplit(l, " ")[[1]][1:3], collapse = " ")
  sprintf("Command: `%s`%s, %s UTC; %d cores; BLAS %s; load average (1, 5, 15 min) %s before, %s after.",
          command, if (length(commit)) sprintf(" at commit %s", commit) else "",
          format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"), parallel::detectCores(),
          sessionInfo()$BLAS, field(before), field(after))
}
