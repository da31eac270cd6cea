"""A triple written as text ("Ann WORKS_AT Initech") names two entities, never one made of the
whole string: the tagger breaks names at ALL_CAPS predicate tokens, and a memory whose text is
its own subject/predicate/object is not read by NER at all."""

from __future__ import annotations

import pytest

from graphmem.text import EntityTagger


@pytest.mark.parametrize("text, names", [
    ("Bob MANAGES Carol Smith", {"Bob", "Carol Smith"}),
    ("Alice Chen WORKS_AT Initech", {"Alice Chen", "Initech"}),
    ("Dave Jones LIVES_IN Berlin", {"Dave Jones", "Berlin"}),
    ("NASA hired Ann Lee", {"NASA", "Ann Lee"}),  # an ALL_CAPS name stays a name
])
def test_predicate_tokens_are_never_part_of_a_name(text, names):
    assert {e.name for e in EntityTagger().tag(text)} == names


def test_a_triple_written_out_names_its_subject_and_object(mem):
    mem.remember("Kemi Okafor PREFERS green tea", subject="Kemi Okafor", predicate="PREFERS", object="green tea")
    mem.remember("Bob MANAGES Carol Smith")
    assert sorted(e.name for e in mem.list("entity")) == ["Bob", "Carol Smith", "Kemi Okafor", "green tea"]
