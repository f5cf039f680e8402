"""The export/import progress bar: drawn in place on a terminal, silent anywhere else."""

from __future__ import annotations

import io

from hybrid_memory.transfer import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_in_place_on_a_terminal_and_ends_the_line() -> None:
    stream = Terminal()
    progress = Progress(stream=stream)

    progress.start("importing", 10)
    progress.advance(5)
    progress.finish()

    assert stream.getvalue() == (
        "\rimporting [------------------------------] 0/10\x1b[K"
        "\rimporting [###############---------------] 5/10\x1b[K\n"
    )


def test_progress_without_a_total_counts() -> None:
    stream = Terminal()
    progress = Progress(stream=stream)

    progress.start("links", None)
    progress.advance(3)
    progress.finish()

    assert stream.getvalue().endswith("\rlinks 3\x1b[K\n")


def test_progress_is_silent_when_not_a_terminal_or_quiet() -> None:
    pipe, quiet = io.StringIO(), Terminal()

    for progress in (Progress(stream=pipe), Progress(enabled=False, stream=quiet)):
        progress.start("importing", 2)
        progress.advance(2)
        progress.finish()

    assert pipe.getvalue() == quiet.getvalue() == ""
