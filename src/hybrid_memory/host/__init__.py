"""The host: the one process that owns a data dir's embedded store, and everything that talks to it.

Whoever holds ``serve.lock`` hosts the store and serves it on ``serve.sock``; every other
server, hook and command on that data dir is a client of the host. Both ends live here:

- :mod:`.lock` and :mod:`.wire`: the lock, the socket's path, and the wire (framing,
  bounds, retry intervals), written once for both sides;
- the client side, standard library only (hooks import it on every prompt):
  :mod:`.start` (start a headless host, connect-or-start), :mod:`.client` (the light MCP
  client), :mod:`.relay` with :mod:`.stdio_relay` (a stdio client relayed to the host),
  :mod:`.join` (a command run in the host), :mod:`.stop`;
- the serving side (anyio, the MCP SDK): :mod:`.serve`, :mod:`.async_relay`, :mod:`.stdio`.

The host runs what is plugged into it (the commands' handler, the viewer) and imports
neither: see :class:`hybrid_memory.host.serve.Plugins`.

Nothing is imported here, so that the client side loads alone.
"""
