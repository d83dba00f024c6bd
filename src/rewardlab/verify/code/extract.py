"""Find the program in a response: a fenced markdown code block, or the whole text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rewardlab.verify.code.languages import LANGUAGES

# ``` or ~~~ fences (CommonMark), an optional info string, the body, the same fence closing it.
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)^[ \t]*(?P=fence)[ \t]*$", re.DOTALL | re.MULTILINE)

Pick = Literal["last", "first", "all", "none"]


@dataclass(frozen=True)
class Extracted:
    """The program and where it came from (for `info`)."""

    code: str
    source: str  # "block 2 of 3", "3 blocks joined", "whole response"


def extract_code(response: str, *, pick: Pick = "last", language: str = "python") -> Extracted:
    """The code to run from a response.

    Blocks tagged with another language (```text, ```bash) are ignored; untagged blocks count.
    `pick`: "last" (the final answer, as LiveCodeBench does), "first", "all" (joined in order),
    or "none" (the response is the program). Without any fenced block the whole response is
    the program.

    Examples:
        >>> extract_code("Here:\\n```python\\nprint(1)\\n```\\n").code
        'print(1)\\n'
    """
    if pick == "none":
        return Extracted(response, "whole response")
    known = LANGUAGES.get(language)
    tags = known.tags if known else frozenset({language.lower(), ""})
    blocks = [m.group("body") for m in _FENCE.finditer(response) if m.group("info").strip().lower().split(" ")[0] in tags]
    if not blocks:
        return Extracted(response, "whole response")
    if pick == "all":
        return Extracted("\n".join(blocks), f"{len(blocks)} blocks joined")
    index = 0 if pick == "first" else len(blocks) - 1
    return Extracted(blocks[index], f"block {index + 1} of {len(blocks)}")
