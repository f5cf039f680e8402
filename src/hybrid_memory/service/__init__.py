"""The use cases of the memory server, over the storage protocols and the embedder."""

from hybrid_memory.service.core import MemoryService
from hybrid_memory.service.recall import RecallOptions
from hybrid_memory.service.threads import memory_id

__all__ = ["MemoryService", "RecallOptions", "memory_id"]
