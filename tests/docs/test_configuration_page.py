"""docs/configuration.md is generated from the settings tree; these tests keep the two in step."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from hybrid_memory import settings_doc
from hybrid_memory.settings import Settings

PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_configuration_page_matches_the_settings_tree() -> None:
    current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    assert current == settings_doc.render(), (
        f"docs/configuration.md does not match settings.py; regenerate it: {settings_doc.REGENERATE}"
    )


def test_every_setting_appears_with_its_env_variable_default_and_meaning() -> None:
    page = settings_doc.render()
    assert (
        "| `HYBRID_MEMORY_CHUNK_TOKENS` | integer, 16 to 8192 | 256 | "
        "A message longer than this many tokens is stored as overlapping chunks. |"
    ) in page
    assert "| `QDRANT_URL` or `HYBRID_MEMORY_QDRANT_URL` | text | unset |" in page
    assert "| `HYBRID_MEMORY_HTTP_TOKEN` | secret | unset |" in page
    assert "| `HYBRID_MEMORY_RANKING_OWN_WORDS_FIRST` | boolean | `true` |" in page
    assert "| `HYBRID_MEMORY_EVICTION_POLICY` | `lru` \\| `fifo` \\| `ttl` | `lru` |" in page


def test_a_new_setting_changes_the_page() -> None:
    class Grown(Settings):
        flush_every_s: float = Field(default=2.5, gt=0)
        """Seconds between two flushes of the embedded store."""

    page = settings_doc.render(Grown)
    assert page != settings_doc.render()
    assert (
        "| `HYBRID_MEMORY_FLUSH_EVERY_S` | number > 0 | 2.5 | "
        "Seconds between two flushes of the embedded store. |"
    ) in page


def test_a_setting_without_a_description_is_refused_with_how_to_fix_it() -> None:
    class Undocumented(Settings):
        flush_every_s: float = 2.5

    with pytest.raises(settings_doc.UndocumentedSettingError) as caught:
        settings_doc.render(Undocumented)
    assert str(caught.value) == (
        "Undocumented.flush_every_s has no description: write a docstring under it in settings.py saying "
        "what it does, then run python -m hybrid_memory.settings_doc > docs/configuration.md"
    )


def test_check_says_how_to_regenerate_a_stale_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text("# Configuration\n", encoding="utf-8")
    assert settings_doc.main(["--check", str(stale)]) == 1
    assert capsys.readouterr().err == (
        f"{stale} does not match settings.py; regenerate it: "
        "python -m hybrid_memory.settings_doc > docs/configuration.md\n"
    )
    stale.write_text(settings_doc.render(), encoding="utf-8")
    assert settings_doc.main(["--check", str(stale)]) == 0
