"""Boolean guards over event labels: `"f & !n"`, `"(a | b) & !c"`, `"True"`.

Guards are parsed by a small recursive-descent parser into a tree and evaluated against a
`frozenset[str]` of the labels that hold; nothing is ever passed to `eval`. Grammar:

    expr  := and ('|' and)*
    and   := unary ('&' unary)*
    unary := '!' unary | atom
    atom  := '(' expr ')' | 'True' | 'False' | NAME          NAME = [A-Za-z_][A-Za-z0-9_.]*

This is the formula syntax of the reward-machines code (Toro Icarte et al., JAIR 2022), which
uses `&`, `|`, `!` over single-letter propositions, extended with parentheses and longer names.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rewardlab.errors import SpecError, SpecProblem

__all__ = ["Guard", "parse_guard", "satisfiable_together"]

_TOKEN = re.compile(r"\s*(?:(?P<op>[&|!()])|(?P<name>[A-Za-z_][A-Za-z0-9_.]*))")

#: brute-force satisfiability enumerates 2**n assignments; beyond this it is too slow
MAX_PROPS_FOR_CHECK = 16


@dataclass(frozen=True)
class Guard:
    """A parsed guard. Call it with the set of true labels.

    Attributes:
        text: the source text, as written.
        props: every proposition the guard mentions.
    """

    text: str
    props: frozenset[str]
    _fn: Callable[[frozenset[str]], bool]

    def __call__(self, labels: frozenset[str]) -> bool:
        return self._fn(labels)

    def __repr__(self) -> str:
        return f"Guard({self.text!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # The compiled closures cannot be pickled; the text rebuilds them exactly.
        return (parse_guard, (self.text,))


def _tokenize(text: str, where: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    stripped = text.rstrip()
    while pos < len(stripped):
        m = _TOKEN.match(stripped, pos)
        if m is None or m.end() == pos:
            raise SpecError([SpecProblem(where, f"guard {text!r}: unexpected character {stripped[pos:].strip()[:1]!r} at {pos}")])
        tokens.append(m.group("op") or m.group("name"))
        pos = m.end()
    if not tokens:
        raise SpecError([SpecProblem(where, "empty guard; write 'True' for an edge that always fires")])
    return tokens


class _Parser:
    def __init__(self, text: str, where: str):
        self.text, self.where = text, where
        self.tokens = _tokenize(text, where)
        self.i = 0
        self.props: set[str] = set()

    def fail(self, msg: str) -> SpecError:
        return SpecError([SpecProblem(self.where, f"guard {self.text!r}: {msg}")])

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise self.fail("ends early; an operand is missing")
        self.i += 1
        return tok

    def expr(self) -> Callable[[frozenset[str]], bool]:
        parts = [self.conj()]
        while self.peek() == "|":
            self.take()
            parts.append(self.conj())
        if len(parts) == 1:
            return parts[0]
        alternatives = tuple(parts)

        def any_of(s: frozenset[str]) -> bool:
            return any(p(s) for p in alternatives)

        return any_of

    def conj(self) -> Callable[[frozenset[str]], bool]:
        parts = [self.unary()]
        while self.peek() == "&":
            self.take()
            parts.append(self.unary())
        if len(parts) == 1:
            return parts[0]
        conjuncts = tuple(parts)

        def all_of(s: frozenset[str]) -> bool:
            return all(p(s) for p in conjuncts)

        return all_of

    def unary(self) -> Callable[[frozenset[str]], bool]:
        if self.peek() == "!":
            self.take()
            inner = self.unary()
            return lambda s: not inner(s)
        return self.atom()

    def atom(self) -> Callable[[frozenset[str]], bool]:
        tok = self.take()
        if tok == "(":
            inner = self.expr()
            if self.peek() != ")":
                raise self.fail("missing ')'")
            self.take()
            return inner
        if tok in ("True", "False"):
            value = tok == "True"
            return lambda s: value
        if tok in "&|!)":
            raise self.fail(f"operand expected, got {tok!r}")
        self.props.add(tok)
        return lambda s: tok in s


def parse_guard(text: str, *, where: str = "guard") -> Guard:
    """Parse a guard; raises `SpecError` naming `where` when the text is malformed."""
    parser = _Parser(text, where)
    fn = parser.expr()
    if parser.peek() is not None:
        raise parser.fail(f"unexpected {parser.peek()!r} after a complete guard")
    return Guard(text.strip(), frozenset(parser.props), fn)


def satisfiable_together(guards: Iterable[Guard]) -> frozenset[str] | None:
    """A label set that makes every guard true at once, or None if there is none.

    Brute force over the mentioned propositions (at most `MAX_PROPS_FOR_CHECK` of them), which
    is exact and fast for the small alphabets reward machines use.
    """
    guards = list(guards)
    props = sorted(set().union(*(g.props for g in guards))) if guards else []
    if len(props) > MAX_PROPS_FOR_CHECK:
        raise SpecError(
            f"determinism check over {len(props)} propositions is too large "
            f"(limit {MAX_PROPS_FOR_CHECK}); pass check_determinism=False to skip it"
        )
    for bits in itertools.product((False, True), repeat=len(props)):
        labels = frozenset(p for p, b in zip(props, bits, strict=True) if b)
        if all(g(labels) for g in guards):
            return labels
    return None
