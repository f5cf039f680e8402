"""Text conventions both sides use (the hooks and the host): standard library only, importing nothing
of the package."""
