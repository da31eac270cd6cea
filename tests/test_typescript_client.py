"""The TypeScript client (clients/typescript) runs its own tests with node's test runner against
a live ``graphmem serve`` it starts from this environment's ``graphmem``, after checking that its
generated types are what the live OpenAPI schema gives. Needs Node 20+ and npm; installs the
client's two dev dependencies (TypeScript, openapi-typescript) from npm when missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import system_tool

PACKAGE = Path(__file__).resolve().parent.parent / "clients" / "typescript"


def test_typescript_client_against_a_live_server():
    npm = system_tool(shutil.which("npm"), "npm (the TypeScript client's tests: Node 20+ with npm on PATH)")
    if not (PACKAGE / "node_modules" / ".bin" / "tsc").exists():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=PACKAGE, check=True, timeout=600)
    env = {**os.environ, "GRAPHMEM_BIN": str(Path(sys.executable).parent / "graphmem")}
    env.pop("GRAPHMEM_EXTRACTION", None)
    done = subprocess.run([npm, "test"], cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-6000:]
    assert "matches the live server's OpenAPI schema" in out and "# fail 0" in out and "# pass 10" in out
