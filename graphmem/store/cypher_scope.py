"""Keeping a user's Cypher inside one namespace (``Memory.cypher``, ``graphmem cypher``).

Neo4j Community has no per-user view of a database, so no filter can be put under a query that
it cannot get round. The check here is the other sound choice: a query is refused unless every
node it can reach is tied to the caller's namespace, judged from its tokens before it is sent:

- **Every pattern is anchored.** A pattern (one node, or nodes joined by relationships) must
  hold a node written with ``{namespace: $namespace}`` in its property map, and ``$namespace``
  is always the caller's (``explore`` sets it; a ``namespace`` parameter of another value is
  refused). graphmem writes relationships only between nodes of one namespace, so a node
  reached through relationships from an anchored node is in the namespace too, however many
  hops away (variable-length and shortest paths included). Patterns are found wherever they
  stand: MATCH, OPTIONAL MATCH, WHERE, pattern comprehensions, EXISTS/COUNT/COLLECT and CALL
  subqueries, each UNION branch. When in doubt a pattern is split, never joined: a wrong guess
  refuses a query, it never lets one through.
- **Nothing reaches nodes another way.** Procedures (``CALL name``), ``LOAD CSV``, ``USE``,
  ``SHOW`` and admin commands are refused, and only Neo4j's own functions may be called (no
  plugin function such as ``apoc.cypher.run`` that could run a string as a query).
- **Reads only.** Write clauses are refused here and, besides, the query runs in a read
  transaction that the server keeps from writing.

The price is that a pattern over nodes that were bound earlier must say the namespace again
(``OPTIONAL MATCH (m)-[:DERIVED_FROM]->(t:Message {namespace: $namespace})``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ValidationError

WRITES = frozenset({"create", "merge", "set", "delete", "detach", "remove", "foreach", "insert"})
REFUSED = frozenset({"load", "use", "show", "terminate", "alter", "drop", "grant", "deny", "revoke", "start", "stop",
                     "enable", "rename", "dryrun"})
# words after which "(" opens a pattern or a parenthesised expression, never a call
BEFORE_PATTERN = frozenset({"match", "where", "and", "or", "xor", "not", "return", "with", "in", "when", "then", "else",
                            "case", "distinct", "by", "skip", "limit", "offset", "unwind", "contains", "exists",
                            "shortest", "filter", "optional", "yield", "is", "as", "union", "all", "any", "let"})
# Neo4j's own functions (lower case); a plugin's are refused
FUNCTIONS = frozenset("""
abs acos all any asin atan atan2 avg btrim ceil char_length character_length coalesce collect cos cot count degrees e
elementid endnode exp floor haversin head id isempty isnan keys labels last left length log log10 lower ltrim max min
nodes none normalize nullif percentilecont percentiledisc pi point point.distance point.withinbbox properties radians
rand randomuuid range reduce relationships replace reverse right round rtrim sign sin single size split sqrt startnode
stdev stdevp substring sum tail tan toboolean tobooleanlist tobooleanornull tofloat tofloatlist tofloatornull tointeger
tointegerlist tointegerornull tolower tostring tostringlist tostringornull toupper trim type upper valuetype
vector.similarity.cosine vector.similarity.euclidean
date date.realtime date.statement date.transaction date.truncate
datetime datetime.fromepoch datetime.fromepochmillis datetime.realtime datetime.statement datetime.transaction
datetime.truncate localdatetime localdatetime.realtime localdatetime.statement localdatetime.transaction
localdatetime.truncate localtime localtime.realtime localtime.statement localtime.transaction localtime.truncate
time time.realtime time.statement time.transaction time.truncate
duration duration.between duration.indays duration.inmonths duration.inseconds shortestpath allshortestpaths
""".split()) | (NEWER := frozenset({"vector", "vector_dimension_count", "vector_distance", "vector_norm"}))  # 2025.x
# after "(": a first word then one of these is an expression, not a node pattern
EXPRESSION_NEXT = frozenset({".", "(", "[", "+", "-", "*", "/", "%", "^", "=", "<", ">", ",", "!", "~", "|"})
IS_EXPRESSION = frozenset({"null", "not", "typed", "normalized", "nfc", "nfd", "nfkc", "nfkd", ":"})

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<line>//[^\n]*)
  | (?P<block>/\*.*?\*/)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<qident>`(?:[^`]|``)*`)
  | (?P<param>\$(?:[^\W\d]\w*|\d+|`(?:[^`]|``)*`))
  | (?P<num>0x[0-9a-fA-F_]+|0o[0-7_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)
  | (?P<ident>[^\W\d]\w*)
  | (?P<punct>.)
""", re.VERBOSE | re.DOTALL)


@dataclass(frozen=True)
class Token:
    kind: str  # ident, qident, param, str, num, punct
    text: str

    @property
    def word(self) -> str:
        """A keyword's lower-case text; '' for anything that cannot be a keyword."""
        return self.text.lower() if self.kind == "ident" else ""

    @property
    def name(self) -> str:
        """An identifier's or parameter's name, backticks undone."""
        text = self.text[1:] if self.kind == "param" else self.text
        return text[1:-1].replace("``", "`") if text.startswith("`") else text


def tokens(query: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(query):
        m = _TOKEN.match(query, pos)
        if m is None or (m.lastgroup == "punct" and m.group() in "'\"`") or query.startswith("/*", pos) and m.lastgroup != "block":
            raise ValidationError(f"the query cannot be read at character {pos + 1}: an unclosed string, name or comment")
        if m.lastgroup not in ("ws", "line", "block"):
            out.append(Token(m.lastgroup or "punct", m.group()))
        pos = m.end()
    return out


def _closing(toks: list[Token], start: int) -> int:
    """The index of the bracket that closes the one at ``start``."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for i in range(start, len(toks)):
        t = toks[i].text if toks[i].kind == "punct" else ""
        if t in pairs:
            stack.append(pairs[t])
        elif t in (")", "]", "}"):
            if not stack or stack.pop() != t:
                break
            if not stack:
                return i
    raise ValidationError("the query's brackets do not match")


def _call_name(toks: list[Token], i: int) -> str | None:
    """The (dotted, lower-case) name called by the "(" at ``i``, or None when none is."""
    j = i - 1
    if j < 0 or toks[j].kind not in ("ident", "qident"):
        return None
    parts = [toks[j].name.lower()]
    while j >= 2 and toks[j - 1].text == "." and toks[j - 2].kind in ("ident", "qident"):
        j -= 2
        parts.append(toks[j].name.lower())
    if j >= 1 and toks[j - 1].text == ".":  # a.b.c( after an expression: not a name Neo4j calls
        return "".join(reversed(parts)) + "?"
    return ".".join(reversed(parts))


def _is_node(toks: list[Token], i: int, end: int) -> bool:
    """Is the group ``toks[i]`` ("(") .. ``toks[end]`` (")") a node pattern? In doubt, yes."""
    first = toks[i + 1] if i + 1 < end else None
    if first is None:
        return True  # ()
    if first.kind in ("str", "num") or first.text in ("(", "[", "-", "+", "*"):
        return False
    if first.kind in ("ident", "qident", "param") and i + 2 < end:
        second = toks[i + 2]
        if second.kind == "punct" and second.text in EXPRESSION_NEXT:
            return False
        if second.word == "is":
            third = toks[i + 3] if i + 3 < end else None
            return not (third is not None and (third.word in IS_EXPRESSION or third.text == ":"))
        if second.kind in ("ident", "qident", "str", "num") and second.word != "where":
            return False
    return True


def _anchored(toks: list[Token], i: int, end: int) -> bool:
    """Does the node pattern hold ``{namespace: $namespace}`` in its property map (one key
    ``namespace``, and that is its value)?"""
    j = i + 1
    while j < end and toks[j].text != "{" and toks[j].word != "where":
        if toks[j].text in ("(", "["):
            j = _closing(toks, j)
        j += 1
    if j >= end or toks[j].text != "{":
        return False
    close = _closing(toks, j)
    found, k = 0, j + 1
    while k < close:
        key, colon = toks[k], toks[k + 1] if k + 1 < close else None
        if key.kind in ("ident", "qident") and colon is not None and colon.text == ":" and key.name == "namespace":
            value, after = toks[k + 2] if k + 2 < close else None, toks[k + 3] if k + 3 <= close else None
            if not (value is not None and value.kind == "param" and value.name == "namespace"
                    and after is not None and after.text in (",", "}")):
                return False
            found += 1
        # to the next key of this map
        while k < close and toks[k].text != ",":
            if toks[k].text in ("(", "[", "{"):
                k = _closing(toks, k)
            k += 1
        k += 1
    return found == 1


def _relationship_end(toks: list[Token], j: int) -> int | None:
    """If a relationship (``-->``, ``<-[r:T*1..3]-``, ``-[]->{1,2}``, ...) starts at ``j``,
    the index of the "(" it leads to; else None."""
    n = len(toks)
    if j < n and toks[j].text == "<":
        j += 1
    if not (j < n and toks[j].text == "-"):
        return None
    j += 1
    if j < n and toks[j].text == "[":
        j = _closing(toks, j) + 1
    if not (j < n and toks[j].text == "-"):
        return None
    j += 1
    if j < n and toks[j].text == ">":
        j += 1
    if j < n and toks[j].text in ("+", "*"):
        j += 1
    elif j < n and toks[j].text == "{":
        j = _closing(toks, j) + 1
    return j if j < n and toks[j].text == "(" else None


def check_scoped(query: str) -> None:
    """Refuse (``ValidationError``, saying why) a query that could read outside
    ``$namespace`` or write; see the module's text for the rules."""
    toks = tokens(query)
    for i, t in enumerate(toks):
        after_dot = i > 0 and toks[i - 1].text in (".", ":")  # a property or a label, not a clause
        if t.word in WRITES and not after_dot:
            raise ValidationError(f"graphmem cypher runs read-only queries: {t.text.upper()} writes")
        if t.word in REFUSED and not after_dot:
            raise ValidationError(f"{t.text.upper()} is not allowed in graphmem cypher (it reaches outside the namespace)")
        if t.word == "call" and not after_dot and not (i + 1 < len(toks) and toks[i + 1].text == "{"):
            raise ValidationError("procedures (CALL name) are not allowed in graphmem cypher: they can read every "
                                  "namespace; CALL { subquery } is")
    chains: list[list[tuple[int, int]]] = []
    member: dict[int, int] = {}  # "(" index -> its chain
    for i, t in enumerate(toks):
        if t.text != "(" or t.kind != "punct":
            continue
        name = _call_name(toks, i)
        if name is not None and name not in BEFORE_PATTERN:
            if name not in FUNCTIONS:
                raise ValidationError(f"the function {name.rstrip('?')}() is not allowed in graphmem cypher: only "
                                      "Neo4j's own functions are (plugins can read every namespace)")
            continue
        end = _closing(toks, i)
        if not _is_node(toks, i, end) or i in member:
            continue
        chain = [(i, end)]
        member[i] = len(chains)
        nxt = _relationship_end(toks, end + 1)
        while nxt is not None:
            close = _closing(toks, nxt)
            if not _is_node(toks, nxt, close):
                break
            chain.append((nxt, close))
            member[nxt] = len(chains)
            nxt = _relationship_end(toks, close + 1)
        chains.append(chain)
    for chain in chains:
        if not any(_anchored(toks, i, end) for i, end in chain):
            start, stop = chain[0][0], chain[-1][1]
            text = " ".join(tok.text for tok in toks[start:stop + 1])
            raise ValidationError(f"every pattern in graphmem cypher needs a node with {{namespace: $namespace}}, "
                                  f"and {text[:120]!r} has none: add it to one of its nodes")
