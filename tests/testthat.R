library(testthat)
library(rff)

test_check("rff")
