"""Recall: the channels, their fusion, and the final ranking of what they found."""

from hybrid_memory.service.recall.config import PRESETS, RecallConfig, recall_config
from hybrid_memory.service.recall.pipeline import Recaller
from hybrid_memory.service.recall.state import RecallOptions

__all__ = ["PRESETS", "RecallConfig", "RecallOptions", "Recaller", "recall_config"]
