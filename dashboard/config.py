"""Site configuration: branding, tables, rule sets, who is trusted, and the request limits.

Read from a TOML file (``roads serve --config site.toml``) into declarative pydantic models
that refuse unknown fields and name the file and the field of the first problem; every
field has a default so a bare ``roads serve`` works. Example::

    casino = "Casino Lisboa"
    logo = "logo.svg"              # relative to this file; served at /brand/logo
    accent = "#c8a04a"
    theme = "dark"
    language = "zh-Hant"
    https = true                   # served behind TLS: cookies are Secure, HSTS is sent
    trusted_proxies = ["10.0.0.5"] # whose X-Forwarded-For is believed (none by default)
    dealt_at_tolerance_seconds = 300
    queue_wait_seconds = 5         # a write behind a hung writer answers 503 after this
    [rule_sets]
    club-6 = "rules/club-6.toml"   # a custom rule set, registered by name
    [tables.T01]
    name = "Salon Privé 1"
    rules = "club-6"
    min_bet = 100
    max_bet = 50000
    currency = "HKD"
    [limits]
    body_seconds = 10
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from dashboard.i18n import CATALOGS
from roads.errors import InputError
from roads.render.themes import THEMES
from roads.rules import PRESETS, RuleSet, load_rules
from roads.tomlfile import STRICT, known, parse, read_toml

TableId = Annotated[str, Field(pattern=r"^[A-Za-z0-9._:-]{1,64}$")]
Name = Annotated[str, Field(min_length=1, max_length=120)]


def _base(info: ValidationInfo) -> Path | None:
    """The site file's directory: relative paths in it are relative to the file."""
    return (info.context or {}).get("base")


def _resolve(path: Path, info: ValidationInfo) -> Path:
    base = _base(info)
    return base / path if base is not None and not path.is_absolute() else path


class TableConfig(BaseModel):
    """One table's name on screens, its rule set and its limits."""

    model_config = STRICT
    table_id: TableId
    name: Name
    rules: str = "standard-8"
    min_bet: Annotated[int, Field(ge=0)] | None = None
    max_bet: Annotated[int, Field(ge=0)] | None = None
    currency: Annotated[str, Field(max_length=8)] = ""

    def __init__(self, table_id: str, name: str | None = None, **fields: Any) -> None:
        super().__init__(table_id=table_id, name=name or table_id, **fields)

    def limits(self) -> str:
        if self.min_bet is None or self.max_bet is None:
            return ""
        return f"{self.currency} {self.min_bet:,} – {self.max_bet:,}".strip()


class Limits(BaseModel):
    """How much a client may send and how slowly (see ``docs/security.md``)."""

    model_config = STRICT
    #: API writes (coups, shoes, corrections) and operator actions.
    api_body_bytes: Annotated[int, Field(ge=512, le=1 << 20)] = 8 * 1024
    #: Forms: login, logout, the export form.
    form_body_bytes: Annotated[int, Field(ge=512, le=1 << 20)] = 4 * 1024
    #: Dash callbacks of the dashboard pages.
    page_body_bytes: Annotated[int, Field(ge=4096, le=16 << 20)] = 256 * 1024
    #: A request's headers may be this large.
    header_bytes: Annotated[int, Field(ge=4096, le=1 << 20)] = 16 * 1024
    #: A request's headers, and then its body, must arrive within these.
    header_seconds: Annotated[float, Field(gt=0, le=300)] = 10.0
    body_seconds: Annotated[float, Field(gt=0, le=300)] = 10.0
    #: An idle kept-alive connection is closed after this.
    keep_alive_seconds: Annotated[int, Field(ge=1, le=300)] = 5
    #: Password hashing (~60 ms of a core each): threads, and attempts allowed to wait.
    #: One thread leaves the other core of a small table-side server to the tables.
    login_workers: Annotated[int, Field(ge=1, le=8)] = 1
    login_queue: Annotated[int, Field(ge=0, le=256)] = 16


class SiteConfig(BaseModel):
    """The whole site file. Construct it in code with keywords, or :func:`load_config`."""

    model_config = STRICT
    casino: Name = "Baccarat Roads"
    logo: Path | None = None
    accent: str = "#c8a04a"
    theme: Annotated[str, known("theme", THEMES)] = "dark"
    language: Annotated[str, known("language", CATALOGS)] = "en"
    tables: dict[str, TableConfig] = {}
    #: Served behind TLS: cookies get ``Secure`` and responses HSTS.
    https: bool = False
    #: Addresses or networks of reverse proxies whose ``X-Forwarded-For`` is believed.
    trusted_proxies: list[str] = []
    #: Custom rule-set files registered by name (paths relative to the site file).
    rule_sets: dict[str, Path] = {}
    #: How far a live coup's ``dealt_at`` may be from the journal's clock.
    dealt_at_tolerance_seconds: Annotated[int, Field(ge=0, le=86_400)] = 300
    #: How long a write waits for the journal's writers' queue, then answers 503.
    queue_wait_seconds: Annotated[float, Field(gt=0, le=300)] = 5.0
    limits: Limits = Limits()
    _rule_sets: dict[str, RuleSet] = PrivateAttr(default_factory=dict)

    @field_validator("accent")
    @classmethod
    def _accent(cls, accent: str) -> str:
        if not re.fullmatch(r"#[0-9a-fA-F]{6}", accent):
            raise ValueError("expected a colour like #c8a04a")
        return accent

    @field_validator("logo", mode="before")
    @classmethod
    def _logo(cls, logo: object, info: ValidationInfo) -> object:
        if isinstance(logo, str | Path):
            path = _resolve(Path(logo), info)
            if not path.is_file():
                raise ValueError(f"no such file {str(logo)!r}")
            return path
        return logo

    @field_validator("rule_sets", mode="before")
    @classmethod
    def _rule_set_paths(cls, paths: object, info: ValidationInfo) -> object:
        if isinstance(paths, dict):
            return {k: _resolve(Path(v), info) if isinstance(v, str | Path) else v
                    for k, v in paths.items()}
        return paths

    @field_validator("tables", mode="before")
    @classmethod
    def _table_ids(cls, tables: object) -> object:
        """In the file a table is named by its key: ``[tables.T01]``."""
        if not isinstance(tables, dict):
            return tables
        return {tid: {**spec, "table_id": tid, "name": spec.get("name", tid)}
                if isinstance(spec, dict) and "table_id" not in spec else spec
                for tid, spec in tables.items()}

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, proxies: list[str]) -> list[str]:
        for proxy in proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise ValueError(f"{proxy!r} is not an IP address or network") from None
        return proxies

    @model_validator(mode="after")
    def _load_rule_sets(self) -> SiteConfig:
        """Registered rule sets are read once, here: a bad or missing file stops the server
        at start, and moving a file later cannot break a shoe in play."""
        for name, path in self.rule_sets.items():
            where = f"field rule_sets.{name}"
            if name in PRESETS:
                raise ValueError(f"{where}: {name!r} is a preset; register the file under "
                                 "another name")
            try:
                rules = load_rules(path)
            except InputError as exc:
                raise ValueError(f"{where}: {exc}") from None
            if rules.name != name:
                raise ValueError(f"{where}: {path} names its rule set {rules.name!r}")
            self._rule_sets[name] = rules
        for table in self.tables.values():
            if table.rules not in PRESETS and table.rules not in self._rule_sets:
                raise ValueError(f"field tables.{table.table_id}.rules: "
                                 f"{self._unknown(table.rules)}")
        return self

    def _unknown(self, name: str) -> str:
        known = [*PRESETS, *self._rule_sets]
        return f"unknown rule set {name!r}; known: {', '.join(known)}"

    def table(self, table_id: str) -> TableConfig:
        return self.tables.get(table_id) or TableConfig(table_id)

    def rule_set(self, name: str) -> RuleSet:
        """A preset or a registered rule set by its name; never a file path (a client that
        could name a path could probe the server's files)."""
        if name in PRESETS:
            return PRESETS[name]
        if name in self._rule_sets:
            return self._rule_sets[name]
        raise InputError(self._unknown(name))

    def rule_set_names(self) -> list[str]:
        return [*PRESETS, *self._rule_sets]


def load_config(path: Path | None) -> SiteConfig:
    """The site configuration; errors name the file and the field."""
    if path is None:
        return SiteConfig()
    data = read_toml(path, "site configuration")
    return parse(SiteConfig, data, str(path), context={"base": path.parent})
