"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for judge tests.

Its answers depend on words in the last message, so each test can ask for the behaviour it
attacks: GOOD -> [[9]], BAD -> [[2]], GARBLE -> no score, NOISY -> [[4]] / [[8]] alternately,
SLOW -> answers only when the server stops (a client timeout always fires first), FLAKY -> 503 twice then [[7]], RATELIMIT -> one 429 then [[5]],
PASSCASE / FAILCASE -> "VERDICT: PASS" / "VERDICT: FAIL". Model "missing" -> 404. A message
with "Reference answer: X ... Model answer: Y" (OpenAI's score_model example) -> "1.0" if X == Y
else "0.0".

For the protocols: MALFORMED -> HTTP 200 with a body that is not JSON; a pairwise prompt
("[The Start of Assistant A's Answer]" ... B ...) -> "[[B]]" only when A contains BAD and B
contains GOOD, "[[C]]" (tie) when both contain TIE, else "[[A]]": a planted position bias that
always favours the first answer between equals; YESNO with "P=0.7" -> "Yes", and with
`logprobs` requested the first token's top_logprobs carry P(Yes)=0.7, P(No)=0.3*0.9, " maybe"
the rest (other requests about a YESNO text get the usual answers). LENGTHY -> a rating that grows with the message's length (a planted length bias). Every answer waits `latency` seconds first (the server's simulated inference time).
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JudgeServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # listen backlog: the default 5 resets bursts of new connections

    def __init__(self, latency: float = 0.0):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.latency = latency
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
    if server.latency:
        server.stopping.wait(server.latency)
    if body.get("model") == "missing":
        return 404, json.dumps({"error": {"message": "model 'missing' not found"}}), {}
    if "SLOW" in text:
        server.stopping.wait(60)
        return 200, "Rating: [[6]]", {}
    if "FLAKY" in text and n <= 2:
        return 503, "overloaded", {}
    if "RATELIMIT" in text and n == 1:
        return 429, "slow down", {"Retry-After": "0"}
    if "MALFORMED" in text:
        return 200, "{not json", {"X-Raw": "1"}
    if "[The Start of Assistant A's Answer]" in text:
        return 200, _pairwise(text), {}
    if "Reference answer:" in text and "Model answer:" in text:
        # OpenAI's documented score_model example: 1.0 when the answers are the same.
        ref = text.split("Reference answer:")[1].split("Model answer:")[0].strip()
        model = text.split("Model answer:")[1].strip()
        return 200, "1.0" if ref == model else "0.0", {}
    if "LENGTHY" in text:  # a planted length bias: one more point per 40 words, up to 10
        return 200, f"Rating: [[{min(10, 3 + len(text.split()) // 40)}]]", {}
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


def _pairwise(text: str) -> str:
    a = text.split("[The Start of Assistant A's Answer]")[1].split("[The End of Assistant A's Answer]")[0]
    b = text.split("[The Start of Assistant B's Answer]")[1].split("[The End of Assistant B's Answer]")[0]
    if "BAD" in a and "GOOD" in b:
        return "B is better. [[B]]"
    if "TIE" in a and "TIE" in b:
        return "Equally good. [[C]]"
    return "A is better. [[A]]"  # the planted position bias


def _yes_no_logprobs(text: str) -> dict:
    p = float(text.split("P=")[1].split()[0]) if "P=" in text else 0.5
    top = [("Yes", p), ("No", (1 - p) * 0.9), (" maybe", (1 - p) * 0.1)]
    entries = [{"token": t, "logprob": math.log(max(q, 1e-12))} for t, q in top]
    first = max(top, key=lambda x: x[1])[0]
    return {"content": [{"token": first, "logprob": math.log(max(dict(top)[first], 1e-12)), "top_logprobs": entries}]}


class _Handler(BaseHTTPRequestHandler):
    server: JudgeServer
    protocol_version = "HTTP/1.1"  # keep-alive: a client reuses its connections
    # Headers and body in one segment: written separately, Nagle's algorithm and the client's
    # delayed ACK would add ~40 ms to every keep-alive response.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        except ValueError:
            self.send_error(400, "request body is not JSON")
            return
        with self.server.lock:
            self.server.requests.append(body)
            self.server.auth.append(self.headers.get("Authorization"))
        status, content, headers = _answer(self.server, body)
        text = body["messages"][-1]["content"]
        if "YESNO" in text and body.get("logprobs") and status == 200:
            content = "Yes" if "P=" not in text or float(text.split("P=")[1].split()[0]) >= 0.5 else "No"
        if headers.pop("X-Raw", None):
            pass  # send the malformed body as it is
        elif status == 200:
            prompt_tokens = sum(len(m["content"].split()) for m in body["messages"])
            content = json.dumps({
                "id": "cmpl-1", "object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content.split())},
            })  # fmt: skip
            if body.get("logprobs") and "YESNO" in text:
                data = json.loads(content)
                data["choices"][0]["logprobs"] = _yes_no_logprobs(text)
                content = json.dumps(data)
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
