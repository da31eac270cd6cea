"""Memory scripts: scripted scenarios (sessions, then expectations) that prove memory still
behaves after every change.

A script is a YAML file::

    name: a preference changes
    steps:
      - session: onboarding            # messages, one minute apart from `at`
        at: 2026-10-01T09:00:00Z
        messages:
          - [Maya, "I prefer Python over R for analysis."]
          - [assistant, "Noted."]
      - forget: "4471"                  # delete every memory, episode and message that mentions it
      - recall: "Which language does Maya prefer?"
        k: 3
        includes: ["Julia"]             # some item's text contains each (case-insensitive)
        excludes: ["Python over R"]     # no item's text contains any
        layer: memory                   # optional: only this layer counts
      - context: "Plan Maya's dinner"
        budget: 300
        mentions: ["shellfish"]
        stale: ["Python over R"]        # every line stating it says it was superseded
      - history: "Julia"                # the active memory whose text contains it ...
        superseded: ["Python"]          # ... has superseded versions containing these
      - count: {kind: memory, status: active, matching: "shellfish", equals: 1}
      - remember:                       # explicit memories (no model)
          - {text: "Maya's locker code is 4471", importance: 0.05, pinned: false}
      - maintain: {after_days: 121, dry_run: false, expired: 1, purged: 0}   # a maintenance run
                                        # that many days from now (time travel), and what it must do

After each session, extraction runs over it (flush). The model's replies come from a
recordings file beside the scripts, so runs are deterministic; ``--live`` uses the model and
``--record`` writes what it said.
"""

from .runner import ScriptResult, load_script, run_script
from .recording import RecordingExtractor, Recordings

__all__ = ["RecordingExtractor", "Recordings", "ScriptResult", "load_script", "run_script"]
