"""A LangGraph agent that remembers across runs, offline: graphmem is its long-term memory, the
local llama.cpp model (graphmem's default, from PyPI) writes its replies.

    python examples/remembering_agent.py "Hi, I'm Ana. I'm allergic to peanuts."
    python examples/remembering_agent.py "Plan a dinner for me on Friday."     # a new process: it remembers
    python examples/remembering_agent.py --show-context "What am I allergic to?"

The graph: recall (graphmem's context for the message, within a token budget, plus the user's
notes from the LangGraph store) -> respond (the local model) -> remember (the turn pair goes to
the user's graphmem session; a message that says "remember" also becomes a note in the store).
Everything lives in one file (--db, default ./agent-memory.db). With --extract the model also
extracts facts, episodes and procedures from the session before the process exits (slower).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from graphmem import Memory, NotFoundError
from graphmem.extract.model import default_model_path, load_llama
from graphmem.integrations.langgraph import GraphMemStore
from graphmem.settings import Settings

SYSTEM = ("You are a helpful assistant with a long-term memory of this user. Use what memory says when it "
          "is relevant; never invent facts about the user. Answer in one or two sentences.")


class State(TypedDict):
    user: str
    message: str
    context: str
    reply: str


def build(mem: Memory, llm, user: str, max_tokens: int):
    def recall(state: State, *, store: BaseStore) -> dict:
        ctx = mem.context(state["message"], budget=600, session_id=f"chat-{user}")
        notes = [h.value["text"] for h in store.search(("notes", user), query=state["message"], limit=3)]
        return {"context": ctx.text + ("\n## Notes\n" + "\n".join(f"- {n}" for n in notes) if notes else "")}

    def respond(state: State) -> dict:
        out = llm.create_chat_completion(messages=[
            {"role": "system", "content": f"{SYSTEM}\n\n# Memory\n{state['context'] or '(nothing yet)'}"},
            {"role": "user", "content": state["message"]},
        ], temperature=0.0, max_tokens=max_tokens)
        return {"reply": (out["choices"][0]["message"]["content"] or "").strip()}

    def remember(state: State, *, store: BaseStore) -> dict:
        mem.add_messages(f"chat-{user}", [{"role": "user", "content": state["message"], "speaker": user},
                                          {"role": "assistant", "content": state["reply"]}])
        if "remember" in state["message"].lower():
            store.put(("notes", user), state["message"][:60], {"text": state["message"]})
        return {}

    graph = StateGraph(State)
    for name, node in (("recall", recall), ("respond", respond), ("remember", remember)):
        graph.add_node(name, node)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "remember")
    graph.add_edge("remember", END)
    return graph.compile(store=GraphMemStore(mem, namespace="agent-notes"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("message")
    ap.add_argument("--user", default="Ana")
    ap.add_argument("--db", type=Path, default=Path("agent-memory.db"))
    ap.add_argument("--max-tokens", type=int, default=80)
    ap.add_argument("--show-context", action="store_true", help="print what memory gave the model")
    ap.add_argument("--extract", action="store_true", help="extract facts from the session before exiting")
    args = ap.parse_args()
    settings = Settings(extraction="manual")
    llm = load_llama(model_path=str(default_model_path(settings.cache_dir / "models")), n_ctx=4096, seed=7, verbose=False)
    with Memory(args.db, settings=settings) as mem:
        try:
            mem.get_session(f"chat-{args.user}")
        except NotFoundError:  # the first run: the user's session, where every turn will go
            mem.create_session(f"chat-{args.user}", user_id=args.user, title=f"chat with {args.user}")
        out = build(mem, llm, args.user, args.max_tokens).invoke(
            {"user": args.user, "message": args.message, "context": "", "reply": ""})
        if args.show_context:
            print("--- memory given to the model ---\n" + (out["context"] or "(nothing yet)") + "\n---")
        print(out["reply"])
        if args.extract:
            mem.extract()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
