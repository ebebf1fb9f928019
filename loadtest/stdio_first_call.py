"""Seconds from launching `manage.py mcp_stdio` to the answer of its first tool call.

    MEMORYHUB_TOKEN=mh_... .venv/bin/python loadtest/stdio_first_call.py ["a query"]

Speaks the MCP stdio protocol by hand (initialize, initialized, tools/call memory_search), as
a desktop client does when it starts a session."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    query = sys.argv[1] if len(sys.argv) > 1 else "what did we decide about backups?"
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "mcp_stdio"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        cwd=ROOT,
    )  # fmt: skip
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "timing", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "memory_search", "arguments": {"query": query}}},
    ]  # fmt: skip
    for message in messages:
        proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    answered = None
    for line in proc.stdout:
        if json.loads(line).get("id") == 2:
            answered = time.monotonic() - began
            break
    proc.stdin.close()
    proc.terminate()
    proc.wait(timeout=10)
    print(f"first tool call answered {answered:.2f} s after launch" if answered else "no answer")


if __name__ == "__main__":
    main()
