# Layer 7 (families): the worker's side of rff_glm_apply(): the chunks a
# worker reads once and keeps (rows, coded response, weights, offset, and
# the features when they fit), and the sums over them that each round of
# the fit asks for.

# The chunks each worker keeps, by fit (a key made by the session that
# drives the fit), in the worker's copy of the namespace: on PSOCK and
# multisession workers it lives as long as the worker.
glm_worker_store <- new.env(parent = emptyenv())

# Runs on the worker: the message `msg` has the fit's `key`, the `op`, the
# `setup` of the fit (reader, map, family, levels, memory limits; NULL when
# the worker has it), the `jobs` (chunk, index, weights) it must hold and
# the op's `args`. Chunks it lacks are read first. Returns `results` and
# `errors`, both named by chunk position, and the worker's `pid`.
glm_worker <- function(msg) {
  if (identical(msg$op, "drop")) {
    if (exists(msg$key, envir = glm_worker_store, inherits = FALSE)) {
      rm(list = msg$key, envir = glm_worker_store)
    }
    return(list(results = list(), errors = character(), pid = Sys.getpid()))
  }
  st <- glm_worker_state(msg$key, msg$setup)
  errors <- character()
  need <- vapply(msg$jobs, function(j) as.character(j$index), "")
  # under future a worker may get another worker's jobs: what it keeps of
  # this fit beyond them makes room first
  spare <- setdiff(names(st$chunks), need)
  for (job in msg$jobs) {
    id <- as.character(job$index)
    if (!is.null(st$chunks[[id]])) {
      if (!is.null(st$setup$levels) && is.null(st$chunks[[id]]$y)) {
        err <- glm_worker_try(st$chunks[[id]] <- glm_code_chunk(st$chunks[[id]], st$setup))
        if (!is.null(err)) errors[id] <- err
      }
      next
    }
    while (length(spare) && st$bytes + max(vapply(st$chunks, `[[`, 0, "bytes")) >
           st$setup$memory_mb * 2^20) {
      st$bytes <- st$bytes - st$chunks[[spare[1L]]]$bytes
      st$feature_bytes <- st$feature_bytes - st$chunks[[spare[1L]]]$zbytes
      st$chunks[[spare[1L]]] <- NULL
      spare <- spare[-1L]
    }
    err <- glm_worker_try(glm_worker_read(st, job))
    if (!is.null(err)) errors[id] <- err
  }
  only <- if (is.null(msg$only)) need else intersect(as.character(msg$only), need)
  only <- setdiff(only, names(errors))
  results <- list()
  if (msg$op != "read") {
    for (id in only) {
      res <- NULL
      a <- msg$args
      if (!is.null(a$per_chunk)) a <- c(a, a$per_chunk[[id]])
      err <- glm_worker_try(res <- glm_chunk_op(msg$op, st$chunks[[id]], st$setup, a))
      if (is.null(err)) results[[id]] <- res else errors[id] <- err
    }
  } else {
    for (id in only) results[[id]] <- glm_chunk_summary(st$chunks[[id]])
  }
  list(results = results, errors = errors, pid = Sys.getpid())
}

# The store of fit `key` on this worker, made (or given its setup) now.
glm_worker_state <- function(key, setup) {
  st <- glm_worker_store[[key]]
  if (is.null(st)) {
    if (is.null(setup)) stop("this worker holds no chunks of the fit (was it restarted?)")
    # a worker of a future plan keeps one fit: the chunks of earlier fits go
    if (identical(setup$engine, "future")) rm(list = ls(glm_worker_store), envir = glm_worker_store)
    st <- new.env(parent = emptyenv())
    st$chunks <- list()
    st$bytes <- 0
    st$feature_bytes <- 0
    assign(key, st, envir = glm_worker_store)
  }
  if (!is.null(setup)) {
    # new levels (a class without rows dropped): every chunk is coded again
    if (!is.null(st$setup) && !identical(st$setup$levels, setup$levels)) {
      for (id in names(st$chunks)) st$chunks[[id]]["y"] <- list(NULL)
    }
    st$setup <- setup
  }
  st
}

# NULL, or the message of the error `expr` raised (with the warnings
# before it: readRDS() says which file it could not open only there).
glm_worker_try <- function(expr) {
  warned <- character()
  tryCatch(withCallingHandlers({
    expr
    NULL
  }, warning = function(w) {
    warned <<- c(warned, conditionMessage(w))
    invokeRestart("muffleWarning")
  }), error = function(e) {
    msg <- conditionMessage(e)
    if (length(warned)) {
      msg <- paste0(msg, " (after the warning: ", paste(utils::tail(warned, 2L), collapse = "; "), ")")
    }
    msg
  })
}

# Reads chunk `job`, checks what read() returned, and keeps it in `st`
# within the worker's memory limit (the features too when they fit in
# `cache_mb` and caching them pays, features_cache_pays()).
glm_worker_read <- function(st, job) {
  s <- st$setup
  data <- do.call(s$read, c(list(job$chunk), s$read_args))
  e <- glm_chunk_of_read(data, job, s)
  bytes <- 8 * (length(e$x) + 2 * e$n + length(e$offset))
  if (st$bytes + bytes > s$memory_mb * 2^20) {
    rff_abort("memory_mb", sprintf(paste0(
      "the worker (pid %d) would keep %.1f MB with this chunk, more than `memory_mb` (%g MB); ",
      "use more workers, smaller chunks or a larger `memory_mb`"),
      Sys.getpid(), (st$bytes + bytes) / 2^20, s$memory_mb))
  }
  zb <- 8 * as.double(e$n) * s$map$D
  e$zbytes <- 0
  if (features_cache_pays(s$map) && st$feature_bytes + zb <= s$cache_mb * 2^20 &&
      st$bytes + bytes + zb <= s$memory_mb * 2^20) {
    e$Z <- .Call(C_rff_features, e$x, s$map, s$threads)
    e$zbytes <- zb
  }
  e$bytes <- bytes + e$zbytes
  if (!is.null(s$levels)) e <- glm_code_chunk(e, s)
  st$chunks[[as.character(job$index)]] <- e
  st$bytes <- st$bytes + e$bytes
  st$feature_bytes <- st$feature_bytes + e$zbytes
  invisible(NULL)
}

# A chunk as kept: inputs x, the response (counts, or the classes as the
# distinct values `yval` and each row's index into them, coded once the
# levels are known), weights w (NULL: all 1), offset (n x 1 or NULL).
glm_chunk_of_read <- function(data, job, s) {
  if (!is.list(data) || is.data.frame(data) || !all(c("x", "y") %in% names(data))) {
    rff_abort("read", sprintf("`read(chunk)` must return a list with elements `x` and `y`, got %s",
                              show_value(data)))
  }
  extra <- setdiff(names(data), c("x", "y", "weights", "offset"))
  if (length(extra)) {
    rff_abort("read", sprintf(paste0(
      "`read(chunk)` returned `%s`, which is not used; return only `x`, `y`, `weights` ",
      "and `offset`"), extra[1L]))
  }
  x <- check_x(data$x, "read(chunk)$x")
  check_x_matches_map(x, s$map, "read(chunk)$x")
  n <- nrow(x)
  y <- data$y
  if (is.matrix(y) && ncol(y) == 1L) y <- y[, 1L]
  if (!is.atomic(y) || is.matrix(y) || length(y) != n) {
    rff_abort("read", sprintf("`read(chunk)$y` must be a vector with one value per row (%d), got %s%s",
                              n, show_value(y), if (is.atomic(y) && !is.matrix(y))
                                sprintf(" of length %d", length(y)) else ""))
  }
  if (anyNA(y)) {
    rff_abort("read", sprintf("`read(chunk)$y` has %d missing values", sum(is.na(y))))
  }
  e <- list(x = x, n = n, w = chunk_weights(data, job, s$weights, n), offset = NULL)
  if (s$family == "poisson") {
    if (!is_number(y) || !all(is.finite(y)) || any(y < 0) || any(y != round(y))) {
      rff_abort("read", "`read(chunk)$y` must be non-negative integer counts (family \"poisson\")")
    }
    if (length(y) && max(y) > poisson_max_count) {
      rff_abort("read", sprintf("`read(chunk)$y` has a count of %s: family \"poisson\" takes counts up to %s",
                                format(max(y), digits = 3), format(poisson_max_count)))
    }
    e$y <- as.double(y)
  } else {
    if (is.factor(y)) {
      e$declared <- levels(y)
      e$yval <- levels(y)
      e$yidx <- as.integer(y)
    } else {
      if (is.numeric(y) && !all(is.finite(y))) rff_abort("read", "`read(chunk)$y` must be finite")
      u <- sort(unique(y))
      e$declared <- if (is.logical(y)) c("FALSE", "TRUE") else
        if (is.numeric(y) && s$family == "binomial" && all(u %in% c(0, 1))) c("0", "1")
      e$yval <- as.character(u)
      e$yidx <- match(y, u)
    }
  }
  if (!is.null(data$offset)) {
    if (s$family == "multinomial") {
      rff_abort("offset", "`read(chunk)$offset`: an offset is taken by the binomial and Poisson families only")
    }
    off <- data$offset
    if (is.matrix(off) && ncol(off) == 1L) off <- off[, 1L]
    if (!is_number(off) || length(off) != n || !all(is.finite(off))) {
      rff_abort("offset", sprintf(
        "`read(chunk)$offset` must be %d finite numbers (one per row), got %s", n, show_value(off)))
    }
    e$offset <- matrix(as.double(off), n, 1L)
  }
  e
}

# What the session needs of a chunk just read: its rows, total weight and
# (classes) the values seen and the levels its factor declares.
glm_chunk_summary <- function(e) {
  list(n = e$n, wsum = if (is.null(e$w)) as.double(e$n) else sum(e$w),
       npos = if (is.null(e$w)) e$n else sum(e$w > 0),
       values = if (is.null(e$yidx)) NULL else e$yval[sort(unique(e$yidx))],
       declared = e$declared, cached = !is.null(e$Z), has_offset = !is.null(e$offset),
       weighted = !is.null(e$w))
}

# The class codes of a chunk against the fit's levels (0/1 doubles for
# binomial, 1..K for multinomial); a class outside them is an error.
glm_code_chunk <- function(e, s) {
  if (s$family == "poisson") return(e)
  code <- match(e$yval, s$levels)[e$yidx]
  if (anyNA(code)) {
    bad <- e$yval[e$yidx[is.na(code)][1L]]
    rff_abort("read", sprintf(paste0(
      "`read(chunk)$y` has the class \"%s\", which is not among the levels of the fit (%s); ",
      "give `levels` with every class"), bad, paste0("\"", s$levels, "\"", collapse = ", ")))
  }
  e$y <- if (s$family == "binomial") as.double(code - 1L) else as.integer(code)
  e
}

# One chunk's share of a round: op "start" (sums for the start and the
# null model), "newton" (for the intercept beside an offset), "null" (the
# null deviance), "sample" (rows for the preconditioner), "pass" (loss and
# gradient), "measure" (a held-out measure) or "final" (the training
# classification).
glm_chunk_op <- function(op, e, s, a) {
  if (is.null(e$y)) stop("the chunk's classes were not coded")
  w <- if (is.null(e$w)) rep(1, e$n) else e$w
  off <- if (is.null(e$offset)) 0 else e$offset[, 1L]
  switch(op,
    start = list(
      wy = if (s$family == "multinomial") vapply(seq_along(s$levels), function(k) sum(w[e$y == k]), 0)
           else sum(w * e$y),
      count = if (s$family == "poisson") NULL else
        tabulate(if (s$family == "binomial") e$y + 1L else e$y, length(s$levels)),
      wexp = sum(w * exp(off)),
      sat = saturated_loss(s$family, e$y, w), sat_ll = saturated_loss_ll(s$family, e$y, w)),
    newton = {
      p <- stats::plogis(a$a + off)
      c(sum(w * p * (1 - p)), sum(w * (p - e$y)))
    },
    null = {
      eta <- matrix(rep(a$a, each = e$n), e$n, length(a$a)) + off
      sum(w * glm_row_deviance(s$family, e$y, eta))
    },
    sample = list(x = e$x[a$rows, , drop = FALSE], y = e$y[a$rows],
                  w = if (is.null(e$w)) NULL else e$w[a$rows],
                  offset = if (is.null(e$offset)) NULL else e$offset[a$rows, , drop = FALSE]),
    pass = {
      r <- glm_chunk_pass(e, s, a$theta, FALSE)
      r$eta <- NULL
      r
    },
    measure = {
      eta <- glm_chunk_pass(e, s, a$theta, TRUE)$eta
      glm_measure(list(y = e$y, w = w, family = s$family), eta, seq_len(e$n), a$measure)
    },
    final = {
      eta <- glm_chunk_pass(e, s, a$theta, TRUE)$eta
      if (s$family == "poisson") return(NULL)
      cls <- glm_class(s$family, eta)
      truth <- if (s$family == "binomial") e$y + 1L else e$y
      K <- length(s$levels)
      list(table = matrix(tabulate(cls + K * (truth - 1L), K * K), K, K),
           correct = sum(w * (cls == truth)))
    },
    stop(sprintf("unknown op \"%s\"", op)))
}

# The pass of src/glm.c over one chunk at theta ((D + 1) x K).
glm_chunk_pass <- function(e, s, theta, want_eta) {
  .Call(C_rff_glm_pass, if (is.null(e$Z)) e$x, e$Z, s$map, e$y, s$family, e$offset, e$w,
        theta[-1L, , drop = FALSE], theta[1L, ], s$chunk_size, s$threads, want_eta)
}
