"""``hybrid-memory sync <remote>``: one person's machines share one memory through a folder or a
git repository, with no service in between. See ``docs/sync.md``."""

from hybrid_memory.transfer.sync.run import SyncResult, sync

__all__ = ["SyncResult", "sync"]
