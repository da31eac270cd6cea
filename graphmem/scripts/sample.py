"""A small sample conversation with the local model's recorded replies to it, for the notebooks
and the extraction tests: five sessions (English and Chinese: a profile, a changed preference,
a procedure, small talk), each a whole number of windows (4 messages), with fixed ids and times
so that the prompts, and so the recordings, are stable. ``recorded_extractor()`` answers those
prompts as the model did (``python -m tests.record_extractions`` asks it again)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from .recording import RecordingExtractor, Recordings

RECORDINGS = Path(__file__).resolve().parent.parent / "data" / "sample_recordings.json"


T0 = datetime(2026, 10, 5, 9, 0, tzinfo=timezone.utc)

SESSIONS: dict[str, list[tuple[str, str]]] = {
    "en-profile": [
        ("Maya", "Hi, I'm Maya Singh. I work as a data scientist at Globex in Lisbon."),
        ("assistant", "Nice to meet you, Maya! What do you mostly code in?"),
        ("Maya", "Python, definitely. I prefer Python over R for all my analysis work."),
        ("Maya", "Also, I'm allergic to shellfish, so no seafood restaurants for team dinners please."),
    ],
    "en-change": [
        ("Maya", "Quick update: our team switched languages. I now prefer Julia over Python for analysis."),
        ("assistant", "Got it, Julia from now on."),
        ("Maya", "And remember I'm still allergic to shellfish."),
        ("Maya", "My manager Tom Reyes approved the switch yesterday."),
    ],
    "zh-profile": [
        ("王芳", "你好，我叫王芳，在成都的一家游戏公司做产品经理。"),
        ("assistant", "你好王芳！平时喜欢喝什么？"),
        ("王芳", "我喜欢喝茉莉花茶，不喝咖啡。另外我对猫毛过敏。"),
        ("王芳", "下周三我要去北京出差，见一个重要客户。"),
    ],
    "procedure": [
        ("Maya", "When I ask you to publish a report, first run the data checks."),
        ("Maya", "Then render the notebook to PDF, then upload it to the team drive."),
        ("Maya", "Finally post the link in the #analytics channel."),
        ("assistant", "Understood: checks, render to PDF, upload, then post the link."),
    ],
    "chatter": [
        ("Maya", "ok"),
        ("assistant", "Anything else?"),
        ("Maya", "thanks!"),
        ("王芳", "好的，谢谢"),
    ],
}


def session_messages(session: str, start: datetime = T0) -> list[dict]:
    day = list(SESSIONS).index(session)
    return [
        {"id": f"{session}-{i}", "speaker": who, "role": "assistant" if who == "assistant" else "user", "content": text,
         "created_at": start + timedelta(days=day, minutes=i)}
        for i, (who, text) in enumerate(SESSIONS[session])
    ]


def recorded_extractor() -> RecordingExtractor:
    """The model's recorded replies to the sample's windows; a prompt they do not hold is an
    error, never a made-up reply."""
    return RecordingExtractor(Recordings(RECORDINGS))


def ingest(mem, sessions=tuple(SESSIONS), namespace: str = "default") -> None:
    """Write each session and extract it before the next, as the recordings were made: the
    prompts (known memories included) then match the recorded ones exactly."""
    for session in sessions:
        mem.add_messages(session, session_messages(session), namespace=namespace)
        mem.flush()
