"""A real OpenAI-compatible `/v1/completions` server on 127.0.0.1 for the step generator's tests.

It writes a three-step solution one step per request, like a model stopped at the step
delimiter: prompts with k steps so far get `Step k+1: ...`, the third step ends in
`\\boxed{4}`. Problems whose text holds a word ask for a behaviour: FLAKY -> 503 once, then
normal; EOS -> the second step ends the solution without an answer (finish_reason "stop",
stop_reason null); BADJSON -> a body that is not JSON; DUPINDEX, NOTOBJECT, BADTEXT, BADUSAGE
-> malformed replies (`_break`); model "missing" -> 404. With
`stop_reasons=False` the server omits `stop_reason` and `logprobs`, as plain OpenAI-style
servers do, and reports only usage.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class CompletionsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *, stop_reasons: bool = True):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.stop_reasons = stop_reasons
        self.requests: list[dict] = []
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> CompletionsServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


def _continue(prompt: str, delimiter: str) -> tuple[str, str | None]:
    """The next step after `prompt` and the stop string that ended it (None: end of sequence)."""
    done = prompt.count("Step ")
    if "EOS" in prompt and done >= 1:
        return "That is all I can say.", None
    if done >= 2:
        return "Step 3: so the answer is \\boxed{4}.", None
    return f"Step {done + 1}: work on part {done + 1}.", delimiter


def _choice(server: CompletionsServer, index: int, prompt: str, delimiter: str) -> dict:
    text, stop = _continue(prompt, delimiter)
    choice = {"index": index, "text": text, "finish_reason": "stop"}
    if server.stop_reasons:
        choice["stop_reason"] = stop
        choice["logprobs"] = {"tokens": text.split()}  # one token per word, exactly
    return choice


def _break(reply: dict, prompt: str) -> None:
    """Malformed replies, asked for by a word in the problem: DUPINDEX (every choice index 0),
    NOTOBJECT (choices are strings), BADTEXT (a choice's text is a number), BADUSAGE (usage is a
    list, with no logprobs to count from)."""
    if "DUPINDEX" in prompt:
        for choice in reply["choices"]:
            choice["index"] = 0
    if "NOTOBJECT" in prompt:
        reply["choices"] = [c["text"] for c in reply["choices"]]
    if "BADTEXT" in prompt:
        reply["choices"][0]["text"] = 12
    if "BADUSAGE" in prompt:
        reply["usage"] = ["completion_tokens", 5]
        for choice in reply["choices"]:
            choice.pop("logprobs", None)


class _Handler(BaseHTTPRequestHandler):
    server: CompletionsServer

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        if self.path != "/v1/completions":
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        key = prompts[0]
        with self.server.lock:
            self.server.requests.append(body)
            self.server.seen[key] += 1
            n = self.server.seen[key]
        status, payload = 200, ""
        if body.get("model") == "missing":
            status, payload = 404, json.dumps({"error": {"message": "model 'missing' not found"}})
        elif "FLAKY" in key and n == 1:
            status, payload = 503, "overloaded"
        elif "BADJSON" in key:
            payload = "<html>not json</html>"
        else:
            choices = [_choice(self.server, i, p, body["stop"][0]) for i, p in enumerate(prompts)]
            words = sum(len(c["text"].split()) for c in choices)
            reply = {"id": "cmpl-1", "object": "text_completion", "model": body["model"],
                     "choices": choices[::-1],  # out of order: the client must use `index`
                     "usage": {"prompt_tokens": 10, "completion_tokens": words}}  # fmt: skip
            _break(reply, key)
            payload = json.dumps(reply)
        data = payload.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
