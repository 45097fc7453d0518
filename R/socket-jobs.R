# Layer 1 (foundations): jobs on the workers of a socket cluster (PSOCK or
# fork clusters of parallel), one at a time per worker, so that a worker
# that dies loses only the job it was running.

# Whether every node of the cluster `cl` talks over a socket connection.
is_socket_cluster <- function(cl) {
  inherits(cl, "cluster") && length(cl) > 0L && all(vapply(cl, function(node) {
    inherits(node, c("SOCKnode", "SOCK0node")) && inherits(node$con, "connection")
  }, logical(1)))
}

# A message of parallel's worker protocol (the "EXEC" of sendCall()), sent
# as parallel's sendData() methods send it.
send_job <- function(node, fun, args, tag) {
  msg <- list(type = "EXEC", data = list(fun = fun, args = args, return = TRUE, tag = tag),
              tag = NULL)
  if (inherits(node, "SOCK0node")) serialize(msg, node$con, xdr = FALSE) else
    serialize(msg, node$con)
}

# fun(job, ...) for each of `jobs` on the nodes `live` of the socket
# cluster `cl`, each node given the next job when it returns its last (as
# parallel::clusterApplyLB() shares them). A node whose connection fails,
# sending or receiving (its worker died), gets no more jobs; its job, and
# the jobs left when no node is alive, get an error message. Returns
# `results` (per job, the value of fun, or list(error = message)) and the
# nodes still `live`.
socket_jobs <- function(cl, live, jobs, fun, args) {
  results <- vector("list", length(jobs))
  busy <- integer()   # the job of each busy node, named by the node
  nxt <- 1L
  repeat {
    for (node in setdiff(live, as.integer(names(busy)))) {
      if (nxt > length(jobs)) break
      sent <- tryCatch({
        send_job(cl[[node]], fun, c(list(jobs[[nxt]]), args), nxt)
        TRUE
      }, error = function(e) FALSE)
      if (!sent) {
        live <- setdiff(live, node)
        next
      }
      busy[as.character(node)] <- nxt
      nxt <- nxt + 1L
    }
    if (!length(busy)) break
    nodes <- as.integer(names(busy))
    ready <- socketSelect(lapply(nodes, function(i) cl[[i]]$con))
    for (node in nodes[ready]) {
      j <- busy[[as.character(node)]]
      busy <- busy[names(busy) != as.character(node)]
      r <- tryCatch(unserialize(cl[[node]]$con), error = function(e) e)
      if (inherits(r, "error")) {
        live <- setdiff(live, node)
        results[[j]] <- list(error = sprintf(
          "the worker running it (node %d of the cluster) died: %s", node, conditionMessage(r)))
      } else if (!isTRUE(r$success)) {
        results[[j]] <- list(error = paste(as.character(r$value), collapse = " "))
      } else {
        results[[j]] <- r$value
      }
    }
  }
  for (j in seq_along(jobs)[nxt <= seq_along(jobs)]) {
    results[[j]] <- list(error = "no worker of the cluster is alive")
  }
  list(results = results, live = live)
}

# fun(job, ...) with job k on node nodes[k] of the socket cluster `cl`, all
# sent at once and collected as they come (jobs for data a node keeps, so
# the node is not for the scheduler to choose). Returns `results` (per job,
# the value of fun, or NULL for a node that died) and `dead`, the nodes
# whose connection failed sending or receiving.
socket_pinned <- function(cl, nodes, jobs, fun, args = list()) {
  results <- vector("list", length(jobs))
  dead <- integer()
  waiting <- integer()
  for (k in seq_along(jobs)) {
    ok <- tryCatch({
      send_job(cl[[nodes[k]]], fun, c(list(jobs[[k]]), args), k)
      TRUE
    }, error = function(e) FALSE)
    if (ok) waiting <- c(waiting, k) else dead <- c(dead, nodes[k])
  }
  while (length(waiting)) {
    ready <- socketSelect(lapply(nodes[waiting], function(i) cl[[i]]$con))
    for (k in waiting[ready]) {
      waiting <- setdiff(waiting, k)
      r <- tryCatch(unserialize(cl[[nodes[k]]]$con), error = function(e) e)
      if (inherits(r, "error")) {
        dead <- c(dead, nodes[k])
      } else if (!isTRUE(r$success)) {
        results[[k]] <- list(error = paste(as.character(r$value), collapse = " "))
      } else {
        results[[k]] <- r$value
      }
    }
  }
  list(results = results, dead = unique(dead))
}
