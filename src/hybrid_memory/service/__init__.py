"""The use cases of the memory server, over the storage protocols and the embedder."""

from hybrid_memory.service.core import MemoryService, memory_id
from hybrid_memory.service.recall import RecallOptions

__all__ = ["MemoryService", "RecallOptions", "memory_id"]
