# rff's displays (R/progress.R) reach progressr's handlers whenever they
# listen: inside progressr::with_progress() or with global handlers, without
# the option rff.progress; the text display otherwise.

skip_if_not_installed("progressr")

set.seed(81)
x <- matrix(rnorm(6000), 2000, 3)
y <- sin(x[, 1]) + rnorm(2000, sd = 0.1)

# A progressr handler that records what it is given: the steps and message
# of each update, and the finish.
recording_handler <- function(env) {
  env$seen <- list()
  progressr::make_progression_handler("record", reporter = list(
    update = function(config, state, progression, ...) {
      env$seen[[length(env$seen) + 1L]] <- list(type = "update", step = state$step,
                                                max = config$max_steps, message = state$message)
    },
    finish = function(config, state, progression, ...) {
      env$seen[[length(env$seen) + 1L]] <- list(type = "finish", step = state$step)
    }))
}

test_that("inside with_progress(): progression conditions, not the text line", {
  old <- options(progressr.enable = TRUE, rff.progress = NULL, rff.progress_delay = 0,
                 rff.progress_interval = 0)
  on.exit(options(old))
  skip_if(isTRUE(progressr::handlers(global = NA)), "progressr's global handlers are on")
  n <- 0
  types <- character()
  msgs <- character()
  env <- new.env()
  out <- capture.output(progressr::with_progress(withCallingHandlers(
    {set.seed(82); f <- rff_ridge(x, y, D = 50, lengthscale = 2, progress = TRUE)},
    progression = function(p) {
      n <<- n + 1
      types <<- c(types, p$type)
      if (identical(p$type, "update")) msgs <<- c(msgs, p$message)
    }), handlers = recording_handler(env), delay_stdout = FALSE))
  expect_gt(n, 0)
  # one display for the call, labelled, from initiate to finish
  expect_identical(sum(types == "initiate"), 1L)
  expect_identical(types[length(types)], "finish")
  expect_true(all(startsWith(msgs, "rff_ridge: ")))
  # and no text line
  expect_length(out, 0L)
  # the user's handler got the updates up to all of the steps, and the finish
  seen <- env$seen
  ups <- Filter(function(s) s$type == "update", seen)
  expect_gt(length(ups), 0L)
  expect_equal(ups[[length(ups)]]$step, ups[[1L]]$max)
  expect_match(ups[[length(ups)]]$message, "^rff_ridge: ")
  expect_identical(seen[[length(seen)]]$type, "finish")
  # the same fit as without a display
  set.seed(82)
  expect_equal(coef(f), coef(rff_ridge(x, y, D = 50, lengthscale = 2, progress = FALSE)))
})

test_that("outside with_progress(): the text line and no progression", {
  old <- options(progressr.enable = TRUE, rff.progress = NULL, rff.progress_delay = 0)
  on.exit(options(old))
  skip_if(isTRUE(progressr::handlers(global = NA)), "progressr's global handlers are on")
  n <- 0
  out <- capture.output(withCallingHandlers(
    f <- rff_ridge(x, y, D = 50, lengthscale = 2, progress = TRUE),
    progression = function(p) n <<- n + 1))
  expect_identical(n, 0)
  expect_match(paste(out, collapse = ""), "100% rff_ridge: ", fixed = TRUE)
  # and the plain bar of rff_stats_apply(), which has no stages
  out <- capture.output(withCallingHandlers(
    s <- rff_stats_apply(1:4, function(i) list(x = x[i, , drop = FALSE], y = y[i]),
                    rff_map(3, D = 10), progress = TRUE),
    progression = function(p) n <<- n + 1))
  expect_identical(n, 0)
  expect_match(paste(out, collapse = ""), "100%", fixed = TRUE)
  # with_progress() of a call that shows nothing: progress = FALSE
  out <- capture.output(progressr::with_progress(withCallingHandlers(
    f <- rff_ridge(x, y, D = 50, lengthscale = 2, progress = FALSE),
    progression = function(p) n <<- n + 1), handlers = progressr::handler_void))
  expect_identical(n, 0)
  expect_length(out, 0L)
})

test_that("chunks done by future workers reach with_progress()'s handlers", {
  skip_if_not_installed("future")
  old <- options(progressr.enable = TRUE, rff.progress = NULL, rff.progress_delay = 0)
  on.exit(options(old))
  oplan <- future::plan(future::sequential)
  on.exit(future::plan(oplan), add = TRUE)
  chunks <- split(seq_len(2000), rep(1:5, each = 400))
  read <- function(i) list(x = x[i, , drop = FALSE], y = y[i])
  m <- rff_map(3, D = 10)
  amounts <- 0
  steps <- NULL
  env <- new.env()
  out <- capture.output(progressr::with_progress(withCallingHandlers(
    s <- rff_stats_apply(chunks, read, m, cluster = "future", progress = TRUE),
    progression = function(p) {
      if (identical(p$type, "initiate")) steps <<- p$steps
      if (identical(p$type, "update")) amounts <<- amounts + p$amount
    }), handlers = recording_handler(env), delay_stdout = FALSE))
  expect_equal(steps, 5)
  expect_equal(amounts, 5)
  expect_length(out, 0L)
  expect_equal(s$n, 2000)
  expect_equal(s$ZtZ, rff_stats(x, y, map = m)$ZtZ, tolerance = 1e-10)
  # rff_glm_apply(): the cross-validation over its lambda path
  b <- factor(x[, 1] + rnorm(2000) > 0)
  readb <- function(i) list(x = x[i, , drop = FALSE], y = b[i])
  n <- 0
  out <- capture.output(progressr::with_progress(withCallingHandlers(
    fit <- rff_glm_apply(chunks, readb, m, cluster = "future", nlambda = 4, progress = TRUE),
    progression = function(p) if (identical(p$type, "update")) n <<- n + 1),
    handlers = progressr::handler_void, delay_stdout = FALSE))
  expect_gt(n, 0)
  expect_length(out, 0L)
})

test_that("with global handlers: progression conditions outside with_progress()", {
  # handlers(global = TRUE) must be called at the top level: in a child
  r <- run_child(c(
    "options(progressr.enable = TRUE, rff.progress_delay = 0)",
    "progressr::handlers(global = TRUE)",
    "progressr::handlers(progressr::handler_void)",
    "set.seed(1); x <- matrix(rnorm(600), 200, 3)",
    "n <- 0",
    "out <- capture.output(withCallingHandlers(f <- rff_ridge(x, x[, 1], D = 20, progress = TRUE),",
    "  progression = function(p) n <<- n + 1))",
    "cat(sprintf('conditions=%d lines=%d\\n', n, length(out)))",
    "progressr::handlers(global = FALSE)",
    "n <- 0",
    "out <- capture.output(withCallingHandlers(f <- rff_ridge(x, x[, 1], D = 20, progress = TRUE),",
    "  progression = function(p) n <<- n + 1))",
    "cat(sprintf('conditions=%d lines=%d\\n', n, length(out)))"), timeout = 120)
  expect_identical(r$status, 0L)
  res <- grep("^conditions=", r$output, value = TRUE)
  expect_length(res, 2L)
  on <- as.integer(regmatches(res, regexpr("[0-9]+", res)))
  expect_gt(on[1L], 0L)
  expect_identical(on[2L], 0L)
  expect_match(res[1L], "lines=0", fixed = TRUE)
  expect_false(grepl("lines=0", res[2L], fixed = TRUE))
})
