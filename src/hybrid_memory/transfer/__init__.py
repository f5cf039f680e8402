"""Move memory between stores: ``hybrid-memory export`` / ``import`` and their file format.

The format (JSON Lines, versioned) is documented in ``docs/export-format.md`` and
modelled in :mod:`~hybrid_memory.transfer.format`. Import also reads the MCP reference
memory server's ``memory.jsonl`` (:mod:`~hybrid_memory.transfer.mcp_memory`).
"""

from hybrid_memory.transfer.exporter import ExportResult, export_file
from hybrid_memory.transfer.format import FORMAT_VERSION, ImportFileError
from hybrid_memory.transfer.importer import ImportResult, import_file
from hybrid_memory.transfer.progress import Progress

__all__ = [
    "FORMAT_VERSION",
    "ExportResult",
    "ImportFileError",
    "ImportResult",
    "Progress",
    "export_file",
    "import_file",
]
