"""The Cypher files in ``cypher/``: loaded by name, headers parsed, identifiers validated.

Every statement graphmem runs on Neo4j lives in a file with a short header (purpose, params,
mode). Values travel only as ``$parameters``. Labels and relationship types cannot be
parameters in Cypher 5, so a file may name ``{label}`` or ``{rel_type}``: those are filled only
from graphmem's fixed sets, after a check against ``IDENTIFIER``."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import ConfigurationError, ValidationError
from ..models import EdgeType

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
LABELS = {
    "memory": "Memory", "message": "Message", "episode": "Episode",
    "procedure": "Procedure", "entity": "Entity", "session": "Session", "maintenance": "MaintenanceRun",
    "step": "Step", "trace": "Trace", "trace_step": "TraceStep", "tool_call": "ToolCall", "tool": "Tool",
}
VECTOR_PROPS = ("embedding", "embedding_b")  # the live vectors and a re-embedding's, alternating
_ALLOWED = {"label": set(LABELS.values()), "rel_type": {t.value for t in EdgeType}, "vector": set(VECTOR_PROPS)}
_SLOT = re.compile(r"\{(label|rel_type|vector)\}")


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
    mode: str  # read, write or schema

    @property
    def slots(self) -> set[str]:
        return set(_SLOT.findall(self.text))

    def render(self, **identifiers: str) -> str:
        """The statement with ``{label}``/``{rel_type}`` filled; each value must be one of
        graphmem's own labels or edge types and a plain identifier."""
        if set(identifiers) != self.slots:
            raise ValidationError(f"{self.name}.cypher needs {sorted(self.slots)}, got {sorted(identifiers)}")
        text = self.text
        for slot, value in identifiers.items():
            if not IDENTIFIER.fullmatch(value) or value not in _ALLOWED[slot]:
                raise ValidationError(f"{value!r} is not a graphmem {slot}")
            text = text.replace("{" + slot + "}", value)
        return text

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
    if mode not in ("read", "write", "schema"):
        raise ConfigurationError(f"{path}: mode must be read, write or schema, not {mode!r}")
    return CypherFile(
        name=path.stem, path=path, text="\n".join(body).strip(), purpose=" ".join(header["purpose"]),
        params=" ".join(header["params"]), mode=mode,
    )


@functools.cache
def query(name: str) -> CypherFile:
    """A store query by file name (``cypher/store/<name>.cypher``)."""
    return parse(cypher_dir() / "store" / f"{name}.cypher")


def schema_files() -> list[CypherFile]:
    return [parse(p) for p in sorted((cypher_dir() / "schema").glob("*.cypher"))]


def explore_files() -> dict[str, CypherFile]:
    return {p.stem: parse(p) for p in sorted((cypher_dir() / "explore").glob("*.cypher"))}


def all_files() -> list[CypherFile]:
    return [parse(p) for p in sorted(cypher_dir().rglob("*.cypher"))]
