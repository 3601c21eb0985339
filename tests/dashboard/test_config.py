"""Site configuration: defaults, branding, and errors naming the file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard.config import load_config
from roads.errors import InputError


def test_defaults_without_a_file() -> None:
    site = load_config(None)
    assert site.theme == "dark" and site.language == "en" and site.table("T9").name == "T9"


def test_branding_and_tables(tmp_path: Path) -> None:
    (tmp_path / "logo.svg").write_text("<svg/>")
    path = tmp_path / "site.toml"
    path.write_text('casino = "Casino Lisboa"\nlogo = "logo.svg"\naccent = "#112233"\n'
                    'theme = "classic"\nlanguage = "zh-Hant"\n[tables.T01]\nname = "Salon 1"\n'
                    'min_bet = 100\nmax_bet = 50000\ncurrency = "HKD"\n')
    site = load_config(path)
    assert (site.casino, site.accent, site.theme, site.language) == \
        ("Casino Lisboa", "#112233", "classic", "zh-Hant")
    assert site.logo == tmp_path / "logo.svg"
    assert site.table("T01").limits() == "HKD 100 – 50,000"


@pytest.mark.parametrize(("text", "field"), [
    ('theme = "neon"', "theme"), ('language = "fr"', "language"),
    ('accent = "red"', "accent"), ('logo = "missing.png"', "logo"),
    ("[tables]\nT1 = 3", "tables.T1"),
])
def test_errors_name_the_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "site.toml"
    path.write_text(text + "\n")
    with pytest.raises(InputError) as err:
        load_config(path)
    assert str(path) in str(err.value) and repr(field) in str(err.value)


def test_unreadable_toml_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_text("casino = \n")
    with pytest.raises(InputError, match="cannot read site configuration"):
        load_config(path)
