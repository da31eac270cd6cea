"""LangChain components backed by graphmem (``pip install "graphmem[langchain]"``):

- ``GraphMemRetriever``: a retriever over graphmem's recall; each document's metadata carries
  the record's id, layer, score, the five factors and how it was found;
- ``GraphMemChatMessageHistory``: a chat message history that is a graphmem session, so every
  turn is remembered (and extracted into memories, episodes and procedures) as it is added.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from ..engine import Memory, list_all


class GraphMemRetriever(BaseRetriever):
    """``GraphMemRetriever(memory=mem, namespace="default", k=10, layers=None, session_id=None)``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory
    namespace: str = "default"
    k: int = 10
    layers: list[str] | None = None
    session_id: str | None = None

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        hits = self.memory.recall(query, k=self.k, layers=self.layers, session_id=self.session_id,
                                  namespace=self.namespace)
        return [Document(page_content=h.text, id=h.id, metadata={
            "id": h.id, "layer": h.layer, "score": h.score, "matched_by": list(h.matched_by), "turns": h.turns,
            "factors": h.breakdown.model_dump(exclude_none=True),
        }) for h in hits]


_ROLES: dict[str, str] = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_TYPES: dict[str, type[BaseMessage]] = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}


class GraphMemChatMessageHistory(BaseChatMessageHistory):
    """The turns of one graphmem session as LangChain messages. ``speaker`` names the user (the
    name their facts are filed under); ``clear()`` forgets the session's turns and episodes
    (the memories extracted from them stay: they are records of their own)."""

    def __init__(self, memory: Memory, session_id: str, *, namespace: str = "default", speaker: str = "") -> None:
        self.memory, self.session_id, self.namespace, self.speaker = memory, session_id, namespace, speaker

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        out = list_all(self.memory, "message", namespace=self.namespace, session_id=self.session_id)
        out.sort(key=lambda m: m.seq)
        return [ToolMessage(content=m.content, tool_call_id=m.tool_call_id or "") if m.role == "tool"
                else _TYPES.get(m.role, HumanMessage)(content=m.content, id=m.id) for m in out]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        turns = []
        for m in messages:
            role = _ROLES.get(m.type, "user")
            turn: dict[str, Any] = {"role": role, "content": m.text if isinstance(m.content, list) else m.content}
            if role == "user" and self.speaker:
                turn["speaker"] = self.speaker
            if isinstance(m, ToolMessage):
                turn["tool_call_id"] = m.tool_call_id
            turns.append(turn)
        if turns:
            self.memory.add_messages(self.session_id, turns, namespace=self.namespace)

    def clear(self) -> None:
        self.memory.forget_session(self.session_id, namespace=self.namespace)  # 0 when there is none
