# Layer 1 (foundations): numerical helpers shared by the theory and the
# models.

# log(1 + exp(t)) for every t without overflow or loss of digits (vectorized):
# exp(t) below -37, where log1p(exp(t)) rounds to it; t + exp(-t) above 18
# and t itself above 33.3, where exp(-t) no longer changes the sum.
log1pexp <- function(t) {
  ifelse(t <= -37, exp(t), ifelse(t <= 18, log1p(exp(t)),
                                  ifelse(t <= 33.3, t + exp(-t), t)))
}
