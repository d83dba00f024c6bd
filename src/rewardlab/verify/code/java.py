"""What javac and java need to know of a Java program: its package, file name and main class.

javac requires a public top-level type to sit in a file named after it (JLS 7.6), and puts the
classes of `package foo.bar;` under foo/bar/ of its `-d` directory, so they must then be run
as `foo.bar.Main` (JLS 7.4, 12.1). The source is read the way javac reads it, as far as these
three facts go: Unicode escapes are translated first (JLS 3.3, so `\\u0070ackage` is the
keyword), comments, string and character literals and text blocks are dropped (the word
`package` or `class` in them means nothing), and only declarations at the top level count:
the `package` declaration (after any comments and annotations, before the first type), and the
top-level classes, interfaces, enums and records with the modifiers and methods they declare.

What is not covered: the source is not checked (a malformed one gets a best guess here and
the compiler's own message when it is built); a `main` declared only in a nested class (the
top-level class runs, as `java` would need `Outer$Inner`); JDK 21's instance `main` methods
(the JDK here is 17).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

# JLS 3.3: a backslash is eligible to start a Unicode escape when an even number of backslashes
# precede it; `\uuuu0041` is as valid as `\u0041`.
_UNICODE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u+([0-9A-Fa-f]{4})")
# Alternatives in the order javac's scanner decides them: text blocks before strings, comments
# before the `/` operator. Identifiers: letters, digits, `_` and `$` (JLS 3.8), Unicode included;
# see `_token_pattern` for the characters javac ignores inside them.
_TOKEN_ALTERNATIVES = (
    r'"""(?:\\[\s\S]|[^\\])*?"""'  # text block
    r'|"(?:\\.|[^"\\\n])*"'  # string literal
    r"|'(?:\\.|[^'\\\n])+'"  # character literal
    r"|//[^\n]*"  # line comment
    r"|/\*[\s\S]*?(?:\*/|\Z)"  # block comment (an unterminated one runs to the end)
    r"|(?P<word>(?:[^\W\d]|\$)(?:[\w$]|{ignorable})*)"
    r"|(?P<mark>\S)"
)
_TYPE_KEYWORDS = frozenset({"class", "interface", "enum", "record"})
_RESERVED_TYPE_KEYWORDS = _TYPE_KEYWORDS - {"record"}  # `record` is an ordinary name elsewhere (JLS 3.9)


@dataclass(frozen=True)
class JavaProgram:
    """The facts of one Java source that compiling and running it depend on.

    Attributes:
        package: the declared package ("" for the unnamed package).
        file_class: the simple name the source file must carry: the public top-level type,
            else the first one, else "Main".
        main_class: the simple name of the top-level type to run: the one that declares
            `static void main`, the public one among several, else `file_class`.
    """

    package: str
    file_class: str
    main_class: str

    @property
    def source_name(self) -> str:
        return f"{self.file_class}.java"

    @property
    def qualified_main(self) -> str:
        """The binary name `java` is given: `foo.bar.Main`, or `Main` without a package."""
        return f"{self.package}.{self.main_class}" if self.package else self.main_class


@dataclass
class _TopLevelType:
    name: str
    public: bool
    has_main: bool = False


@functools.lru_cache(maxsize=1024)
def java_program(source: str) -> JavaProgram:
    """The package, file name and main class of `source` (module doc)."""
    package, types = _declarations(_tokens(source))
    file_type = next((t for t in types if t.public), types[0] if types else None)
    with_main = [t for t in types if t.has_main]
    main_type = next((t for t in with_main if t.public), with_main[0] if with_main else file_type)
    file_class = file_type.name if file_type else "Main"
    return JavaProgram(package, file_class, main_type.name if main_type else file_class)


@functools.cache
def _token_pattern() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The token regex, and one that matches the characters an identifier ignores.

    javac's scanner (JavaTokenizer.scanIdent) skips, inside an identifier, every character for
    which Character.isIdentifierIgnorable holds: the controls U+0000-0008, U+000E-001B and
    U+007F-009F, and every format character (category Cf: U+00AD, U+200B, U+2060, U+FEFF...).
    So `pack\u200bage` is the keyword `package` and `Ma\u00adin` the name `Main` (JLS 3.8: names
    are the same once ignorable characters are ignored). One cannot start an identifier: javac
    reports an illegal character there. Built on first use (listing Cf takes ~70 ms)."""
    formats = "".join(chr(c) for c in range(0xA0, 0x110000) if unicodedata.category(chr(c)) == "Cf")
    ignorable = "[\x00-\x08\x0e-\x1b\x7f-\x9f" + re.escape(formats) + "]"
    return re.compile(_TOKEN_ALTERNATIVES.format(ignorable=ignorable)), re.compile(ignorable)


def _tokens(source: str) -> list[str]:
    """Words and punctuation of `source`, Unicode escapes translated, comments and literals
    replaced by one placeholder token (they still end what precedes them), the characters javac
    ignores inside identifiers dropped from them."""
    text = _UNICODE_ESCAPE.sub(lambda m: m.group(1) + chr(int(m.group(2), 16)), source)
    token, ignorable = _token_pattern()
    tokens: list[str] = []
    for match in token.finditer(text):
        word, mark = match.group("word"), match.group("mark")
        if word is not None:
            tokens.append(ignorable.sub("", word))
        elif mark is not None:
            tokens.append(mark)
        elif match.group().startswith(("'", '"')):
            tokens.append('""')
    return tokens


def _declarations(tokens: list[str]) -> tuple[str, list[_TopLevelType]]:
    """The package name and the top-level types of a token list, with whether each declares
    `static void main(`. Depth counts braces. What stands in parentheses at the top level or in
    a type's body is skipped whole, braces included: annotation arguments (`@Ann({A.class})`),
    record headers, parameter lists, lambdas in field initialisers."""
    package, types = "", list[_TopLevelType]()
    depth = parens = 0
    public = static = False  # modifiers seen since the last declaration boundary
    for i, token in enumerate(tokens):
        if depth <= 1 and (parens or token == "("):
            parens += {"(": 1, ")": -1}.get(token, 0)
        elif token in "{}":
            depth += 1 if token == "{" else -1
            public = static = False
        elif token == ";":
            public = static = False
        elif depth == 0:
            if token == "public":
                public = True
            elif token == "package" and not package and not types:
                package = _qualified_name(tokens, i + 1)
            elif _declares_type(tokens, i):
                types.append(_TopLevelType(tokens[i + 1], public))
        elif depth == 1 and types:
            static = static or token == "static"
            if token == "main" and static and tokens[i - 1] == "void" and tokens[i + 1 : i + 2] == ["("]:
                types[-1].has_main = True
    return package, types


def _declares_type(tokens: list[str], i: int) -> bool:
    """Whether `tokens[i]` starts a type declaration (`@interface Name` included: a public one
    names the file too), not a class literal `Foo.class`."""
    if tokens[i] not in _TYPE_KEYWORDS or i + 1 >= len(tokens) or not _is_word(tokens[i + 1]):
        return False
    if i and tokens[i - 1] == ".":
        return False
    # `record` is a keyword only where a record is declared: `record Name(` or `record Name<`
    return tokens[i] != "record" or tokens[i + 2 : i + 3] in (["("], ["<"])


def _qualified_name(tokens: list[str], start: int) -> str:
    """`a.b.c` from `tokens[start:]` up to `;` ("" when malformed: javac will say why)."""
    end = tokens.index(";", start) if ";" in tokens[start:] else len(tokens)
    parts = tokens[start:end]
    words, dots = parts[::2], parts[1::2]
    if end == len(tokens) or not words or not all(map(_is_word, words)) or any(d != "." for d in dots) or len(parts) % 2 == 0:
        return ""
    return "".join(parts)


def _is_word(token: str) -> bool:
    return bool(token) and (token[0].isalpha() or token[0] in "_$") and token not in _RESERVED_TYPE_KEYWORDS
