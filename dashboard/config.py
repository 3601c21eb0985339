"""Site configuration: casino branding, theme, default language and the tables' limits.

Read from a TOML file (``roads serve --config site.toml``); every field has a default so a
bare ``roads serve`` works. Example::

    casino = "Casino Lisboa"
    logo = "/path/to/logo.svg"      # served at /brand/logo
    accent = "#c8a04a"
    theme = "dark"
    language = "zh-Hant"
    [tables.T01]
    name = "Salon Privé 1"
    rules = "standard-8"
    min_bet = 100
    max_bet = 50000
    currency = "HKD"
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dashboard.i18n import CATALOGS
from roads.errors import InputError
from roads.render.themes import THEMES
from roads.rules import RuleSet
from roads.tables import preset_rule_set

_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")


@dataclass(frozen=True, slots=True)
class TableConfig:
    table_id: str
    name: str
    rules: str = "standard-8"
    min_bet: int | None = None
    max_bet: int | None = None
    currency: str = ""

    def limits(self) -> str:
        if self.min_bet is None or self.max_bet is None:
            return ""
        return f"{self.currency} {self.min_bet:,} – {self.max_bet:,}".strip()


@dataclass(frozen=True, slots=True)
class SiteConfig:
    casino: str = "Baccarat Roads"
    logo: Path | None = None
    accent: str = "#c8a04a"
    theme: str = "dark"
    language: str = "en"
    tables: dict[str, TableConfig] = field(default_factory=dict)
    dealt_at_tolerance_seconds: int = 300

    def table(self, table_id: str) -> TableConfig:
        return self.tables.get(table_id) or TableConfig(table_id, table_id)

    def rule_set(self, name: str) -> RuleSet:
        """A rule set by name: a preset (live requests name rule sets, never paths)."""
        return preset_rule_set(name)


def load_config(path: Path | None) -> SiteConfig:
    """The site configuration; errors name the file and the field."""
    if path is None:
        return SiteConfig()
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: cannot read site configuration: {exc}") from None

    def bad(name: str, why: str) -> InputError:
        return InputError(f"{path}: field {name!r}: {why}")

    theme = raw.get("theme", "dark")
    if theme not in THEMES:
        raise bad("theme", f"unknown theme {theme!r}; known: {', '.join(THEMES)}")
    lang = raw.get("language", "en")
    if lang not in CATALOGS:
        raise bad("language", f"unknown language {lang!r}; known: {', '.join(CATALOGS)}")
    accent = raw.get("accent", "#c8a04a")
    if not isinstance(accent, str) or not _COLOUR.match(accent):
        raise bad("accent", "expected a colour like #c8a04a")
    logo = raw.get("logo")
    if logo is not None and not (path.parent / logo).is_file():
        raise bad("logo", f"no such file {logo!r}")
    tables = {}
    for tid, spec in (raw.get("tables") or {}).items():
        if not isinstance(spec, dict):
            raise bad(f"tables.{tid}", "expected a table")
        try:
            tables[tid] = TableConfig(tid, str(spec.get("name", tid)),
                                      str(spec.get("rules", "standard-8")),
                                      spec.get("min_bet"), spec.get("max_bet"),
                                      str(spec.get("currency", "")))
        except (TypeError, ValueError) as exc:
            raise bad(f"tables.{tid}", str(exc)) from None
    return SiteConfig(str(raw.get("casino", "Baccarat Roads")),
                      path.parent / logo if logo else None, accent, theme, lang, tables)
