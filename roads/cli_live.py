"""``roads serve`` and ``roads users``: the live server and its accounts (thin shells)."""

from __future__ import annotations

import secrets
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import click

from roads.auth import ROLES, TOKEN_DAYS, Auth
from roads.cli import DEFAULT_STORE, _emit_json, create_store, input_errors, main, open_store
from roads.errors import InputError

if TYPE_CHECKING:
    from roads.store import Store

_STORE = click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
                      show_default=True, help="Store directory.")
DEMO_STORE = Path("data/demo")
DEMO_USERS = (("dealer", "dealer"), ("supervisor", "supervisor"), ("auditor", "auditor"))


def _auth(store: Path, create: bool = False) -> Auth:
    s = create_store(store) if create else open_store(store)
    return Auth(store, s.journal)


def _port_free(host: str, port: int) -> None:
    """Refuse a taken port before anything is written (a second server would fail late)."""
    import socket

    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise InputError(f"{host}:{port} is taken ({exc.strerror}); stop the other "
                             "server or choose --port") from None


def _demo_store(path: Path) -> None:
    """The demo deals only into a store it made: refuse one that holds real tables."""
    from roads.store import Store

    if not (path / "journal.sqlite").is_file():
        Store.create(path, purpose="demo").journal.close()
        return
    store = Store.open(path)
    try:
        demo = store.purpose == "demo"
        real = [] if demo else sorted({str(t) for t in store.read.shoes()["table_id"].to_list()}
                                      | set(store.journal.tables()))
    finally:
        store.journal.close()
    if demo:
        return
    if real:
        raise InputError(f"{path} holds tables the demo did not create ({', '.join(real[:5])}"
                         f"{', …' if len(real) > 5 else ''}); the demo uses its own store "
                         f"(default {DEMO_STORE}), give --store a new directory")
    Store.create(path, purpose="demo").journal.close()


def _password(prompt: bool) -> str:
    if not prompt:
        return sys.stdin.readline().rstrip("\n")
    return str(click.prompt("Password", hide_input=True, confirmation_prompt=True))


@main.command("serve")
@_STORE
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8050, show_default=True)
@click.option("--config", "config_path", type=click.Path(path_type=Path, exists=True),
              help="Site configuration (TOML): casino, logo, theme, language, tables, rule "
                   "sets, https, trusted proxies, request limits (docs/security.md).")
@click.option("--workers", type=click.IntRange(1, 64), default=None,
              help="Server processes sharing the port and the store (default: one per core).")
@click.option("--demo", is_flag=True, help="Deal simulated tables through the entry path.")
@click.option("--demo-tables", type=click.IntRange(1, 500), default=6, show_default=True)
@click.option("--pace", type=click.FloatRange(min=0.05), default=4.0, show_default=True,
              help="Demo: average seconds between coups at each table.")
@input_errors
def serve_cmd(store: Path, host: str, port: int, config_path: Path | None,
              workers: int | None, demo: bool, demo_tables: int, pace: float) -> None:
    """Serve the dashboard, table screens (/table/ID), operator entry and the HTTP API.

    Without --demo the store must exist. With --demo the simulated tables deal into their
    own store (data/demo unless --store names one), never into a store with real tables;
    the demo logins are printed at every start."""
    from dashboard.allocator import limit_arenas, run_on_jemalloc

    run_on_jemalloc()  # before anything: the process may start again
    limit_arenas()  # before any thread is made: glibc keeps the arenas it has (soak7)
    from dashboard.config import load_config
    from dashboard.workers import default_workers, serve

    site = load_config(config_path)
    source = click.get_current_context().get_parameter_source("store")
    if demo and source is not None and source.name == "DEFAULT":
        store = DEMO_STORE
    if not demo:
        _signable(open_store(store))  # a read: a mistyped path is an error
    _port_free(host, port)  # before anything is written
    tables = [f"T{i:02d}" for i in range(1, demo_tables + 1)]
    if demo:
        _demo_store(store)
        _signable(open_store(store))
        with ThreadPoolExecutor(1) as pool:  # ended (its thread joined) before any fork
            # the demo users' passwords are hashed (scrypt, outside the GIL) while the
            # server's code is imported (which the server would do next)
            logins = pool.submit(_demo_users, store)
            import dashboard.app  # noqa: F401
        for line in logins.result():
            click.echo(line)
        click.echo(f"demo: {demo_tables} tables dealing a coup every ~{pace:g} s into {store}")
    first = tables[0] if demo else next(iter(site.tables), "T01")
    count = workers or default_workers()
    click.echo(f"Dashboard: http://{host}:{port}/   table screen: http://{host}:{port}/table/"
               f"{first}   API: http://{host}:{port}/openapi.json   ({count} worker"
               f"{'s' if count > 1 else ''})")
    serve(store, site, host, port, count, (tables, pace) if demo else None)


def _signable(store: Store) -> None:
    """Refuse to serve a store whose checkpoints were removed: its start-up sweep and every
    seal would leave the journal unsigned, or, before, sign it as if it were whole; and one
    whose signing key is not its own (every seal would be refused)."""
    from roads.store import checkpoint

    reason = store.unsigned_reason()
    store.journal.close()
    if reason is not None:
        raise InputError(f"refusing to serve {store.root}: {reason}")
    if all((store.root / name).exists() for name in (checkpoint.PRIVATE, checkpoint.PUBLIC)):
        checkpoint.signing_key(store.root)  # SigningKeyMismatch: exit 2, naming the key


def _demo_users(store: Path) -> list[str]:
    """Give the demo users fresh passwords; the lines that print them (a demo has nothing
    to protect)."""
    auth = _auth(store)
    try:
        known = {u["name"] for u in auth.users()}
        lines = []
        for name, role in DEMO_USERS:
            password = secrets.token_urlsafe(12)
            if name in known:
                auth.set_password(name, password, by="demo")
            else:
                auth.add_user(name, role, password, by="demo")
            lines.append(f"demo user {name} ({role}) password: {password}")
    finally:  # closed here, not by the collector: the server forks next
        auth.close()
        auth.journal.close()
    return lines


@main.group("users")
def users_group() -> None:
    """Accounts (dealer, supervisor, auditor, viewer, admin), table API keys and personal
    tokens."""


@users_group.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), required=True)
@click.option("--password-stdin", is_flag=True, help="Read the password from stdin.")
@_STORE
@input_errors
def users_add_cmd(name: str, role: str, password_stdin: bool, store: Path) -> None:
    """Add a user (the password is hashed with scrypt; never stored)."""
    _auth(store, create=True).add_user(name, role, _password(not password_stdin))
    click.echo(f"user {name} added as {role}")


@users_group.command("passwd")
@click.argument("name")
@click.option("--password-stdin", is_flag=True, help="Read the password from stdin.")
@_STORE
@input_errors
def users_passwd_cmd(name: str, password_stdin: bool, store: Path) -> None:
    """Set a user's password (ends the user's sessions)."""
    _auth(store).set_password(name, _password(not password_stdin))
    click.echo(f"password of {name} changed")


@users_group.command("list")
@_STORE
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@input_errors
def users_list_cmd(store: Path, as_json: bool) -> None:
    """List users and roles."""
    users = _auth(store).users()
    if as_json:
        _emit_json(users)
        return
    for u in users:
        click.echo(f"{u['name']:<20} {u['role']:<11} {u['created_at']}"
                   f"{'  (disabled)' if u['disabled'] else ''}")


@users_group.command("key")
@click.option("--table", "table_id", required=True, help="The table the key may write to.")
@_STORE
@input_errors
def users_key_cmd(table_id: str, store: Path) -> None:
    """Issue an API key for one table (printed once; only its hash is kept)."""
    click.echo(_auth(store).issue_key(table_id))


@users_group.command("token")
@click.argument("name")
@click.option("--days", type=click.IntRange(1, 366), default=TOKEN_DAYS, show_default=True,
              help="Days until the token expires.")
@_STORE
@input_errors
def users_token_cmd(name: str, days: int, store: Path) -> None:
    """Issue a personal token acting as NAME with NAME's role, for scripts calling the API
    (printed once; only its hash is kept; revoke it with `roads users revoke-key ID`)."""
    click.echo(_auth(store).issue_token(name, days=days))


@users_group.command("revoke-key")
@click.argument("key_id", metavar="KEY-ID")
@_STORE
@input_errors
def users_revoke_cmd(key_id: str, store: Path) -> None:
    """Revoke an API key or a personal token by its id (the 8 hex digits after `rk_` or
    `rt_`; `roads users keys` lists them). Takes effect at the next request."""
    kind = _auth(store).revoke(key_id)
    click.echo(f"{'API key' if kind == 'key' else 'personal token'} {key_id} revoked")


@users_group.command("keys")
@_STORE
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@input_errors
def users_keys_cmd(store: Path, as_json: bool) -> None:
    """List API keys and personal tokens: id, table or user, when issued (never secrets)."""
    credentials = _auth(store).credentials()
    if as_json:
        _emit_json(credentials)
        return
    for c in credentials:
        state = "revoked" if c["revoked"] else (f"expires {c['expires_at'][:10]}"
                                                if c["expires_at"] else "")
        click.echo(f"{c['id']}  {c['kind']:<5}  {c['belongs_to']:<20} "
                   f"{c['created_at'][:19]}  {state}")


@users_group.command("disable")
@click.argument("name")
@_STORE
@input_errors
def users_disable_cmd(name: str, store: Path) -> None:
    """Disable a user: logins refused, sessions ended and personal tokens revoked at once."""
    _auth(store).disable_user(name)
    click.echo(f"user {name} disabled")


@users_group.command("enable")
@click.argument("name")
@_STORE
@input_errors
def users_enable_cmd(name: str, store: Path) -> None:
    """Let a disabled user log in again (revoked tokens stay revoked)."""
    _auth(store).enable_user(name)
    click.echo(f"user {name} enabled")
