"""Procedural and reasoning memory on every backend: procedures as step chains with versions and
outcomes, agent traces with gap-free steps and tool calls, what successful and failed runs
teach, and the one-time migration of procedures stored as a list."""

from __future__ import annotations

import io
import shutil
import threading
from pathlib import Path

import pytest

from graphmem import Memory
from graphmem.errors import NotFoundError, ValidationError
from graphmem.models import EdgeType, Procedure, Status

from .conftest import reopen_memory

RELEASE = ["bump the version number", "run the full test suite with `pytest`", "run the database migrations",
           "tag the commit", "publish the build to the app store"]
LEGACY = Path(__file__).parent / "data" / "stores" / "procedures-bd98e00.db"  # written by graphmem at bd98e00


def edges(mem: Memory, ids, kind: EdgeType, direction: str = "out"):
    return mem.store.edges("default", list(ids), types=[kind], direction=direction)


def test_a_procedure_is_a_chain_of_steps_found_by_any_step(gmem):
    proc = gmem.add_procedure("release the app", RELEASE)
    steps = gmem.procedure_steps(proc.id)
    assert [s.order for s in steps] == [1, 2, 3, 4, 5] and [s.text for s in steps] == RELEASE
    assert [s.id for s in proc.steps] == [s.id for s in steps]
    (first,) = edges(gmem, [proc.id], EdgeType.FIRST_STEP)
    assert first.target == steps[0].id
    chain = {e.source: e.target for e in edges(gmem, [s.id for s in steps], EdgeType.NEXT)}
    assert chain == {a.id: b.id for a, b in zip(steps, steps[1:])}
    assert sorted(e.props["order"] for e in edges(gmem, [proc.id], EdgeType.HAS_STEP)) == [1, 2, 3, 4, 5]
    named = gmem.store.get("default", [e.target for e in edges(gmem, [steps[1].id], EdgeType.MENTIONS)])
    assert any(e.name == "pytest" and e.type == "tool" for e in named)  # a `code` span names a tool
    assert gmem.store.vectors("default", [s.id for s in steps]).keys() == {s.id for s in steps}

    hit = gmem.recall("what comes after the migrations?", layers=["procedure"], k=1)[0]
    assert hit.item.id == proc.id and hit.matched_step == 3
    assert gmem.next_step(proc.id, after="the migrations").text == "tag the commit"
    assert gmem.next_step(proc.id, after=1).text == RELEASE[1]
    assert gmem.next_step(proc.id, after=steps[3].id).text == RELEASE[4]
    assert gmem.next_step(proc.id, after=5) is None
    with pytest.raises(ValidationError):
        gmem.next_step(proc.id, after=6)
    with pytest.raises(NotFoundError):
        gmem.next_step(proc.id, after="water the office plants on Friday")


def test_versions_supersede_and_the_same_steps_only_count(gmem):
    old = gmem.add_procedure("release the app", RELEASE)
    again = gmem.add_procedure("Release the app", RELEASE)
    assert again.id == old.id and again.seen_count == 2 and gmem.stats()["step"] == 5
    new = gmem.add_procedure("release the app", ["bump the version number", "run the tests", "build a signed bundle",
                                                 "publish to the store"])
    assert new.id != old.id
    assert gmem.get(old.id).status is Status.superseded
    assert {s.status for s in gmem.procedure_steps(old.id)} == {Status.superseded}
    hist = gmem.history(new.id)
    assert [p.id for p in hist.supersedes] == [old.id] and "other steps" in hist.reasons[new.id]
    found = gmem.recall("how do I release the app?", layers=["procedure"], k=5)
    assert [h.item.id for h in found] == [new.id]  # the old version left recall
    assert "superseded by" in gmem.explain(old.id).rule


def test_context_numbers_steps_and_shortens_visibly(mem):
    long_steps = [f"step {i}: " + "check the deployment dashboard and the error budget carefully " * 3 for i in range(1, 9)]
    proc = mem.add_procedure("roll out the payments service", long_steps)
    whole = mem.context("how do I roll out the payments service?", budget=2000)
    assert all(f"  {i}. step {i}:" in whole.text for i in range(1, 9))
    tight = mem.context("how do I roll out the payments service?", budget=140)
    assert proc.id in [i.item.id for i in tight.items] and tight.tokens <= 140
    lines = tight.text.splitlines()
    assert any(line.startswith("  1. step 1") for line in lines) and any(line.startswith("  8. step 8") for line in lines)
    shown = [int(line.split(".")[0]) for line in lines if line[:3].strip().isdigit()]
    left_out = [line for line in lines if "left out to fit the token budget" in line]
    assert left_out and len(shown) < 8  # steps dropped from the middle, and the block says so
    assert "shortened" in tight.text or len(shown) < 8


def test_traces_record_steps_without_gaps_and_tool_calls(gmem, backend, tmp_path):
    session = gmem.create_session("s1")
    trace = gmem.start_trace("fix the flaky login test", session_id=session.id, metadata={"agent": "coder"})
    assert edges(gmem, [trace.id], EdgeType.IN_SESSION)[0].target == "s1"
    early = gmem.start_trace("plan the day", session_id="not-yet")  # a run may start before the first turn
    assert gmem.get_session("not-yet").message_count == 0 and gmem.list_traces(session_id="not-yet")[0].id == early.id
    gmem.add_messages("not-yet", ["first turn"])  # the turn joins the session the trace made
    assert gmem.get_session("not-yet").message_count == 1
    with pytest.raises(ValidationError, match="taken by a trace"):
        gmem.start_trace("x", session_id=early.id)
    other = reopen_memory(backend, tmp_path)  # a second writer with its own lock: the store keeps the order
    writers = [gmem, other]
    made = []

    def add(i: int) -> None:
        made.append(writers[i % 2].add_step(trace.id, thought=f"thought {i}", action=f"try fix {i}"))

    threads = [threading.Thread(target=add, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    other.close()
    assert sorted(s.order for s in made) == [1, 2, 3, 4, 5, 6]  # no number twice, none skipped
    first = next(s for s in made if s.order == 1)
    gmem.add_tool_call(first.id, "pytest", {"args": ["-k", "login"]}, result="3 failed", status="failure",
                       duration_ms=5400)
    gmem.add_tool_call(first.id, "pytest", {"args": ["-k", "login"]}, result="20 passed", duration_ms=5000)
    gmem.add_tool_call(first.id, "editor", {"file": "tests/test_login.py"}, duration_ms=100)
    with pytest.raises(ValidationError):
        gmem.add_tool_call(first.id, "pytest", status="maybe")
    waiting = [gmem.add_tool_call(first.id, "browser", {"url": u}, status="pending") for u in ("a", "b", "c")]
    assert {s.tool: s for s in gmem.tool_stats()}["browser"].pending == 3
    assert gmem.finish_tool_call(waiting[0].id, status="timeout", duration_ms=30_000).status == "timeout"
    gmem.finish_tool_call(waiting[1].id, status="cancelled")
    with pytest.raises(ValidationError, match="already finished"):
        gmem.finish_tool_call(waiting[1].id, status="success")
    with pytest.raises(ValidationError, match="final status"):
        gmem.finish_tool_call(waiting[2].id, status="pending")
    browser = {s.tool: s for s in gmem.tool_stats()}["browser"]
    assert (browser.timeouts, browser.cancelled, browser.pending, browser.success_rate) == (1, 1, 1, 0.0)
    assert browser.mean_ms == 30_000  # of the finished calls that reported a duration
    view = gmem.get_trace(trace.id)
    assert [s.step.order for s in view.steps] == [1, 2, 3, 4, 5, 6]
    assert sorted(c.tool for c in view.steps[0].tool_calls) == ["browser"] * 3 + ["editor", "pytest", "pytest"]
    chain = {e.source: e.target for e in edges(gmem, [s.step.id for s in view.steps], EdgeType.NEXT)}
    assert chain == {a.step.id: b.step.id for a, b in zip(view.steps, view.steps[1:])}
    stats = {s.tool: s for s in gmem.tool_stats()}
    assert stats["pytest"].calls == 2 and stats["pytest"].success_rate == 0.5 and stats["pytest"].mean_ms == 5200
    assert stats["editor"].p95_ms == 100
    done = gmem.complete_trace(trace.id, outcome="the login test is stable", success=True)
    assert done.success and done.completed_at is not None
    with pytest.raises(ValidationError):
        gmem.add_step(trace.id, action="too late")
    failed = gmem.start_trace("send the weekly newsletter")
    gmem.complete_trace(failed.id, outcome="the mail server refused", success=False)
    assert [t.id for t in gmem.list_traces(session_id="s1")] == [trace.id]
    assert [h.trace.id for h in gmem.similar_traces("the login test keeps failing", k=1)] == [trace.id]
    assert failed.id not in [h.trace.id for h in gmem.similar_traces("newsletter", k=5, success_only=True)]
    assert gmem.recall("flaky login test", layers=["trace"], k=1)[0].item.id == trace.id
    assert all(s.layer != "trace" for s in gmem.recall("flaky login test", k=10))  # off unless asked
    assert "## Past runs" in gmem.context("flaky login test", layers=["memory", "trace"]).text
    gmem.forget(trace.id)
    assert gmem.stats().get("trace_step", 0) == 0 and gmem.stats().get("tool_call", 0) == 0


def _run(mem: Memory, task: str, actions: list[str], success: bool, fail_at: int | None = None):
    trace = mem.start_trace(task)
    for i, action in enumerate(actions, 1):
        step = mem.add_step(trace.id, action=action)
        mem.add_tool_call(step.id, "shell", {"cmd": action}, status="failure" if i == fail_at else "success")
    return mem.complete_trace(trace.id, outcome="done" if success else "gave up", success=success)


def test_successful_runs_become_a_procedure_and_failures_count(gmem):
    steps = ["pull the latest main branch", "run the database migrations", "restart the api workers"]
    first = _run(gmem, "deploy the api", steps, True)
    assert first.procedure_id is None  # one run is not a habit yet
    second = _run(gmem, "deploy the API service", ["pull the latest main branch", "run the database migrations",
                                                   "restart the API workers"], True)
    proc = gmem.get(second.procedure_id)
    assert isinstance(proc, Procedure) and proc.seen_count == 2 and proc.success_count == 2
    assert set(proc.learned_from) == {first.id, second.id}
    assert {e.source for e in edges(gmem, [proc.id], EdgeType.PRODUCED, "in")} == {first.id, second.id}
    assert gmem.get(first.id).procedure_id == proc.id
    third = _run(gmem, "deploy the api", steps, True)
    assert third.procedure_id == proc.id
    proc = gmem.get(proc.id)
    assert (proc.seen_count, proc.success_count) == (3, 3)
    fourth = _run(gmem, "deploy the api", steps, False, fail_at=2)
    assert fourth.procedure_id == proc.id
    assert [s.failure_count for s in gmem.procedure_steps(proc.id)] == [0, 1, 0]
    gmem.record_outcome(proc.id, False, failed_step="migrations")
    gmem.record_outcome(proc.id, True)
    proc = gmem.get(proc.id)
    assert (proc.success_count, proc.failure_count) == (4, 2)
    why = gmem.explain(proc.id)
    assert "4 success(es), 2 failure(s)" in why.details[0] and any("step 2 failed 2 time(s)" in d for d in why.details)
    with pytest.raises(ValidationError):
        gmem.record_outcome(proc.id, True, failed_step=2)
    with pytest.raises(NotFoundError):
        gmem.record_outcome(first.id, True)  # a trace is not a procedure


def test_forget_export_and_import_keep_chains_and_traces_whole(gmem, tmp_path):
    proc = gmem.add_procedure("release the app", RELEASE)
    _run(gmem, "clean the build cache", ["delete the cache folder", "rebuild"], True)
    with pytest.raises(ValidationError):
        gmem.forget(proc.steps[0].id)
    dump = io.StringIO()
    gmem.export(dump)
    with Memory(tmp_path / "copy.db") as copy:
        copy.import_(dump.getvalue().splitlines())
        before, after = gmem.stats(), copy.stats()
        for kind in ("procedure", "step", "trace", "trace_step", "tool_call", "tool", "edges"):
            assert after[kind] == before[kind], kind
        assert copy.next_step(proc.id, after=3).text == "tag the commit"
        (view,) = [copy.get_trace(t.id) for t in copy.list_traces()]
        assert [c.tool for s in view.steps for c in s.tool_calls] == ["shell", "shell"]
    gmem.forget(proc.id)
    assert gmem.stats().get("step", 0) == 0


def _legacy_procedure(mem: Memory, namespace: str = "default") -> Procedure:
    """A procedure as graphmem wrote it before chains: its steps only as a list."""
    proc = Procedure(namespace=namespace, task="brew oolong", steps=[{"text": "heat water to 90C"},
                                                                    {"text": "steep for three minutes"}])
    mem.store.put(namespace, [proc], mem.embedder.embed(["brew oolong: heat water; steep"]))
    mem.store.set_meta("", "procedure_chains", None)  # the marker a store written before chains lacks
    return proc


def test_procedures_stored_as_a_list_migrate_once(gmem, backend, tmp_path):
    proc = _legacy_procedure(gmem)
    with reopen_memory(backend, tmp_path) as again:
        steps = again.procedure_steps(proc.id)
        assert [s.text for s in steps] == ["heat water to 90C", "steep for three minutes"]
        assert again.next_step(proc.id, after="heat the water").order == 2
        assert again.store.get_meta("", "procedure_chains") == "1"


def test_a_store_written_by_the_previous_release_migrates(tmp_path):
    shutil.copy(LEGACY, tmp_path / "old.db")
    with Memory(tmp_path / "old.db") as mem:
        (proc,) = mem.list("procedure", namespace="team-b")
        assert [s.order for s in mem.procedure_steps(proc.id, namespace="team-b")] == [1, 2, 3]
        hit = mem.recall("运行迁移之后做什么？", layers=["procedure"], k=1, namespace="team-b")[0]
        assert hit.item.id == proc.id and hit.matched_step == 2
        assert mem.next_step(proc.id, after=2, namespace="team-b").text == "最后重启服务"
        (release,) = mem.list("procedure", namespace="team-a")
        assert mem.next_step(release.id, after="run the full test suite", namespace="team-a").text == "tag the commit"
        assert mem.recall("release day", namespace="team-a", layers=["memory"])[0].text.startswith("Dev prefers")
