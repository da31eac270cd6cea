"""What happens to knowledge after it is written: the rules (dedupe, merge, supersede,
expire, demote, purge, caps; plain functions over the models), the builders that turn inputs
and extractions into nodes and edges, and the batch workers (maintenance, re-embedding,
export and import). Workers get the ``Parts`` they need, never the ``Memory`` facade."""

from .builders import EntityResolver, GraphBuilder, corrected_triple
from .explain import explain
from .fold import Folded, WindowFolder
from .log_graph import LogLinker, append_turns, message_inputs
from .maintain import Maintainer, resolve_policy
from .parts import Parts, check, describe
from .reembed import Reembedder
from .scoping import SCOPED_KINDS, owned, scope_filter, scoped_ids
from .traces import drop_unwritten, forget_records, written_by
from .transfer import EXPORT_FORMAT, checked_namespace, export, import_

__all__ = [
    "EXPORT_FORMAT", "EntityResolver", "Folded", "GraphBuilder", "LogLinker", "Maintainer", "Parts", "Reembedder", "WindowFolder",
    "append_turns", "check", "checked_namespace", "corrected_triple", "describe", "drop_unwritten", "explain", "export", "forget_records", "import_", "message_inputs",
    "resolve_policy", "written_by", "SCOPED_KINDS", "owned", "scope_filter", "scoped_ids",
]
