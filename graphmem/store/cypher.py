"""The Cypher files in ``cypher/``: loaded by name, headers parsed, identifiers validated.

Every statement graphmem runs on Neo4j lives in a file with a short header (purpose, params,
mode). Values travel only as ``$parameters``. Labels, relationship types and the index a
``SEARCH`` clause names cannot be parameters, so a file may name ``{label}``, ``{rel_type}``,
``{vector}`` or ``{index}``: those are filled only from graphmem's fixed sets, after a check
against ``IDENTIFIER``. A file may also name ``{ann}``: the part (``cypher/parts/ann_<name>.cypher``)
that finds a namespace's vector candidates on this server's line (``global``: Neo4j 5's shared
HNSW index, filtered after it; ``filtered``: Cypher 25's ``SEARCH ... WHERE`` inside the index).
A part that begins with ``CYPHER 25`` puts that line at the top of the statement."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import ConfigurationError, ValidationError
from ..models import EdgeType
from .base import VECTOR_KINDS

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
LABELS = {
    "memory": "Memory", "message": "Message", "episode": "Episode",
    "procedure": "Procedure", "entity": "Entity", "session": "Session", "maintenance": "MaintenanceRun",
    "step": "Step", "trace": "Trace", "trace_step": "TraceStep", "tool_call": "ToolCall", "tool": "Tool",
}
VECTOR_PROPS = ("embedding", "embedding_b")  # the live vectors and a re-embedding's, alternating
VECTOR_INDEXES = {f"{kind}_{prop}" for kind in VECTOR_KINDS for prop in VECTOR_PROPS}  # as schema/04 names them
ANN_PARTS = ("global", "filtered")  # Neo4j 5.26 (a shared index, filtered after) and 2026.x (filtered inside it)
_ALLOWED = {"label": set(LABELS.values()), "rel_type": {t.value for t in EdgeType}, "vector": set(VECTOR_PROPS),
            "index": VECTOR_INDEXES}
_SLOT = re.compile(r"\{(label|rel_type|vector|index|ann)\}")
_CYPHER_25 = "CYPHER 25"


def cypher_dir() -> Path:
    """``cypher/`` of a source checkout (editable installs), else the copy a wheel ships."""
    here = Path(__file__).resolve().parents[2] / "cypher"
    if (here / "store").is_dir():
        return here
    shipped = Path(str(resources.files("graphmem") / "_cypher"))
    if (shipped / "store").is_dir():
        return shipped
    raise ConfigurationError(f"graphmem's Cypher files are missing (looked in {here} and {shipped})")


@dataclass(frozen=True)
class CypherFile:
    name: str
    path: Path
    text: str  # the statement(s) without the header
    purpose: str
    params: str
    mode: str  # read, write, schema or part

    @property
    def slots(self) -> set[str]:
        """The slots of the file and of the parts it may put in."""
        own = set(_SLOT.findall(self.text))
        return own.union(*(part(f"ann_{p}").slots for p in ANN_PARTS)) if "ann" in own else own

    def render(self, **identifiers: str) -> str:
        """The statement with its part (``{ann}``) put in and ``{label}``, ``{rel_type}``,
        ``{vector}`` and ``{index}`` filled; each value must be one of graphmem's own and a plain
        identifier. An identifier only another part would use (``label``) is ignored."""
        text, lead = self.text, ""
        if "ann" in self.slots:
            name = identifiers.get("ann")
            if name not in ANN_PARTS:
                raise ValidationError(f"{name!r} is not a vector candidate part (one of {', '.join(ANN_PARTS)})")
            body = part(f"ann_{name}").text
            if body.startswith(_CYPHER_25):
                lead, body = _CYPHER_25 + "\n", body[len(_CYPHER_25):].lstrip()
            text = text.replace("{ann}", body)
        needed = set(_SLOT.findall(text))
        given = set(identifiers) & needed if "ann" in self.slots else set(identifiers)  # another part's slot is ignored
        if given != needed or not set(identifiers) <= self.slots:
            raise ValidationError(f"{self.name}.cypher needs {sorted(needed)}, got {sorted(identifiers)}")
        for slot in needed:
            value = identifiers[slot]
            if not IDENTIFIER.fullmatch(value) or value not in _ALLOWED[slot]:
                raise ValidationError(f"{value!r} is not a graphmem {slot}")
            text = text.replace("{" + slot + "}", value)
        return lead + text

    def statements(self, **identifiers: str) -> list[str]:
        """A schema file's statements (split at a ';' that ends a line), its slots filled."""
        text = self.render(**{k: v for k, v in identifiers.items() if k in self.slots})
        return [s.strip() for s in re.split(r";\s*$", text, flags=re.MULTILINE) if s.strip()]


def parse(path: Path) -> CypherFile:
    header: dict[str, list[str]] = {}
    body: list[str] = []
    key = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not body and line.startswith("//"):
            content = line[2:].strip()
            m = re.match(r"(purpose|params|mode):\s*(.*)", content)
            if m:
                key = m.group(1)
                header[key] = [m.group(2)]
            elif key:
                header[key].append(content)
            continue
        if body or line.strip():
            body.append(line)
    missing = {"purpose", "params", "mode"} - set(header)
    if missing:
        raise ConfigurationError(f"{path} lacks a header line for {sorted(missing)}")
    mode = header["mode"][0].split()[0]
    if mode not in ("read", "write", "schema", "part"):
        raise ConfigurationError(f"{path}: mode must be read, write, schema or part, not {mode!r}")
    return CypherFile(
        name=path.stem, path=path, text="\n".join(body).strip(), purpose=" ".join(header["purpose"]),
        params=" ".join(header["params"]), mode=mode,
    )


@functools.cache
def query(name: str) -> CypherFile:
    """A store query by file name (``cypher/store/<name>.cypher``)."""
    return parse(cypher_dir() / "store" / f"{name}.cypher")


@functools.cache
def part(name: str) -> CypherFile:
    """A part that store queries put in through a slot (``cypher/parts/<name>.cypher``)."""
    return parse(cypher_dir() / "parts" / f"{name}.cypher")


def schema_files() -> list[CypherFile]:
    return [parse(p) for p in sorted((cypher_dir() / "schema").glob("*.cypher"))]


def explore_files() -> dict[str, CypherFile]:
    return {p.stem: parse(p) for p in sorted((cypher_dir() / "explore").glob("*.cypher"))}


def all_files() -> list[CypherFile]:
    return [parse(p) for p in sorted(cypher_dir().rglob("*.cypher"))]
