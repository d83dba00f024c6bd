"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for judge tests.

Its answers depend on words in the last message, so each test can ask for the behaviour it
attacks: GOOD -> [[9]], BAD -> [[2]], GARBLE -> no score, NOISY -> [[4]] / [[8]] alternately,
SLOW -> answers only when the server stops (a client timeout always fires first), FLAKY -> 503 twice then [[7]], RATELIMIT -> one 429 then [[5]],
PASSCASE / FAILCASE -> "VERDICT: PASS" / "VERDICT: FAIL". Model "missing" -> 404. A message
with "Reference answer: X ... Model answer: Y" (OpenAI's score_model example) -> "1.0" if X == Y
else "0.0".
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JudgeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict] = []
        self.auth: list[str | None] = []
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> JudgeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


def _answer(server: JudgeServer, body: dict) -> tuple[int, str, dict[str, str]]:
    text = body["messages"][-1]["content"]
    with server.lock:
        server.seen[text] += 1
        n = server.seen[text]
    if body.get("model") == "missing":
        return 404, json.dumps({"error": {"message": "model 'missing' not found"}}), {}
    if "SLOW" in text:
        server.stopping.wait(60)
        return 200, "Rating: [[6]]", {}
    if "FLAKY" in text and n <= 2:
        return 503, "overloaded", {}
    if "RATELIMIT" in text and n == 1:
        return 429, "slow down", {"Retry-After": "0"}
    if "Reference answer:" in text and "Model answer:" in text:
        # OpenAI's documented score_model example: 1.0 when the answers are the same.
        ref = text.split("Reference answer:")[1].split("Model answer:")[0].strip()
        model = text.split("Model answer:")[1].strip()
        return 200, "1.0" if ref == model else "0.0", {}
    for word, answer in [
        ("GOOD", "Clear and correct. Rating: [[9]]"),
        ("BAD", "Wrong. Rating: [[2]]"),
        ("GARBLE", "I would rather not rate this."),
        ("NOISY", "Rating: [[4]]" if n % 2 else "Rating: [[8]]"),
        ("FLAKY", "Rating: [[7]]"),
        ("RATELIMIT", "Rating: [[5]]"),
        ("PASSCASE", "Matches the reference. VERDICT: PASS"),
        ("FAILCASE", "Does not match. VERDICT: FAIL"),
    ]:
        if word in text:
            return 200, answer, {}
    return 200, "Rating: [[5]]", {}


class _Handler(BaseHTTPRequestHandler):
    server: JudgeServer

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append(body)
            self.server.auth.append(self.headers.get("Authorization"))
        status, content, headers = _answer(self.server, body)
        if status == 200:
            prompt_tokens = sum(len(m["content"].split()) for m in body["messages"])
            content = json.dumps({
                "id": "cmpl-1", "object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content.split())},
            })  # fmt: skip
        payload = content.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out first
            pass
