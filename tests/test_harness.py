"""The test harness itself: a run stopped with SIGTERM tears its servers down,
``scripts/neo4j-dev`` refuses to start beside a server it does not own on its port, and two
test sessions never share one Neo4j."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from .conftest import ROOT, claim

SESSION_TEST = '''
import pathlib, time
import pytest

OUT = pathlib.Path(__file__).parent


@pytest.fixture(scope="session")
def server():
    yield
    (OUT / "torn_down").write_text("yes")


def test_long(server):
    (OUT / "started").write_text("yes")
    time.sleep(120)
'''


def test_a_run_stopped_with_sigterm_tears_its_session_fixtures_down(tmp_path):
    (tmp_path / "test_long.py").write_text(SESSION_TEST)
    # the suite's conftest as a plugin: its pytest_configure turns SIGTERM into an interrupt
    run = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
                            str(tmp_path / "test_long.py")], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "started").exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (tmp_path / "started").exists(), run.communicate(timeout=60)[0] if run.poll() is not None else "no start"
        run.send_signal(signal.SIGTERM)
        out = run.communicate(timeout=60)[0]
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert (tmp_path / "torn_down").read_text() == "yes", out
    assert run.returncode != 0  # interrupted, not passed


class _FakeBolt:
    """A socket that answers a Bolt handshake with a version, as a Neo4j server does."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(20)
                conn.sendall(bytes.fromhex("00000405"))


def test_neo4j_dev_will_not_start_beside_a_server_it_does_not_own(tmp_path):
    other = _FakeBolt()
    try:
        done = subprocess.run([str(ROOT / "scripts" / "neo4j-dev"), "start"], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "NEO4J_BOLT_PORT": str(other.port),
                                                "NEO4J_DEV_DIR": str(tmp_path / "dev")})
    finally:
        other.sock.close()
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"another server already answers Bolt on 127.0.0.1:{other.port}" in done.stderr
    assert not (tmp_path / "dev" / "server.pid").exists()  # nothing started, nothing to stop later


def test_two_sessions_never_share_one_neo4j():
    """Tests wipe the database they use: a second session on the same server is told who holds
    it instead of deleting the first one's data (a local run beside .ci/run did)."""
    uri = "bolt://127.0.0.1:1"  # no server needed: the claim is a lock file named after the address
    first = claim(uri)
    try:
        with pytest.raises(pytest.fail.Exception, match=f"another test session \\(pid {os.getpid()}\\)"):
            claim(uri)
    finally:
        first.close()
    claim(uri).close()  # free again once the first session lets go
