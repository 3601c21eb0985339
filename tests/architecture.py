"""The architecture's rules, checked on the source (``docs/architecture.md`` draws the map).

Read with :mod:`ast`, never imported, so a checked module's own imports cannot hide. Every
rule names the module and the line that breaks it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

#: The pure cores: data in, data out; no I/O shell, no store, no server.
PURE = ("roads.cards", "roads.rules", "roads.tableau", "roads.odds", "roads.odds_compiled",
        "roads.schema", "roads.replay", "roads.errors", "roads.engine", "roads.board",
        "roads.render", "roads.stats")
#: The shells a pure core may never import.
SHELLS = ("roads.store", "roads.ingest", "roads.tables", "roads.audit", "roads.scale",
          "roads.cli", "roads.cli_live", "roads.auth", "roads.analysis", "roads.simulate",
          "roads.files", "roads.prepare", "dashboard")
#: The store's modules others may import: the package's public names, the formats an
#: offline checker needs, and the verifier. Everything else is the store's own business.
STORE_PUBLIC = ("roads.store", "roads.store.journal", "roads.store.digest",
                "roads.store.checkpoint", "roads.store.verify")
#: Calls that read Parquet files.
PARQUET_READS = {("pl", "read_parquet"), ("pl", "scan_parquet"), ("pl", "read_parquet_schema"),
                 ("pq", "read_table"), ("pq", "ParquetFile"), ("pq", "read_metadata"),
                 ("pq", "read_schema"), ("read", "parquet")}
#: Modules outside the store that read Parquet files which are *not* the store's: the user's
#: input files, and export bundles (the bundle's own files).
READS_OTHER_FILES = {"roads.ingest.readers": "reads the input files a user ingests",
                     "roads.audit.bundle": "reads back the bundle it writes (PDF, XLSX)",
                     "roads.audit.bundle_check": "checks an export bundle offline"}


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    rule: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.rule}"


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(module: str, tree: ast.Module, is_package: bool,
             modules: set[str]) -> list[tuple[str, int]]:
    """(module imported, line): ``from a.b import c`` counts ``a.b``, and ``a.b.c`` too when
    ``c`` is a module of its own."""
    out = []
    base = module if is_package else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                name = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            out.append((name, node.lineno))
            out += [(f"{name}.{alias.name}", node.lineno) for alias in node.names
                    if f"{name}.{alias.name}" in modules]
    return out


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _parquet_reads(tree: ast.Module) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            owner_name = owner.id if isinstance(owner, ast.Name) else \
                owner.attr if isinstance(owner, ast.Attribute) else ""
            if (owner_name, node.func.attr) in PARQUET_READS:
                lines.append(node.lineno)
    return lines


def check(root: Path) -> list[Violation]:
    """Every breach of the rules in the packages ``roads`` and ``dashboard`` under ``root``."""
    found: list[Violation] = []
    names: dict[str, list[str]] = defaultdict(list)
    files = [p for package in ("roads", "dashboard") for p in sorted((root / package)
                                                                    .rglob("*.py"))]
    modules = {_module_name(root, p) for p in files}
    for path in files:
        if True:
            module = _module_name(root, path)
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            is_package = path.name == "__init__.py"
            if is_package:
                if not any(isinstance(n, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
                        for n in tree.body):
                    found.append(Violation(module, 1, "a package declares its public names "
                                                      "(__all__)"))
            else:
                names[path.stem].append(module)
            for name, line in _imports(module, tree, is_package, modules):
                if _within(module, PURE) and _within(name, SHELLS):
                    found.append(Violation(module, line, f"a pure core imports the shell "
                                                         f"{name}"))
                if not _within(module, ("roads.store",)) and _within(name, ("roads.store",)) \
                        and name not in STORE_PUBLIC:
                    found.append(Violation(module, line, f"imports the store's internals "
                                                         f"({name})"))
                if _within(module, ("dashboard",)) and _within(name, ("roads.store",)):
                    found.append(Violation(module, line, f"the dashboard reaches the store "
                                                         f"({name}) instead of the service"))
            if not _within(module, ("roads.store",)) and module not in READS_OTHER_FILES:
                for line in _parquet_reads(tree):
                    found.append(Violation(module, line, "reads Parquet files: only the store "
                                                         "reads coup files"))
    for stem, holders in sorted(names.items()):
        if len(holders) > 1:
            found.append(Violation(holders[1], 1, f"the module name {stem!r} is used twice "
                                                  f"({', '.join(holders)})"))
    return found
