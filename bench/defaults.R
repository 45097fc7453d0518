# Default fits at interactive speed: what a new user waits for, every call
# with ALL DEFAULT ARGUMENTS, on small and medium data sets, against the
# peers a user would try first:
#   rff:       rff::rff_glm(formula, train, progress = FALSE)    (classification)
#              rff::rff_ridge(formula, train, progress = FALSE)  (regression)
#              rff::rff_cv(formula, train, progress = FALSE)     (regression, extra column)
#   cv.glmnet: glmnet::cv.glmnet(model.matrix(formula, train)[, -1], y,
#              family = "multinomial" / "binomial" / "gaussian"), predicted at
#              lambda.min (type = "class" or "response")
#   ksvm:      kernlab::ksvm(formula, train)
#   ranger:    ranger::ranger(formula, train) (skipped when not installed)
# Data: iris, MASS::fgl, MASS::Pima.tr / Pima.te, mlbench::Sonar,
# mlbench::BostonHousing, mtcars, quakes, mlbench::Vehicle; with --large (or
# BENCH_DEFAULTS_LARGE=1) also ggplot2::diamonds (log(price) ~ .) and
# mlbench::LetterRecognition (first 16,000 rows train, the rest test).
# Every split is 75/25 from set.seed(20261201) (Pima comes split).
#
# All fits run in this one R process, round-robin per data set: cv.glmnet,
# the rff default fit, ksvm, ranger, rff_cv; that round three times for the
# fits whose first run took under 5 s (median of 3), once for the others.
# Each run starts from the same seed, so the runs compute the same fit; test
# accuracy (classification) or RMSE (regression) is that of the first run.
# Times are system.time(...)[["elapsed"]] of the fit (prediction excluded).
# Target 1: on every data set of at most 2,000 training rows the default fit
# takes at most max(2 x cv.glmnet's time, 0.5 s).
#
# Run from the package root after `make install` (rff in .build/lib):
#   Rscript bench/defaults.R              # writes bench/RESULTS-defaults.md
#   Rscript bench/defaults.R --openblas   # the same, then a second table from
#                                         # a child process under OpenBLAS, appended
#   Rscript bench/defaults.R --small      # iris, mtcars and Pima only; writes
#                                         # .build/bench/RESULTS-defaults-small.md
# Options: --large (ignored with --small), --out FILE (the results file),
# --only REGEX (the data sets whose names match), --tools LIST (a
# comma-separated subset of rff,cv.glmnet,ksvm,ranger,rff_cv; e.g.
# `--large --only diamonds --tools rff,ranger` for target 3 alone, without
# ksvm's six minutes there). The script runs under the
# BLAS of its process and installs nothing (tools/install-deps.sh installs
# the peers, tools/install-openblas.sh OpenBLAS).
lib <- file.path(getwd(), ".build", "lib")
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(rff))
openblas_dir <- "/usr/lib/x86_64-linux-gnu/openblas-pthread"

args <- commandArgs(trailingOnly = TRUE)
small <- "--small" %in% args
large <- !small && ("--large" %in% args || Sys.getenv("BENCH_DEFAULTS_LARGE") == "1")
openblas <- "--openblas" %in% args
append <- "--append" %in% args   # internal: the OpenBLAS child adds its table
out <- if ("--out" %in% args) args[match("--out", args) + 1L] else if (small)
  file.path(".build", "bench", "RESULTS-defaults-small.md") else "bench/RESULTS-defaults.md"
if (is.na(out) || startsWith(out, "--")) stop("--out needs a file name")
seed <- 20261201L
arg_value <- function(flag) {
  if (!(flag %in% args)) return(NULL)
  v <- args[match(flag, args) + 1L]
  if (is.na(v) || startsWith(v, "--")) stop(flag, " needs a value")
  v
}
only <- arg_value("--only")
tools_only <- if (!is.null(v <- arg_value("--tools"))) strsplit(v, ",", fixed = TRUE)[[1]]

load_avg <- function() paste(strsplit(readLines("/proc/loadavg", warn = FALSE), " ")[[1]][1:3],
                             collapse = " ")
fmt <- function(x, digits = 2) ifelse(is.na(x), "", formatC(x, format = "f", digits = digits))
pkg_version <- function(p) if (requireNamespace(p, quietly = TRUE)) as.character(packageVersion(p)) else "not installed"
machine <- function(before, after) {
  si <- sessionInfo()
  info <- rff::rff_blas_info()
  sprintf(paste0("Machine: %d cores (nproc), load average (1, 5, 15 min) %s before, %s after; ",
                 "%s; BLAS %s (rff_blas_info(): %s, %d BLAS threads, rff threads %d, split \"%s\"); ",
                 "rff %s, glmnet %s, kernlab %s, ranger %s; %s UTC."),
          parallel::detectCores(), before, after, si$R.version$version.string, si$BLAS,
          info$blas, info$blas_threads, info$threads, info$split, packageVersion("rff"),
          pkg_version("glmnet"), pkg_version("kernlab"), pkg_version("ranger"),
          format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"))
}

# ---- data sets ----

# Each gives its data frames (train, test) or NULL when its package is
# missing (split() and from(): bench/data-sets.R).
source(file.path("bench", "data-sets.R"))
sets <- list(
  list(name = "iris", formula = Species ~ ., task = "classification",
       data = function() split(iris)),
  list(name = "MASS::fgl", formula = type ~ ., task = "classification",
       data = function() if (!is.null(d <- from("MASS", "fgl"))) split(d)),
  list(name = "MASS::Pima.tr / Pima.te", formula = type ~ ., task = "classification",
       data = function() if (requireNamespace("MASS", quietly = TRUE))
         list(train = from("MASS", "Pima.tr"), test = from("MASS", "Pima.te"))),
  list(name = "mlbench::Sonar", formula = Class ~ ., task = "classification",
       data = function() if (!is.null(d <- from("mlbench", "Sonar"))) split(d)),
  list(name = "mlbench::BostonHousing", formula = medv ~ ., task = "regression",
       data = function() if (!is.null(d <- from("mlbench", "BostonHousing"))) split(d)),
  list(name = "mtcars", formula = mpg ~ ., task = "regression",
       data = function() split(mtcars)),
  list(name = "quakes", formula = mag ~ ., task = "regression",
       data = function() split(quakes)),
  list(name = "mlbench::Vehicle", formula = Class ~ ., task = "classification",
       data = function() if (!is.null(d <- from("mlbench", "Vehicle"))) split(d)),
  list(name = "ggplot2::diamonds", formula = log(price) ~ ., task = "regression", large = TRUE,
       data = function() if (!is.null(d <- from("ggplot2", "diamonds"))) split(d)),
  list(name = "mlbench::LetterRecognition", formula = lettr ~ ., task = "classification",
       large = TRUE, data = function() if (!is.null(d <- from("mlbench", "LetterRecognition")))
         list(train = d[1:16000, ], test = d[-(1:16000), ])))
is_large <- vapply(sets, function(s) isTRUE(s$large), TRUE)
sets <- if (small) sets[vapply(sets, function(s) s$name %in% c("iris", "mtcars", "MASS::Pima.tr / Pima.te"), TRUE)] else
  if (large) sets else sets[!is_large]
if (!is.null(only)) sets <- sets[grepl(only, vapply(sets, `[[`, "", "name"))]

# ---- the fits ----

response <- function(formula, d) model.response(model.frame(formula, d))
score <- function(task, pred, y) {
  if (task == "classification") mean(as.character(pred) == as.character(y))
  else sqrt(mean((as.numeric(pred) - y)^2))
}
have <- vapply(c(glmnet = "glmnet", kernlab = "kernlab", ranger = "ranger"),
               requireNamespace, TRUE, quietly = TRUE)
for (p in names(have)[have]) loadNamespace(p)   # package loading is not timed

# The fits of one data set, in the order they run: each a function of
# (formula, train) that fits, and one of (fit, formula, test) that predicts. NULL
# entries (peer not installed) are skipped.
fits_for <- function(task, nclass) {
  fam <- if (task == "regression") "gaussian" else if (nclass > 2L) "multinomial" else "binomial"
  rff_fit <- if (task == "classification") {
    list(fit = function(f, train) rff::rff_glm(f, train, progress = FALSE),
         predict = function(fit, f, test) predict(fit, test, type = "class"))
  } else {
    list(fit = function(f, train) rff::rff_ridge(f, train, progress = FALSE),
         predict = function(fit, f, test) predict(fit, test))
  }
  list(
    cv.glmnet = if (have[["glmnet"]]) list(
      fit = function(f, train) {
        y <- response(f, train)
        glmnet::cv.glmnet(model.matrix(f, train)[, -1], y, family = fam)
      },
      predict = function(fit, f, test) {
        x <- model.matrix(f, test)[, -1]
        predict(fit, x, s = "lambda.min", type = if (fam == "gaussian") "response" else "class")
      }),
    rff = rff_fit,
    ksvm = if (have[["kernlab"]]) list(
      fit = function(f, train) kernlab::ksvm(f, train),
      predict = function(fit, f, test) kernlab::predict(fit, test)),
    ranger = if (have[["ranger"]]) list(
      fit = function(f, train) ranger::ranger(f, train),
      predict = function(fit, f, test) predict(fit, test)$predictions),
    rff_cv = if (task == "regression") list(
      fit = function(f, train) rff::rff_cv(f, train, progress = FALSE),
      predict = function(fit, f, test) predict(fit, test)))
}

# One timed run of a fit: the elapsed time, warnings collected (muffled),
# an error kept as its message; with `score_it`, the test score of the fit.
run_once <- function(spec, f, d, task, score_it) {
  warns <- character()
  set.seed(seed + 1L)
  fit <- NULL
  err <- NULL
  t <- system.time(tryCatch(withCallingHandlers(
    fit <- spec$fit(f, d$train),
    warning = function(w) { warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning") }
  ), error = function(e) err <<- conditionMessage(e)))[["elapsed"]]
  if (!is.null(err)) t <- NA_real_
  value <- NA_real_
  if (score_it && is.null(err)) {
    value <- tryCatch(score(task, spec$predict(fit, f, d$test), response(f, d$test)),
                      error = function(e) { err <<- paste("predict:", conditionMessage(e)); NA_real_ })
  }
  list(seconds = t, value = value, warnings = warns, error = err)
}

bench_set <- function(s) {
  d <- s$data()
  if (is.null(d)) {
    message(sprintf("%s: skipped (package not installed)", s$name))
    return(NULL)
  }
  y <- response(s$formula, d$train)
  fits <- Filter(Negate(is.null), fits_for(s$task, nlevels(y)))
  if (!is.null(tools_only)) fits <- fits[names(fits) %in% tools_only]
  runs <- setNames(vector("list", length(fits)), names(fits))
  for (round in 1:3) for (nm in names(fits)) {
    if (round > 1L) {
      first <- runs[[nm]][[1L]]
      if (!is.null(first$error) || first$seconds >= 5) next
    }
    r <- run_once(fits[[nm]], s$formula, d, s$task, round == 1L)
    runs[[nm]] <- c(runs[[nm]], list(r))
  }
  res <- lapply(runs, function(rs) list(
    seconds = median(vapply(rs, `[[`, 0, "seconds")), runs = length(rs), value = rs[[1L]]$value,
    warnings = unique(unlist(lapply(rs, `[[`, "warnings"))), error = rs[[1L]]$error))
  line <- paste(vapply(names(res), function(nm) sprintf("%s %s s", nm, fmt(res[[nm]]$seconds, 2)), ""),
                collapse = ", ")
  message(sprintf("%s (%d train rows): %s", s$name, nrow(d$train), line))
  list(name = s$name, task = s$task, formula = deparse1(s$formula), n_train = nrow(d$train),
       n_test = nrow(d$test), nclass = nlevels(y), res = res)
}

# ---- the report ----

tools <- c("rff", "cv.glmnet", "ksvm", "ranger", "rff_cv")
cell <- function(b, tool, what) {
  r <- b$res[[tool]]
  if (is.null(r)) return(if (tool == "rff_cv" && b$task == "classification") "" else "n/a")
  if (!is.null(r$error)) return("error")
  if (what == "seconds") return(sprintf("%s%s", fmt(r$seconds), if (r$runs == 1L) " (1 run)" else ""))
  if (b$task == "classification") fmt(100 * r$value, 1) else if (is.na(r$value)) "" else formatC(r$value, digits = 4, format = "fg", flag = "#")
}
# the rff default fit against cv.glmnet: ratio, target, pass (only
# data sets of at most 2,000 training rows count for target 1)
target_of <- function(b) {
  t_rff <- if (is.null(b$res$rff$error)) b$res$rff$seconds else NA
  t_glm <- if (!is.null(b$res$cv.glmnet) && is.null(b$res$cv.glmnet$error)) b$res$cv.glmnet$seconds else NA
  target <- max(2 * t_glm, 0.5)
  counts <- b$n_train <= 2000
  pass <- if (!counts) NA else if (is.na(t_rff)) FALSE else if (is.na(target)) NA else t_rff <= target
  list(ratio = t_rff / t_glm, target = target, counts = counts, pass = pass)
}
section <- function(results, skipped, before, after) {
  si_blas <- sessionInfo()$BLAS
  blas_name <- if (grepl("openblas", si_blas, ignore.case = TRUE)) "OpenBLAS" else
    if (grepl("/blas/libblas", si_blas)) "reference BLAS" else si_blas
  tg <- lapply(results, target_of)
  rows <- vapply(seq_along(results), function(i) {
    b <- results[[i]]
    t <- tg[[i]]
    paste0("| ", paste(c(
      b$name, if (b$task == "classification") sprintf("classification (%d)", b$nclass) else "regression",
      format(b$n_train, big.mark = ","), format(b$n_test, big.mark = ","),
      vapply(tools, cell, "", b = b, what = "seconds"),
      fmt(t$ratio), fmt(t$target),
      if (!t$counts) "(> 2,000 rows)" else if (is.na(t$pass)) "n/a" else if (t$pass) "pass" else "FAIL",
      if (b$task == "classification") "accuracy %" else "RMSE",
      vapply(tools, cell, "", b = b, what = "value")), collapse = " | "), " |")
  }, "")
  counted <- Filter(function(t) t$counts, tg)
  passed <- sum(vapply(counted, function(t) isTRUE(t$pass), TRUE))
  notes <- unlist(lapply(results, function(b) lapply(names(b$res), function(nm) {
    r <- b$res[[nm]]
    c(if (!is.null(r$error)) sprintf("- **Error** in %s on %s: `%s`", nm, b$name, r$error),
      if (length(r$warnings)) sprintf("- Warning%s in %s on %s: %s", if (length(r$warnings) > 1L) "s" else "",
                                      nm, b$name, paste(sprintf("`%s`", r$warnings), collapse = "; ")))
  })))
  if (any(!have)) notes <- c(sprintf("- Not installed, so left out (`n/a`): %s.",
                                     paste(names(have)[!have], collapse = ", ")), notes)
  if (length(skipped)) notes <- c(sprintf("- Data sets skipped, their package not installed: %s.",
                                          paste(skipped, collapse = ", ")), notes)
  c(sprintf("### %s", blas_name), "",
    machine(before, after), "",
    paste("| data | task (classes) | train rows | test rows | rff s | cv.glmnet s | ksvm s | ranger s |",
          "rff_cv s | rff / cv.glmnet | target s | target 1 | measure | rff | cv.glmnet | ksvm | ranger | rff_cv |"),
    paste0("|", paste(c("---", "---", rep("---:", 9), "---", "---", rep("---:", 5)), collapse = "|"), "|"),
    rows, "",
    sprintf(paste("Target 1 (the default fit within max(2 x cv.glmnet, 0.5 s) on every data set of",
                  "at most 2,000 training rows): %s, %d of %d data sets."),
            if (!length(counted)) "not measured" else if (passed == length(counted)) "met" else "MISSED",
            passed, length(counted)),
    if (length(notes)) c("", notes))
}

intro <- function() {
  commit <- tryCatch(system2("git", c("rev-parse", "--short", "HEAD"), stdout = TRUE, stderr = FALSE),
                     error = function(e) character(), warning = function(w) character())
  c("## Default fits at interactive speed (bench/defaults.R)", "",
    sprintf("Command (from the package root, after `make install`; `make bench` runs it): `Rscript bench/defaults.R%s`%s.",
            paste(c("", if (small) "--small", if (large) "--large", if (openblas) "--openblas",
                    if (!is.null(only)) c("--only", only),
                    if (!is.null(tools_only)) c("--tools", paste(tools_only, collapse = ","))),
                  collapse = " "),
            if (length(commit)) sprintf(", at commit %s", commit) else ""), "",
    paste("Every call has all its default arguments, as a new user types it:",
          "`rff_glm(formula, train, progress = FALSE)` (classification) or",
          "`rff_ridge(formula, train, progress = FALSE)` (regression) for rff, against",
          "`glmnet::cv.glmnet(model.matrix(formula, train)[, -1], y, family = )` (multinomial,",
          "binomial or gaussian; predictions at `lambda.min`), `kernlab::ksvm(formula, train)`",
          "and `ranger::ranger(formula, train)` (which uses all cores by default);",
          "`rff_cv(formula, train, progress = FALSE)` for regression. The splits are 75/25 train/test",
          sprintf("from `set.seed(%d)` (Pima comes split; LetterRecognition: first 16,000 rows train).", seed),
          "All fits run in one R process, round-robin per data set (cv.glmnet, rff, ksvm, ranger,",
          "rff_cv) so that the rff fit is timed just after its peer; seconds are the elapsed time of",
          "the fit (`system.time()`, prediction and package loading excluded), the median of 3",
          "runs for fits under 5 s, else one run. Accuracy (%) and RMSE are on the test rows.",
          "The target is max(2 x cv.glmnet's time, 0.5 s), for the data sets of at most 2,000",
          "training rows (target 1 of the issue)."))
}

# ---- main ----

if (openblas && append) stop("--openblas and --append exclude each other")
before <- load_avg()
message(machine(before, before))
results <- lapply(sets, bench_set)
skipped <- vapply(sets, `[[`, "", "name")[vapply(results, is.null, TRUE)]
md <- section(Filter(Negate(is.null), results), skipped, before, load_avg())
dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
if (append) {
  cat(c("", md), file = out, sep = "\n", append = TRUE)
} else {
  writeLines(c(intro(), "", md), out)
}
cat(md, sep = "\n")
cat(sprintf("\n%s %s\n", if (append) "appended to" else "wrote", out))

# --openblas: the same run in a child Rscript whose library path puts
# Debian's OpenBLAS first (as bench/threads.R does), the BLAS at its own
# default threads; the child appends its table to the same file.
if (openblas) {
  if (!file.exists(file.path(openblas_dir, "libblas.so.3"))) {
    msg <- sprintf("OpenBLAS table skipped: %s not found (tools/install-openblas.sh installs it).",
                   openblas_dir)
    message(msg)
    cat(c("", msg), file = out, sep = "\n", append = TRUE)
  } else {
    file_arg <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
    script <- if (length(file_arg)) file_arg[1L] else "bench/defaults.R"
    message("defaults bench: OpenBLAS ...")
    status <- system2("env", c("-u", "OPENBLAS_NUM_THREADS", "-u", "OMP_NUM_THREADS",
                               sprintf("R_LD_LIBRARY_PATH=%s:%s", openblas_dir, R.home("lib")),
                               sprintf("LD_LIBRARY_PATH=%s", openblas_dir),
                               file.path(R.home("bin"), "Rscript"), script, "--append",
                               if (small) "--small", if (large) "--large",
                               if (!is.null(only)) c("--only", shQuote(only)),
                               if (!is.null(tools_only)) c("--tools", paste(tools_only, collapse = ",")),
                               "--out", shQuote(out)))
    if (status != 0) stop("the OpenBLAS run failed (status ", status, ")")
  }
}
