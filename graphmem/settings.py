"""Settings: the only reader of the environment (prefix ``GRAPHMEM_``)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .models.fields import NAMESPACE_PATTERN, UTCDateTime
from .models.records import Status


class ScoreWeights(BaseModel):
    """The five-factor score. Weights must sum to 1 so totals stay in 0..1."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    relevance: float = Field(default=0.50, ge=0, le=1)
    importance: float = Field(default=0.15, ge=0, le=1)
    confidence: float = Field(default=0.15, ge=0, le=1)
    recency: float = Field(default=0.10, ge=0, le=1)
    frequency: float = Field(default=0.10, ge=0, le=1)

    @model_validator(mode="after")
    def _sum_to_one(self) -> "ScoreWeights":
        total = self.relevance + self.importance + self.confidence + self.recency + self.frequency
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"score weights must sum to 1.0, got {total:.4f}")
        return self


class RelevanceWeights(BaseModel):
    """How relevance blends its signals (normalised to sum 1 when used)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # tuned on LoCoMo conversations 0-4, checked on 5-9 (benchmarks/locomo.py): the small
    # embedder is weaker than BM25 on English chat, so keywords weigh more than meaning
    semantic: float = Field(default=0.40, ge=0)
    keyword: float = Field(default=0.50, ge=0)
    graph: float = Field(default=0.5, ge=0, description="graph evidence multiplies text relevance by up to 1 + this")
    graph_floor: float = Field(default=0.3, ge=0, le=1, description="a graph hit the text barely matches is raised as if "
                               "it matched this well")


class RecallOptions(BaseModel):
    """A search preset. Frozen: copy with ``model_copy(update=...)``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights: ScoreWeights = ScoreWeights()
    relevance: RelevanceWeights = RelevanceWeights()
    recency_half_life_days: float = Field(default=30.0, gt=0)
    frequency_saturation: float = Field(default=10.0, gt=0, description="access count at which frequency reaches ~0.63")
    vector_candidates: int = Field(default=50, ge=1, le=1000)
    keyword_candidates: int = Field(default=50, ge=1, le=1000)
    graph_candidates: int = Field(default=50, ge=0, le=1000)
    max_candidates: int = Field(default=100, ge=1, le=5000)
    graph_depth: int = Field(default=2, ge=0, le=3)
    hop_decay: float = Field(default=0.6, ge=0, le=1, description="graph evidence kept per relation hop away from the "
                             "query's entities (0: the query's own entities only, and no step along a relation the "
                             "question follows through what was said: Marek -said-> 'My sister Olga...' -mentions-> "
                             "Olga)")
    neighbour_turns: float = Field(
        default=0.6, ge=0, le=1, description="share of an adjacent turn's relevance a message borrows (0: off)"
    )
    neighbour_mode: Literal["all", "answers"] = Field(
        default="answers", description="all: a turn borrows from the turn before and after it; answers: only from a question "
        "right before it (statement-style logs, where a neighbour is usually unrelated)"
    )
    neighbour_fetch: int = Field(default=10, ge=0, le=100, description="the best turns whose neighbours are fetched along "
                                 "NEXT edges when they were not candidates (0: off)")
    session_prior: float = Field(default=0.3, ge=0, le=1, description="share of the best other turn of its session a turn "
                                 "gains (0: off)")
    speaker_match: float = Field(default=1.0, ge=0, le=1, description="graph evidence of a turn said by a person the query "
                                 "names (0: off)")
    turn_mentions: float = Field(default=0.0, ge=0, le=1, description="graph evidence of a turn that names a person, "
                                 "relative to a memory's (0: none; on LoCoMo turns mostly name the person they are "
                                 "addressed to, and counting them cost recall)")
    superseded_turns: float = Field(default=0.5, ge=0, le=1, description="relevance factor of a turn or episode that "
                                    "states a value a correction superseded (it ranks below the current fact); a "
                                    "supersession extraction inferred only annotates it")
    path_statements: float = Field(default=0.3, ge=0, le=1, description="relevance factor of an item that only states a "
                                   "step of the relation path a question follows (\"My sister is Olga Berg\" for \"What "
                                   "pet does Marek's sister have?\") or a memory about a person it passes through, once the "
                                   "path is followed: how the answer was reached, ranked below it (1: off)")
    time_boost: float = Field(default=0.1, ge=0, le=1, description="relevance added to items from the time the query "
                              "names (\"last week\", \"上周\", \"on 30 August, 2023\"; 0: off)")
    feedback: float = Field(default=1.0, ge=0, le=4, description="pseudo-relevance feedback: weight of the best hit's vector "
                            "added to the query's before every layer is searched again, for queries that ask "
                            "something (0: off)")
    feedback_pool: int = Field(default=100, ge=0, le=5000, description="the query's nearest items per layer that the "
                               "feedback pass ranks again by the moved query (its vector search: a shortlist, "
                               "not a second scan of the layer)")
    min_relevance: float = Field(default=0.05, ge=0, le=1, description="candidates below this relevance are dropped")


class RecallFilter(BaseModel):
    """What a recall may return: layers, statuses, one session's messages, a point in time,
    and whether reading counts as a use. Frozen: start from a preset (``RecallFilter.DEFAULT``,
    ``.AUDIT``, ``.READ_ONLY``) and ``model_copy(update=...)`` it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    layers: tuple[Literal["memory", "episode", "procedure", "message", "trace"], ...] = Field(
        default=("memory", "episode", "procedure", "message"), description="trace: agent runs, only when asked")
    include_superseded: bool = False
    include_archived: bool = False
    session_id: str | None = Field(default=None, description="only this session's raw messages (other layers unaffected)")
    record_access: bool = Field(default=True, description="count this read as a use (frequency and recency factors)")
    user_id: str | None = Field(default=None, description="never another user's records: this user's, and the shared "
                                "ones (no user: procedures, facts written for everyone)")
    agent_id: str | None = Field(default=None, description="never another agent's records (as user_id)")
    run_id: str | None = Field(default=None, description="never another run's records (as user_id)")
    as_of: UTCDateTime | None = Field(
        default=None, description="what was true at this time: memories valid then (valid_at <= as_of < invalid_at), "
        "superseded ones included, whatever graphmem believes now"
    )

    asked_at: UTCDateTime | None = Field(
        default=None, description="when the query is asked: relative times in it (\"two weeks ago\") resolve against this "
        "(default: now)"
    )

    def statuses(self) -> tuple[Status, ...]:
        """Memory statuses this filter admits: a point in time admits superseded facts (they
        may have held then); merged-away duplicates never come back (their survivor does)."""
        out = [Status.active]
        if self.include_superseded or self.as_of is not None:
            out.append(Status.superseded)
        if self.include_archived:
            out.append(Status.archived)
        return tuple(out)

    DEFAULT: ClassVar["RecallFilter"]
    AUDIT: ClassVar["RecallFilter"]
    READ_ONLY: ClassVar["RecallFilter"]


class LifecycleSettings(BaseModel):
    """The maintenance rules' numbers (the design seeds' defaults). Frozen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    expire_importance_below: float = Field(default=0.1, ge=0, le=1, description="expiry candidates: importance below this ...")
    expire_unused_days: float = Field(default=120, gt=0, description="... and not used (accessed, else created) for this long")
    purge_after_days: float = Field(default=30, ge=0, description="archived memories are deleted for good this long after")
    max_active_memories: int | None = Field(
        default=10_000, ge=1, description="per-namespace cap; over it the lowest by importance, confidence, recency and "
        "frequency are archived (None: no cap)"
    )
    merge: bool = Field(default=True, description="merge near-duplicates (the write-time dedupe rules) in each run")
    merge_cosine: float = Field(default=0.9, gt=0, le=1, description="a near paraphrase: merged at this cosine or above")
    reembed_batch: int = Field(default=512, ge=1, description="texts embedded per batch when re-embedding")


class ProcedureSettings(BaseModel):
    """When two workflows are one, and when agent runs become a procedure. Cosines are of the
    configured embedder (calibrated on the default, USE: "run migrations" / "run the database
    migrations" 0.75, "release the app" / "deploy the backend" 0.47). Frozen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_match: float = Field(default=0.75, gt=0, le=1, description="two tasks are one task at this cosine or above")
    step_match: float = Field(default=0.7, gt=0, le=1, description="two steps are one step at this cosine or above")
    resemble: float = Field(default=0.6, gt=0, le=1, description="two step sequences resemble each other when this share "
                            "of their steps align in order (2 x aligned / (steps of one + steps of the other))")
    learn_after: int = Field(default=2, ge=1, description="successful runs of one task with resembling steps before they "
                             "become a procedure")


class Settings(BaseSettings):
    """All of graphmem's configuration. Environment variables use the ``GRAPHMEM_`` prefix,
    nested values use ``__`` (``GRAPHMEM_RECALL__GRAPH_DEPTH=1``)."""

    model_config = SettingsConfigDict(env_prefix="GRAPHMEM_", env_nested_delimiter="__", extra="forbid")

    backend: Literal["embedded", "neo4j"] = Field(
        default="embedded", description="embedded: one SQLite file, no server; neo4j: a Neo4j 5.26+ server, cluster or Aura"
    )
    path: Path = Field(default=Path("graphmem.db"), description="the embedded store's single file")
    neo4j_uri: str = Field(default="bolt://127.0.0.1:7687", description="bolt:// (one server) or neo4j:// (routing, clusters)")
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = Field(default=None, description="empty: a server with auth disabled")
    neo4j_database: str = Field(default="neo4j", pattern=r"^[A-Za-z][A-Za-z0-9.\-]{0,62}$")
    neo4j_retry_seconds: float = Field(default=60.0, gt=0, description="how long a transaction is retried across a restart")
    neo4j_exact_below: int = Field(
        default=1_000, ge=0, description="vector search scans exactly while a kind has fewer nodes than this (all tenants)"
    )
    neo4j_vector_candidates: int = Field(
        default=100, ge=10, le=5_000, description="the fewest HNSW candidates a Neo4j vector search asks for (each is "
        "rescored exactly); more find more of the exact top k in a large tenant, at ~0.05 ms each (1M memories in one "
        "namespace on 2026.x: 100 kept 0.83 of the exact top 10 at 15 ms a search, 400 0.95 at 32 ms, 1,000 0.99 at "
        "54 ms; benchmarks)")
    vector_ann_threshold: int = Field(
        default=50_000, ge=0, description="embedded store: vectors of one kind in a namespace before vector search goes "
        "through an HNSW graph (usearch, kept in <path>.ann/, built in the background; every hit rescored "
        "exactly); below it and with 0, an exact scan")
    cache_dir: Path = Field(default=Path("~/.cache/graphmem").expanduser(), description="assembled model files live here")
    keys_path: Path | None = Field(default=None, description="graphmem serve's API keys (hashed); default: beside the "
                                   "embedded store file, <name>.keys.db")
    first_key: SecretStr | None = Field(default=None, min_length=32, description="graphmem serve and mcp: an API key "
                                        "you chose (32+ characters, e.g. `openssl rand -hex 32`), stored as the first key "
                                        "when the key file has none (a container's first start)")
    first_key_namespace: str = Field(default="default", pattern=NAMESPACE_PATTERN,
                                     description="the namespace of first_key")
    serve_max_body: int = Field(default=16 * 2**20, ge=1024, description="graphmem serve: the largest request body in bytes")
    serve_allowed_hosts: list[str] = Field(
        default=[], description="graphmem serve and mcp: Host names answered besides the loopback names and the bound address "
        "(JSON list, e.g. [\"memory.internal\"]; \"*\" answers any, for a keyed server behind a proxy); others get 421")
    serve_cors_origins: list[str] = Field(
        default=[], description="graphmem serve and mcp: web origins whose pages may call the server (CORS); none by default, "
        "and requests from any other page's origin get 403")
    embedder: Literal["use", "e5"] = "use"
    blas_threads: int | None = Field(
        default=None, ge=1, description="threads numpy's BLAS may use in this process, set when a Memory opens (None: as the "
        "process has it). 1 halves the client CPU of a recall (OpenBLAS workers spin after each call) at equal "
        "latency; graphmem serve, mcp and the other commands use 1 unless this is set (benchmarks/blas_threads.py)")
    gc_freeze: bool = Field(default=False, description="after a Memory's first recall, move every object then alive to "
                            "Python's permanent GC generation (gc.freeze; it acts on the whole process), so full "
                            "collections stop walking the loaded models: at 100k memories each took ~34 ms and set "
                            "recall's p95; graphmem serve and mcp turn it on unless this is set")
    recall: RecallOptions = RecallOptions()
    lifecycle: LifecycleSettings = LifecycleSettings()
    procedures: ProcedureSettings = ProcedureSettings()
    max_batch: int = Field(default=10_000, ge=1, description="most records accepted in one write call")
    enrichment: Literal["background", "manual"] = Field(
        default="background", description="messages written with wait=False: embedded by a background thread, or only on flush()"
    )
    extraction: Literal["background", "manual", "off"] = Field(
        default="background", description="extract memories every extract_every messages: in a background thread, only on "
        "flush()/`graphmem extract`, or never"
    )
    extract_every: int = Field(default=4, ge=1, le=64, description="messages per extraction window")
    extraction_lease_seconds: float = Field(
        default=120.0, ge=0.5, le=3600, description="a process extracting a session's window holds a lease on it in "
        "the store (renewed every third of this while the model runs): other processes sharing the store skip the "
        "session, and take it over when a dead process's lease runs out")
    extract_budget_tokens: int = Field(
        default=400, ge=0, description="when several windows of a session are queued, consecutive ones are sent as one while "
        "their text (the assistant's turns as the model sees them) stays within about this many tokens; 0: never merge")
    extract_budget_turns: int = Field(
        default=8, ge=0, description="and while they hold at most this many user turns: the 1.5B model writes a few "
        "memories a reply however many facts a window holds (30 facts in one window: 1 memory); 0: no limit")
    admission_threshold: float = Field(default=0.25, ge=0, le=1,
                                       description="extracted memories below this importance are dropped")
    model_path: Path | None = Field(default=None, description="a GGUF file; default: Qwen2.5-Coder-1.5B-Instruct Q4_K_M")
    llm_threads: int | None = Field(default=None, ge=1, description="llama.cpp generation threads (default: half the "
                                    "cores, llama.cpp's choice; the prompt is read on all)")
    llm_context: int = Field(default=4096, ge=512)
    llm_gpu_layers: int = Field(default=0, ge=-1, description="layers offloaded to a GPU (-1: all)")
    llm_max_tokens: int = Field(default=700, ge=64)
    llm_whole_reply: bool = Field(default=False, description="ask every window for the whole reply: the model's entity types "
                                  "and episode sentence after the memories (a quarter more reply tokens; by default a "
                                  "window that cannot teach a workflow stops where its memories end)")
    llm_draft_tokens: int | None = Field(default=None, ge=0, le=64, description="local model: tokens guessed from the prompt "
                                         "and the reply so far and checked in one pass (each token is still the greedy "
                                         "choice; 0: one token a pass; unset: up to 12 where a timed pass of four tokens "
                                         "shows that drafts save CPU on this machine, else one token a pass)")
    llm_judge: bool = Field(default=True, description="a window that signals a change asks the model, for each stored "
                            "memory of its speaker it was shown, whether the window ends it (one short question each; "
                            "a memory is retired at a probability of 0.75 or more, the window's likeliest only)")
    llm_base_url: str | None = Field(default=None, description="an OpenAI-compatible server (llama-server, vLLM, Ollama)")
    llm_model: str = Field(default="default", description="model name sent to llm_base_url")
    llm_api_key: SecretStr | None = None
    context_budget: int = Field(default=1500, ge=32, description="default token budget of context()")
    recent_turns: int = Field(default=6, ge=0, description="L0: how many recent session turns context() may add")
    soul: str = Field(default="", description="default identity block for context(); set per namespace with set_soul")


RecallFilter.DEFAULT = RecallFilter()
RecallFilter.AUDIT = RecallFilter(include_superseded=True, include_archived=True, record_access=False)
RecallFilter.READ_ONLY = RecallFilter(record_access=False)  # evaluations and dashboards: no feedback
