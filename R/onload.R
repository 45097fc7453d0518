# Layer 10 (loading): what happens when rff is loaded: its parsnip model is
# registered with parsnip, now if parsnip is loaded, else when it is.

.onLoad <- function(libname, pkgname) {
  register <- function(...) register_parsnip_model()
  if (isNamespaceLoaded("parsnip")) register()
  setHook(packageEvent("parsnip", "onLoad"), register)
  invisible(NULL)
}
