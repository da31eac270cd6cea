"""Sessions as records of their own (a mixin of ``Memory``): created before their first turn,
owned by a user and an agent, listed by them, summarised and forgotten."""

from __future__ import annotations

from typing import Any

from ..errors import ConflictError, NotFoundError, ValidationError
from ..lifecycle import check, checked_namespace, forget_records
from ..models import Session, utcnow
from ..models.fields import SESSION_ID
from .guard import guarded, retried, whole


@guarded
class SessionsMixin:
    def create_session(self, id: str | None = None, *, user_id: str | None = None, agent_id: str | None = None,
                       title: str = "", metadata: dict[str, Any] | None = None, namespace: str = "default") -> Session:
        """A new, empty session (an id is made when none is given). Turns appended with
        ``add_messages`` join it; a session id that exists already is a ``ConflictError``."""
        namespace = checked_namespace(namespace)
        now = utcnow()
        session = check(Session, {"id": check(SESSION_ID, id, "session id") if id is not None else "",
                                  "namespace": namespace, "user_id": user_id, "agent_id": agent_id, "title": title,
                                  "metadata": metadata or {}, "created_at": now, "updated_at": now}, "session")

        def write() -> Session:
            stored = next(iter(self.store.get(namespace, [session.id])), None)
            if stored is not None:
                what = "session" if isinstance(stored, Session) else f"id, taken by a {stored.kind},"
                raise ConflictError(f"{what} {session.id!r} exists already in namespace {namespace!r}")
            self.store.put(namespace, [session], expect={session.id: None})
            return session

        with self._parts.write_lock, self._op("create_session", namespace):
            return retried(write)

    def get_session(self, session_id: str, *, namespace: str = "default") -> Session:
        session = self.get(check(SESSION_ID, session_id, "session id"), namespace=namespace)
        if not isinstance(session, Session):
            raise NotFoundError(f"{session_id!r} is a {session.kind}, not a session")
        return session

    def list_sessions(self, *, user_id: str | None = None, agent_id: str | None = None, namespace: str = "default",
                      limit: int = 100, offset: int = 0) -> list[Session]:
        """Sessions newest first, those of one user and/or one agent when asked."""
        namespace = checked_namespace(namespace)
        whole("limit", limit, 1, 10_000), whole("offset", offset, 0, 2**62)
        found = [s for s in self.store.query(namespace, "session", limit=2**40)
                 if (user_id is None or s.user_id == user_id) and (agent_id is None or s.agent_id == agent_id)]
        return found[offset : offset + limit]

    def forget_session(self, session_id: str, *, namespace: str = "default", derived: bool = True) -> int:
        """Delete a session with its turns and episodes (and, with ``derived``, what was derived
        from its turns only, as ``forget`` does). Forgetting what is not there deletes nothing:
        returns the records deleted, 0 the second time."""
        session_id = check(SESSION_ID, session_id, "session id")
        namespace = checked_namespace(namespace)
        with self._parts.write_lock, self._op("forget_session", namespace):
            stored = next(iter(self.store.get(namespace, [session_id])), None)
            if stored is None:
                return 0
            if not isinstance(stored, Session):
                raise ValidationError(f"{session_id!r} is a {stored.kind}, not a session")
            return retried(lambda: forget_records(self.store, namespace, [session_id], derived, utcnow()))

    def set_summary(self, session_id: str, summary: str, *, namespace: str = "default") -> Session:
        """Set a session's rolling working summary (L1)."""
        namespace = checked_namespace(namespace)
        with self._parts.write_lock:
            session = self.get_session(session_id, namespace=namespace)
            now = utcnow()
            session = Session.model_validate(
                {**session.model_dump(), "summary": summary.strip(), "summary_updated_at": now, "updated_at": now}
            )
            self.store.put(namespace, [session])
        return session
