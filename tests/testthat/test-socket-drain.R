# The drain after an interrupted call on a socket cluster (R/socket-jobs.R):
# every owed reply is read and discarded, also when several nodes' replies
# are ready at once (each is matched to its own node's tag, not to a
# position in the list of those still owing).

test_that("a drain reads every owed reply when several are ready at once", {
  skip_on_os("windows")
  cl <- local_cluster(2)
  on.exit(parallel::stopCluster(cl))
  for (i in 1:2) rff:::send_job(cl[[i]], function(v) v, list(i), paste("call", i))
  # both replies on their connections before the drain starts (each wait
  # returns as soon as that node's reply is there)
  ready <- vapply(1:2, function(i) socketSelect(list(cl[[i]]$con), timeout = 300), logical(1))
  expect_true(all(ready))
  expect_true(rff:::socket_drain(cl, list(`1` = "call 1", `2` = "call 2"), wait = 30))
  # in step: the next calls get their own replies
  expect_identical(unlist(parallel::clusterCall(cl, function() 7)), c(7, 7))
  expect_silent(rff:::check_socket_nodes(cl))
})
