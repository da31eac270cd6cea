"""Greedy decoding that checks the grammar on the best token first chooses what llama.cpp's own
grammar + greedy chain chooses: the real grammar engine over the real Qwen2.5 vocabulary
(vocab-only load), step by step on the same scores."""

from __future__ import annotations

import ctypes
import json

import llama_cpp
import numpy as np
import pytest

from graphmem.extract import default_model_path
from graphmem.extract.model import load_llama
from graphmem.extract.sampling import (GrammarFirstGreedy, LookupDrafter, RepeatGuard, drafts_pay,
                                       grammar_first_llama_class)
from graphmem.extract.schema import complete_fields, parse_wire, wire_schema
from graphmem.settings import Settings


@pytest.fixture(scope="module")
def vocab_model():
    return load_llama(model_path=str(default_model_path(Settings().cache_dir / "models")), vocab_only=True,
                      verbose=False)


class Reference:
    """llama-cpp-python's chain as it samples an extraction call: grammar over the whole vocabulary, then greedy."""

    def __init__(self, llm, grammar):
        import llama_cpp
        from llama_cpp._internals import LlamaSampler

        self.lib, self.chain = llama_cpp, LlamaSampler()
        self.chain.add_grammar(llm._model, grammar)
        self.chain.add_greedy()
        self.data = (llama_cpp.llama_token_data * llm.n_vocab())()
        self.view = np.frombuffer(self.data, dtype=[("id", np.int32), ("logit", np.float32), ("p", np.float32)])

    def scored(self, logits):
        self.view["id"], self.view["logit"], self.view["p"] = np.arange(len(logits)), logits, 0
        arr = self.lib.llama_token_data_array(data=self.data, size=len(logits), selected=-1, sorted=False)
        self.lib.llama_sampler_apply(self.chain.sampler, ctypes.byref(arr))
        return int(self.data[arr.selected].id), np.isfinite(self.view["logit"])

    def accept(self, token):
        self.chain.accept(token)


@pytest.mark.parametrize("procedures", [True, False])
def test_grammar_first_greedy_chooses_what_the_whole_vocabulary_check_chooses(vocab_model, procedures):
    from llama_cpp import LlamaGrammar

    grammar = LlamaGrammar.from_json_schema(json.dumps(wire_schema(procedures=procedures)), verbose=False)
    n = vocab_model.n_vocab()
    ours = GrammarFirstGreedy(vocab_model._model.vocab, grammar._grammar, grammar._root, n)
    ref = Reference(vocab_model, grammar)
    rng = np.random.default_rng(7)
    chosen = []
    for _ in range(60):
        logits = rng.normal(size=n).astype(np.float32)
        _, allowed = ref.scored(logits)
        if rng.random() < 0.75:  # a model that follows the grammar: its best token is allowed
            logits[rng.choice(np.flatnonzero(allowed))] = 50.0
        expected, _ = ref.scored(logits)
        token = ours.choose(logits)
        assert token == expected
        ref.accept(token)
        chosen.append(token)
        if llama_cpp.llama_vocab_is_eog(vocab_model._model.vocab, token):
            break
    assert 0 < ours.full_checks < ours.steps  # both paths were taken
    assert len(set(chosen)) > 10


def test_only_plain_greedy_grammar_calls_take_the_grammar_first_path(vocab_model):
    from llama_cpp import LlamaGrammar

    assert isinstance(vocab_model, grammar_first_llama_class())
    grammar = LlamaGrammar.from_json_schema(json.dumps(wire_schema(procedures=True)), verbose=False)
    assert isinstance(vocab_model._init_sampler(temp=0.0, grammar=grammar), GrammarFirstGreedy)
    for other in ({"temp": 0.8, "grammar": grammar}, {"temp": 0.0, "grammar": grammar, "repeat_penalty": 1.1},
                  {"temp": 0.0, "grammar": None}):
        assert not isinstance(vocab_model._init_sampler(**other), GrammarFirstGreedy)


def test_a_string_of_the_reply_never_holds_a_raw_control_character(vocab_model):
    """JSON forbids raw control characters in strings and ``json.loads`` refuses them; the
    grammar llama-cpp-python builds from a schema allows them (a reasoning line went on into a
    newline and a code fence, and its window failed twice). The grammar the extraction calls use
    refuses them, and still takes an escaped newline and any other character."""
    from llama_cpp import LlamaGrammar

    grammar = LlamaGrammar.from_json_schema(json.dumps(wire_schema(procedures=False)), verbose=False)
    tokens = vocab_model.tokenize('{"r":"张曼婷分享了她的感受。'.encode(), add_bos=False, special=False)
    newline, tab, escaped = (vocab_model.tokenize(t.encode(), add_bos=False, special=False)[0] for t in ("\n", "\t", "\\n"))
    loose = GrammarFirstGreedy(vocab_model._model.vocab, grammar._grammar, grammar._root, vocab_model.n_vocab())
    used = vocab_model._init_sampler(temp=0.0, grammar=grammar)  # what an extraction call samples with
    for sampler, json_only in ((loose, False), (used, True)):
        for token in tokens:
            assert sampler.allowed(token)
            sampler._lib.llama_sampler_accept(sampler._grammar, token)
        assert sampler.allowed(newline) is sampler.allowed(tab) is (not json_only)
        assert sampler.allowed(escaped) and sampler.allowed(tokens[-1])


def test_the_repeat_guard_refuses_only_to_continue_a_list_after_a_repeated_item():
    memories = RepeatGuard()
    assert memories.feed(b'{"r":"a, b","m":[{"t":"A","k":"fact","n":[1]},{"t":"B","n":[1,1]},{"t":"A","n":[3')
    assert not memories.fits(b']},{"') and memories.fits(b']}')  # closing the repeated item alone is fine
    assert memories.fits(b']}]') and memories.fits(b']}],"') and memories.fits(b',')  # a second turn is no repeat
    assert not RepeatGuard().feed(b'{"m":[{"t":"A"},{"t":"A"},{"t":"C"}]}')  # continued after the repeat
    steps = RepeatGuard()
    assert steps.feed(b'{"pr":[{"task":"x","steps":["a","b","a')
    assert not steps.fits(b'","') and steps.fits(b'"') and steps.fits(b'"]') and steps.fits(b'b","')
    # keys, numbers, values of other members and escaped quotes are not items of a list
    assert RepeatGuard().feed(b'{"e":[{"n":"A","y":"p"},{"n":"B","y":"p"}],"ep":"A","x":[3,3,"A\\"","A"]}')
    assert not RepeatGuard().feed(b'{"x":["A\\"","A\\"",1]}')
    running = RepeatGuard()  # a string may not go on in a loop: it ends, or the run is broken
    assert running.feed('{"r":"赵敏不骑车了，改坐地铁，不再骑车了，不再骑车了，'.encode())
    assert not running.fits('不再骑车了，'.encode()) and running.fits('不再'.encode())
    assert running.fits(b'"') and running.fits('。","'.encode())
    assert RepeatGuard().feed('{"r":"哈哈哈哈哈, very very very well"}'.encode())  # short runs are text
    # a loop that swaps one character now and then breaks every run, but not the loop: once its
    # last 24 bytes were written three times, the string must end
    varied = RepeatGuard()
    assert varied.feed('{"r":"王锋分享职业方向，王锋表达孤独感和寻求支持，王锋分享职业方向，王峰表达孤独感和寻求支持，'.encode())
    assert varied.fits('王锋分享职业方向，王锋表达孤独感和寻求'.encode())  # the third time, not yet written
    varied.feed('王锋分享职业方向，王锋表达孤独感和寻求支持，'.encode())
    assert not varied.fits('王'.encode()) and not varied.fits(b"\\n") and varied.fits(b'"') and varied.fits(b'","')
    assert RepeatGuard().feed('{"ep":"Ann met Bo at the station, then Bo met Cy at the station, and Cy met Di there"}'.encode())
    # a list of lists: each item is named by its first value, and its values may repeat each other
    lists = RepeatGuard()
    assert lists.feed(b'{"m":[["A","fact","A","is","A",3,"u",[1,1]],["B","fact","A","is","B",3,"u",[2]],["A","x"')
    assert not lists.fits(b',"y",3,"u",[3]],[') and lists.fits(b',"y",3,"u",[3]]]')
    assert RepeatGuard().feed(b'{"e":[["thing","thing"],["A","person"],["B","person"]],"m":[[3,"a"],[3,"b"]]}')
    assert not RepeatGuard().feed(b'{"e":[["A","person"],["A","org"],["B","person"]]}')


def test_a_looping_model_ends_its_list_after_the_first_repeat(vocab_model):
    """A model that writes the same memory again and again (as the 1.5B model did on a Chinese
    MemoryBank window until the token limit, twice) is stopped after the first repeat: the list
    is closed there, by the best allowed token that closes it, and the reply stays valid."""
    from llama_cpp import LlamaGrammar

    memory = '{{"t":"{t}","k":"preference","s":"张曼婷","p":"likes","o":"{o}","i":3,"c":"u","n":[{n}]}}'
    films = ["《出租车司机》", "《流浪地球》", "科幻电影"] + ["《出租车司机》"] * 6
    looping = ('{"r":"张曼婷分享了她喜欢的电影。","m":['
               + ",".join(memory.format(t=f"张曼婷喜欢{o}", o=o, n=n) for n, o in enumerate(films, 1)) + "]")
    script = vocab_model.tokenize(looping.encode(), add_bos=False, special=False)
    grammar = LlamaGrammar.from_json_schema(json.dumps(wire_schema(procedures=True)), verbose=False)
    ours = GrammarFirstGreedy(vocab_model._model.vocab, grammar._grammar, grammar._root, vocab_model.n_vocab(), guard=True)
    rng = np.random.default_rng(3)
    written = []
    for token in script:
        logits = rng.normal(size=vocab_model.n_vocab()).astype(np.float32)
        logits[token] = 50.0  # the model's clear choice: the looping reply
        written.append(ours.choose(logits))
        if written[-1] != token:
            break
    text = vocab_model.detokenize(written).decode()
    memories = complete_fields(text)["m"]  # the list closed with the chosen token
    assert [m["o"] for m in memories] == films[:4] and ours.guard.overrides == 1
    assert sorted(m.object for m in parse_wire({"ep": "", "m": memories}).memories) == sorted(films[:3])  # repeat dropped


def test_lookup_drafter_continues_the_latest_earlier_occurrence_and_adapts_its_length():
    d = LookupDrafter([1, 2, 3, 4, 5, 9, 1, 2, 3, 7, 8], most=6)
    d.extend([1, 2, 3])
    assert d.draft() == [7, 8, 1, 2]  # after the latest earlier 1 2 3 (4 tokens at first)
    d.taken(4, 4)
    d.extend([7, 8, 1, 2, 3])
    assert d.size == 6 and d.draft() == [7, 8, 1, 2, 3]  # grown by two after a whole draft was taken
    d.taken(6, 6)
    assert d.size == 6  # never above most
    d.taken(6, 1)
    assert d.size == 1  # cut to what was taken
    d.extend([42, 43])
    assert d.draft() == []  # never seen: nothing drafted


COPY = ('{"r":"Tom gives his job and a move.","m":[{"t":"Tom Berg is a nurse at Ullevaal hospital","k":"fact","s":"Tom",'
        '"p":"works_at","o":"Ullevaal hospital","i":4,"c":"u","n":[1]},{"t":"Tom lives in Oslo","k":"fact","s":"Tom",'
        '"p":"lives_in","o":"Oslo","i":3,"c":"u","n":[1]}],"e":[{"n":"Tom Berg","y":"person"}],'
        '"ep":"Tom introduced himself.","pr":[]}')


def test_drafted_decoding_writes_what_one_token_a_pass_writes_and_keeps_the_cache_true():
    """The real model copies a reply it is shown (a confident choice at every step, so batched and
    single-token arithmetic agree): drafts are taken and refused along the way, the text is the
    same as with one token a pass, and the cache holds exactly the prompt and the reply."""
    from llama_cpp import LlamaGrammar

    llm = load_llama(model_path=str(default_model_path(Settings().cache_dir / "models")), n_ctx=2048, verbose=False)
    grammar = LlamaGrammar.from_json_schema(json.dumps(wire_schema(procedures=True)), verbose=False)
    prompt = llm.tokenize(f"Copy this JSON exactly, then stop.\n{COPY}\nJSON:".encode())
    texts, drafters = {}, {}
    decode, sizes = llm._decode_all, []
    llm._decode_all = lambda batch: (sizes.append(len(batch)), decode(batch))[1]
    for most in (0, 12, None):  # None: drafts if a timed pass shows they pay here; the timing leaves the cache true
        llm.draft_tokens, llm.last_drafter = most, None
        out, threads, sizes[:] = [], set(), []
        for token in llm.generate(prompt, temp=0.0, grammar=grammar):
            threads.add(llama_cpp.llama_n_threads_batch(llm._ctx.ctx))
            if llama_cpp.llama_vocab_is_eog(llm._model.vocab, token) or len(out) == 400:
                break
            out.append(token)
        # drafted passes run on the generation threads; the prompt's batch threads come back after
        drafted = most if most is not None else llm.drafts_pay
        assert threads == {llm.n_threads if drafted else llm.n_threads_batch}
        assert llama_cpp.llama_n_threads_batch(llm._ctx.ctx) == llm.n_threads_batch
        texts[most], drafters[most] = llm.detokenize(out).decode(), llm.last_drafter
        cached = [int(t) for t in llm.input_ids[: llm.n_tokens]]
        assert cached == (prompt + out)[: len(cached)] and len(cached) >= len(prompt) + len(out) - 1
    assert json.loads(texts[12]) == json.loads(COPY) and texts[12] == texts[0] == texts[None]
    assert isinstance(llm.drafts_pay, bool) and (drafters[None] is not None) == llm.drafts_pay
    assert sizes[:6] == [1, 4] * 3  # timed in turn: a burst of load weighs on both sizes alike
    d = drafters[12]
    assert d.passes < len(out) / 2 and 0 < d.taken_in_all < d.drafted  # fewer passes; drafts taken and refused


def test_drafts_pay_where_a_pass_is_mostly_reading_the_weights():
    assert drafts_pay(150, 200)  # a batch of 8 at about 2.8 single steps, where drafts were first measured
    assert not drafts_pay(61, 211)  # a fast memory bus on one thread: each token's arithmetic dominates
    assert drafts_pay(60, 55)  # timing noise that says a batch is free: drafts
    assert drafts_pay(18, 48) and not drafts_pay(16, 46)  # a / b = 0.8 and 0.6 about the break-even, 0.70
