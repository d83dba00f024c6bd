"""Tool-call arguments written as Java or JavaScript source text, read as JSON values.

Function-calling benchmarks for Java and JavaScript (BFCL's ``simple_java`` and
``simple_javascript``) declare parameters with the language's types (``long``, ``HashMap``,
``Bigint``...) and take every argument as a string: the source text of the value, e.g.
``"42L"``, ``"new HashMap<String, Object>() {{ put(\\"limit\\", 50); }}"``, ``"[1, 2]"``.
`decode` reads such a text by the parameter's declared type into the JSON value it denotes, so
`agent.matching` compares it with a gold value as usual. The conventions:

- A top-level string parameter (Java ``String`` and ``char``, JavaScript ``String``, and ``any``)
  is its text as given: the caller has already taken the quotes off the literal (what BFCL's
  parsers hand its checker); JavaScript's ``String`` also drops one pair of matching quotes left
  on, Java's keeps them (both as BFCL does). A Java ``char`` may be given as ``'c'``.
- Numbers follow the language's literals. Java: ``byte``/``short``/``int`` take decimal ints;
  ``long`` takes ``42L`` or an int (an int argument widens to ``long``); ``float`` takes ``1.5f``
  or an int; ``double`` takes any decimal literal, with or without ``d``/``f``. JavaScript:
  ``integer`` takes an integer literal, ``float`` any decimal literal, ``Bigint`` ``42n``.
- Collections: Java ``new T[]{...}``, ``new ArrayList<>(Arrays.asList(...))`` (or ``List.of``),
  ``new ArrayList<>() {{ add(...); }}``, ``new HashMap<>() {{ put(k, v); }}``, ``Map.of(...)``;
  JavaScript ``[...]``, ``new Array(...)``, ``{key: value}``. Elements are read by the declared
  item type (a Java array's int elements widen like scalars; a boxed collection's do not:
  ``Arrays.asList(1)`` is no ``List<Long>``), elements of ``any`` or undeclared type by their own
  literal form. Nesting and quoted commas are read by a real parser, not by splitting on commas.
- Text that is not a literal of the declared type (a variable name, a method call) stays text:
  a gold value written as a string (BFCL's variables) then compares with it exactly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

Encoding = Literal["json", "java", "javascript"]
ENCODINGS: tuple[Encoding, ...] = ("json", "java", "javascript")

#: The JSON-schema type each language's declared type denotes once decoded.
JSON_TYPES: dict[str, dict[str, str]] = {
    "java": {"byte": "integer", "short": "integer", "integer": "integer", "int": "integer", "long": "integer",
             "float": "number", "double": "number", "boolean": "boolean", "char": "string", "String": "string",
             "any": "string", "Array": "array", "ArrayList": "array", "List": "array", "Set": "array",
             "Queue": "array", "Stack": "array", "HashMap": "object", "Hashtable": "object", "Map": "object"},
    "javascript": {"String": "string", "integer": "integer", "float": "number", "Bigint": "integer",
                   "Boolean": "boolean", "array": "array", "dict": "object", "any": "string"},
}  # fmt: skip

_INT = re.compile(r"-?\d+")
_DECIMAL = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER = re.compile(_DECIMAL + r"[lLfFdDn]?")
_STRING_TYPES = frozenset({"String", "any", "char"})
_MAP_NEW = re.compile(r"(?:Hash|Tree|LinkedHash)?Map\b|Hashtable\b")
_NAME = re.compile(r"[A-Za-z_$][\w$.]*")
_WORD = re.compile(r"[\w$]+")
# An argument is a policy's text: deeper or longer than any real call, it stays text (the reader
# recurses once per level and may re-read a level it could not parse as a literal).
MAX_DEPTH = 32
MAX_CHARS = 100_000


def json_view(declared: Mapping[str, Any], encoding: Encoding) -> Mapping[str, Any]:
    """`declared` (a parameter schema in the language's types) with JSON-schema types."""
    table = JSON_TYPES.get(encoding)
    kind = declared.get("type")
    if table is None or not isinstance(kind, str) or kind not in table:
        return declared
    view = {**declared, "type": table[kind]}
    items = declared.get("items")
    if isinstance(items, Mapping):
        view["items"] = json_view(items, encoding)
    return view


def decode(text: str, declared: Mapping[str, Any], encoding: Encoding) -> Any:
    """The JSON value `text` (an argument's source text) denotes as the `declared` type (see the
    module docstring); text that is no literal of that type is returned as it is."""
    if encoding == "json":
        return text
    kind = declared.get("type")
    java = encoding == "java"
    if kind in _STRING_TYPES:
        if java and kind == "char" and len(text) == 3 and text[0] == text[2] == "'":
            return text[1]
        if not java and kind == "String" and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            return text[1:-1]
        return text
    stripped = text.strip()
    shape = {"array": list, "object": dict}.get(JSON_TYPES[encoding].get(str(kind), ""))
    if shape is not None:
        if len(stripped) > MAX_CHARS:
            return text
        try:
            node = _Reader(stripped, java).whole()
        except ValueError:
            return text
        value = _convert(node, declared, java, widen=True)
        return value if isinstance(value, shape) else text
    value = _scalar(stripped, str(kind), java, widen=True)
    return text if value is None else value


def _scalar(text: str, kind: str, java: bool, *, widen: bool) -> Any:
    """A number or boolean literal of `kind`, or None."""
    if kind in ("boolean", "Boolean"):
        return {"true": True, "false": False}.get(text)
    if java:
        suffix = text[-1:] if text[-1:] in ("l", "L", "f", "F", "d", "D") else ""
        body = text[: len(text) - len(suffix)]
        integral = _INT.fullmatch(body) is not None
        if kind in ("byte", "short", "integer", "int"):
            return int(text) if not suffix and integral else None
        if kind == "long":
            return int(body) if integral and (suffix in ("l", "L") or (widen and not suffix)) else None
        if kind == "float":
            if suffix in ("f", "F") and re.fullmatch(_DECIMAL, body):
                return float(body)
            return float(body) if widen and integral and not suffix else None
        if kind == "double" and re.fullmatch(_DECIMAL, body) and suffix not in ("l", "L"):
            # an int or a float widens to double; a boxed Double takes only a double literal
            return float(body) if widen or (suffix in ("", "d", "D") and not (integral and not suffix)) else None
        return None
    if kind == "integer":
        return int(text) if _INT.fullmatch(text) else None
    if kind == "float":
        return float(text) if re.fullmatch(_DECIMAL, text) else None
    if kind == "Bigint":
        return int(text[:-1]) if text.endswith("n") and _INT.fullmatch(text[:-1]) else None
    return None


# -- reading source text -------------------------------------------------------------------------
# The reader raises ValueError with this message where the text is no literal it knows; `decode`
# then keeps the text as it is.
_NOT_A_LITERAL = "not a literal"
Node = tuple[str, Any, str]  # (tag, value, source text): str, num, bool, null, list, map, raw


class _Reader:
    """A small recursive-descent reader of Java / JavaScript value expressions."""

    def __init__(self, text: str, java: bool):
        self.s, self.i, self.java = text, 0, java
        self.depth, self.too_deep = 0, False  # past MAX_DEPTH: the whole text is no literal

    def whole(self) -> Node:
        node = self.expr()
        self.ws()
        if self.i != len(self.s):
            raise ValueError(_NOT_A_LITERAL)
        return node

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def eat(self, token: str) -> bool:
        self.ws()
        if self.s.startswith(token, self.i):
            self.i += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.eat(token):
            raise ValueError(_NOT_A_LITERAL)

    def expr(self) -> Node:
        self.ws()
        start = self.i
        if self.too_deep or self.depth >= MAX_DEPTH:
            self.too_deep = True
            raise ValueError(_NOT_A_LITERAL)
        self.depth += 1
        try:
            return self._expr(start)
        finally:
            self.depth -= 1

    def _expr(self, start: int) -> Node:
        try:
            node = self._known()
            self.ws()
            if self.i == len(self.s) or self.s[self.i] in ",)]};:":
                return node
        except ValueError:
            if self.too_deep:  # no fallback to raw text: nothing inside is read again
                raise
        self.i = start
        self._skip()
        if self.i == start:
            raise ValueError(_NOT_A_LITERAL)
        return ("raw", self.s[start : self.i].strip(), self.s[start : self.i].strip())

    def _known(self) -> Node:
        start, c = self.i, self.s[self.i : self.i + 1]
        if c in ("'", '"') or (c == "`" and not self.java):
            value = self._string()
            return ("str", value, self.s[start : self.i])
        number = _NUMBER.match(self.s, self.i)
        if number and not self.s[number.end() : number.end() + 1].isalnum():
            self.i = number.end()
            return ("num", number.group(), number.group())
        word = _NAME.match(self.s, self.i)
        name = word.group() if word else ""
        if name in ("true", "false", "null", "undefined"):
            self.i = word.end()  # type: ignore[union-attr]
            return ("bool", name == "true", name) if name in ("true", "false") else ("null", None, name)
        if c == "[" and not self.java:
            return self._seq(start, "[", "]")
        if c == "{":
            return self._object(start) if not self.java else self._seq(start, "{", "}")
        if name == "new":
            self.i += 3
            return self._new(start)
        if name in ("Arrays.asList", "List.of", "Set.of") and self.eat(name) and self.s[self.i : self.i + 1] == "(":
            return self._seq(start, "(", ")")
        if name == "Map.of" and self.eat(name):
            pairs = self._seq(start, "(", ")")[1]
            if len(pairs) % 2:
                raise ValueError(_NOT_A_LITERAL)
            return ("map", list(zip(pairs[::2], pairs[1::2], strict=True)), self.s[start : self.i])
        raise ValueError(_NOT_A_LITERAL)

    def _string(self) -> str:
        quote, out = self.s[self.i], list[str]()
        self.i += 1
        escapes = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0"}
        while self.i < len(self.s):
            ch = self.s[self.i]
            self.i += 1
            if ch == quote:
                return "".join(out)
            if ch == "\\" and self.i < len(self.s):
                nxt = self.s[self.i]
                self.i += 1
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.s[self.i : self.i + 4]):
                    out.append(chr(int(self.s[self.i : self.i + 4], 16)))
                    self.i += 4
                else:
                    out.append(escapes.get(nxt, nxt))
                continue
            out.append(ch)
        raise ValueError(_NOT_A_LITERAL)

    def _seq(self, start: int, opening: str, closing: str) -> Node:
        self.expect(opening)
        items: list[Node] = []
        if not self.eat(closing):
            while True:
                items.append(self.expr())
                if self.eat(closing):
                    break
                self.expect(",")
                if self.eat(closing):  # a trailing comma
                    break
        return ("list", items, self.s[start : self.i])

    def _object(self, start: int) -> Node:
        self.expect("{")
        pairs: list[tuple[Node, Node]] = []
        while not self.eat("}"):
            self.ws()
            key_start = self.i
            if self.s[self.i : self.i + 1] in ("'", '"'):
                key = self._string()
            else:
                word = _WORD.match(self.s, self.i)
                if word is None:
                    raise ValueError(_NOT_A_LITERAL)
                key, self.i = word.group(), word.end()
            key_node = ("str", key, self.s[key_start : self.i])
            self.expect(":")
            pairs.append((key_node, self.expr()))
            if not self.eat(","):
                self.expect("}")
                break
        return ("map", pairs, self.s[start : self.i])

    def _new(self, start: int) -> Node:
        self.ws()
        word = _NAME.match(self.s, self.i)
        if word is None:
            raise ValueError(_NOT_A_LITERAL)
        self.i = word.end()
        if self.s[self.i : self.i + 1] == "<":  # generics, balanced
            depth = 0
            while self.i < len(self.s):
                depth += {"<": 1, ">": -1}.get(self.s[self.i], 0)
                self.i += 1
                if depth == 0:
                    break
        if self.java and self.eat("["):
            self.expect("]")
            return ("list", self._seq(start, "{", "}")[1], self.s[start : self.i])
        args = self._seq(start, "(", ")")[1]
        is_map = bool(_MAP_NEW.match(word.group().rsplit(".", 1)[-1]))
        if not self.java:
            if word.group() != "Array":
                raise ValueError(_NOT_A_LITERAL)
            return ("list", args, self.s[start : self.i])
        if len(args) > 1 or (args and args[0][0] not in ("list", "map")):
            raise ValueError(_NOT_A_LITERAL)  # a capacity, or a collection given some other way
        base: list[Any] = list(args[0][1]) if args else []
        if args and (args[0][0] == "map") != is_map:
            raise ValueError(_NOT_A_LITERAL)
        self.ws()
        if self.s[self.i : self.i + 1] == "{":  # double-brace initialisation: add(...); put(k, v);
            self.expect("{")
            self.expect("{")
            while not self.eat("}"):
                method = "put" if is_map else "add"
                self.expect(method)
                call = self._seq(self.i, "(", ")")[1]
                if len(call) != (2 if is_map else 1):
                    raise ValueError(_NOT_A_LITERAL)
                base.append((call[0], call[1]) if is_map else call[0])
                self.expect(";")
            self.expect("}")
        return ("map" if is_map else "list", base, self.s[start : self.i])

    def _skip(self) -> None:
        """Past one expression the reader does not know: balanced brackets and strings, up to a
        top-level separator or an unmatched closer."""
        depth = 0
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch in "'\"`":
                self._string()
                continue
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    return
                depth -= 1
            elif ch in ",;" and depth == 0:
                return
            self.i += 1


def _convert(node: Node, declared: Mapping[str, Any] | None, java: bool, *, widen: bool) -> Any:
    """A node as the JSON value of `declared` (its own literal form when `declared` says nothing)."""
    tag, value, text = node
    kind = declared.get("type") if isinstance(declared, Mapping) else None
    if tag == "list":
        items = declared.get("items") if isinstance(declared, Mapping) else None
        boxed = not text.lstrip().startswith("new") or "[" not in text.split("{", 1)[0]
        element = items if isinstance(items, Mapping) else None
        return [_convert(n, element, java, widen=widen and not boxed) for n in value]
    if tag == "map":
        return {str(_convert(k, None, java, widen=False)): _convert(v, None, java, widen=False) for k, v in value}
    if tag == "str":
        return value if kind in (None, "String", "any", "char", "string") else text
    if tag == "num":
        if kind in (None, "any"):
            return _untyped_number(text)
        found = _scalar(text, str(kind), java, widen=widen)
        return text if found is None else found
    if tag == "bool":
        return value if kind in (None, "any", "boolean", "Boolean") else text
    if tag == "null":
        return None
    return value  # raw text: a name or an expression


def _untyped_number(text: str) -> int | float:
    body = text[:-1] if text[-1:] in "lLfFdDn" else text
    if _INT.fullmatch(body) and text[-1:] not in "fFdD":
        return int(body)
    return float(body)
