"""A real OpenAI-compatible chat-completions server on 127.0.0.1 that answers with scripted
reward code, one script per request in order (then the last one again), and keeps every
request so a test can read the prompts the loop sent."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GOOD = '''Here is a dense reward:
```python
def reward(obs, action, next_obs, info):
    return {"success": 10.0 * info["success"], "failure": -1.0 * info["failed"]}
```'''
BUGGY = '''```python
def reward(obs, action, next_obs, info):
    return obs["position"] * 2.0
```'''
NAN = '''```python
def reward(obs, action, next_obs, info):
    return float("nan") if info["success"] else 0.0
```'''
LOOP = '''```python
def reward(obs, action, next_obs, info):
    while True:
        pass
```'''
HOSTILE_IMPORT = '''```python
import os
def reward(obs, action, next_obs, info):
    return float(len(os.listdir("/")))
```'''
HOSTILE_ESCAPE = '''```python
def reward(obs, action, next_obs, info):
    return ().__class__.__base__.__subclasses__()
```'''
HOSTILE_FILE = '''```python
def reward(obs, action, next_obs, info):
    with open("/etc/passwd") as fh:
        return float(len(fh.read()))
```'''
PROSE = "I would reward the agent for reaching the goal."

SCRIPTS = {"good": GOOD, "buggy": BUGGY, "nan": NAN, "loop": LOOP, "import_os": HOSTILE_IMPORT,
           "escape": HOSTILE_ESCAPE, "read_file": HOSTILE_FILE, "prose": PROSE}


class ScriptedLLM(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, replies: list[str]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies = replies
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> ScriptedLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedLLM

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        with self.server.lock:
            n = len(self.server.requests)
            self.server.requests.append(body)
            text = self.server.replies[min(n, len(self.server.replies) - 1)]
        payload = json.dumps({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 20},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
