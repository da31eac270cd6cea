"""``graphmem entity``: entities as records of their own (add, show, find, update, merge, forget)."""

from __future__ import annotations

import json
from typing import Optional

import typer

from . import app, handles_errors, id_table, open_memory, out, print_fields, state

entity_app = typer.Typer(help="Entities: add, show, find, update, merge, forget.", no_args_is_help=True)
app.add_typer(entity_app, name="entity")


@entity_app.command("add")
@handles_errors
def add(
    name: str = typer.Argument(...),
    type_: str = typer.Option("thing", "--type", help="person, org, place, thing, ... (any spelling: PERSON, company)"),
    description: str = typer.Option("", "--description", "-d"),
    alias: list[str] = typer.Option([], "--alias", "-a", help="another name (repeat for more)"),
) -> None:
    """The entity of this name, made if there is none (before any memory mentions it); prints its id."""
    with open_memory() as mem:
        print(mem.add_entity(name, type=type_, description=description, aliases=alias, namespace=state.namespace).id)


@entity_app.command("show")
@handles_errors
def show(name_or_id: str = typer.Argument(...), as_json: bool = typer.Option(False, "--json")) -> None:
    """An entity by id, name or alias (`graphmem show NAME` adds its neighbourhood)."""
    with open_memory() as mem:
        print_fields(mem.get_entity(name_or_id, namespace=state.namespace), as_json)


@entity_app.command("find")
@handles_errors
def find(
    query: str = typer.Argument(...),
    type_: Optional[str] = typer.Option(None, "--type"),
    k: int = typer.Option(10, "-k"),
) -> None:
    """Entities the query names, then those nearest in meaning (name and description)."""
    with open_memory() as mem:
        found = mem.find_entities(query, type=type_, k=k, namespace=state.namespace)
    if not found:
        out.print("no matches")
        return
    table = id_table("id", "name", "type", "text", ids=[e.id for e in found])
    for e in found:
        table.add_row(e.id, e.name, e.type, e.description)
    out.print(table)


@entity_app.command("update")
@handles_errors
def update(
    entity_id: str = typer.Argument(...),
    name: Optional[str] = typer.Option(None, "--name"),
    type_: Optional[str] = typer.Option(None, "--type"),
    description: Optional[str] = typer.Option(None, "--description", "-d"),
    alias: Optional[list[str]] = typer.Option(None, "--alias", "-a", help="the whole alias list (repeat for more)"),
    feedback: Optional[str] = typer.Option(None, "--feedback", help="confirmed, rejected (no real entity) or none"),
) -> None:
    """Change an entity in place, or record a person's judgement of it."""
    with open_memory() as mem:
        e = mem.update_entity(entity_id, name=name, type=type_, description=description, aliases=alias or None,
                              feedback=feedback, namespace=state.namespace)
    out.print(f"updated {e.id}")


@entity_app.command("forget")
@handles_errors
def forget(entity_id: str = typer.Argument(...)) -> None:
    """Delete an entity with its edges; the memories that mention it stay."""
    with open_memory() as mem:
        n = mem.forget_entity(entity_id, namespace=state.namespace)
    out.print(f"deleted {n} record(s)")


@entity_app.command("merge")
@handles_errors
def merge(keep_id: str = typer.Argument(..., help="the entity that stays"),
          merge_id: str = typer.Argument(..., help="the entity folded into it")) -> None:
    """Fold one entity into another: its links and names move to the one that stays."""
    with open_memory() as mem:
        e = mem.merge_entities(keep_id, merge_id, namespace=state.namespace)
    out.print(f"merged {merge_id} into {e.id} ({e.name}; aliases: {', '.join(e.aliases) or 'none'})")


@entity_app.command("suggest-merges")
@handles_errors
def suggest_merges(as_json: bool = typer.Option(False, "--json")) -> None:
    """Entities that look like one real thing written two ways, with the reason; `sure` ones are
    merged by `graphmem maintain`, the others by `graphmem entity merge KEEP MERGE`."""
    with open_memory() as mem:
        found = mem.suggest_merges(namespace=state.namespace)
    if as_json:
        print(json.dumps([s.model_dump() for s in found], ensure_ascii=False, indent=2))
        return
    if not found:
        out.print("no entities look like one")
        return
    table = id_table("merge", "into", "sure", "text", ids=[s.merge_id for s in found])
    for s in found:
        table.add_row(s.merge_id, s.keep_id, "yes" if s.sure else "no", f"{s.merge_name} -> {s.keep_name}: {s.reason}")
    out.print(table)
