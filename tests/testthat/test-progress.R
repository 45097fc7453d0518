# The progress displays (R/progress.R): one display per fit, stage by
# stage with the time left, through progressr when it is set up or as a
# text line; the bar of single-stage calls; nothing with progress = FALSE.

skip_if_not_installed("progressr")

# The progressr conditions and the printed output of `expr`.
progress_record <- function(expr) {
  events <- list()
  out <- capture.output(value <- withCallingHandlers(expr, progression = function(c) {
    events[[length(events) + 1L]] <<- list(type = c$type, amount = c$amount, steps = c$steps)
  }))
  list(value = value, events = events, out = out)
}

set.seed(61)
x <- matrix(rnorm(2000), 1000, 2)
y <- x[, 1] + rnorm(1000)
map <- rff_map(2, D = 10)

test_that("through progressr: its conditions add up to the rows, then finish", {
  old <- options(rff.progress = "progressr", progressr.enable = TRUE)
  on.exit(options(old))
  r <- progress_record(rff_stats(x, y, map = map, chunk_size = 100, progress = TRUE))
  types <- vapply(r$events, `[[`, "", "type")
  expect_identical(types[1L], "initiate")
  expect_identical(types[length(types)], "finish")
  expect_equal(r$events[[1L]]$steps, 1000)
  ups <- r$events[types == "update"]
  expect_length(ups, 10L)
  expect_equal(sum(vapply(ups, `[[`, 0, "amount")), 1000)
  expect_length(r$out, 0L)
  expect_equal(r$value, rff_stats(x, y, map = map, chunk_size = 100, progress = FALSE))
})

test_that("the text bar when progressr is not chosen, nothing with progress = FALSE", {
  old <- options(rff.progress = "txt", progressr.enable = TRUE)
  on.exit(options(old))
  r <- progress_record(rff_stats(x, y, map = map, chunk_size = 100, progress = TRUE))
  expect_length(r$events, 0L)
  expect_match(paste(r$out, collapse = ""), "100%", fixed = TRUE)
  options(rff.progress = "progressr")
  q <- progress_record(rff_stats(x, y, map = map, chunk_size = 100, progress = FALSE))
  expect_length(q$events, 0L)
  expect_length(q$out, 0L)
  # "auto": progressr only while its global handlers are on
  options(rff.progress = "auto")
  skip_if(isTRUE(progressr::handlers(global = NA)), "progressr's global handlers are on")
  a <- progress_record(rff_stats(x, y, map = map, chunk_size = 100, progress = TRUE))
  expect_length(a$events, 0L)
  expect_match(paste(a$out, collapse = ""), "100%", fixed = TRUE)
})

test_that("rff_stats_apply() reports one step per chunk through progressr", {
  old <- options(rff.progress = "progressr", progressr.enable = TRUE)
  on.exit(options(old))
  chunks <- split(seq_len(1000), rep(1:4, each = 250))
  r <- progress_record(rff_stats_apply(chunks, function(i) list(x = x[i, ], y = y[i]),
                                       map = map, progress = TRUE))
  types <- vapply(r$events, `[[`, "", "type")
  expect_equal(r$events[[1L]]$steps, 4)
  expect_equal(sum(vapply(r$events[types == "update"], `[[`, 0, "amount")), 4)
  expect_equal(r$value$n, 1000)
})

test_that("a bad rff.progress option is an rff_error naming it", {
  old <- options(rff.progress = "bar")
  on.exit(options(old))
  expect_rff_error(rff_stats(x, y, map = map, chunk_size = 100, progress = TRUE),
                   "rff.progress")
})

test_that("a fit with a lengthscale search shows one display, stage by stage, to 100%", {
  old <- options(rff.progress = "progressr", progressr.enable = TRUE, rff.progress_interval = 0)
  on.exit(options(old))
  set.seed(62)
  xx <- matrix(rnorm(3000), 1500, 2)
  yy <- sin(2 * xx[, 1]) + rnorm(1500, sd = 0.1)
  msgs <- character()
  r <- progress_record(withCallingHandlers(
    {set.seed(1); rff_ridge(xx, yy, D = 200, chunk_size = 100, progress = TRUE)},
    progression = function(c) if (identical(c$type, "update")) msgs <<- c(msgs, c$message)))
  types <- vapply(r$events, `[[`, "", "type")
  # one progressor for the call, however many candidates and statistics
  expect_identical(sum(types == "initiate"), 1L)
  expect_identical(types[length(types)], "finish")
  amounts <- vapply(r$events[types == "update"], `[[`, 0, "amount")
  expect_true(all(amounts >= 0))
  expect_equal(sum(amounts), r$events[[1L]]$steps)
  # the stages in order: the candidates of the walk (as many as the search
  # table), the statistics inside them, then the final fit
  cand <- unique(regmatches(msgs, regexpr("candidate [0-9]+", msgs)))
  expect_identical(cand, paste("candidate", seq_len(nrow(r$value$lengthscale_search$table))))
  expect_true(any(grepl("candidate 1 \\(1 x median\\): statistics", msgs)))
  expect_match(msgs[length(msgs)], "^rff_ridge: final fit")
  expect_true(all(startsWith(msgs, "rff_ridge: ")))
  # the same fit as without a display
  set.seed(1)
  expect_equal(coef(r$value), coef(rff_ridge(xx, yy, D = 200, chunk_size = 100, progress = FALSE)),
               tolerance = 1e-12)
})

test_that("a lengthscale walk plans 3.5 candidates, then one a step", {
  old <- options(rff.progress = "txt", rff.progress_delay = Inf)
  on.exit(options(old))
  # the work each candidate expects when it starts (its own and the rest:
  # the plan's total less what is done), 1 unit a candidate, 10 after
  planned <- function(scores) {
    left <- numeric()
    close <- rff:::progress_call(TRUE, "test")
    on.exit(close())
    w <- rff:::lengthscale_walk(function(j) {
      d <- rff:::progress_state$call
      left <<- c(left, d$total - d$done)
      scores[[as.character(j)]]
    }, cost = 1, after = 10)
    list(left = left, steps = w$steps)
  }
  # the start scores best of the first two: 1.5 candidates planned at the
  # third (itself and half of one more); the walk ends there
  p <- planned(c("0" = 1, "-1" = 2, "1" = 3))
  expect_identical(p$steps, -1:1)
  expect_equal(p$left, c(3.5, 2.5, 1.5) + 10)
  # the third wins and the walk goes on: the fourth, and then the fifth,
  # planned alone
  p <- planned(c("0" = 2, "-1" = 3, "1" = 1, "2" = 0.5, "3" = 0.7))
  expect_identical(p$steps, -1:3)
  expect_equal(p$left, c(3.5, 2.5, 1.5, 1, 1) + 10)
  # the step below the start won: the next below is the third, and the
  # walk ends there when it loses
  p <- planned(c("0" = 2, "-1" = 1, "-2" = 1.5))
  expect_identical(p$steps, -2:0)
  expect_equal(p$left, c(3.5, 2.5, 1.5) + 10)
  # or goes on while it wins
  p <- planned(c("0" = 2, "-1" = 1, "-2" = 0.5, "-3" = 0.7))
  expect_identical(p$steps, -3:0)
  expect_equal(p$left, c(3.5, 2.5, 1.5, 1) + 10)
})

test_that("the plan of a GLM fit's setup: the span of its rows below D rows, the rotation above", {
  n <- 300
  D <- 1000
  expect_equal(rff:::glm_setup_cost(n, D, 3, 1e12), 5 * n^2 * D + 16 * n^3)
  n <- 3000
  # the features turned (2 K passes above the rows), or left where they lie
  passes <- function(p) p * rff:::glm_pass_cost(n, D, 3)
  expect_equal(rff:::glm_setup_cost(n, D, 3, passes(501)), 2 * n * D^2 + 7 * D^3)
  expect_equal(rff:::glm_setup_cost(n, D, 3, passes(499)), n * D^2 + 7 * D^3)
  # the path's passes: 4.5 per lambda; the folds': 2.8 per lambda and fold
  # up to 5 folds, 14 per lambda for more; a held-out set (1 fit of 5
  # folds) 2.8; lambda_best's refinement 24 in all
  unit <- 2 * n * D * 3 + rff:::glm_pass_overhead
  expect_equal(rff:::glm_pass_cost(n, D, 3), unit)
  expect_equal(rff:::glm_cost(n, D, 3, 10, 20), unit * 20 * (4.5 + 14))
  expect_equal(rff:::glm_cost(n, D, 3, 4, 20), unit * 20 * (4.5 + 11.2))
  expect_equal(rff:::glm_cost(n, D, 3, 1, 20, 5), unit * 20 * (4.5 + 2.8))
  expect_equal(rff:::glm_cost(n, D, 3, 1, 20, 5, refine = TRUE), unit * (20 * (4.5 + 2.8) + 24))
  expect_equal(rff:::glm_cost(n, D, 3, 0, 20, 0), unit * 20 * 4.5)
})

test_that("rff_glm() and rff_cv() show one display naming their stages", {
  old <- options(rff.progress = "progressr", progressr.enable = TRUE, rff.progress_interval = 0)
  on.exit(options(old))
  msgs <- character()
  keep <- function(c) if (identical(c$type, "update")) msgs <<- c(msgs, c$message)
  set.seed(63)
  r <- progress_record(withCallingHandlers(rff_glm(Species ~ ., iris, D = 100, progress = TRUE),
                                           progression = keep))
  types <- vapply(r$events, `[[`, "", "type")
  expect_identical(sum(types == "initiate"), 1L)
  expect_true(any(grepl("^rff_glm: lengthscale search, candidate 1", msgs)))
  expect_true(any(grepl("^rff_glm: fit: cross-validation over lambda \\(5 folds\\)", msgs)))
  # the features and the preconditioner first, as a stage of the fit's own
  setup <- grep("^rff_glm: fit: features and preconditioner", msgs)
  expect_true(length(setup) > 0L)
  expect_lt(max(setup), min(grep("^rff_glm: fit: cross-validation", msgs)))
  # and lambda_best solved on to the tolerance after the path, in a share
  # of the fit the path left for it
  refine <- grep("^rff_glm: fit: lambda_best to the tolerance", msgs)
  expect_true(length(refine) > 0L)
  expect_gt(min(refine), max(grep("^rff_glm: fit: cross-validation", msgs)))
  # (the i-th update is msgs[i]): the work done when the refinement starts
  ups <- r$events[types == "update"]
  expect_length(ups, length(msgs))
  done <- cumsum(vapply(ups, `[[`, 0, "amount"))
  expect_lt(done[min(refine)], 995)
  # rff_cv() with a family plans it after its candidates, as well
  msgs <- character()
  set.seed(64)
  r <- progress_record(withCallingHandlers(
    rff_cv(Species ~ ., iris, family = "multinomial", D = 20, folds = 4, progress = TRUE),
    progression = keep))
  types <- vapply(r$events, `[[`, "", "type")
  refine <- grep("lambda_best to the tolerance", msgs)
  expect_true(length(refine) > 0L)
  done <- cumsum(vapply(r$events[types == "update"], `[[`, 0, "amount"))
  expect_lt(done[min(refine)], 995)
  expect_equal(sum(vapply(r$events[types == "update"], `[[`, 0, "amount")), 1000)
  msgs <- character()
  r <- progress_record(withCallingHandlers(rff_cv(x, y, D = 20, folds = 4, progress = TRUE),
                                           progression = keep))
  types <- vapply(r$events, `[[`, "", "type")
  expect_identical(sum(types == "initiate"), 1L)
  expect_true(any(grepl("^rff_cv: lengthscale search, candidate 2 \\(0.707 x median\\): 4 folds", msgs)))
  expect_match(msgs[length(msgs)], "^rff_cv: refit on all rows")
  # no display at all with progress = FALSE
  q <- progress_record(rff_cv(x, y, D = 20, folds = 4, progress = FALSE))
  expect_length(q$events, 0L)
})

test_that("the text display is one line, after its delay, ending at 100%", {
  old <- options(rff.progress = "txt", rff.progress_delay = 0)
  on.exit(options(old))
  out <- paste(capture.output(f <- rff_ridge(x, y, D = 20, chunk_size = 100, progress = TRUE)),
               collapse = "\n")
  lines <- strsplit(out, "\r", fixed = TRUE)[[1L]]
  lines <- lines[nzchar(lines)]
  expect_false(grepl("\n", paste(lines[-length(lines)], collapse = "")))
  expect_match(lines[1L], "rff_ridge: lengthscale search, candidate 1")
  expect_match(lines[length(lines)], "^100% rff_ridge: final fit")
  # a call shorter than the delay shows nothing
  options(rff.progress_delay = 3600)
  quiet <- capture.output(f2 <- rff_ridge(x, y, D = 20, progress = TRUE))
  expect_identical(quiet, character(0))
})

test_that("the display's shares and its estimate of the time left", {
  old <- options(rff.progress = "txt", rff.progress_delay = 0)
  on.exit(options(old))
  out <- capture.output({
    close <- rff:::progress_call(TRUE, "test")
    d <- rff:::progress_state$call
    rff:::progress_expect(10)
    a <- rff:::progress_stage("a", 4)
    # a nested stage taking half of what is left of its parent
    b <- rff:::progress_stage("b", 8, share = 0.5)
    b$set(4)
    done_b <- d$done
    label_b <- d$label
    b$close()
    done_b_closed <- d$done
    a$set(2)
    a$close()
    done_a <- d$done
    # a quarter done 10 s after the start: about 30 s left (the share shown
    # never goes back: 40%, reached before)
    d$t0 <- proc.time()[["elapsed"]] - 10
    d$last <- -Inf
    d$done <- 2.5
    rff:::progress_render(d)
    close()
  })
  expect_equal(done_b, 1)        # 4 of 8 steps of half of 4 units
  expect_identical(label_b, "a: b")
  expect_equal(done_b_closed, 2)
  expect_equal(done_a, 4)
  expect_match(paste(out, collapse = ""), "40% test: a, about 30 s left", fixed = TRUE)
  expect_false(rff:::progress_active())
})

test_that("an error or an interrupt ends the display and leaves none open", {
  old <- options(rff.progress = "progressr", progressr.enable = TRUE)
  on.exit(options(old))
  f <- function() {
    close <- rff:::progress_call(TRUE, "test")
    on.exit(close())
    st <- rff:::progress_stage("a", 10)
    st$set(3)
    stop("in the middle")
  }
  r <- progress_record(try(f(), silent = TRUE))
  types <- vapply(r$events, `[[`, "", "type")
  expect_identical(types[length(types)], "finish")
  expect_false(rff:::progress_active())
  # a fit stopped by an error in its data shows no display left open
  expect_error(rff_ridge(x, c(y[-1], NA), D = 20, progress = TRUE), class = "rff_error")
  expect_false(rff:::progress_active())
})

test_that("the ARD optimization is a stage of the fit's display", {
  old <- options(rff.progress = "progressr", progressr.enable = TRUE, rff.progress_interval = 0)
  on.exit(options(old))
  msgs <- character()
  set.seed(64)
  xx <- matrix(rnorm(600), 200, 3)
  yy <- sin(2 * xx[, 1]) + rnorm(200, sd = 0.1)
  r <- progress_record(withCallingHandlers(
    rff_ridge(xx, yy, D = 60, lengthscale = "ard", progress = TRUE),
    progression = function(c) if (identical(c$type, "update")) msgs <<- c(msgs, c$message)))
  types <- vapply(r$events, `[[`, "", "type")
  expect_identical(sum(types == "initiate"), 1L)
  stages <- sub(",.*$", "", sub("^rff_ridge: ", "", msgs))
  ard_at <- which(startsWith(stages, "one lengthscale per input (ARD)"))
  expect_true(length(ard_at) > 0L)
  # after the isotropic search, before the final fit
  expect_lt(max(grep("lengthscale search", stages)), min(ard_at))
  expect_gt(min(grep("final fit", stages)), max(ard_at))
  expect_equal(sum(vapply(r$events[types == "update"], `[[`, 0, "amount")), 1000)
})
