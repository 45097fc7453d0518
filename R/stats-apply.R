# Layer 7 (families): rff_stats_apply(): ridge statistics computed where the
# data lives, on a parallel cluster, a future plan or in this process, with
# retries and errors that name the failing chunk.

#' Ridge statistics computed where the data lives
#'
#' Computes [rff_stats()] chunk by chunk on the workers of a `parallel`
#' cluster, of a `future` plan, or in this process, and combines them with
#' `c()`. Each worker calls `read(chunk)` itself (so the data never passes
#' through this process), featurizes the rows with the shared `map` and
#' sends back only the statistics of the chunk (D x D numbers, whatever the
#' number of rows). The result is what [rff_stats()] on all rows would give,
#' up to rounding, and is finished with [rff_ridge()] or, with
#' `keep_chunks = TRUE`, cross-validated with the chunks as folds by
#' [rff_cv()].
#'
#' **Engines.** `cluster = NULL` reads and featurizes the chunks one after
#' another in this process. A cluster from [parallel::makeCluster()] (PSOCK
#' workers on this or other hosts, or forked workers) gets the chunks with
#' load balancing ([parallel::clusterApplyLB()]); its workers must be able
#' to load rff (set their [.libPaths()] if it is installed in a private
#' library), and `read` is sent to them as a function: it should be
#' self-contained (the workers do not see this session's global variables;
#' pass what it needs through `...` or [parallel::clusterExport()]).
#' `cluster = "future"` makes one [future::future()] per chunk under
#' whatever [future::plan()] is set (`multisession`, `cluster`,
#' `future.batchtools` on Slurm, SGE or PBS, ...), which also finds and
#' ships the globals of `read`; it needs the suggested package future.
#'
#' Chunks are sent in rounds of twice as many chunks as there are workers,
#' and the statistics of a round are added to the running total before the
#' next one starts, so this process holds the statistics of at most one
#' round (O(2 * workers * D^2) memory; all chunks with
#' `keep_chunks = TRUE`). A progress bar counts finished chunks.
#'
#' **Threads.** On a cluster or under `future`, each worker featurizes with
#' one thread unless `threads` says otherwise (the usual layout is one
#' worker per core; give `threads` for workers that have cores of their
#' own). In this process (`cluster = NULL`) the default is that of
#' [rff_features()]. Results do not depend on it.
#'
#' **Faults.** A chunk whose `read()` or featurization fails on a worker is
#' sent again, in a later round, up to `retries` times. A chunk that still
#' fails stops the call with an error of class
#' `c("rff_chunk_error", "rff_error", "error", "condition")` whose message
#' names the chunk (its position, and its name or value when it has a short
#' one) and carries the worker's message. Nothing is lost: the condition has
#' the fields `partial` (the combined statistics of the chunks that
#' succeeded, with their per-chunk statistics when `keep_chunks = TRUE`;
#' `NULL` if none did), `failed` (the positions of the failed chunks in
#' `chunks`), `errors` (their last messages) and `chunk` (the first failed
#' position). Running `rff_stats_apply(chunks[e$failed], ...)` once the
#' cause is fixed and combining with `c(e$partial, ...)` completes the
#' statistics without reading the other chunks again.
#'
#' **Workers that die.** On a socket cluster (`parallel::makeCluster()`,
#' PSOCK or fork) each worker is sent one chunk at a time: a worker that
#' dies fails only the chunk it was reading (a failed attempt, retried on
#' the workers still alive when `retries` allow), every chunk finished before
#' or by the other workers is kept, and the dead worker is sent nothing
#' more. When no worker is left alive, the chunks not yet read fail. Under
#' `"future"` each chunk is a future of its own: a worker that dies fails the
#' chunk it was reading and those the plan could not start meanwhile; the
#' chunks that finished are kept. A multisession plan keeps its dead worker
#' (retries sent to it fail too): set the plan again, which starts new
#' workers, and resume with `chunks[e$failed]` as above. On other clusters the chunks of a round go out together, and
#' a cluster that breaks fails the chunks of that round (earlier rounds are
#' kept).
#'
#' **Interrupts and frozen workers** (socket clusters). Every request to a
#' worker carries a tag of its call, and a reply with another tag is
#' discarded. A call interrupted (Ctrl-C) or stopped by an error reads and
#' discards the replies its workers still owe, waiting up to
#' `getOption("rff.drain_timeout", 30)` seconds, so the cluster is in step
#' for [parallel::clusterCall()] and the next fit; a worker that does not
#' answer by then has its connection closed, and the next call on the
#' cluster stops with an `rff_error` saying the cluster is unusable (make a
#' new one). A worker that holds a chunk more than `timeout` seconds (a
#' stopped or swapping process) gets no more chunks and its chunk goes to a
#' live worker (not counted as a failed attempt); when no worker is left,
#' the call stops with an `rff_worker_error` naming the node and its
#' process id (field `worker`). The frozen worker is left as it is: its late
#' reply is discarded by the next rff call on the cluster, but stop it (or
#' the cluster) before using the cluster with parallel's own functions.
#'
#' **Weights.** Row weights give the weighted statistics of [rff_stats()]
#' (Z'WZ, Z'Wy, ..., and the total weight `wsum`), so that [rff_ridge()] on
#' the result fits what
#' `rff_ridge(x, y, weights = w, map = map, standardize = FALSE)` fits on all
#' rows. They can come three ways, one at a time: `read(chunk)` returns them
#' as `weights` beside `x` and `y` (weights stored with the data); `weights`
#' is a function, called on the worker as `weights(chunk, data)` with what
#' `read(chunk)` returned (weights computed from the data, or read from a file
#' of their own); or `weights` is a list parallel to `chunks`, element `i`
#' holding the weights of chunk `i`'s rows (weights in this session; each
#' worker gets only its chunk's). Each gives one non-negative finite weight
#' per row of the chunk, or `NULL` for a chunk whose rows all weigh 1. A chunk
#' whose rows all weigh 0 adds nothing (its statistics count 0 rows); every
#' row weighing 0 is an error. A `weights` list is checked before any chunk is
#' read (an `rff_error` naming `weights` or `weights[[i]]`), except the
#' lengths of its elements, which only the workers know. Weights that are not
#' numbers, negative, missing, infinite or of the wrong number on a worker
#' fail their chunk, with a message naming where they came from
#' (`read(chunk)$weights`, `weights(chunk, data)` or `weights[[i]]`). There is
#' no such function for iteratively reweighted fits (a generalized linear
#' model needs one weighted pass over the data per iteration).
#'
#' @param chunks What identifies each piece of data: a list or a vector with
#'   one element per chunk (file paths, row ranges, query strings, ...).
#'   Names, if any, are used in messages and for the kept chunks.
#' @param read A function called on the worker as `read(chunk, ...)` that
#'   returns `list(x = , y = )`: the inputs (a numeric matrix, data frame or
#'   vector with `map$d` columns) and the response (a vector with one value
#'   per row, or a matrix with one column per response) of that chunk; and
#'   optionally `weights`, one per row (see Details).
#' @param map An `"rff_map"` from [rff_map()], shared by all chunks.
#' @param cluster `NULL` (this process), a cluster from
#'   [parallel::makeCluster()], or `"future"` (the current [future::plan()]).
#' @param weights Row weights, if `read()` does not return them: `NULL`
#'   (all rows weigh 1), a function called on the worker as `weights(chunk,
#'   data)`, where `data` is what `read(chunk)` returned, giving the weights
#'   of that chunk's rows, or a list with one element per chunk (in the order
#'   of `chunks`), each the weights of that chunk's rows. See Details.
#' @param retries How many more times a failing chunk is tried.
#' @param progress Show progress over chunks: a text bar, or through
#'   progressr's handlers (see [rff_progress]). `FALSE` silences both.
#' @param keep_chunks Keep the statistics of every chunk in the result
#'   (field `chunks`), so that [rff_cv()] can use the chunks as folds
#'   (O(chunks * D^2) memory).
#' @param intercept Whether the fit made from these statistics has an
#'   (unpenalized) intercept.
#' @param chunk_size Rows per featurized block on the workers, as in
#'   [rff_stats()].
#' @param threads Threads per worker; see Details.
#' @param timeout Seconds a worker of a socket cluster may take over one
#'   chunk (for [rff_glm_apply()], one round) before its chunks go to a live
#'   worker, or, with none left, the call stops with an `rff_worker_error`
#'   naming the node and its pid (see Details). Default
#'   `getOption("rff.timeout", Inf)`: no limit. Other engines ignore it.
#' @param ... Further arguments of `read`.
#' @return An `"rff_stats"` object, as from [rff_stats()] on all rows; with
#'   `keep_chunks = TRUE` it also has `chunks`, the list of per-chunk
#'   `"rff_stats"` (named as `chunks`). [rff_ridge()] fits from it;
#'   `rff_cv(stats)` cross-validates with one fold per chunk, each fold's
#'   model fitted from the total minus that chunk's statistics, over the
#'   lambda path (`lambda`, `nlambda` and `lambda_min_ratio` as for
#'   [rff_cv()]; the lengthscale is the map's), and refits on all chunks at
#'   the best lambda. Per-chunk statistics survive `c()` when every part
#'   kept them.
#' @seealso [rff_stats()], [rff_ridge()], [rff_cv()]; the vignette
#'   *Scaling out*.
#' @examples
#' set.seed(1)
#' dir <- tempfile("chunks")
#' dir.create(dir)
#' files <- file.path(dir, sprintf("part-%d.rds", 1:4))
#' for (f in files) {
#'   x <- matrix(runif(300), 150, 2)
#'   saveRDS(list(x = x, y = sin(4 * x[, 1]) + x[, 2] + rnorm(150, sd = 0.1)), f)
#' }
#' m <- rff_map(2, D = 100, lengthscale = 0.5)
#' s <- rff_stats_apply(files, readRDS, m, keep_chunks = TRUE, progress = FALSE)
#' s
#' fit <- rff_ridge(s)
#' cv <- rff_cv(s)              # the four files are the folds
#' # row weights computed on the worker from what read() returned
#' sw <- rff_stats_apply(files, readRDS, m, progress = FALSE,
#'                       weights = function(chunk, data) 1 / (1 + data$x[, 2]))
#' coef(rff_ridge(sw, lambda = 1e-4))[1:3]
#' cv$lambda_best
#' # a reader that fails: the error names the chunk and keeps the rest
#' e <- tryCatch(rff_stats_apply(c(files, "missing.rds"), readRDS, m, progress = FALSE),
#'               rff_error = function(e) e)
#' conditionMessage(e)
#' e$failed
#' nobs(e$partial)
#' \donttest{
#' # the same on two worker processes that read their own files
#' cl <- parallel::makeCluster(2)
#' parallel::clusterCall(cl, function(p) invisible(.libPaths(p)), .libPaths())
#' s2 <- rff_stats_apply(files, readRDS, m, cluster = cl, progress = FALSE)
#' parallel::stopCluster(cl)
#' all.equal(coef(rff_ridge(s2, lambda = 1e-4)), coef(rff_ridge(s, lambda = 1e-4)))
#' }
#' unlink(dir, recursive = TRUE)
#' @export
rff_stats_apply <- function(chunks, read, map, cluster = NULL, weights = NULL,
                            retries = 0, progress = interactive(),
                            keep_chunks = FALSE, intercept = TRUE,
                            chunk_size = NULL, threads = NULL,
                            timeout = getOption("rff.timeout", Inf), ...) {
  check_required(c("chunks", "read", "map"))
  chunks <- check_chunks(chunks)
  check_read(read)
  check_map(map)
  timeout <- check_timeout(timeout)
  engine <- check_engine(cluster, timeout)
  weights <- check_apply_weights(weights, length(chunks))
  retries <- check_count(retries, "retries", lo = 0, hi = 1000)
  progress <- check_flag(progress, "progress")
  keep_chunks <- check_flag(keep_chunks, "keep_chunks")
  intercept <- check_flag(intercept, "intercept")
  chunk_size <- check_chunk_size(chunk_size, map$D)
  threads <- if (is.null(threads) && engine$kind != "sequential") 1L else
    check_threads(threads)
  if (keep_chunks) check_alloc(map$D, map$D, "keep_chunks", length(chunks) + 2, "the chunks' Z'Z")
  if (!keep_chunks) check_stats_memory(map$D, 2 * engine$workers + 2, TRUE)
  args <- list(read = read, read_args = list(...), weights = if (is.function(weights)) weights,
               map = map, intercept = intercept, chunk_size = chunk_size, threads = threads)
  n_chunks <- length(chunks)
  round_size <- as.integer(min(n_chunks, 2 * engine$workers))
  attempts <- integer(n_chunks)
  errors <- character(n_chunks)
  done <- logical(n_chunks)
  kept <- if (keep_chunks) vector("list", n_chunks) else NULL
  total <- NULL
  pb <- progress_bar(progress && n_chunks > 1L, n_chunks)
  on.exit(pb$close(), add = TRUE)
  pending <- seq_len(n_chunks)
  for (attempt in 0:retries) {
    for (batch in split(pending, ceiling(seq_along(pending) / round_size))) {
      # each chunk travels with its position and, from a list, its weights
      jobs <- lapply(batch, function(i) {
        list(chunk = chunks[[i]], index = i, weights = if (is.list(weights)) weights[[i]])
      })
      results <- run_chunks(engine, jobs, args)
      for (k in seq_along(batch)) {
        i <- batch[k]
        attempts[i] <- attempts[i] + 1L
        r <- results[[k]]
        if (!is.null(r$error)) {
          errors[i] <- r$error
          next
        }
        s <- r$stats
        s$map <- map
        # statistics that cannot join the others (another number of
        # responses, damaged ones) fail their chunk, not the whole call
        joined <- if (is.null(total)) tryCatch(check_stats(s, "chunks"), error = identity) else
          tryCatch(combine_stats(list(total, s), "chunks"), error = identity)
        if (!is.null(total) && length(s$ysum) != length(total$ysum)) {
          joined <- simpleError(sprintf(
            "`read(chunk)$y` has %d column%s, the chunks read before it %d",
            length(s$ysum), if (length(s$ysum) == 1L) "" else "s", length(total$ysum)))
        }
        if (inherits(joined, "error")) {
          errors[i] <- if (is.null(total)) conditionMessage(joined) else
            sub("element 2 of `chunks`", "its statistics", conditionMessage(joined), fixed = TRUE)
          next
        }
        done[i] <- TRUE
        errors[i] <- ""
        if (keep_chunks) kept[[i]] <- s
        total <- joined
      }
      pb$set(sum(done))
    }
    pending <- which(!done)
    if (!length(pending)) break
  }

  if (!is.null(kept)) {
    names(kept) <- names(chunks)
    kept <- kept[done]
  }
  if (!is.null(total)) total$chunks <- kept
  if (length(pending)) chunk_abort(chunks, pending, attempts, errors, total)
  if (!(stats_wsum(total) > 0)) {
    rff_abort("weights", "every row of every chunk has weight zero: there is nothing to fit")
  }
  total
}

# A list with one element per chunk; names kept.
check_chunks <- function(chunks) {
  if (is.data.frame(chunks) || !(is.list(chunks) || is.atomic(chunks)) ||
      length(chunks) == 0L) {
    rff_abort("chunks", sprintf(
      "`chunks` must be a list or vector with one element per chunk (file paths, row ranges, ...), got %s",
      show_value(chunks)))
  }
  as.list(chunks)
}

# Where the chunks run: this process, a parallel cluster, or future's plan.
check_engine <- function(cluster, timeout = Inf) {
  if (is.null(cluster)) return(list(kind = "sequential", workers = 1L))
  if (inherits(cluster, "cluster")) {
    if (length(cluster) == 0L) rff_abort("cluster", "`cluster` has no workers")
    socket <- is_socket_cluster(cluster)
    if (socket) check_socket_nodes(cluster)
    # the workers still alive, for the rounds after one dies (socket clusters)
    state <- new.env(parent = emptyenv())
    state$live <- seq_along(cluster)
    return(list(kind = "cluster", cluster = cluster, workers = length(cluster),
                socket = socket, state = state, timeout = timeout))
  }
  if (identical(cluster, "future")) {
    if (!has_package("future")) {
      rff_abort("cluster", paste0(
        "`cluster = \"future\"` needs the package future, which is not installed; ",
        "install it with install.packages(\"future\"), or give a cluster from ",
        "parallel::makeCluster()"))
    }
    workers <- suppressWarnings(as.numeric(future::nbrOfWorkers()))
    if (!length(workers) || !is.finite(workers) || workers < 1) workers <- 64
    return(list(kind = "future", workers = as.integer(workers)))
  }
  rff_abort("cluster", sprintf(
    "`cluster` must be NULL, a cluster from parallel::makeCluster(), or \"future\", got %s",
    show_value(cluster)))
}

# `weights` of rff_stats_apply(): NULL, a function(chunk, data) run on the
# workers, or a list with one element per chunk, each NULL or numbers
# checked here (their number against the chunk's rows on the worker).
check_apply_weights <- function(weights, k) {
  if (is.null(weights)) return(NULL)
  if (is.function(weights)) {
    f <- formals(args(weights))
    if (length(f) < 2L && !"..." %in% names(f)) {
      rff_abort("weights", sprintf(paste0(
        "`weights` must be a function of two arguments, called as weights(chunk, data); ",
        "got a function of %d"), length(f)))
    }
    return(weights)
  }
  if (!is.list(weights) || is.data.frame(weights) || length(weights) != k) {
    rff_abort("weights", sprintf(paste0(
      "`weights` must be NULL, a function(chunk, data) giving the weights of a chunk's rows, ",
      "or a list with one element per chunk (%d), got %s"), k, show_value(weights)))
  }
  for (i in seq_len(k)) {
    w <- weights[[i]]
    if (is.null(w)) next
    arg <- sprintf("weights[[%d]]", i)
    if (!is_number(w) || !length(w)) {
      rff_abort(arg, sprintf(
        "`%s` must be NULL or non-negative numbers, one per row of chunk %d, got %s",
        arg, i, show_value(w)))
    }
    check_weights(w, length(w), arg, zero_ok = TRUE)
  }
  weights
}

# The results of one round, one list(stats, error) per job (a chunk, its
# position and its weights). On socket clusters see socket_jobs(); on the
# other engines a failure of the engine itself fails every chunk of the round.
run_chunks <- function(engine, jobs, args) {
  if (engine$kind == "cluster" && engine$socket) {
    # one job at a time per worker: a worker that dies loses only its own
    r <- socket_jobs(engine$cluster, engine$state$live, jobs, chunk_stats, args,
                     timeout = engine$timeout)
    engine$state$live <- r$live
    return(lapply(r$results, checked_result))
  }
  results <- tryCatch(switch(engine$kind,
    sequential = lapply(jobs, function(job) do.call(chunk_stats, c(list(job), args))),
    cluster = do.call(parallel::clusterApplyLB,
                      c(list(cl = engine$cluster, x = jobs, fun = chunk_stats), args)),
    future = future_jobs(jobs, do.call(chunk_job, args))
  ), error = function(e) {
    msg <- paste0("the ", engine$kind, " engine failed: ", conditionMessage(e))
    rep(list(list(stats = NULL, error = msg)), length(jobs))
  })
  lapply(results, checked_result)
}

# One future per job under the user's plan, so that a worker that dies
# fails the jobs it took (and those the plan could not start while it
# noticed), not the others.
future_jobs <- function(jobs, fn) {
  failed <- function(e) list(stats = NULL, error = paste0("the future engine failed: ",
                                                         conditionMessage(e)))
  fs <- lapply(jobs, function(job) tryCatch(future::future(fn(job)), error = identity))
  lapply(fs, function(f) {
    if (inherits(f, "error")) return(failed(f))
    tryCatch(future::value(f), error = failed)
  })
}

# A job's result as the workers send it: statistics or an error message.
checked_result <- function(r) {
  if (is.list(r) && (inherits(r$stats, "rff_stats") || is.character(r$error))) return(r)
  got <- substr(paste(format(r), collapse = " "), 1L, 200L)
  list(stats = NULL, error = paste0("the worker returned no statistics: ", got))
}

# chunk_stats() of one chunk as a closure over the other arguments, for
# future: it looks for the globals a reader needs (variables of the user's
# session) in the function it runs and the closures that one holds, not in
# functions passed as arguments.
chunk_job <- function(read, read_args, weights, map, intercept, chunk_size, threads) {
  force(read)
  force(read_args)
  force(weights)
  force(map)
  force(intercept)
  force(chunk_size)
  force(threads)
  function(job) {
    chunk_stats(job, read, read_args, weights, map, intercept, chunk_size, threads)
  }
}

# Runs on the worker: reads one chunk and returns its statistics without
# the map (this process holds it), or the error message with the warnings
# that preceded it (readRDS() says which file it could not open only there).
chunk_stats <- function(job, read, read_args, weights, map, intercept, chunk_size, threads) {
  warned <- character()
  tryCatch(withCallingHandlers({
    data <- do.call(read, c(list(job$chunk), read_args))
    s <- stats_of_read(data, job, weights, map, intercept, chunk_size, threads)
    s["map"] <- list(NULL)
    list(stats = s, error = NULL)
  }, warning = function(w) warned <<- c(warned, conditionMessage(w))),
  error = function(e) {
    msg <- conditionMessage(e)
    if (length(warned)) {
      msg <- paste0(msg, " (after the warning: ", paste(utils::tail(warned, 2L), collapse = "; "), ")")
    }
    list(stats = NULL, error = msg)
  })
}

# The statistics of what read(chunk) returned for `job`, checked like
# rff_stats()'s arguments, weighted as chunk_weights() says.
stats_of_read <- function(data, job, weights, map, intercept, chunk_size, threads) {
  if (!is.list(data) || is.data.frame(data) || !all(c("x", "y") %in% names(data))) {
    rff_abort("read", sprintf("`read(chunk)` must return a list with elements `x` and `y`, got %s",
                              show_value(data)))
  }
  extra <- setdiff(names(data), c("x", "y", "weights"))
  if (length(extra)) {
    rff_abort("read", sprintf(
      "`read(chunk)` returned `%s`, which is not used; return only `x`, `y` and `weights`",
      extra[1L]))
  }
  x <- check_x(data$x, "read(chunk)$x")
  y <- check_y(data$y, nrow(x), "read(chunk)$y")
  check_x_matches_map(x, map, "read(chunk)$x")
  w <- chunk_weights(data, job, weights, nrow(x))
  accumulate_stats(x, y, map, intercept, chunk_size, threads, FALSE, w)
}

# The weights of one chunk's n rows (NULL: all 1), from read(chunk), from
# the function weights(chunk, data), or from the job (an element of the
# `weights` list); all zero is allowed here, as the chunk may be one of many.
chunk_weights <- function(data, job, weights, n) {
  if (!is.null(data[["weights"]])) {
    if (!is.null(weights) || !is.null(job$weights)) {
      rff_abort("weights", paste0(
        "`read(chunk)` returned `weights` and `weights` is given too; give the weights one way"))
    }
    return(check_weights(data[["weights"]], n, "read(chunk)$weights", zero_ok = TRUE))
  }
  if (is.function(weights)) {
    return(check_weights(weights(job$chunk, data), n, "weights(chunk, data)", zero_ok = TRUE))
  }
  check_weights(job$weights, n, sprintf("weights[[%d]]", job$index), zero_ok = TRUE)
}

# "chunk 3", with the chunk's name or short value: chunk 3 ("part-3.rds").
chunk_label <- function(chunks, i) {
  nm <- names(chunks)[i]
  ch <- chunks[[i]]
  what <- if (!is.null(nm) && !is.na(nm) && nzchar(nm)) {
    nm
  } else if (is.atomic(ch) && length(ch) == 1L && !is.na(ch)) {
    if (is.character(ch)) ch else format(ch)
  } else NULL
  if (is.null(what)) return(sprintf("chunk %d", i))
  if (nchar(what) > 80L) what <- paste0(substr(what, 1L, 77L), "...")
  sprintf("chunk %d (\"%s\")", i, what)
}

chunk_abort <- function(chunks, failed, attempts, errors, partial) {
  first <- failed[1L]
  others <- length(failed) - 1L
  ndone <- length(chunks) - length(failed)
  kept <- if (ndone == 0L) "no chunk succeeded" else sprintf(paste0(
    "the statistics of the %d chunk%s that succeeded are in the error's `partial` ",
    "field, the failed chunks in `failed`"), ndone, if (ndone == 1L) "" else "s")
  msg <- sprintf("%s failed after %d attempt%s: %s%s; %s",
    chunk_label(chunks, first), attempts[first], if (attempts[first] == 1L) "" else "s",
    errors[first],
    if (others > 0L) sprintf(" (and %d more chunk%s failed)", others,
                             if (others == 1L) "" else "s") else "",
    kept)
  msgs <- errors[failed]
  names(msgs) <- vapply(failed, function(i) chunk_label(chunks, i), character(1))
  cond <- structure(
    list(message = msg, call = error_call(), arg = "chunks", chunk = first,
         failed = failed, errors = msgs, partial = partial),
    class = c("rff_chunk_error", "rff_error", "error", "condition"))
  stop(cond)
}
