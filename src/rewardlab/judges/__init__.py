"""Model-based judges: an LLM judge against any OpenAI-compatible endpoint.

    from rewardlab.judges import LLMJudge
    judge = LLMJudge(base_url="http://127.0.0.1:8000/v1", model="qwen2.5-7b-instruct")

Registered as `judge.llm`. Needs the `serve` extra (httpx).
"""

from rewardlab.judges.client import ChatClient, Completion, Usage
from rewardlab.judges.llm import LLMJudge
from rewardlab.judges.templates import BUILTIN, parse_score, render

__all__ = ["BUILTIN", "ChatClient", "Completion", "LLMJudge", "Usage", "parse_score", "render"]
