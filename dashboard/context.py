"""What every route of one server shares: the store (journal + Parquet), users, the push hub
and the site configuration. No other state lives in the process."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dashboard.config import SiteConfig
from dashboard.push import Hub
from roads.auth import Auth
from roads.store.journal import Journal
from roads.store.store import Store


@dataclass(frozen=True, slots=True)
class Context:
    store: Store
    auth: Auth
    hub: Hub
    site: SiteConfig

    @property
    def journal(self) -> Journal:
        return self.store.journal

    @classmethod
    def open(cls, root: Path, site: SiteConfig) -> Context:
        store = Store(root)
        return cls(store, Auth(root, store.journal), Hub(store, site), site)

    def table_ids(self) -> list[str]:
        """Configured tables first, then any other table the journal knows."""
        known = self.journal.tables()
        return [*self.site.tables, *(t for t in known if t not in self.site.tables)]
