"""Text conventions both sides use (the hooks and the host): stdlib only."""
