"""The memory viewer: a read-only web page over what the memory holds.

``serve --transport http`` serves it at ``/viewer`` behind the same token and Host/Origin
rules as ``/mcp``; every process that hosts a data dir's store for stdio servers serves it
on the Unix socket ``view.sock`` beside ``serve.sock``, and ``hybrid-memory view`` puts it
on loopback with a token of its own (:mod:`.command`).
"""
