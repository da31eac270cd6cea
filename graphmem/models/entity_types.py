"""Entity types: one spelling for each (``entity_type``) and the evidence that decides an
entity's type (``TYPE_EVIDENCE``, ``voted_type``)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_TYPE_SYNONYMS = {
    "person": ("per", "people", "human", "individual", "人", "人物", "人名"),
    "org": ("organization", "organisation", "company", "corporation", "corp", "business", "institution", "agency",
            "employer", "公司", "组织", "机构"),
    "place": ("gpe", "loc", "location", "city", "country", "region", "fac", "facility", "地点", "地方", "城市", "国家"),
    "thing": ("misc", "other", "object", "item", "entity", "unknown", "东西"),
}
_TYPE_OF = {alias: canon for canon, aliases in _TYPE_SYNONYMS.items() for alias in (canon, *aliases)}
_TYPE_JUNK = re.compile(r"[^\w]+")


def entity_type(value: Any) -> str:
    """An entity type in its one spelling: PERSON, Person and per are ``person``; ORG,
    company are ``org``; GPE, city are ``place``; any other word is kept in lower case
    (spaces as ``_``, at most 40 characters); nothing is refused, an empty type is ``thing``."""
    if value is None:
        return "thing"
    if not isinstance(value, str):
        raise ValueError(f"an entity type is a word, not {type(value).__name__}")
    word = _TYPE_JUNK.sub("_", unicodedata.normalize("NFKC", value).casefold()).strip("_")[:40].strip("_")
    return _TYPE_OF.get(word, word or "thing")


TYPE_EVIDENCE = ("speaker", "caller", "model", "ner")


def voted_type(votes: dict[str, str], fallback: str) -> str:
    """The type the strongest evidence in ``votes`` gives, else ``fallback``."""
    return next((votes[source] for source in TYPE_EVIDENCE if source in votes), fallback)
