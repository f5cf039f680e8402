"""From a captured session to the graph: notes, entities, changes and the session's digest.

The harvest (:mod:`.harvest`) runs the statement finder over a session's turns and writes what
it finds; :mod:`.consolidate` and :mod:`.changes` decide what a new statement duplicates or
supersedes, :mod:`.curate` applies a distillation's notes the same way.
"""
