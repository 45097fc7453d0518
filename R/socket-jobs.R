# Layer 1 (foundations): jobs on the workers of a socket cluster (PSOCK or
# fork clusters of parallel), one at a time per worker, so that a worker
# that dies loses only the job it was running. Every request carries a tag
# of its call, and a reply with another tag (left by an interrupted or
# timed-out call) is discarded; an interrupted call drains the replies it
# is owed, or closes the node it could not drain (see socket_drain()).

# Whether every node of the cluster `cl` talks over a socket connection.
is_socket_cluster <- function(cl) {
  inherits(cl, "cluster") && length(cl) > 0L && all(vapply(cl, function(node) {
    inherits(node, c("SOCKnode", "SOCK0node")) && inherits(node$con, "connection")
  }, logical(1)))
}

# Per connection number: the worker's pid (from its last reply) and why
# rff closed the connection, if it did.
socket_registry <- new.env(parent = emptyenv())
socket_registry$calls <- 0L

socket_key <- function(node) as.character(as.integer(node$con))

socket_pid <- function(node) {
  info <- socket_registry[[socket_key(node)]]
  if (is.null(info$pid)) NA_integer_ else info$pid
}

# "node 2 of the cluster (pid 1234)".
socket_node_label <- function(cl, i) {
  pid <- socket_pid(cl[[i]])
  sprintf("node %d of the cluster%s", i, if (is.na(pid)) "" else sprintf(" (pid %d)", pid))
}

# An rff_error naming the first node of `cl` that an interrupted call
# closed (its connection is gone); NULL if none.
check_socket_nodes <- function(cl) {
  for (i in seq_along(cl)) {
    ok <- tryCatch(isOpen(cl[[i]]$con), error = function(e) FALSE)
    info <- socket_registry[[socket_key(cl[[i]])]]
    if (ok && !is.null(info$closed)) info$closed <- NULL  # the number was reused
    if (!ok) {
      rff_abort("cluster", sprintf(paste0(
        "node %d of `cluster` is unusable: %s; stop the cluster with parallel::stopCluster() ",
        "and make a new one"), i, if (is.null(info$closed)) "its connection is closed" else
          info$closed))
    }
  }
  invisible(cl)
}

# Runs on the worker: fun(args), with the worker's pid beside the value.
socket_worker_call <- function(fun, args) {
  list(value = do.call(fun, args, quote = TRUE), pid = Sys.getpid())
}

# A message of parallel's worker protocol (the "EXEC" of sendCall()), sent
# as parallel's sendData() methods send it; the worker returns `tag`.
send_job <- function(node, fun, args, tag) {
  msg <- list(type = "EXEC", data = list(fun = socket_worker_call,
                                         args = list(fun = fun, args = args),
                                         return = TRUE, tag = tag),
              tag = NULL)
  if (inherits(node, "SOCK0node")) serialize(msg, node$con, xdr = FALSE) else
    serialize(msg, node$con)
}

# A new tag prefix for one call's requests.
socket_call_id <- function() {
  socket_registry$calls <- socket_registry$calls + 1L
  sprintf("rff-%d-%d", Sys.getpid(), socket_registry$calls)
}

# One reply from `node`: list(value) (the value of fun, or list(error =
# message)), list(stale = TRUE) for a reply to another request, or
# list(dead = message) when the connection failed.
socket_receive <- function(node, tag) {
  r <- tryCatch(unserialize(node$con), error = function(e) e)
  if (inherits(r, "error")) return(list(dead = conditionMessage(r)))
  if (!is.list(r) || !identical(r$tag, tag)) return(list(stale = TRUE))
  if (!isTRUE(r$success)) {
    return(list(value = list(error = paste(as.character(r$value), collapse = " "))))
  }
  key <- socket_key(node)
  socket_registry[[key]] <- list(pid = as.integer(r$value$pid))
  list(value = r$value$value)
}

# The nodes among `nodes` with a reply ready, waiting at most `wait`
# seconds (Inf: until one has; socketSelect() takes a timeout of 0 as none).
socket_ready <- function(cl, nodes, wait) {
  socketSelect(lapply(nodes, function(i) cl[[i]]$con),
               timeout = if (is.finite(wait)) max(wait, 1e-3) else NULL)
}

# After an interrupt or an error: reads (and discards) the reply each node
# of `owed` (names: nodes, values: tags) still owes, waiting at most `wait`
# seconds in all. A node that does not answer in time, or whose reply
# cannot be read, is out of step: its connection is closed (its worker
# exits) and the next call on the cluster says why.
socket_drain <- function(cl, owed, wait = getOption("rff.drain_timeout", 30)) {
  deadline <- Sys.time() + wait
  left <- owed
  bad <- list()
  while (length(left)) {
    nodes <- as.integer(names(left))
    ready <- tryCatch(socket_ready(cl, nodes, as.numeric(deadline - Sys.time(), units = "secs")),
                      error = function(e) rep(FALSE, length(nodes)))
    if (!any(ready)) break
    for (k in which(ready)) {
      # (by name: a node drained in this loop has left `left` already)
      r <- suspendInterrupts(socket_receive(cl[[nodes[k]]], left[[as.character(nodes[k])]]))
      if (!is.null(r$stale)) next
      if (!is.null(r$dead)) bad[[as.character(nodes[k])]] <- sprintf(
        "the reply an interrupted fit left on its connection could not be read (%s)", r$dead)
      left[[as.character(nodes[k])]] <- NULL
    }
    if (Sys.time() > deadline) break
  }
  for (node in as.integer(names(left))) {
    bad[[as.character(node)]] <- sprintf(
      "an interrupted fit left it owing a reply it did not send within %g s", wait)
  }
  for (node in names(bad)) {
    key <- socket_key(cl[[as.integer(node)]])
    try(close(cl[[as.integer(node)]]$con), silent = TRUE)
    socket_registry[[key]] <- list(closed = paste0(bad[[node]], ", so rff closed it"))
  }
  invisible(length(bad) == 0L)
}

# fun(job, ...) for each of `jobs` on the nodes `live` of the socket
# cluster `cl`, each node given the next job when it returns its last (as
# parallel::clusterApplyLB() shares them). A node whose connection fails,
# sending or receiving (its worker died), gets no more jobs; its job, and
# the jobs left when no node is alive, get an error message. A node that
# holds a job more than `timeout` seconds gets no more jobs and its job
# goes to another node; with none left, an rff_worker_error names it.
# Returns `results` (per job, the value of fun, or list(error = message))
# and the nodes still `live`.
socket_jobs <- function(cl, live, jobs, fun, args, timeout = Inf) {
  id <- socket_call_id()
  results <- vector("list", length(jobs))
  queue <- seq_along(jobs)
  busy <- integer()   # the job of each busy node, named by the node
  sent_at <- list()
  stalled <- integer()
  finished <- FALSE
  on.exit(if (!finished && length(busy)) {
    socket_drain(cl, stats::setNames(as.list(paste(id, busy)), names(busy)))
  })
  repeat {
    for (node in setdiff(live, as.integer(names(busy)))) {
      if (!length(queue)) break
      j <- queue[1L]
      sent <- suspendInterrupts({
        busy[as.character(node)] <- j
        ok <- tryCatch({
          send_job(cl[[node]], fun, c(list(jobs[[j]]), args), paste(id, j))
          TRUE
        }, error = function(e) FALSE)
        if (!ok) busy <- busy[names(busy) != as.character(node)]
        ok
      })
      if (!sent) {
        live <- setdiff(live, node)
        next
      }
      queue <- queue[-1L]
      sent_at[[as.character(node)]] <- Sys.time()
    }
    if (!length(busy)) break
    nodes <- as.integer(names(busy))
    due <- vapply(nodes, function(i) {
      as.numeric(sent_at[[as.character(i)]] + timeout - Sys.time(), units = "secs")
    }, 0)
    ready <- socket_ready(cl, nodes, min(due))
    for (node in nodes[ready]) {
      j <- busy[[as.character(node)]]
      r <- suspendInterrupts({
        r <- socket_receive(cl[[node]], paste(id, j))
        if (is.null(r$stale)) busy <- busy[names(busy) != as.character(node)]
        r
      })
      if (!is.null(r$stale)) next
      if (!is.null(r$dead)) {
        live <- setdiff(live, node)
        results[[j]] <- list(error = sprintf(
          "the worker running it (node %d of the cluster) died: %s", node, r$dead))
      } else {
        results[[j]] <- r$value
      }
    }
    late <- nodes[!ready & due <= 0]
    for (node in late) {
      # a frozen worker: its job goes to another node, its reply (if it
      # ever comes) is discarded by its tag
      queue <- c(busy[[as.character(node)]], queue)
      busy <- busy[names(busy) != as.character(node)]
      live <- setdiff(live, node)
      stalled <- c(stalled, node)
    }
  }
  finished <- TRUE
  if (length(queue) && !length(live) && length(stalled)) socket_timeout_abort(cl, stalled, timeout)
  for (j in queue) results[[j]] <- list(error = "no worker of the cluster is alive")
  list(results = results, live = live)
}

# fun(job, ...) with job k on node nodes[k] of the socket cluster `cl`, all
# sent at once and collected as they come (jobs for data a node keeps, so
# the node is not for the scheduler to choose). Returns `results` (per job,
# the value of fun, or NULL for a node that died or timed out), `dead`, the
# nodes whose connection failed sending or receiving, and `stalled`, those
# that did not answer within `timeout` seconds (their replies, if they ever
# come, are discarded by their tag).
socket_pinned <- function(cl, nodes, jobs, fun, args = list(), timeout = Inf) {
  id <- socket_call_id()
  results <- vector("list", length(jobs))
  dead <- integer()
  waiting <- integer()
  finished <- FALSE
  on.exit(if (!finished && length(waiting)) {
    socket_drain(cl, stats::setNames(as.list(paste(id, waiting)), nodes[waiting]))
  })
  t0 <- Sys.time()
  for (k in seq_along(jobs)) {
    ok <- suspendInterrupts({
      waiting <- c(waiting, k)
      ok <- tryCatch({
        send_job(cl[[nodes[k]]], fun, c(list(jobs[[k]]), args), paste(id, k))
        TRUE
      }, error = function(e) FALSE)
      if (!ok) waiting <- setdiff(waiting, k)
      ok
    })
    if (!ok) dead <- c(dead, nodes[k])
  }
  while (length(waiting)) {
    left <- timeout - as.numeric(Sys.time() - t0, units = "secs")
    ready <- socket_ready(cl, nodes[waiting], left)
    if (!any(ready) && left <= 0) break
    for (k in waiting[ready]) {
      r <- suspendInterrupts({
        r <- socket_receive(cl[[nodes[k]]], paste(id, k))
        if (is.null(r$stale)) waiting <- setdiff(waiting, k)
        r
      })
      if (!is.null(r$stale)) next
      if (!is.null(r$dead)) dead <- c(dead, nodes[k]) else results[[k]] <- r$value
    }
  }
  finished <- TRUE
  list(results = results, dead = unique(dead), stalled = nodes[waiting])
}

# The error of a fit whose workers all timed out.
socket_timeout_abort <- function(cl, stalled, timeout) {
  worker_abort(sprintf(paste0(
    "%s did not answer within `timeout` (%g s) and no other worker of the cluster is alive; ",
    "a frozen worker (stopped, swapping, or stuck in its reader) is left as it is"),
    paste(vapply(stalled, function(i) socket_node_label(cl, i), ""), collapse = ", "), timeout),
    stalled, integer())
}

# An error of class rff_worker_error naming the worker(s) (field `worker`)
# and the chunks they held (field `chunks`).
worker_abort <- function(msg, worker, chunks, call = error_call()) {
  stop(structure(
    list(message = msg, call = call, arg = "cluster", worker = worker, chunks = chunks),
    class = c("rff_worker_error", "rff_error", "error", "condition")))
}
