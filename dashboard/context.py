"""What every route of one server shares: the live-table service (and through it the
store's read port), users, the push hub and the site configuration. No other state lives in
the process."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from dashboard.config import SiteConfig
from dashboard.push import Hub
from roads.auth import Auth
from roads.tables import Settings, TableService, open_service


@dataclass(frozen=True, slots=True)
class Context:
    service: TableService
    auth: Auth
    hub: Hub
    site: SiteConfig

    @classmethod
    def open(cls, root: Path, site: SiteConfig, create: bool = False, recover: bool = True,
             registry: Path | None = None) -> Context:
        service = open_service(root, Settings(
            tolerance=timedelta(seconds=site.dealt_at_tolerance_seconds),
            rule_set=site.rule_set, tables=frozenset(site.tables),
            queue_wait=site.queue_wait_seconds), create, group_commit=True)
        if recover:
            service.recover()  # seal what a crash left closed but unsealed
        return cls(service, Auth(root, service.journal), Hub(service, site, registry), site)

    def table_ids(self) -> list[str]:
        """Configured tables first, then any other table the journal knows."""
        return self.service.tables(list(self.site.tables))
