"""``graphmem session``: sessions as records of their own (create before the first turn, with a
user and an agent; list, show, forget)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional

import typer

from ..errors import ValidationError
from . import _print_json, app, handles_errors, id_table, open_memory, out, print_fields, state

if TYPE_CHECKING:
    from ..models import Session

session_app = typer.Typer(help="Sessions: create, list, show, forget.", no_args_is_help=True)
app.add_typer(session_app, name="session")


def _row(s: Session) -> list[str]:
    return [s.id, s.user_id or "", s.agent_id or "", str(s.message_count),
            f"{s.last_message_at:%Y-%m-%d %H:%M}" if s.last_message_at else "", s.title]


@session_app.command("create")
@handles_errors
def create(
    session_id: Optional[str] = typer.Argument(None, help="the new session's id (default: one is made)"),
    user: Optional[str] = typer.Option(None, "--user", help="whose conversation it is"),
    agent: Optional[str] = typer.Option(None, "--agent", help="which agent takes part"),
    title: str = typer.Option("", "--title"),
    metadata: Optional[str] = typer.Option(None, "--metadata", help="a JSON object"),
) -> None:
    """Create an empty session; `graphmem add --session ID` appends turns to it."""
    try:
        meta = json.loads(metadata) if metadata else None
    except json.JSONDecodeError as exc:
        raise ValidationError(f"--metadata is not JSON: {exc}") from None
    with open_memory() as mem:
        s = mem.create_session(session_id, user_id=user, agent_id=agent, title=title, metadata=meta,
                               namespace=state.namespace)
    print(s.id)


@session_app.command("list")
@handles_errors
def list_(
    user: Optional[str] = typer.Option(None, "--user", help="only this user's sessions"),
    agent: Optional[str] = typer.Option(None, "--agent", help="only this agent's sessions"),
    limit: int = typer.Option(100, "--limit", "-l"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Sessions, newest first, with their owners and turn counts."""
    with open_memory() as mem:
        found = mem.list_sessions(user_id=user, agent_id=agent, namespace=state.namespace, limit=limit)
    if as_json:
        _print_json([s.model_dump(mode="json") for s in found])
        return
    if not found:
        out.print("no sessions")
        return
    table = id_table("id", "user", "agent", "turns", "last turn", "title", ids=[s.id for s in found])
    for s in found:
        table.add_row(*_row(s))
    out.print(table)


@session_app.command("show")
@handles_errors
def show(session_id: str = typer.Argument(...), as_json: bool = typer.Option(False, "--json")) -> None:
    """One session's fields."""
    with open_memory() as mem:
        print_fields(mem.get_session(session_id, namespace=state.namespace), as_json, exclude={"failed_windows"})


@session_app.command("forget")
@handles_errors
def forget(
    session_id: str = typer.Argument(...),
    keep_derived: bool = typer.Option(False, "--keep-derived",
                                      help="keep the memories and episodes derived from its turns"),
) -> None:
    """Delete a session with its turns and episodes (nothing, when it is not there)."""
    with open_memory() as mem:
        n = mem.forget_session(session_id, namespace=state.namespace, derived=not keep_derived)
    out.print(f"deleted {n} record(s)")
