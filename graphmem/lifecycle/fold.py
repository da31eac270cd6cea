"""Folding one extracted window into the graph: admission, dedupe and merge, supersession,
the episode, procedures, the window's messages stepping back, the session's L1 summary."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..extract.checks import (adds_a_value, grounded, kept_terms, left_said, left_terms, names_most, replaced_terms,
                              resolve_subject, says_it_left, says_nothing, speaker_of, stray_object, terms_of, without_self_naming)
from ..extract.extractors import copies_an_example
from ..extract.judge import Verdict, ends
from ..extract.people import (
    Tie, about_whom, addressed, agrees, first_person, relation_memory, relation_named, relation_of, relational, stated_ties, ties,
    whose, written_as,
)
from ..extract.schema import ExtractedMemory, Extraction, reads_like_a_workflow
from ..models import (SOURCE_CONFIDENCE, Edge, EdgeType, EntityIn, MemoryIn, MemoryRecord, Message, RelationIn, Session,
                      Source, Status, utcnow)
from ..text import keywords, normalise_name
from ..text.crosslingual import Across
from ..text.entities import is_noise_name
from ..text.tokens import spaced
from ..text.when import time_span
from .admission import as_words, assistant_words, holds_what_was_left, prompt_date, source_turns, without_prompt_date
from .attributes import Attributes
from .builders import GraphBuilder, ModelIn, SpeakerIn, TaggedIn
from .chains import ChainBuilder, Change
from .parts import Parts
from .rules import (SPECIFIC_TOPIC_COS, Decision, Fact, decide, fact_of, merge_candidate, restates_a_step, same_subject,
                    same_triple, says_again_what_changed, states_a_replaced_value)
from .swaps import carried_over, named_swap, rest_without, without_clause

KNOWN_IN_PROMPT = 5  # related memories shown to the model with each window, by meaning
KNOWN_MIN_COS = 0.3
KNOWN_BY_WORDS = 3  # ... and by shared words
SIMILAR_FOR_RULES = 8  # stored memories each candidate is checked against
SUMMARY_EPISODES = 6  # L1 keeps the newest episode summaries of the session


_FUTURE = re.compile(r"\b(will|going to|plans?|planning|next|upcoming|soon|tomorrow|flies|flying)\b|要|将|计划|打算|准备|下周|下个|明天|明年",
                     re.IGNORECASE)


@dataclass
class Folded(Change):
    """What one window becomes: nodes with one vector (or None) each, edges, the session's new
    L1 summary and a report of what was added, merged and superseded."""

    summary: str = ""
    report: dict[str, Any] = field(default_factory=lambda: {"added": [], "merged": [], "superseded": [], "dropped": []})


class WindowFolder:
    def __init__(self, parts: Parts, builder: GraphBuilder) -> None:
        self.parts = parts
        self.builder = builder
        self.chains = ChainBuilder(parts)

    def known(self, namespace: str, msgs: list[Message]) -> list[MemoryRecord]:
        """The active memories the window may change, shown to the model as known facts: the
        closest by meaning and the ones sharing its words (a name, a place, "Django"), which a
        short changed-value turn is often too far from by meaning alone."""
        store = self.parts.store
        text = " ".join(m.content for m in msgs)
        embedder = self.parts.embedder
        vec = getattr(embedder, "embed_whole", embedder.embed)([text])[0]
        hits = [i for i, c in store.vector_search(namespace, "memory", vec, KNOWN_IN_PROMPT, [Status.active])
                if c >= KNOWN_MIN_COS]
        user_text = " ".join(m.content for m in msgs if m.role != "assistant")
        if user_text.strip():
            hits += [i for i, _ in store.keyword_search(namespace, "memory", user_text, KNOWN_BY_WORDS, [Status.active])]
        ids = list(dict.fromkeys(hits))[:KNOWN_IN_PROMPT + KNOWN_BY_WORDS]
        found = {r.id: r for r in store.get(namespace, ids)}
        return [found[i] for i in ids if isinstance(found.get(i), MemoryRecord)]

    def memories_of(self, namespace: str, speaker: str, text: str, most: int) -> list[MemoryRecord]:
        """The active memories about ``speaker`` closest to ``text`` by meaning, at most ``most``."""
        store = self.parts.store
        vec = self.parts.embedder.embed([text])[0]
        ids = [i for i, _ in store.vector_search(namespace, "memory", vec, most * 4, [Status.active])]
        found = {r.id: r for r in store.get(namespace, ids)}
        mine = [found[i] for i in ids if isinstance(found.get(i), MemoryRecord) and same_subject(found[i].subject, speaker)]
        return mine[:most]

    def fold(self, namespace: str, session: Session, msgs: list[Message], extraction: Extraction,
             verdicts: Sequence[Verdict] = ()) -> Folded:
        """Must run under the write lock: it reads what it will replace. ``verdicts``: the
        model's answers, asked before the lock, whether the window ends stored memories
        (``graphmem.extract.judge``)."""
        settings, embedder, store = self.parts.settings, self.parts.embedder, self.parts.store
        now = utcnow()
        out = Folded()
        # the names of the window, each with its evidence: NER's guess, the model's type (a whole
        # reply names them), a speaker (a person, the strongest)
        named: dict[str, EntityIn] = {normalise_name(t.name): TaggedIn(name=t.name, type=t.type)
                                      for tags in self.parts.tagger.tag_many([m.content for m in msgs]) for t in tags}
        named.update({normalise_name(e.name): ModelIn(name=e.name, type=e.type) for e in extraction.entities})
        named.update({normalise_name(m.speaker): SpeakerIn(name=m.speaker, type="person")
                      for m in msgs if m.role != "assistant" and m.speaker})
        workflow = reads_like_a_workflow(msgs)
        across = Across(embedder)  # a fact may name in one language what its window says in the other
        procedures = [p for p in extraction.procedures if workflow and grounded(None, p.task, p.task, msgs, across) is None]
        taught = [(p.task, p.steps) for p in procedures]
        admitted = []
        users = [x for x in msgs if x.role != "assistant"]  # what the user's own turns say is never the assistant's
        for m in extraction.memories:
            turns = source_turns(m, msgs)
            user = speaker_of(turns) or speaker_of(msgs)
            text, subject = addressed(m.text, resolve_subject(m.subject, user), user)  # "Your boss is ..." is the user's
            text = first_person(text, user)  # "I drink mint tea in the afternoon" is the speaker's
            text = without_self_naming(text, subject)  # "邵琪是邵琪，在南京……" from "我叫邵琪，在南京……"
            text = without_prompt_date(as_words(text), msgs)  # "Jonah lives in Aurora since 2026-04-01"
            m = m.model_copy(update={"text": text, "subject": subject})
            if stray_object(m.subject, m.object, m.text, msgs, across) and store.find_entities(namespace, [m.object or ""]):
                m = m.model_copy(update={"object": None})  # a known name copied from the prompt: its text stands
            owner = whose(m, msgs)  # another speaker's words given to this one ("Sven moved to Umea")
            if isinstance(owner, ExtractedMemory):
                m, turns = owner, source_turns(owner, msgs)
            copied = copies_an_example(m.text, " ".join(f"{x.speaker}: {x.content}" for x in msgs))
            why = (f"copies the prompt's example {copied!r}" if copied else owner if isinstance(owner, str)
                   else "the assistant's words, not taken up by the user" if assistant_words(m, turns, msgs, users, across)
                   else says_nothing(m.subject, m.object, m.text) or holds_what_was_left(m, turns)
                   or prompt_date(m, msgs) or grounded(m.subject, m.object, m.text, msgs, across))
            if why:
                out.report["dropped"].append({"text": m.text, "why": why})
            elif m.importance >= settings.admission_threshold and not restates_a_step(m.text, m.subject, taught):
                admitted.append((m, turns))
        people = [e.name for e in named.values()] + [n for m, _ in admitted for n in (m.subject, m.object) if n]
        people = [n for n in dict.fromkeys(people) if not is_noise_name(n)]
        admitted = _relations_as_said(msgs, admitted, people, out.report)
        resolved = about_whom([m for m, _ in admitted], people)
        admitted = [(r, turns) for (_, turns), (r, _) in zip(admitted, resolved)]
        inputs = [_memory_input(m, turns, named, ts) for (m, turns), (_, ts) in zip(admitted, resolved)]
        replaces = [replaced_terms(turns) for _, turns in admitted]
        additive = [adds_a_value(turns) for _, turns in admitted]
        vecs = embedder.embed([i.text for i in inputs]) if inputs else np.zeros((0, embedder.dim))
        stored = [self._similar(namespace, vec) for vec in vecs]

        plan: list[tuple[MemoryIn, Decision]] = []
        pool: list[tuple[Fact, np.ndarray]] = []  # this window's accepted candidates
        said = [" ".join(t.content for t in turns if t.role != "assistant") for _, turns in admitted]
        facts = [fact_of("", inp.text, inp.subject, inp.predicate, inp.object, said=turn) for inp, turn in zip(inputs, said)]
        # a memory the window is retiring is still one the model may retell ("Bastian works at
        # Siemens" beside "I left Siemens ... joined Zalando", whose Siemens memory is carried over)
        retold = [states_a_replaced_value(f, [o for o, _ in near], changed) for f, near, changed in zip(facts, stored, replaces)]
        carried = self._carry_over(namespace, inputs, facts, retold, [turns for _, turns in admitted], replaces, stored)
        for inp, vec, d in carried:
            plan.append((inp, d))
            pool.append((fact_of(f"new:{len(pool)}", inp.text, inp.subject, inp.predicate, inp.object), vec))
        admitted = [m for m, _ in admitted]
        retiring = {d.target for _, _, d in carried}  # superseded by a successor already
        attributes = Attributes(embedder)  # which one-value attribute a memory states, by meaning
        stale: set[str] = set()  # merged into, but the window says their value changed
        for inp, vec, changed, adds, near, fact, retells in zip(inputs, vecs, replaces, additive, stored, facts, retold):
            stored_near = [(f, c) for f, c in near if f.id not in retiring]
            similar = sorted(stored_near + [(f, float(v @ vec)) for f, v in pool], key=lambda fc: -fc[1])
            if retells and not _only_news(inp, inputs) or _swapped_out(inp, carried):
                out.report["dropped"].append({"text": inp.text, "why": "states a value its turn says was replaced"})
                continue
            d = decide(fact, similar, changed, adds, attributes.of)
            if d.action == "supersede" and d.target.startswith("new:"):
                # a value this window states is not replaced by it; what it replaces is stored
                d = decide(fact, sorted(stored_near, key=lambda fc: -fc[1]), changed, adds, attributes.of)
            if d.action == "merge" and any(o.id == d.target and says_again_what_changed(fact, o, changed)
                                           for o, _ in similar):
                stale.add(d.target)
            if d.action != "merge":
                pool.append((fact_of(f"new:{len(pool)}", inp.text, inp.subject, inp.predicate, inp.object), vec))
            if d.target and d.target.startswith("new:"):
                if d.action == "merge":
                    continue  # says again what this window already said
                d = Decision("add")
            plan.append((inp, d))
        restated = {d.target for _, d in plan if d.action == "merge"} - stale  # the window says it again: it stands
        plan = [(inp, Decision("add") if d.action == "supersede" and d.target in restated
                 # a candidate that repeats a memory whose value its turn replaces says what holds now
                 else Decision("supersede", d.target, "restated with the value that replaced it")
                 if d.action == "merge" and d.target in stale else d) for inp, d in plan]

        plan = self._judged(namespace, plan, verdicts, out, users)
        plan += self._carry_named(namespace, plan, inputs, replaces, stored)
        fresh = [inp for inp, d in plan if d.action != "merge"]
        if fresh:
            nodes, new_vecs, out.edges = self.builder.memories(namespace, fresh, now)
            for node, vec in zip(nodes, new_vecs):
                out.add(node, vec)
        new_records = iter([n for n in out.nodes if isinstance(n, MemoryRecord)])
        olds = {r.id: r for r in store.get(namespace, [d.target for _, d in plan if d.target])
                if isinstance(r, MemoryRecord)}
        produced: list[str] = []
        replaced: list[tuple[MemoryRecord, MemoryRecord]] = []
        for inp, d in plan:
            if d.action == "merge":
                old = olds[d.target]
                merged = merge_candidate(old, inp, now)
                olds[old.id] = merged
                out.add(merged, embedder.embed([merged.text])[0] if merged.text != old.text else None)
                out.edges += [Edge(namespace=namespace, source=merged.id, type=EdgeType.DERIVED_FROM, target=m)
                              for m in inp.source_message_ids if m not in old.source_message_ids]
                produced.append(merged.id)
                out.report["merged"].append({"into": merged.text, "why": d.reason})
                continue
            rec = next(new_records)
            produced.append(rec.id)
            out.report["added"].append(rec.text)
            old = olds.get(d.target or "")
            if d.action == "supersede" and old is not None and old.status is Status.active:
                retired, ended = self.builder.retire(namespace, old, rec, d.reason, now)
                olds[old.id] = retired
                out.add(retired, None)
                out.edges += ended
                replaced.append((old, rec))
                out.report["superseded"].append({"old": old.text, "new": rec.text, "why": d.reason})

        # a reply that stopped after its memories has no episode sentence: the memories say what the
        # window brought (not the reasoning line, which in 17 of 132 such replies of the labelled
        # set copied the prompt's example, "... teaches a workflow and states a fact"); one with
        # neither is what the user said, never only how many messages there were
        summary = extraction.episode or "; ".join(m.text for m in admitted[:3]) or _what_was_said(msgs)
        episode, ep_edges = self.builder.episode(namespace, summary, session.id, msgs, list(dict.fromkeys(produced)),
                                                 max([m.importance for m in admitted], default=0.3),
                                                 SOURCE_CONFIDENCE[Source.inferred])  # the model's reading of the window
        for i, n in enumerate(out.nodes):
            if isinstance(n, MemoryRecord) and n.id in produced and n.episode_id is None:
                out.nodes[i] = n.model_copy(update={"episode_id": episode.id})
        out.add(episode, embedder.embed([episode.summary])[0])
        out.edges += ep_edges
        named = {e.target for e in out.edges if e.type is EdgeType.MENTIONS and e.source in produced}
        kept = [i for i in produced if i in olds]  # merged into a stored memory: what it names is already linked
        if kept:
            named |= {e.target for e in store.edges(namespace, kept, types=[EdgeType.MENTIONS])}
        out.edges += [Edge(namespace=namespace, source=episode.id, type=EdgeType.MENTIONS, target=t, key="mention",
                           props={"role": "mention"}) for t in sorted(named)]  # what its memories name

        for proc in procedures:  # a new version, or the stored one seen again; taught by this episode
            taught_now, change, _ = self.chains.procedure(namespace, proc.task, proc.steps, now)
            out.extend(change)
            out.edges.append(Edge(namespace=namespace, source=episode.id, type=EdgeType.PRODUCED, target=taught_now.id))

        for m in msgs:  # the window is represented by its memories and episode now
            out.add(Message.model_validate({**m.model_dump(), "status": Status.archived, "updated_at": now}), None)

        for old, new in replaced:  # the turns and episode that stated the old value say so now
            at = {n.id: i for i, n in enumerate(out.nodes)}
            for node in self.builder.mark_derived(namespace, old, new, now, {i: out.nodes[j] for i, j in at.items()},
                                                  inferred=True):
                if node.id in at:
                    out.nodes[at[node.id]] = node
                else:
                    out.add(node, None)

        summaries = [e.summary for e in reversed(store.query(namespace, "episode", session_id=session.id,
                                                             limit=SUMMARY_EPISODES - 1))] + [episode.summary]
        out.summary = " ".join(summaries)[-4000:]
        return out

    def _carry_over(self, namespace: str, inputs: list[MemoryIn], facts: list[Fact], retold: list[bool],
                    turns: list[list[Message]], replaces: list[frozenset[str]], stored: list[list[tuple[Fact, float]]]
                    ) -> list[tuple[MemoryIn, np.ndarray, Decision]]:
        """The successors of stored memories a change turn swaps one value in (``carried_over``):
        the old text with the new value, its other words kept, superseding the old memory. A
        candidate that retells what its turn left (``retold``: "Sofia lives in Ruzafa" from "We gave
        up the Ruzafa flat") moves nothing."""
        pairs = [(i, old) for i, near in enumerate(stored) if replaces[i] and not retold[i]
                 for old, cos in near if cos >= SPECIFIC_TOPIC_COS]
        if not pairs:
            return []
        texts = list(dict.fromkeys([inputs[i].text for i, _ in pairs] + [old.text for _, old in pairs]))
        places = {text: [t.name for t in tags if t.type == "place"]
                  for text, tags in zip(texts, self.parts.tagger.tag_many(texts))}
        said = {i: (kept_terms(turns[i]), left_said(turns[i]), left_terms(turns[i])) for i, _ in pairs}  # per candidate
        out: list[tuple[MemoryIn, Decision]] = []
        done: set[str] = set()
        for i, old in pairs:
            inp = inputs[i]
            if old.id in done:
                continue
            fact, (kept, left, origins) = facts[i], said[i]
            swap = carried_over(fact, old, replaces[i], kept, places[inp.text], places[old.text], origins)
            if swap is not None:
                done.add(old.id)
                out.append(self._successor(namespace, old.id, swap, inp))
            elif (rest := without_clause(fact, old, replaces[i], left)) is not None:
                done.add(old.id)
                out.append(self._rest_of(namespace, old.id, *rest, inp))
        vecs = self.parts.embedder.embed([inp.text for inp, _ in out]) if out else []
        return [(inp, vec, d) for (inp, d), vec in zip(out, vecs)]

    def _judged(self, namespace: str, plan: list[tuple[MemoryIn, Decision]], verdicts: Sequence[Verdict],
                out: Folded, users: list[Message]) -> list[tuple[MemoryIn, Decision]]:
        """The plan with the stored memory the model most likely reads the window as ending
        retired, where the rules left it standing and the model's reading singles it out (``ends``):
        superseded by the window's new memory of the same person closest to it by meaning (at
        ``SPECIFIC_TOPIC_COS`` or more), or, where the model named one clause of several, by the
        rest of it. A candidate that only says the ended memory again (the model copied it: "Ravi
        drives a Ford Fiesta" from "I got rid of the Fiesta") is dropped, not merged into it."""
        best = ends(verdicts)
        if best is None or any(d.action == "supersede" and d.target == best.memory_id for _, d in plan):
            return plan
        found = self.parts.store.get(namespace, [best.memory_id])
        old = found[0] if found and isinstance(found[0], MemoryRecord) and found[0].status is Status.active else None
        if old is None:
            return plan
        # a candidate merged into it that says more than it did is what the window says now
        # ("林晓养旺财，家里没有狗了"); one that says nothing more is the model copying it
        said = terms_of(" ".join(t.content for t in users))
        merged = [d.action == "merge" and d.target == old.id for _, d in plan]
        copies = [k for k, (inp, d) in enumerate(plan) if merged[k] and not set(keywords(inp.text)) - set(keywords(old.text))
                  or (merged[k] or d.action == "add") and _in_other_words(inp, old, said)]
        fresh = [k for k, (inp, d) in enumerate(plan) if k not in copies and same_subject(inp.subject, old.subject)
                 and (d.action == "add" or d.action == "merge" and d.target == old.id)]
        if not fresh:
            return _dropped(plan, copies, out)  # without a successor a copy is still no news
        vecs = self.parts.embedder.embed([best.note, *(plan[k][0].text for k in fresh)])
        cos = vecs[1:] @ vecs[0]
        k = fresh[int(np.argmax(cos))]
        why = f"the model reads the window as ending it (p={best.p:.2f})"
        if best.clause is not None:
            rest = rest_without(old, best.clause)
            successor = [self._rest_of(namespace, old.id, *rest, plan[k][0], why)] if rest else []
        elif float(cos.max()) >= SPECIFIC_TOPIC_COS:
            successor, plan = [], [*plan[:k], (plan[k][0], Decision("supersede", old.id, why)), *plan[k + 1:]]
        else:
            return _dropped(plan, copies, out)
        return [(inp, Decision("add") if d.action == "merge" and d.target == old.id else d)
                for inp, d in _dropped(plan, copies, out)] + successor

    def _carry_named(self, namespace: str, plan: list[tuple[MemoryIn, Decision]], inputs: list[MemoryIn],
                     replaces: list[frozenset[str]], stored: list[list[tuple[Fact, float]]]) -> list[tuple[MemoryIn, Decision]]:
        """Successors of the stored memories that name, in passing, a value this window replaced
        in an attribute held one at a time (``named_swap``)."""
        index = {id(inp): i for i, inp in enumerate(inputs)}
        taken = {d.target for _, d in plan if d.target}
        facts = {f.id: f for near in stored for f, _ in near}
        out: list[tuple[MemoryIn, Decision]] = []
        for inp, d in plan:
            i = index.get(id(inp))
            if i is None or d.action != "supersede" or d.target not in facts:
                continue
            fact = fact_of("", inp.text, inp.subject, inp.predicate, inp.object)
            for other, _ in stored[i]:
                swap = None if other.id in taken else named_swap(fact, facts[d.target], other, replaces[i])
                if swap:
                    taken.add(other.id)
                    out.append(self._successor(namespace, other.id, swap, inp))
        return out

    def _successor(self, namespace: str, old_id: str, swap: tuple[str, str], inp: MemoryIn) -> tuple[MemoryIn, Decision]:
        """The stored memory ``old_id`` with one value swapped, superseding it."""
        (rec,) = self.parts.store.get(namespace, [old_id])
        was, now = swap
        return _carried(rec, inp, text=_swapped(rec.text, was, now),
                        object=_swapped(rec.object, was, now) if rec.object else None,
                        importance=max(rec.importance, inp.importance)), \
            Decision("supersede", rec.id, f"the window changes {was} to {now}; the rest of the memory holds", swap)

    def _rest_of(self, namespace: str, old_id: str, text: str, holds_object: bool, inp: MemoryIn,
                 why: str = "") -> tuple[MemoryIn, Decision]:
        """The stored memory ``old_id`` without the clause the window says is over (``without_clause``),
        superseding it; its triple is kept only where its object is still in the text."""
        (rec,) = self.parts.store.get(namespace, [old_id])
        kept = {} if holds_object else {"predicate": None, "object": None}
        return _carried(rec, inp, text=text, **kept), \
            Decision("supersede", rec.id, why or f"the window says part of it is over: {inp.text}")

    def _similar(self, namespace: str, vec: np.ndarray) -> list[tuple[Fact, float]]:
        store = self.parts.store
        hits = store.vector_search(namespace, "memory", vec, SIMILAR_FOR_RULES, [Status.active])
        recs = {r.id: r for r in store.get(namespace, [i for i, _ in hits])}
        return [(fact_of(r.id, r.text, r.subject, r.predicate, r.object), cos) for i, cos in hits if (r := recs.get(i))]


def _carried(rec: MemoryRecord, inp: MemoryIn, **changed: Any) -> MemoryIn:
    """A stored memory carried over by the window's candidate ``inp``: its fields, ``changed``
    where given, cited by both their turns, valid from the candidate's time."""
    return MemoryIn(**{"category": rec.category, "subject": rec.subject, "predicate": rec.predicate, "object": rec.object,
                       "importance": rec.importance, "source": rec.source, "valid_at": inp.valid_at,
                       "source_message_ids": list(dict.fromkeys([*inp.source_message_ids, *rec.source_message_ids])),
                       **changed})


def _only_news(inp: MemoryIn, inputs: list[MemoryIn]) -> bool:
    """A candidate that says its value is over ("Felix and I have separated") where the window
    has nothing else to say of its subject: it is what the window says now, not a retelling of
    the old value beside the new one ("Kenji leaves Riverside" beside "Kenji teaches at Hillcrest")."""
    return says_it_left(inp.text) and not any(
        other is not inp and same_subject(other.subject, inp.subject) and not says_it_left(other.text) for other in inputs)


def _swapped_out(inp: MemoryIn, carried: list[tuple[MemoryIn, np.ndarray, Decision]]) -> bool:
    """A candidate whose value still names what this window swaps out of a stored memory ("Nadia
    keeps her job at Boots | works_at Boots store in Bristol" beside the move to Cardiff that
    carries "... a Boots store in Bristol" over): the model copied the old value."""
    value = (inp.object or "").casefold()
    return any(d.swap and d.swap[0].casefold() in value and d.swap[1].casefold() not in value for _, _, d in carried)


def _swapped(text: str, was: str, now: str) -> str:
    """``text`` with its first ``was`` (any case) written as ``now``, an English article before
    it agreeing ("a vet at an animal clinic" -> "a vet at a zoo")."""
    def put(m: re.Match[str]) -> str:
        article = m.group(1) or ""
        if article and now[:1].isascii() and now[:1].isalpha():
            agrees = "an " if now[:1].lower() in "aeiou" else "a "
            article = agrees.capitalize() if article[0].isupper() else agrees
        return article + now
    return re.sub(rf"(\b[Aa]n? )?{re.escape(was)}", put, text, count=1, flags=re.IGNORECASE)


def _memory_input(m: ExtractedMemory, turns: list[Message], named: dict[str, EntityIn], ties: list[Tie]) -> MemoryIn:
    """An extracted memory as a write input: its entities as the window names them (each with
    its evidence: NER, the model, a speaker), the relations it states between people as edges
    ("Li Na's manager is Zhou Min": Li Na -manager-> Zhou Min), its provenance the turns it
    comes from, valid from the past time it states ("since last month", "三个月前") or else from
    when it was said."""
    ends = {normalise_name(n) for n in (m.subject, m.object) if n}
    text = m.text.casefold()
    entities = [named.get(normalise_name(n)) or ModelIn(name=n) for n in (m.subject, m.object) if n]
    entities += [e for norm, e in named.items() if norm and norm not in ends and norm in text]
    unique: dict[str, EntityIn] = {}
    for e in entities:
        unique.setdefault(normalise_name(e.name), e)
    said_at = turns[-1].created_at
    # "moved to Oslo last month": true since then; a plan ("flies to Nairobi in December") from now
    span = None if m.kind == "plan" or _FUTURE.search(m.text) else time_span(m.text, said_at)
    return MemoryIn(
        text=spaced(m.text), category=m.kind, subject=m.subject, predicate=m.predicate, object=m.object,
        importance=m.importance, source=m.source, entities=list(unique.values()),
        relations=[RelationIn(source=t.owner, predicate=t.relation, target=t.target) for t in ties
                   if not (t.owner, t.target) == (m.subject, m.object) or relation_of(m.predicate or "") != t.relation],
        source_message_ids=[x.id for x in turns], valid_at=span[0] if span and span[1] <= said_at else said_at,
    )


def _relations_as_said(msgs: list[Message], admitted: list[tuple[ExtractedMemory, list[Message]]],
                       names: list[str], report: dict) -> list[tuple[ExtractedMemory, list[Message]]]:
    """Relations between people as the turns state them. The model misreads "My brother is Femi
    Okafor" said by Ada Okafor as "Ada Okafor is Femi Okafor's brother" or "Leo Okafor is Femi
    Okafor's uncle", and 我的姐姐是李娜 as (王磊, has_brother, 李娜): a memory whose relation its own
    turns state otherwise is dropped, one that states it keeps the relation as its predicate, and a
    relation a turn states that no memory of the window does becomes a memory of its own
    (``relation_memory``), in the turn's words."""
    said = {x.id: stated_ties(x.content, x.speaker, names) for x in msgs if x.role != "assistant"}
    kept: list[tuple[ExtractedMemory, list[Message]]] = []
    held: list[Tie] = []  # the relations the kept memories state
    written = written_as(" ".join(x.content for x in msgs), names)  # "周敏 (Zhou Min)": one person
    number = {x.id: i for i, x in enumerate(msgs, 1)}
    for m, turns in admitted:
        stated = [tie for x in turns for tie, _ in said.get(x.id, ())]
        mine = [written(t) for t in ties(m.text, names, m.subject) or _triple_tie(m)]
        if stated and mine and not any(agrees(t, s) for t in mine for s in stated):
            report["dropped"].append({"text": m.text, "why": "states a relation its turn states otherwise: "
                                      + "; ".join(x.content for x in turns if x.id in said)})
            continue
        if _FIRST_PERSON.search(m.text):  # "Lucy Park is my colleague" for Priya's "My colleague is Lucy Park."
            told = next(((tie, word, number[x.id]) for x in turns for tie, word in said.get(x.id, ())
                         if any(agrees(t, tie) for t in mine)), None)
            said_only = told is not None and not set(keywords(m.text)) - set(keywords(" ".join(
                (told[0].owner, told[0].target, told[1], told[0].relation, *names))))
            if said_only:  # nothing but the relation: the turn's words ("and I share a flat" stays)
                m = relation_memory(told[0], told[1], told[2]).model_copy(update={"importance": m.importance})
        same = next((s for s in stated if (m.subject, m.object) == (s.owner, s.target)), None)
        # "Lena's boss Tom Keller prefers email" goes on about him (``about_whom``): its predicate is his
        if same is not None and mine and not any(t.on_target for t in mine) and _misnamed(m.predicate, same.relation):
            m = m.model_copy(update={"predicate": same.relation})
        kept.append((m, turns))
        held += mine
    for i, x in enumerate(msgs, 1):
        for tie, word in said.get(x.id, ()):
            if not any(agrees(t, tie) for t in held):
                kept.append((relation_memory(tie, word, i), [x]))
                held.append(tie)
    return kept


_FIRST_PERSON = re.compile(r"\b(?:my|I|me)\b|我", re.IGNORECASE)  # a turn's words copied: whose "my" is unclear


def _misnamed(predicate: str | None, relation: str) -> bool:
    """Whether a triple's predicate names a relation other than the one its turn states (has_brother
    for 姐姐) or none at all (works_at for 上司); a predicate for any tie between people
    ("relationship", "partner" for a boyfriend) is the model's and stays: supersession reads it."""
    named = relation_named(predicate)
    return named != relation if named else not relational(predicate)


def _triple_tie(m: ExtractedMemory) -> list[Tie]:
    """The relation a memory's triple states between two people, where its text states none
    ("Tom Hale is now Rosa Diaz's mentor": Tom Hale, mentor, Rosa Diaz)."""
    relation = relation_named(m.predicate)
    return [Tie(m.subject, relation, m.object)] if relation and m.subject and m.object else []



def _in_other_words(inp: MemoryIn, old: MemoryRecord, said: frozenset[str]) -> bool:
    """The candidate states the stored memory's subject, predicate and object again, and none of
    its own words comes from the user's turns: "韦娜 lives with 小周" after "小周搬走了" (resides_with
    小周) is a copy in other words; "林晓养旺财，家里没有狗了" (pets 旺财) says what the turn said."""
    return same_triple(inp, old) and not any(names_most({k}, said) for k in set(keywords(inp.text)) - set(keywords(old.text)))


def _dropped(plan: list[tuple[MemoryIn, Decision]], ks: list[int], out: Folded) -> list[tuple[MemoryIn, Decision]]:
    """The plan without the candidates at ``ks``, each reported as saying again what the window ends."""
    out.report["dropped"] += [{"text": plan[k][0].text, "why": "says again what the window ends"} for k in ks]
    return [step for k, step in enumerate(plan) if k not in ks]


EPISODE_CHARS = 200


def _what_was_said(msgs: list[Message]) -> str:
    """An episode's summary when the model gave none and stored nothing: the user's turns, as
    said ("陆远: 我在杭州工作，住在西湖区 ..."), up to ``EPISODE_CHARS``."""
    said = " / ".join(f"{m.speaker or m.role}: {' '.join(m.content.split())}" for m in msgs if m.role != "assistant")
    said = said or " / ".join(" ".join(m.content.split()) for m in msgs)
    return said if len(said) <= EPISODE_CHARS else said[:EPISODE_CHARS].rstrip() + " ..."
