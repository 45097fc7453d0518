# Layer 7 (families): the session of rff_glm_apply() with its workers: which
# worker keeps which chunks, rounds of one message per worker whose
# per-chunk answers come back in chunk order, workers that die (their
# chunks read again by the others), retries, and the errors that name the
# chunk or the worker.

# A session over the engine of check_engine() for the chunks `chunks`, each
# worker (slot) keeping a contiguous run of them; `setup` is what the
# workers need to read and code them (see glm_worker()). The session is an
# environment: `round()` runs an op on every chunk (or those in `only`),
# `close()` frees the workers' store.
glm_session <- function(engine, chunks, weights, setup, retries) {
  k <- length(chunks)
  S <- new.env(parent = emptyenv())
  S$engine <- engine
  S$chunks <- chunks
  S$retries <- retries
  S$slots <- switch(engine$kind, sequential = 1L, cluster = seq_len(engine$workers),
                    future = seq_len(min(engine$workers, k)))
  S$assign <- S$slots[ceiling(seq_len(k) * length(S$slots) / k)]
  S$live <- S$slots
  S$known <- logical(k)    # whether a chunk is kept by the worker it is assigned to
  S$jobs <- lapply(seq_len(k), function(i) {
    list(chunk = chunks[[i]], index = i, weights = if (is.list(weights)) weights[[i]])
  })
  # a key that draws nothing from R's random numbers (set.seed() stays the user's)
  glm_session_counter$n <- glm_session_counter$n + 1L
  S$key <- sprintf("rff-glm-%d-%s-%d", Sys.getpid(),
                   format(as.numeric(Sys.time()) * 1e6, scientific = FALSE), glm_session_counter$n)
  setup$engine <- engine$kind
  S$setup <- setup
  S$sent <- integer()      # the slots that hold the current setup
  S$pids <- rep(NA_integer_, max(S$slots))
  S$rounds <- 0L
  S$passes <- 0L
  S$reread <- integer()    # chunks read again after their worker died
  S$round <- function(op, args = list(), only = NULL) glm_round(S, op, args, only)
  S$set_levels <- function(levels) {
    S$setup$levels <- levels
    S$sent <- integer()
  }
  S$close <- function() glm_session_close(S)
  S
}

glm_session_counter <- new.env(parent = emptyenv())
glm_session_counter$n <- 0L

# One message to each slot that holds chunks of `want`.
glm_send <- function(S, op, args, want) {
  slots <- intersect(S$live, unique(S$assign[want]))
  msgs <- lapply(slots, function(s) {
    mine <- which(S$assign == s)
    future <- S$engine$kind == "future"
    resend <- future || !s %in% S$sent
    # what to read goes only with chunks the worker may not have yet (their
    # weights, from a list, would otherwise travel every round)
    jobs <- lapply(mine, function(i) if (future || !S$known[i]) S$jobs[[i]] else list(index = i))
    list(key = S$key, op = op, setup = if (resend) S$setup, jobs = jobs,
         only = intersect(want, mine), args = args)
  })
  S$rounds <- S$rounds + 1L
  out <- switch(S$engine$kind,
    sequential = list(glm_worker(msgs[[1L]])),
    cluster = if (S$engine$socket) {
      r <- socket_pinned(S$engine$cluster, slots, msgs, glm_worker,
                         timeout = S$engine$timeout)
      lapply(seq_along(slots), function(i) {
        if (slots[i] %in% r$stalled) list(dead = TRUE, stalled = TRUE) else
          if (slots[i] %in% r$dead) list(dead = TRUE) else r$results[[i]]
      })
    } else {
      tryCatch(parallel::clusterApply(S$engine$cluster[slots], msgs, glm_worker),
               error = function(e) rep(list(list(failed = conditionMessage(e))), length(slots)))
    },
    future = lapply(future_jobs(msgs, glm_future_job()), function(r) {
      if (is.null(r$results)) list(failed = r$error) else r
    }))
  names(out) <- slots
  S$sent <- union(S$sent, slots[vapply(out, function(r) is.list(r$results), TRUE)])
  out
}

# A closure for future (see chunk_job()): the worker's function and nothing
# of this session.
glm_future_job <- function() function(msg) glm_worker(msg)

# Runs `op` on the chunks `only` (all: NULL) and returns the per-chunk
# results in chunk order. A chunk that fails is sent again `retries` times,
# then an rff_chunk_error names it; a worker that dies hands its chunks to
# the live worker holding the fewest, which reads them (once) and answers
# for them; with no worker left, an rff_worker_error names the dead worker
# and its chunks.
glm_round <- function(S, op, args, only) {
  k <- length(S$chunks)
  want <- if (is.null(only)) seq_len(k) else only
  res <- vector("list", k)
  attempts <- integer(k)
  errors <- character(k)
  failed_slot <- integer()
  repeat {
    out <- glm_send(S, op, args, want)
    attempts[want] <- attempts[want] + 1L
    todo <- integer()
    for (s in names(out)) {
      r <- out[[s]]
      slot <- as.integer(s)
      mine <- intersect(want, which(S$assign == slot))
      if (isTRUE(r$dead) || !is.null(r$failed) || !is.list(r$results)) {
        glm_slot_lost(S, slot, mine, r, failed_slot)
        failed_slot <- c(failed_slot, slot)
        attempts[mine] <- attempts[mine] - 1L
        todo <- c(todo, mine)
        next
      }
      S$pids[slot] <- r$pid
      S$known[as.integer(names(r$results))] <- TRUE
      for (id in names(r$results)) res[[as.integer(id)]] <- r$results[[id]]
      for (id in names(r$errors)) {
        i <- as.integer(id)
        errors[i] <- r$errors[[id]]
        todo <- c(todo, i)
      }
      if (op != "read" && length(setdiff(mine, c(as.integer(names(r$results)), todo)))) {
        stop("internal: a worker did not answer for all of its chunks")
      }
    }
    bad <- todo[attempts[todo] > S$retries]
    if (length(bad)) glm_chunk_abort(S$chunks, sort(unique(bad)), attempts, errors)
    if (!length(todo)) break
    want <- sort(unique(todo))
  }
  res
}

# A slot that died (socket clusters: its chunks go to the live workers) or
# whose engine failed (future: the slot is tried once more, then the fit
# stops); an error when nothing is left to try.
glm_slot_lost <- function(S, slot, mine, r, failed_before) {
  held <- which(S$assign == slot)
  what <- if (S$engine$kind == "cluster") {
    pid <- S$pids[slot]
    if (is.na(pid) && S$engine$socket) pid <- socket_pid(S$engine$cluster[[slot]])
    sprintf("node %d of the cluster%s", slot, if (is.na(pid)) "" else sprintf(" (pid %d)", pid))
  } else sprintf("the future of worker %d", slot)
  chunks_txt <- paste(vapply(held, function(i) chunk_label(S$chunks, i), ""), collapse = ", ")
  if (isTRUE(r$dead) && S$engine$kind == "cluster") {
    S$live <- setdiff(S$live, slot)
    S$sent <- setdiff(S$sent, slot)
    if (!length(S$live)) {
      glm_worker_abort(sprintf(paste0(
        "%s %s, holding %s; no worker of the cluster is alive to read them again"), what,
        if (isTRUE(r$stalled)) sprintf(
          "did not answer within `timeout` (%g s) and is left as it is", S$engine$timeout) else
          "died during the fit", chunks_txt), slot, held)
    }
    for (i in held) {
      load <- vapply(S$live, function(s) sum(S$assign == s), 0)
      S$assign[i] <- S$live[which.min(load)]
    }
    S$known[held] <- FALSE
    S$reread <- c(S$reread, held)
    return(invisible())
  }
  msg <- if (isTRUE(r$dead)) "its worker died" else if (!is.null(r$failed)) r$failed else
    paste0("the worker returned ", substr(paste(format(r), collapse = " "), 1L, 200L))
  if (slot %in% failed_before || S$engine$kind != "future") {
    glm_worker_abort(sprintf("%s failed during the fit, holding %s: %s", what, chunks_txt, msg),
                     slot, held)
  }
  S$sent <- setdiff(S$sent, slot)
  invisible()
}

glm_worker_abort <- function(msg, worker, chunks) worker_abort(msg, worker, chunks)

# An error naming the first failed chunk (fields `chunk`, `failed`, `errors`).
glm_chunk_abort <- function(chunks, failed, attempts, errors) {
  first <- failed[1L]
  others <- length(failed) - 1L
  msg <- sprintf("%s failed after %d attempt%s: %s%s", chunk_label(chunks, first),
                 attempts[first], if (attempts[first] == 1L) "" else "s", errors[first],
                 if (others > 0L) sprintf(" (and %d more chunk%s failed)", others,
                                          if (others == 1L) "" else "s") else "")
  msgs <- errors[failed]
  names(msgs) <- vapply(failed, function(i) chunk_label(chunks, i), character(1))
  stop(structure(
    list(message = msg, call = error_call(), arg = "chunks", chunk = first, failed = failed,
         errors = msgs),
    class = c("rff_chunk_error", "rff_error", "error", "condition")))
}

# Frees what the live workers keep of this fit (under future, the next fit
# on a worker frees it).
glm_session_close <- function(S) {
  msg <- list(key = S$key, op = "drop")
  if (S$engine$kind == "sequential") {
    glm_worker(msg)
  } else if (S$engine$kind == "cluster" && S$engine$socket && length(S$live)) {
    try(socket_pinned(S$engine$cluster, S$live, rep(list(msg), length(S$live)), glm_worker,
                      timeout = S$engine$timeout), silent = TRUE)
  } else if (S$engine$kind == "cluster" && !S$engine$socket) {
    try(parallel::clusterCall(S$engine$cluster, glm_worker, msg), silent = TRUE)
  }
  invisible()
}
