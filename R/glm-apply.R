# Layer 7 (families): rff_glm_apply(): rff_glm() on chunks that stay on the
# workers of a parallel cluster or a future plan (or in this process): the
# chunks read once, then every solver pass one round over the workers.

#' Kernel logistic, multinomial and Poisson regression on chunks that stay where they are
#'
#' Fits what [rff_glm()] fits on all rows (with `map` given and
#' `standardize = FALSE`), when the rows are in chunks read by the workers
#' of a `parallel` cluster, of a `future` plan, or by this process. Each
#' worker calls `read(chunk)` once for each of its chunks and keeps the rows
#' (and their features, when they fit) for the whole fit; every evaluation
#' of the objective is then one round: the coefficients ((D + 1) x K
#' numbers) go out to every worker, and each sends back the loss and the
#' gradient of each of its chunks, which are added in chunk order.
#'
#' **Same result whatever the workers.** The chunks are dealt out to the
#' workers in contiguous runs, but the per-chunk sums are added here in
#' chunk order, and a chunk's sums do not depend on the worker or its
#' threads, so a fit on 1, 2 or 3 workers (or in this process with the same
#' `threads`) is the same to the last bit. It equals [rff_glm()] on the
#' concatenated rows (same `map`, `lambda`, weights and offset,
#' `standardize = FALSE`) to the solver's tolerance: the objective, the
#' start, the preconditioner (estimated on the same evenly spaced rows,
#' without random numbers) and
#' the L-BFGS iterations are the same (a cross-validated path solved to 10
#' times `epsilon`, `lambda_best` then to `epsilon`, as in [rff_glm()]);
#' only the order of the sums differs, by rounding.
#'
#' **Inputs** are used on the map's scale, as in [rff_stats_apply()]
#' (there is no standardization: draw the map with the lengthscale the
#' inputs need). `read(chunk)` returns `list(x, y)` and optionally
#' `weights` (one per row) and `offset` (one per row, binomial and Poisson);
#' row weights can also come from the argument `weights`, as in
#' [rff_stats_apply()]. The response: for `"binomial"` and `"multinomial"`,
#' a factor, logical, character or numeric vector of classes; for
#' `"poisson"`, counts. The classes are `levels` when given, else the levels
#' of the first chunk's factor (its `FALSE`/`TRUE`, or 0/1 for a binomial
#' numeric response; otherwise the values that chunk holds, sorted); a
#' class with no row in any chunk is dropped, as [rff_glm()] drops it. A
#' chunk with a class outside them, missing values, inputs with the wrong
#' number of columns, or an offset when the other chunks have none (or the
#' reverse) fails with an error naming it.
#'
#' **Lambda.** One value: the fit at it. Several values, or `NULL` (a path
#' of `nlambda` values chosen as in [rff_glm()]): cross-validation with the
#' chunks as folds, exactly as [rff_glm()] with `foldid` the chunk of each
#' row does it (each chunk left out in turn, the others fitted from the fit
#' on all chunks, the held-out deviance measured on the worker that keeps
#' the chunk); `lambda_best` minimizes the CV deviance, and a path chosen
#' from the data stops three lambdas after the best.
#'
#' **Passes.** The fit reads the chunks (one round), computes the start
#' (one round; up to 50 small ones for a binomial fit with an offset, for
#' Newton's method on the intercept), draws the preconditioner's rows (one
#' round), then takes one round per evaluation of the objective: L-BFGS
#' with the preconditioner of [rff_glm()] takes about 10 to 40 per lambda,
#' and each fold of a cross-validation a few more per lambda. The result
#' records `passes` (evaluations of the objective) and `rounds` (every
#' message to the workers).
#'
#' **Memory.** A worker keeps its chunks' inputs, response, weights and
#' offset (8 (d + 2) bytes a row, and 8 more with an offset), and their
#' features (8 D bytes a row) while those fit in `cache_mb`, when caching
#' them pays; otherwise every pass featurizes the kept rows again, in blocks
#' of `chunk_size` rows. Caching pays when a feature costs more to compute
#' than to read back from memory, and enough more to repay filling the cache
#' (a featurization and the first touch of its memory, about two passes):
#' the Fourier features of a map are cached when d >= 30 for `variant =
#' "pair"` (a cosine and a sine share each inner product of d terms) and
#' d >= 10 for `"phase"`; arc-cosine, Nystrom and polynomial (TensorSketch)
#' features always are. With fewer inputs, reading the cached features on
#' every pass takes about as long as computing them again (and workers on
#' one machine share its memory bandwidth), so filling the cache costs more
#' than it saves. Whether a chunk is cached does not change the result. A
#' worker that would keep more than `memory_mb` megabytes stops the fit with
#' an error naming the chunk: use more workers or smaller chunks. This
#' process holds O(chunks (D + 1) K) numbers per round and the
#' preconditioner's sample (max(2000, D) rows).
#'
#' **Engines** are those of [rff_stats_apply()]. On a cluster the workers
#' must load rff, and `read` goes to them as a function. Under
#' `cluster = "future"` a round is one future per worker slot; the plan
#' decides which worker runs it, and a worker given chunks it does not keep
#' reads them (with a multisession or cluster plan the workers keep their
#' chunks between rounds; with a multicore plan every round forks a new
#' worker, which reads its chunks again). A future worker keeps only one
#' fit's chunks.
#'
#' **Faults.** A chunk whose `read()` (or check) fails is read again up to
#' `retries` times, then the fit stops with an error of class
#' `c("rff_chunk_error", "rff_error", "error", "condition")` naming the
#' chunk (fields `chunk`, `failed`, `errors`). On a socket cluster
#' (PSOCK or fork) a worker that dies, while reading or during any later
#' round, hands its chunks to the live worker that keeps the fewest, which
#' reads them and answers for them in that round, and the fit continues to
#' the same result; when no worker is left, the fit stops with an error of
#' class `c("rff_worker_error", "rff_error", "error", "condition")` naming
#' the worker (its node and process id) and its chunks (fields `worker`,
#' `chunks`). Under `"future"` a failed future is sent once more, then the
#' same error. On a socket cluster a worker that does not answer a round
#' within `timeout` seconds (a stopped or swapping process) is treated as
#' dead: its chunks go to the live worker holding the fewest, or, with none
#' left, the fit stops with an `rff_worker_error` naming the node and its
#' pid; the default (`getOption("rff.timeout", Inf)`) waits for ever. An
#' interrupted fit leaves the cluster in step (see *Interrupts and frozen
#' workers* in [rff_stats_apply()]).
#'
#' **When the cluster route pays.** Every evaluation of the objective is a
#' round trip to every worker. On a PSOCK cluster made the default way a
#' round costs about 45 to 90 ms whatever the work (Nagle's algorithm holds
#' back the small messages until the other end's delayed acknowledgement):
#' in `bench/psock-rounds.R`, a 115-round fit of 8,000 rows took 9.7 s on 2
#' workers against 0.4 s for [rff_glm()] in one process. Turning on the
#' `"no-delay"` socket option at both ends removes the delay (0.7 ms a
#' round trip, the same fit in 0.9 s):
#' ```
#' options(socketOptions = "no-delay")   # this process's end
#' cl <- parallel::makePSOCKcluster(2, rscript_args =
#'   c("-e", shQuote("options(socketOptions='no-delay')")))   # the workers' end
#' ```
#' (the option must be set before the cluster is made; rff cannot change
#' the sockets of a cluster it is given). Even so the cluster route pays
#' only when a pass over the rows costs much more than a round trip: when
#' the rows do not fit in one process's memory, or are read from where
#' they live, or a pass takes seconds (millions of rows, large `D`). For
#' data that fits in memory, [rff_glm()] with `threads` is faster.
#'
#' @inheritParams rff_stats_apply
#' @param read A function called on the worker as `read(chunk, ...)` that
#'   returns `list(x = , y = )` and optionally `weights` and `offset` (see
#'   Details).
#' @param family `"binomial"` (default), `"multinomial"` or `"poisson"`.
#' @param lambda `NULL` (a path chosen from the data), one value, or
#'   several (non-negative).
#' @param levels The classes, in order (the second is the event for
#'   binomial); by default from the first chunk (see Details).
#' @param nlambda,lambda_min_ratio,intercept,control As for [rff_glm()].
#' @param cache_mb Megabytes of features each worker may cache (default
#'   `getOption("rff.cache_mb", 1024)`) when caching pays (see Memory); `0`
#'   featurizes on every pass.
#' @param memory_mb Megabytes of chunks (rows and cached features) each
#'   worker may keep (default `getOption("rff.worker_mb", 4096)`).
#' @param progress Show the progress over the lambda path of a
#'   cross-validation.
#' @return An `"rff_glm"` fit, as from [rff_glm()], that predicts, prints,
#'   summarizes and plots like one; it keeps no training rows (`predict()`
#'   needs `newdata`; the training accuracy and confusion table are
#'   computed on the workers), and has `chunks` (rows per chunk), `passes`,
#'   `rounds`, `workers` and `reread` (chunks read again after their worker
#'   died).
#' @seealso [rff_glm()], [rff_stats_apply()]; the vignette *Scaling out*.
#' @examples
#' set.seed(1)
#' dir <- tempfile("chunks")
#' dir.create(dir)
#' files <- file.path(dir, sprintf("part-%d.rds", 1:3))
#' for (f in files) {
#'   x <- matrix(runif(400, -1, 1), 200, 2)
#'   saveRDS(list(x = x, y = factor(rowSums(x^2) < 0.5, labels = c("out", "in"))), f)
#' }
#' m <- rff_map(2, D = 60, lengthscale = 0.5)
#' fit <- rff_glm_apply(files, readRDS, m, lambda = 1e-3)
#' fit
#' fit$passes
#' predict(fit, matrix(c(0, 0.9, 0, 0.9), 2), type = "class")
#' \donttest{
#' # the three files as folds, on two worker processes
#' cl <- parallel::makeCluster(2)
#' invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))
#' cv <- rff_glm_apply(files, readRDS, m, lambda = 10^-(1:4), cluster = cl)
#' parallel::stopCluster(cl)
#' cv$lambda_best
#' }
#' unlink(dir, recursive = TRUE)
#' @export
rff_glm_apply <- function(chunks, read, map, family = c("binomial", "multinomial", "poisson"),
                          lambda = NULL, cluster = NULL, weights = NULL, levels = NULL,
                          nlambda = 20, lambda_min_ratio = 1e-4, intercept = TRUE,
                          control = list(), retries = 0,
                          cache_mb = getOption("rff.cache_mb", 1024),
                          memory_mb = getOption("rff.worker_mb", 4096),
                          chunk_size = NULL, threads = NULL, progress = FALSE,
                          timeout = getOption("rff.timeout", Inf), ...) {
  cl <- fit_call(match.call(), "rff_glm_apply")
  check_required(c("chunks", "read", "map"))
  chunks <- check_chunks(chunks)
  check_read(read)
  check_map(map)
  family <- check_string(if (identical(family, c("binomial", "multinomial", "poisson")))
    "binomial" else family, "family", c("binomial", "multinomial", "poisson"))
  path <- check_path(lambda, nlambda, lambda_min_ratio, missing(lambda_min_ratio))
  timeout <- check_timeout(timeout)
  engine <- check_engine(cluster, timeout)
  weights <- check_apply_weights(weights, length(chunks))
  levels <- check_glm_levels(levels, family)
  intercept <- check_flag(intercept, "intercept")
  control <- check_glm_control(control)
  retries <- check_count(retries, "retries", lo = 0, hi = 1000)
  cache_mb <- check_cache_mb(cache_mb)
  memory_mb <- check_memory_mb(memory_mb)
  chunk_size <- check_chunk_size(chunk_size, map$D)
  threads <- if (is.null(threads) && engine$kind != "sequential") 1L else
    check_threads(threads)
  progress <- check_flag(progress, "progress")
  if (length(chunks) < 2L && (is.null(path$lambda) || length(path$lambda) > 1L)) {
    rff_abort("lambda", paste0(
      "choosing `lambda` by cross-validation over the chunks needs at least 2 chunks; ",
      "give one `lambda`, or more chunks"))
  }
  check_stats_memory(map$D, 3, TRUE)

  setup <- list(read = read, read_args = list(...), weights = if (is.function(weights)) weights,
                map = map, family = family, levels = NULL, cache_mb = cache_mb,
                memory_mb = memory_mb, chunk_size = chunk_size, threads = threads,
                has_offset = NA)
  # the preconditioner's rows are drawn as rff_glm() draws them, from the
  # random numbers as they are now (an engine such as future may use some)
  seed <- get0(".Random.seed", envir = globalenv(), inherits = FALSE)
  S <- glm_session(engine, chunks, weights, setup, retries)
  on.exit(S$close(), add = TRUE)
  info <- glm_apply_read(S, levels)
  prob <- glm_remote_problem(S, info, map, intercept, chunk_size, threads)
  theta0 <- matrix(0, map$D + 1L, info$K)
  if (intercept) theta0[1L, ] <- glm_start(prob, NULL)
  if (!is.null(seed)) assign(".Random.seed", seed, envir = globalenv())
  sp <- glm_apply_sample(S, info, map, chunk_size, threads, cache_mb, intercept)
  P <- glm_precond(sp, theta0, if (is.null(path$lambda)) 2L else length(path$lambda),
                   rows = seq_len(sp$n))
  lam <- glm_lambda_values(path, P)
  cv <- NULL
  if (length(lam) == 1L && !is.null(path$lambda)) {
    full <- glm_path(prob, lam, P, control)
  } else {
    early <- is.null(path$lambda)
    cv <- glm_cv_path(prob, c(lam, if (early) path_extension(lam, path)), P, control,
                      glm_remote_folds(S, info), "deviance", progress,
                      stop_early = early, loose = TRUE, nominal = length(lam))
    full <- cv$full
    lam <- full$lambda
  }
  r <- list(full = full, cv = cv, lambda = lam, P = P)
  fit <- glm_apply_result(S, r, info, prob, sp, control, intercept)
  fit$call <- cl
  fit
}

check_glm_levels <- function(levels, family) {
  if (is.null(levels)) return(NULL)
  if (family == "poisson") {
    rff_abort("levels", "`levels` is for the binomial and multinomial families; this fit is Poisson")
  }
  if (is.factor(levels)) levels <- as.character(levels)
  if (!(is.character(levels) || is.numeric(levels) || is.logical(levels)) ||
      anyNA(levels) || length(levels) < 2L || anyDuplicated(levels)) {
    rff_abort("levels", sprintf("`levels` must be at least two distinct classes, got %s",
                                show_value(levels)))
  }
  if (family == "binomial" && length(levels) != 2L) {
    rff_abort("levels", sprintf("family \"binomial\" needs two `levels`, got %d", length(levels)))
  }
  as.character(levels)
}

check_memory_mb <- function(memory_mb) {
  if (!is_number(memory_mb) || length(memory_mb) != 1L || is.na(memory_mb) || memory_mb <= 0) {
    rff_abort("memory_mb", sprintf("`memory_mb` must be a positive number of megabytes, got %s",
                                   show_value(memory_mb)))
  }
  as.double(memory_mb)
}

# Reads every chunk onto its worker (one round), fixes the classes and codes
# them there (one round, which also brings the sums of the start), and
# returns the chunks' rows, weights and those sums.
glm_apply_read <- function(S, levels) {
  s <- S$round("read")
  fam <- S$setup$family
  n <- vapply(s, `[[`, 0, "n")
  offs <- vapply(s, function(r) isTRUE(r$has_offset), TRUE)
  if (any(offs != offs[1L])) {
    i <- which(offs != offs[1L])[1L]
    rff_abort("offset", sprintf(
      "%s %s an offset and %s %s: `read(chunk)$offset` must be given for every chunk or for none",
      chunk_label(S$chunks, i), if (offs[i]) "has" else "has no",
      chunk_label(S$chunks, 1L), if (offs[1L]) "has" else "has none"))
  }
  info <- list(n = n, wsum = vapply(s, `[[`, 0, "wsum"), npos = vapply(s, `[[`, 0, "npos"),
               cached = all(vapply(s, function(r) isTRUE(r$cached), TRUE)),
               weighted = any(vapply(s, function(r) isTRUE(r$weighted), TRUE)), K = 1L,
               levels = NULL)
  if (fam != "poisson") {
    lev <- if (!is.null(levels)) levels else if (!is.null(s[[1L]]$declared)) s[[1L]]$declared else
      s[[1L]]$values
    if (fam == "binomial" && length(lev) != 2L) {
      rff_abort("read", sprintf(paste0(
        "family \"binomial\" needs two classes; %s has %d (%s): give `levels`, or use family ",
        "\"multinomial\""), chunk_label(S$chunks, 1L), length(lev),
        paste0("\"", utils::head(lev, 5L), "\"", collapse = ", ")))
    }
    S$set_levels(lev)
    st <- S$round("start")
    count <- Reduce(`+`, lapply(st, `[[`, "count"))
    if (any(count == 0L)) {
      # a class no chunk has: dropped, as rff_glm() drops unused levels
      lev <- lev[count > 0L]
      if (length(lev) < 2L) {
        rff_abort("read", sprintf("the chunks hold one class (\"%s\"): a classifier needs two", lev))
      }
      if (fam == "binomial") {
        rff_abort("read", "the chunks hold one class of the two: a classifier needs both")
      }
      S$set_levels(lev)
      st <- S$round("start")
    }
    info$levels <- lev
    info$K <- if (fam == "multinomial") length(lev) else 1L
  } else {
    st <- S$round("start")
  }
  if (!(sum(info$wsum) > 0)) {
    rff_abort("weights", "every row of every chunk has weight zero: there is nothing to fit")
  }
  info$start <- st
  info$has_offset <- offs[1L]
  info
}
