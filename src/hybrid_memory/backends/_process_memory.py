"""What the embedded store's process holds: glibc's heaps, and the store's memory-mapped pages."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Callable
from pathlib import Path


def _find_malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
    except OSError:
        return None
    return getattr(libc, "malloc_trim", None)  # glibc's; other C libraries have none


_MALLOC_TRIM = _find_malloc_trim()


def release_freed_memory() -> None:
    """Give the heap pages an index build freed back to the system: glibc keeps them otherwise
    (25-40 MB after building a 10k store's index)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


MALLOC_ARENAS = 2
"""glibc's heaps (arenas) for the whole process, unless ``MALLOC_ARENA_MAX`` says otherwise."""
_M_ARENA_MAX = -8


def limit_malloc_arenas() -> None:
    """Cap glibc's arenas: it gives a thread that allocates while others do a heap of its own, up to
    eight per core, and each keeps the pages freed in it. Edge's search and build threads and the
    worker threads that call it would keep a heap each; with two, what a build frees serves the next."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
    except OSError:
        return
    mallopt = getattr(libc, "mallopt", None)  # glibc's
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, MALLOC_ARENAS)


def _find_madvise() -> Callable[[int, int, int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    except OSError:
        return None
    madvise = getattr(libc, "madvise", None)
    if madvise is not None:
        madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        madvise.restype = ctypes.c_int
    return madvise


_MADVISE = _find_madvise()
_MADV_DONTNEED = 4  # the same number on every Linux architecture


def release_mapped_pages(directory: Path) -> int:
    """Unmap from this process the resident pages of its shared file mappings under ``directory``;
    the bytes of mappings advised.

    Edge memory-maps its segments, payloads and log; every page it reads or writes stays
    in the process's resident set until the mapping goes (an index build reads the whole
    store: at 100k memories 700 MB of file pages), though only the kernel's page cache holds
    them. Dropping them from the mapping keeps the file contents (the mappings are shared:
    a written page is the file's page, still in the page cache and still written back), and
    the next access maps them again from the cache, without reading the disk.

    Only shared mappings of files in ``directory`` are touched, and the caller holds the store's
    call lock, so no Edge call can unmap one of them (and its address be reused) meanwhile: the
    segments', not the log's, whose files Edge's own thread maps and unmaps at any time.
    """
    if _MADVISE is None:
        return 0
    prefix = f"{directory.resolve()}/"
    advised = 0
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            lines = maps.readlines()
    except OSError:  # not Linux
        return 0
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[1][3:4] != "s" or not fields[5].startswith(prefix):
            continue
        start, _, end = fields[0].partition("-")
        low, high = int(start, 16), int(end, 16)
        if _MADVISE(low, high - low, _MADV_DONTNEED) == 0:
            advised += high - low
    return advised
