"""Entities as records of their own (a mixin of ``Memory``): created and described before any
memory mentions them, found by name, alias or meaning, updated and forgotten."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ConflictError, NotFoundError, ValidationError, WriteRace
from ..lifecycle import check, checked_namespace, forget_records
from ..lifecycle.builders import with_vote
from ..lifecycle.entity_merges import fold_entity, merge_candidates
from ..models import Entity, MemoryRecord, MergeSuggestion, Status, embed_text, utcnow
from ..models.entity_types import entity_type
from ..retrieve import find_entity
from ..store import no_vectors
from ..text import name_grams, normalise_name
from .guard import guarded, retried, whole

@guarded
class EntitiesMixin:
    def add_entity(self, name: str, *, type: str = "thing", description: str = "", aliases: Sequence[str] = (),
                   metadata: dict[str, Any] | None = None, namespace: str = "default") -> Entity:
        """The entity of this name (person, org, place, thing, ...), made if the namespace has
        none: get-or-create. An entity already named so (by a turn, a memory or an earlier call)
        of the same type, or of a type nobody stated, is returned, with the type, the aliases
        and the description given here added to it; one of another stated type stays apart (a
        person and a country called "Jordan"). Later mentions of the name or an alias link to
        it. An alias that names another entity is a ``ConflictError`` naming that entity."""
        namespace = checked_namespace(namespace)
        now = utcnow()
        stated = _entity_type(type)
        ent = check(Entity, {"name": name, "type": stated, "description": description,
                             "aliases": list(aliases), "metadata": metadata or {}, "namespace": namespace,
                             "created_at": now, "updated_at": now, "curated": True, "typed": stated != "thing",
                             "type_votes": {"caller": stated} if stated != "thing" else {}}, "entity")

        def write() -> Entity:
            with self._parts.write_lock, self._op("add_entity", namespace):
                same = [e for e in self.store.entities_named(namespace, [ent.name]).get(normalise_name(ent.name), [])
                        if e.type == stated or not e.typed or stated == "thing"]
                if len(same) > 1 and stated == "thing":
                    raise ConflictError(f"{len(same)} entities are named {ent.name!r} ("
                                        f"{', '.join(f'{e.type} {e.id}' for e in same)}): give the type of the one you mean")
                if same:
                    old = next((e for e in same if e.type == stated), same[0])
                    merged = check(Entity, {**old.model_dump(), "curated": True, "updated_at": now,
                                            "aliases": [*old.aliases, *(a for a in ent.aliases if a not in old.aliases)],
                                            "description": old.description or ent.description,
                                            "metadata": {**old.metadata, **ent.metadata},
                                            **with_vote(old, "caller", stated)}, "entity")
                    if merged == old.model_copy(update={"updated_at": now}):
                        return old
                    out, expect = merged, {old.id: old.updated_at}
                else:
                    out, expect = ent, {ent.id: None}
                self._name_free(namespace, out, raced=not same)
                self.store.put(namespace, [out], self.embedder.embed([embed_text(out)]), expect=expect)
            return out

        return retried(write)  # the name made by another process meanwhile: found and returned

    def get_entity(self, name_or_id: str, *, namespace: str = "default") -> Entity:
        """An entity by id, else by name or alias."""
        if not isinstance(name_or_id, str) or not name_or_id.strip():
            raise ValidationError("give an entity id or name")
        return find_entity(self.store, checked_namespace(namespace), name_or_id)

    def find_entities(self, query: str, *, type: str | None = None, k: int = 10,
                      namespace: str = "default") -> list[Entity]:
        """Entities the query names (by name or alias, first) and then those nearest in meaning
        to it (their name and description), of one type when asked."""
        namespace = checked_namespace(namespace)
        whole("k", k, 1, 1000)
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query must be a non-empty string")
        wanted = _entity_type(type) if type is not None else None
        named = list(self.store.find_entities(namespace, name_grams(query) | {query}).values())
        near = self.store.vector_search(namespace, "entity", self.embedder.embed([query], query=True)[0], k * 4,
                                        [Status.active])
        by_meaning = self.store.get(namespace, [i for i, _ in near])
        order = {i: n for n, (i, _) in enumerate(near)}
        found = {e.id: e for e in [*named, *sorted(by_meaning, key=lambda e: order[e.id])] if isinstance(e, Entity)}
        return [e for e in found.values() if (wanted is None or e.type == wanted) and not e.merged_into][:k]

    def update_entity(self, entity_id: str, *, name: str | None = None, type: str | None = None,
                      description: str | None = None, aliases: Sequence[str] | None = None,
                      metadata: dict[str, Any] | None = None, feedback: str | None = None,
                      namespace: str = "default") -> Entity:
        """Change an entity in place: its name, type, description, aliases (the whole list),
        metadata, or a person's ``feedback``: "confirmed", or "rejected" (not a real entity:
        recall never expands from it; mentions still link to it, so it is not made again),
        "none" to clear it. Its vector follows its name and description. An entity a person
        added or changed is kept when nothing mentions it any more."""
        namespace = checked_namespace(namespace)
        if feedback is not None and feedback not in ("confirmed", "rejected", "none"):
            raise ValidationError(f"feedback {feedback!r} is not one of confirmed, rejected, none")
        changes = {key: value for key, value in {"name": name, "type": _entity_type(type) if type is not None else None,
                   "description": description, "aliases": list(aliases) if aliases is not None else None,
                   "metadata": metadata}.items() if value is not None}
        if feedback is not None:
            changes["feedback"] = None if feedback == "none" else feedback
        if not changes:
            raise ValidationError("update_entity needs a change: name, type, description, aliases, metadata or feedback")

        def write() -> Entity:
            old = self.store.get(namespace, [entity_id])
            if not old or not isinstance(old[0], Entity):
                raise NotFoundError(f"no entity {entity_id!r} in namespace {namespace!r}")
            votes = {"type_votes": {**old[0].type_votes, "caller": changes["type"]}} if "type" in changes else {}
            new = check(Entity, {**old[0].model_dump(), **changes, **votes, "updated_at": utcnow(), "curated": True,
                                 "typed": old[0].typed or "type" in changes}, "entity")
            self._name_free(namespace, new)
            vec = self.embedder.embed([embed_text(new)]) if embed_text(new) != embed_text(old[0]) else \
                no_vectors(1, self.embedder.dim)
            self.store.put(namespace, [new], vec, expect={new.id: old[0].updated_at})
            return new

        with self._parts.write_lock, self._op("update_entity", namespace):
            return retried(write)

    def add_relation(self, subject: str, predicate: str, object: str, *, source_message_ids: Sequence[str] = (),
                     confidence: float | None = None, valid_at: Any = None, namespace: str = "default") -> MemoryRecord:
        """A relation between two entities (made when unknown), recorded as a fact: a memory
        whose text is the triple and which cites the turns it came from, with the RELATES_TO
        edge it states. Returns the memory; a later ``update`` of it corrects the relation."""
        fields = {"subject": subject, "predicate": predicate, "object": object}
        for key, value in fields.items():
            if not isinstance(value, str) or not value.strip():
                raise ValidationError(f"add_relation: {key} must be a non-empty string")
        text = f"{subject.strip()} {predicate.strip()} {object.strip()}"
        extra = {"confidence": confidence} if confidence is not None else {}
        return self.remember(text, **fields, source_message_ids=list(source_message_ids), valid_at=valid_at,
                             namespace=namespace, **extra)

    def forget_entity(self, entity_id: str, *, namespace: str = "default") -> int:
        """Delete an entity with its edges (the memories that mention it stay). Returns 1."""
        namespace = checked_namespace(namespace)
        found = self.store.get(namespace, [entity_id]) if isinstance(entity_id, str) else []
        if not found or not isinstance(found[0], Entity):
            raise NotFoundError(f"no entity {entity_id!r} in namespace {namespace!r}")
        with self._parts.write_lock, self._op("forget_entity", namespace):
            return retried(lambda: forget_records(self.store, namespace, [entity_id], False, utcnow()))

    def merge_entities(self, keep_id: str, merge_id: str, *, namespace: str = "default") -> Entity:
        """Fold one entity into another: every edge of ``merge_id`` (mentions, relations with
        their memory ids, SAID) moves to ``keep_id``, its name and aliases become aliases of
        the kept one (as do its type and description where the kept one has none), and it stays
        only as a record found by no name, with a MERGED_INTO edge to the kept one. Returns the
        kept entity."""
        namespace = checked_namespace(namespace)
        if not isinstance(keep_id, str) or not isinstance(merge_id, str):
            raise ValidationError("merge_entities takes two entity ids")
        if keep_id == merge_id:
            raise ValidationError(f"an entity cannot be merged with itself ({keep_id!r})")

        with self._parts.write_lock, self._op("merge_entities", namespace):
            return retried(lambda: fold_entity(self._parts, namespace, keep_id, merge_id, utcnow()))

    def suggest_merges(self, *, namespace: str = "default") -> list[MergeSuggestion]:
        """Entities that look like one real thing written two ways, each with the reason: a
        one-word person whose name is a part of one person's full name, two records of one name
        or alias, a nickname that starts one person's first name in the same conversations.
        ``sure`` ones are merged by ``maintain``; the rest wait for ``merge_entities``."""
        return merge_candidates(self.store, checked_namespace(namespace))

    def _name_free(self, namespace: str, ent: Entity, raced: bool = False) -> None:
        """No other entity has ``ent``'s name or one of its aliases, unless both have a stated
        type and the types differ (a person and a country called "Jordan"). ``raced``: ``ent``
        is new because no entity had its name a moment ago; one that has it now was made
        meanwhile (a ``remember`` naming it in another process): a ``WriteRace``, so the write
        runs again and finds it (CI failed once on five processes adding one name)."""
        for norm, others in self.store.entities_named(namespace, [ent.name, *ent.aliases]).items():
            for other in others:
                if other.id != ent.id and (not (ent.typed and other.typed) or other.type == ent.type):
                    if raced and norm == normalise_name(ent.name):
                        raise WriteRace(f"entity {other.name!r} was made meanwhile by another writer")
                    raise ConflictError(f"entity {other.name!r} ({other.type}, {other.id}) is already named {norm!r}; "
                                        "update it, or give this one another name or a type of its own")


def _entity_type(value: Any) -> str:
    try:
        return entity_type(value)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None

