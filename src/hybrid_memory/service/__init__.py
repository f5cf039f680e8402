"""The use cases of the memory server, over the storage protocols and the embedder."""

from hybrid_memory.service.commands import DryRun, NoteDraft, TaskDraft, ThreadDraft
from hybrid_memory.service.core import MemoryService
from hybrid_memory.service.recall import RecallOptions
from hybrid_memory.service.threads import memory_id

__all__ = [
    "DryRun",
    "MemoryService",
    "NoteDraft",
    "RecallOptions",
    "TaskDraft",
    "ThreadDraft",
    "memory_id",
]
