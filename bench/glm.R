# Kernel logistic and multinomial regression: rff_glm() against the routes
# a user would take without it.
#
# G1, binary (time, peak memory, same solution): n = 100,000 rows, d = 10
# standard normal inputs, y ~ Bernoulli(plogis(2 sin(x1) + x2 x3)), Gaussian
# map with D = 1000 ("pair"), lengthscale 3, lambda = 1e-4, intercept, no
# standardization, so that all three routes minimize the same objective
#   (1/n) sum_i l_i + lambda/2 |beta|^2   (glmnet's with alpha = 0):
#   (a) rff_glm(x, y, map = m, lambda = lambda, standardize = FALSE, cache_mb = 0)
#       (streamed: every pass featurizes the rows again);
#   (b) the same with cache_mb = 2000 (the n x D features cached in memory);
#   (c) Z <- rff_features(x, map = m)
#       glmnet::glmnet(Z, y, family = "binomial", alpha = 0, lambda = lambda,
#                      standardize = FALSE).
# G2, 26 classes (accuracy, time): mlbench::LetterRecognition, a fixed random
# split into 16,000 training and 4,000 test rows:
#   rff_glm(lettr ~ ., data = train) with its defaults (standardized inputs,
#   D from n, lengthscale "auto", lambda by 5-fold cross-validation over a path
#   of 20 values); the same with lambda = the lambda_best of that fit (the cost
#   of one lambda); kernlab::ksvm(lettr ~ ., data = train) (RBF kernel, its
#   defaults).
#
# Every route runs in a fresh child R process (Rscript), one after another, so
# that its peak resident memory (VmHWM from /proc/self/status: R heap, BLAS
# workspace, C buffers) and its elapsed time are its own. A "data only" child
# loads the same packages and makes the same data, and nothing else; memory is
# reported above it. Times are of the fit alone (data generation and package
# loading excluded). The objective of G1 is evaluated in this process, from
# each route's coefficients, by the same code for every route.
#
# Run from the package root after `make install` (rff in .build/lib):
#   Rscript bench/glm.R            # full size; writes bench/RESULTS-glm.md
#   Rscript bench/glm.R --small    # G1 at n = 5,000, D = 200; G2 on the first
#                                  # 3,000 rows, rff_glm() with D = 200; prints
#                                  # only (about 6 minutes on a busy 2-core machine)
# The full run takes hours, nearly all of it the default rff_glm() fit of G2
# (26 classes, 5 folds, 20 lambdas).
.libPaths(c(".build/lib", .libPaths()))
library(rff)

args <- commandArgs(trailingOnly = TRUE)
small <- "--small" %in% args
libs <- normalizePath(.libPaths())

load_avg <- function() paste(strsplit(readLines("/proc/loadavg", warn = FALSE), " ")[[1]][1:3],
                             collapse = " ")
machine <- function(before, after) {
  si <- sessionInfo()
  sprintf(paste0("Machine: %d cores (nproc), load average (1, 5, 15 min) %s before, %s after; ",
                 "%s; BLAS %s; rff %s; %s UTC."),
          parallel::detectCores(), before, after, si$R.version$version.string,
          sprintf("%s (rff_blas_info(): %s)", si$BLAS, rff::rff_blas_info()$blas),
          packageVersion("rff"), format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"))
}

# ---- running one route in a child process ----

# The child: load the packages, make the data, run `route` under a timer,
# read the peak RSS, then `after` (outside the timer and the peak), and save
# a list with the times, the peak and `value` (what `route` and `after` leave
# in the variable `value`). `route` may set `parts` (named sub-times).
child_script <- function(setup, route, after, out) {
  sprintf('
.libPaths(%s)
suppressPackageStartupMessages({ library(rff); %s })
%s
parts <- NULL
value <- NULL
invisible(gc())
t0 <- proc.time()
warns <- character()
withCallingHandlers({ %s },
  warning = function(w) { warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning") })
t1 <- proc.time()
hwm <- grep("^VmHWM", readLines("/proc/self/status"), value = TRUE)
hwm <- as.numeric(gsub("[^0-9]", "", hwm)) / 1024
%s
saveRDS(list(seconds = (t1 - t0)[["elapsed"]],
             cpu = sum((t1 - t0)[c("user.self", "sys.self", "user.child", "sys.child")], na.rm = TRUE),
             peak_mb = hwm, parts = parts, warnings = warns, value = value), "%s")
', deparse1(libs), paste(sprintf("loadNamespace(\"%s\")", setup$packages), collapse = "; "),
          setup$code, route, after, out)
}
run_child <- function(label, setup, route, after = "") {
  f <- tempfile(fileext = ".R")
  rds <- tempfile(fileext = ".rds")
  on.exit(unlink(c(f, rds)))
  writeLines(child_script(setup, route, after, rds), f)
  out <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", f),
                                  stdout = TRUE, stderr = TRUE))
  if (!file.exists(rds)) {
    stop(sprintf("route \"%s\" failed:\n%s", label, paste(out, collapse = "\n")))
  }
  r <- readRDS(rds)
  message(sprintf("  %-40s %8.1f s %8.0f MB%s", label, r$seconds, r$peak_mb,
                  if (length(r$warnings)) paste0("  warning: ", paste(unique(r$warnings), collapse = "; ")) else ""))
  r
}

fmt <- function(x, digits = 1) ifelse(is.na(x), "", formatC(x, format = "f", digits = digits))
yes_no <- function(ok) ifelse(is.na(ok), "", ifelse(ok, "yes", "no"))

# ---- G1: binary, time and memory against glmnet ----

g1 <- if (small) list(n = 5000L, D = 200L) else list(n = 100000L, D = 1000L)
g1$d <- 10L
g1$lambda <- 1e-4
g1_setup <- list(packages = "glmnet", code = sprintf('
set.seed(20261201)
n <- %dL; d <- %dL; D <- %dL; lambda <- %s
x <- matrix(rnorm(n * d), n, d)
y <- rbinom(n, 1, plogis(2 * sin(x[, 1]) + x[, 2] * x[, 3]))
m <- rff_map(d, D = D, lengthscale = 3)
', g1$n, g1$d, g1$D, format(g1$lambda)))
rff_route <- function(cache_mb) sprintf(
  'fit <- rff_glm(x, y, map = m, lambda = lambda, standardize = FALSE, cache_mb = %d)', cache_mb)
rff_after <- paste('value <- list(a0 = fit$intercept[1L], beta = drop(fit$coefficients),',
                   'iterations = fit$iterations, converged = fit$converged, cached = fit$cached)')
g1_routes <- list(
  "data only" = list(route = "NULL", after = ""),
  "(a) rff_glm(), streamed (cache_mb = 0)" = list(route = rff_route(0), after = rff_after),
  "(b) rff_glm(), cached (cache_mb = 2000)" = list(route = rff_route(2000), after = rff_after),
  "(c) rff_features() + glmnet(alpha = 0)" = list(
    route = paste(
      's <- proc.time(); Z <- rff_features(x, map = m); s1 <- proc.time()',
      'fit <- glmnet::glmnet(Z, y, family = "binomial", alpha = 0, lambda = lambda, standardize = FALSE)',
      's2 <- proc.time()',
      'parts <- c(featurize = (s1 - s)[["elapsed"]], glmnet = (s2 - s1)[["elapsed"]])', sep = "\n"),
    after = paste('cf <- as.numeric(as.matrix(coef(fit)))',
                  'value <- list(a0 = cf[1L], beta = cf[-1L], iterations = fit$npasses, converged = fit$jerr == 0)',
                  sep = "\n")))

message(sprintf("G1: n = %d, d = %d, D = %d", g1$n, g1$d, g1$D))
g1_load <- load_avg()
g1_res <- lapply(names(g1_routes), function(nm) run_child(nm, g1_setup, g1_routes[[nm]]$route,
                                                          g1_routes[[nm]]$after))
g1_load <- c(g1_load, load_avg())
names(g1_res) <- names(g1_routes)

# the objective of each route's coefficients, on the same data and features
# (made again here from the same seed), rows in blocks
env <- new.env()
eval(parse(text = g1_setup$code), env)
objective <- function(fits) {
  B <- sapply(fits, function(v) v$beta)
  a0 <- sapply(fits, function(v) v$a0)
  loss <- numeric(length(fits))
  for (rows in split(seq_len(env$n), ceiling(seq_len(env$n) / 10000))) {
    eta <- rff_features(env$x[rows, , drop = FALSE], map = env$m) %*% B
    eta <- sweep(eta, 2L, a0, "+")
    yy <- env$y[rows]
    loss <- loss + colSums(pmax(eta, 0) + log1p(exp(-abs(eta))) - yy * eta)
  }
  loss / env$n + env$lambda / 2 * colSums(B^2)
}
fits <- lapply(g1_res[-1L], `[[`, "value")
obj <- objective(fits)
ref <- length(fits)  # (c)
coef_diff <- sapply(fits, function(v) max(abs(c(v$a0 - fits[[ref]]$a0, v$beta - fits[[ref]]$beta))))
coef_scale <- max(abs(c(fits[[ref]]$a0, fits[[ref]]$beta)))

g1_tab <- data.frame(route = names(g1_res),
                     seconds = sapply(g1_res, `[[`, "seconds"),
                     cpu = sapply(g1_res, `[[`, "cpu"),
                     peak = sapply(g1_res, `[[`, "peak_mb"),
                     stringsAsFactors = FALSE, row.names = NULL)
g1_tab$extra <- g1_tab$peak - g1_tab$peak[1L]
last <- nrow(g1_tab)
g1_tab$time_ratio <- g1_tab$seconds / g1_tab$seconds[last]
g1_tab$mem_ratio <- g1_tab$extra / g1_tab$extra[last]
g1_tab$objective <- c(NA, obj)
g1_tab$obj_diff <- c(NA, obj - obj[ref])
g1_tab$coef_diff <- c(NA, coef_diff)
g1_tab$iterations <- c(NA, sapply(fits, function(v) sum(v$iterations)))
g1_tab$time_ok <- g1_tab$time_ratio <= 0.5
g1_tab$mem_ok <- g1_tab$mem_ratio <= 0.1
g1_tab[c(1L, last), c("time_ratio", "mem_ratio", "time_ok", "mem_ok")] <- NA
g1_tab[1L, c("seconds", "cpu")] <- NA
parts <- g1_res[[last]]$parts
g1_md <- c(
  sprintf("### G1: binary, n = %s, d = %d, D = %d, lambda = %g", format(g1$n, big.mark = ","),
          g1$d, g1$D, g1$lambda), "",
  machine(g1_load[1L], g1_load[2L]), "",
  "| route | wall s | time / (c) | CPU s | peak RSS MB | above data only MB | memory / (c) | objective | objective - (c) | max abs coef diff to (c) | iterations | time <= 0.5 (c) | memory <= 10% (c) |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
  sprintf("| %s | %s | %s | %s | %.0f | %.0f | %s | %s | %s | %s | %s | %s | %s |",
          g1_tab$route, fmt(g1_tab$seconds), fmt(g1_tab$time_ratio, 2), fmt(g1_tab$cpu),
          g1_tab$peak, g1_tab$extra, fmt(g1_tab$mem_ratio, 3),
          ifelse(is.na(g1_tab$objective), "", sprintf("%.10f", g1_tab$objective)),
          ifelse(is.na(g1_tab$obj_diff), "", sprintf("%.1e", g1_tab$obj_diff)),
          ifelse(is.na(g1_tab$coef_diff), "", sprintf("%.1e", g1_tab$coef_diff)),
          ifelse(is.na(g1_tab$iterations), "", g1_tab$iterations),
          yes_no(g1_tab$time_ok), yes_no(g1_tab$mem_ok)),
  "",
  sprintf(paste("Route (c): featurization %.1f s, glmnet %.1f s. Largest coefficient of (c) in",
                "absolute value: %.2f. Iterations: L-BFGS iterations for rff_glm(), passes of",
                "coordinate descent (`npasses`) for glmnet. rff_glm() and rff_features() use",
                "their default of %d threads; glmnet runs on one."),
          parts[["featurize"]], parts[["glmnet"]], coef_scale, rff:::default_threads()),
  sprintf(paste("The objective at (a)'s coefficients is %s than at (c)'s by %.1e: the coefficients",
                "differ by what is left of the stopping rules (glmnet's default `thresh` = 1e-7,",
                "rff_glm()'s `epsilon` = 1e-8)."),
          if (obj[1L] <= obj[ref]) "lower" else "higher", abs(obj[1L] - obj[ref])))
warn1 <- unlist(lapply(names(g1_res), function(nm) {
  w <- unique(g1_res[[nm]]$warnings)
  if (length(w)) sprintf("Warning in %s: %s", nm, paste(w, collapse = "; "))
}))
if (length(warn1)) g1_md <- c(g1_md, "", warn1)
cat(g1_md, sep = "\n")
cat("\n")

# ---- G2: 26 classes against kernlab::ksvm ----

# --small also gives rff_glm() D = 200: its default D is at least 1000, and
# 26 classes on a path of 20 lambdas with 5 folds would take half an hour
g2 <- if (small) list(rows = 3000L, train = 2400L, extra = ", D = 200") else
  list(rows = 20000L, train = 16000L, extra = "")
g2_setup <- list(packages = c("kernlab", "mlbench"), code = sprintf('
data("LetterRecognition", package = "mlbench")
dat <- LetterRecognition[seq_len(%dL), ]
set.seed(20261202)
train_rows <- sample(nrow(dat), %dL)
train <- dat[train_rows, ]
test <- dat[-train_rows, ]
set.seed(20261203)
', g2$rows, g2$train))
# prediction on the test rows is timed apart, after the peak is read
g2_after <- function(pred) sprintf(paste(
  'tp <- system.time(pred <- %s)[["elapsed"]]',
  'value <- c(value, list(accuracy = mean(as.character(pred) == as.character(test$lettr)), predict_s = tp))',
  sep = "\n"), pred)
rff_glm_info <- paste(
  'value <- list(lambda_best = fit$lambda_best, nlambda = length(fit$lambda), D = fit$map$D,',
  'lengthscale = fit$map$lengthscale, iterations = sum(fit$iterations), converged = all(fit$converged),',
  'best = fit$best, lambda_min = min(fit$lambda),',
  'cached = fit$cached)', sep = "\n")
rff_pred <- 'predict(fit, test, type = "class")'

message(sprintf("G2: LetterRecognition, %d training and %d test rows", g2$train, g2$rows - g2$train))
g2_load <- load_avg()
g2_res <- list()
g2_res[["data only"]] <- run_child("data only", g2_setup, "NULL")
# The default fit (lambda by 5-fold CV over the path) takes hours at full
# size (26 classes, and CV prefers the path's smallest lambdas, which cost
# the most iterations): it runs in --small mode, or with BENCH_GLM_DEFAULT=1;
# otherwise the one-lambda route takes BENCH_GLM_LAMBDA (default 1e-6, the
# value the default fit chose on the 2,400-row subset of --small).
run_default <- small || Sys.getenv("BENCH_GLM_DEFAULT") == "1"
default_call <- sprintf("rff_glm(lettr ~ ., data = train%s)", g2$extra)
if (run_default) {
  g2_res[[default_call]] <- run_child(
    "rff_glm(), defaults", g2_setup, paste("fit <-", default_call),
    paste(rff_glm_info, g2_after(rff_pred), sep = "\n"))
  lambda_best <- g2_res[[2L]]$value$lambda_best
} else {
  lambda_best <- as.numeric(Sys.getenv("BENCH_GLM_LAMBDA", "1e-6"))
}
one_label <- sprintf("rff_glm(lettr ~ ., data = train%s, lambda = %.4g)", g2$extra, lambda_best)
g2_res[[one_label]] <- run_child(
  "rff_glm(), one lambda", g2_setup,
  sprintf("fit <- rff_glm(lettr ~ ., data = train%s, lambda = %.17g)", g2$extra, lambda_best),
  paste(rff_glm_info, g2_after(rff_pred), sep = "\n"))
g2_res[["kernlab::ksvm(lettr ~ ., data = train)"]] <- run_child(
  "kernlab::ksvm()", g2_setup, "fit <- kernlab::ksvm(lettr ~ ., data = train)",
  paste('value <- list(sigma = kernlab::kpar(kernlab::kernelf(fit))$sigma, nSV = kernlab::nSV(fit))',
        g2_after("kernlab::predict(fit, test)"), sep = "\n"))
g2_load <- c(g2_load, load_avg())

g2_tab <- data.frame(route = names(g2_res),
                     seconds = sapply(g2_res, `[[`, "seconds"),
                     cpu = sapply(g2_res, `[[`, "cpu"),
                     peak = sapply(g2_res, `[[`, "peak_mb"),
                     accuracy = sapply(g2_res, function(r) if (is.null(r$value$accuracy)) NA else r$value$accuracy),
                     predict_s = sapply(g2_res, function(r) if (is.null(r$value$predict_s)) NA else r$value$predict_s),
                     stringsAsFactors = FALSE, row.names = NULL)
g2_tab$extra <- g2_tab$peak - g2_tab$peak[1L]
last <- nrow(g2_tab)
g2_tab$time_ratio <- g2_tab$seconds / g2_tab$seconds[last]
g2_tab$acc_diff <- 100 * (g2_tab$accuracy - g2_tab$accuracy[last])
g2_tab$acc_ok <- g2_tab$acc_diff >= -1.5
g2_tab$time_ok <- g2_tab$time_ratio <= 1 / 3
g2_tab[c(1L, last), c("time_ratio", "acc_diff", "acc_ok", "time_ok")] <- NA
g2_tab[1L, c("seconds", "cpu")] <- NA
d2 <- if (run_default) g2_res[[2L]]$value
o2 <- g2_res[[last - 1L]]$value
k2 <- g2_res[[last]]$value
g2_md <- c(
  sprintf("### G2: 26 classes, mlbench::LetterRecognition, %s training / %s test rows",
          format(g2$train, big.mark = ","), format(g2$rows - g2$train, big.mark = ",")), "",
  machine(g2_load[1L], g2_load[2L]), "",
  "| route | test accuracy % | minus ksvm (points) | fit wall s | time / ksvm | CPU s | predict s | peak RSS MB | above data only MB | accuracy >= ksvm's - 1.5 points | time <= 1/3 ksvm |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
  sprintf("| %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f | %s | %s |",
          g2_tab$route, fmt(100 * g2_tab$accuracy, 2), fmt(g2_tab$acc_diff, 2), fmt(g2_tab$seconds),
          fmt(g2_tab$time_ratio, 2), fmt(g2_tab$cpu), fmt(g2_tab$predict_s, 2), g2_tab$peak, g2_tab$extra,
          yes_no(g2_tab$acc_ok), yes_no(g2_tab$time_ok)),
  "",
  if (run_default) sprintf(paste(
    "rff_glm() defaults chose D = %d, lengthscale %.3g (standardized inputs) and, by",
    "5-fold cross-validation over %d lambdas, lambda_best = %.4g (value %d of the path,",
    "whose smallest is %.4g; %d L-BFGS iterations on the path of all training rows, the",
    "folds' not counted; features %s)."),
    d2$D, d2$lengthscale, d2$nlambda, d2$lambda_best, d2$best, d2$lambda_min, d2$iterations,
    if (isTRUE(d2$cached)) "cached" else "streamed") else paste(
    "The default fit (lambda by cross-validation) was not run at this size (hours; see the",
    "--small table); lambda is the value it chose on the 2,400-row subset."),
  sprintf(paste("The one-lambda fit used D = %d, lengthscale %.3g (chosen by \"auto\"),",
                "%d iterations, features %s.",
                "ksvm: sigma = %.4g (sigest), C = 1, %d support vectors. Fit time excludes",
                "prediction on the test rows (column `predict s`)."),
          o2$D, o2$lengthscale, o2$iterations, if (isTRUE(o2$cached)) "cached" else "streamed",
          k2$sigma, sum(k2$nSV)))
warn2 <- unlist(lapply(names(g2_res), function(nm) {
  w <- unique(g2_res[[nm]]$warnings)
  if (length(w)) sprintf("Warning in %s: %s", nm, paste(w, collapse = "; "))
}))
if (length(warn2)) g2_md <- c(g2_md, "", warn2)
cat(g2_md, sep = "\n")

intro <- c(
  "## Kernel logistic and multinomial regression: `rff_glm()`", "",
  "Command (from the package root, after `make install`; `make bench` runs it):", "",
  "    Rscript bench/glm.R", "",
  paste("Every route runs in a fresh child R process, one after another in one run;",
        "times are the elapsed time of the fit (data generation and package loading",
        "excluded); CPU time is user + system time of the child during the fit. Peak RSS is",
        "the child's VmHWM (`/proc/self/status`: R heap, BLAS workspace, C buffers);",
        "\"above data only\" subtracts a child that loads the same packages and makes the same",
        "data and nothing else."), "",
  paste("G1 fits the same problem three ways: y ~ Bernoulli(plogis(2 sin(x1) + x2 x3)), x",
        "standard normal (d = 10), Gaussian map with D = 1000 `\"pair\"` features and",
        "lengthscale 3, lambda = 1e-4, unpenalized intercept, no standardization:",
        "(a) `rff_glm(x, y, map = m, lambda = lambda, standardize = FALSE, cache_mb = 0)`,",
        "(b) the same with `cache_mb = 2000` and (c) `Z <- rff_features(x, map = m);",
        "glmnet::glmnet(Z, y, family = \"binomial\", alpha = 0, lambda = lambda, standardize = FALSE)`.",
        "The objective (1/n) sum l_i + lambda/2 |beta|^2 is evaluated in the parent from each",
        "route's coefficients. Targets: time <= 0.5 and memory above data <= 10% of route (c)."), "",
  paste("G2 compares test accuracy and time on 26 classes: `rff_glm(lettr ~ ., data = train)`",
        "with its defaults, the same at the single lambda the default fit chose, and",
        "`kernlab::ksvm(lettr ~ ., data = train)` (RBF kernel, sigma by sigest, C = 1).",
        "Targets: accuracy within 1.5 points of ksvm and time <= 1/3 of ksvm's."))
commit <- tryCatch(system2("git", c("rev-parse", "--short", "HEAD"), stdout = TRUE, stderr = FALSE),
                   error = function(e) character(), warning = function(w) character())
if (length(commit)) intro <- c(intro, "", sprintf("At commit %s.", commit))
if (!small) {
  writeLines(c(intro, "", g1_md, "", g2_md), "bench/RESULTS-glm.md")
  cat("\nwrote bench/RESULTS-glm.md\n")
} else {
  cat("\n(--small: bench/RESULTS-glm.md not written)\n")
}
