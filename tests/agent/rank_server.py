"""A real OpenAI-compatible chat server on 127.0.0.1 that ranks numbered trajectories.

Each "=== Trajectory i ===" block scores 8 when it books Paris (renders that call), else
3, plus a planted position bias: the trajectory shown first gets 2 more. A task containing
GARBLE gets an answer without scores. A prompt without trajectory blocks gets an absolute rating
(``[[9]]`` when it books Paris, else ``[[2]]``); a pairwise prompt gets the better answer, and A
between equals (a position bias).
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BLOCK = re.compile(r"=== Trajectory (\d+) ===\n(.*?)(?=\n\n=== Trajectory|\n\nAnswer with)", re.DOTALL)


class RankServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> RankServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


def _good(text: str) -> bool:
    return '[call] book({"city": "Paris"})' in text


def answer(text: str) -> str:
    if "GARBLE" in text:
        return "They all look fine to me."
    if "[The Start of Assistant A's Answer]" in text:  # a pairwise prompt: the better one, else A (a position bias)
        a = text.split("[The Start of Assistant A's Answer]")[1].split("[The End of Assistant A's Answer]")[0]
        b = text.split("[The Start of Assistant B's Answer]")[1].split("[The End of Assistant B's Answer]")[0]
        return "[[B]]" if _good(b) and not _good(a) else "[[A]]"
    if "=== Trajectory" not in text:  # an absolute rating
        return "Rating: [[9]]" if _good(text) else "Rating: [[2]]"
    lines = []
    for number, block in BLOCK.findall(text):
        score = 8 if _good(block) else 3
        lines.append(f"[[{number}]] = {score + (2 if number == '1' else 0)}")
    return "\n".join(lines)


class _Handler(BaseHTTPRequestHandler):
    server: RankServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append(body)
        reply = {"choices": [{"message": {"role": "assistant", "content": answer(body["messages"][-1]["content"])}}],
                 "usage": {"prompt_tokens": 10, "completion_tokens": 5}}  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass
