"""Java sources with and without a `package` declaration: what is read from the source (pure),
then real javac and java runs through the sandbox, adversarial cases one per test."""

from __future__ import annotations

from dataclasses import replace

import pytest
from code_toolchains import require_toolchain

from rewardlab.core import Sample, Status
from rewardlab.verify.code import LANGUAGES, CodeTests
from rewardlab.verify.code.compile import build_key
from rewardlab.verify.code.java import java_program

MAIN = "public static void main(String[] args) {{ {body} }}"
SUM = "java.util.Scanner in = new java.util.Scanner(System.in); System.out.println(in.nextInt() + in.nextInt());"

# (source, package, file class, main class)
READ_CASES = [
    ("public class Main { public static void main(String[] a) {} }", "", "Main", "Main"),
    ("package foo.bar;\npublic class Main { public static void main(String[] a) {} }", "foo.bar", "Main", "Main"),
    ("// package not.this;\n/* package nor.this; */\n/** @see package x */\npackage real.one;\nclass A {}", "real.one", "A", "A"),
    ('public class S { static String s = "package fake.pkg;"; public static void main(String[] a) {} }', "", "S", "S"),
    ('public class T { static String s = """\n  package fake;\n  class Fake {}\n  """; }', "", "T", "T"),
    ("package p;\nclass Helper {}\npublic class Solution { public static void main(String[] a) {} }", "p", "Solution", "Solution"),
    ("package p;\nclass Runner { public static void main(String[] a) {} }\npublic class Lib {}", "p", "Lib", "Runner"),
    ("package p;\n@SuppressWarnings(value = {\"x\"})\n@Deprecated(since = Main.class)\npublic final class Main {}", "p", "Main", "Main"),
    ("package café.ñandú;\npublic class Größe { public static void main(String[] a) {} }", "café.ñandú", "Größe", "Größe"),
    ("\\u0070ackage esc.aped;\npublic class \\u004dain {}", "esc.aped", "Main", "Main"),
    ('public class E { String s = "\\\\u0070ackage no;"; }', "", "E", "E"),
    ("public interface Main { static void main(String[] a) {} }", "", "Main", "Main"),
    ("record Point(int x) {}\npublic enum Run { A; public static void main(String[] a) {} }", "", "Run", "Run"),
    ("public class Outer { static class Inner { public static void main(String[] a) {} } }", "", "Outer", "Outer"),
    ("class A { void main(String[] a) {} }\nclass B { public static void main(String[] a) {} }", "", "A", "B"),
    ("public @interface Tag {}\nclass M { public static void main(String[] a) {} }", "", "Tag", "M"),
    ("class X { char q = '\"'; String s = \"class Y {}\"; }", "", "X", "X"),
    ("package a.b\nclass Broken {", "", "Broken", "Broken"),
    ("package record.enums;\npublic record Main(int x) { public static void main(String[] a) {} }", "record.enums", "Main", "Main"),
    ('class A {}\npublic @SuppressWarnings({"x", "y"}) class B {}', "", "B", "B"),
    ("public class M { static Runnable r = run(() -> { }); public static void main(String[] a) {} }", "", "M", "M"),
    ("class L { static Runnable r = () -> { class Main { public static void main(String[] a) {} } }; }", "", "L", "L"),
    ("/* unterminated comment class Z", "", "Main", "Main"),
    # javac skips identifier-ignorable characters inside names (Character.isIdentifierIgnorable)
    ("pack\u200bage hid\u2060den.p\u00adkg;\npublic class Ma\ufeffin {}", "hidden.pkg", "Main", "Main"),
    ("pack\x01age ctl;\nclass A { static void ma\u200bin(String[] a) {} }", "ctl", "A", "A"),
    ("", "", "Main", "Main"),
]


@pytest.mark.parametrize(("source", "package", "file_class", "main_class"), READ_CASES)
def test_java_program_reads_package_file_and_main(source: str, package: str, file_class: str, main_class: str) -> None:
    program = java_program(source)
    assert (program.package, program.file_class, program.main_class) == (package, file_class, main_class)


def test_packaged_main_runs_from_a_jar_by_its_qualified_name() -> None:
    java = LANGUAGES["java"]
    source = "package foo.bar;\npublic class Main {}"
    argv = java.run_argv(source, 64)
    assert argv[-3:] == ["-cp", "main.jar", "foo.bar.Main"]
    assert "-d classes" in java.compile_script(source, 64) and "out/main.jar" in java.compile_script(source, 64)


def test_unpackaged_main_runs_from_the_class_directory() -> None:
    java = LANGUAGES["java"]
    assert java.run_argv("public class Main {}", 64)[-3:] == ["-cp", ".", "Main"]
    assert "jar" not in java.compile_script("public class Main {}", 64).split("&&")[2]


def test_the_packaged_compile_command_is_part_of_the_build_key() -> None:
    # A changed jar step must not serve builds of the old one; unpackaged builds keep their key.
    java = LANGUAGES["java"]
    changed = replace(java, compile_packaged=f"{java.compile_packaged} --verbose")
    packaged, plain = "package p;\npublic class Main {}", "public class Main {}"
    assert build_key(java, packaged, 64) != build_key(changed, packaged, 64)
    assert build_key(java, plain, 64) == build_key(changed, plain, 64)


def _java(source: str) -> Sample:
    return Sample(response=f"```java\n{source}\n```", reference={"cases": [{"input": "2 3\n", "output": "5\n"}]})


@pytest.fixture(scope="module")
def reward() -> CodeTests:
    require_toolchain("java")
    # The JVM spends ~0.3 s of CPU starting; 2 s keeps it clear of the limit on a slow machine.
    return CodeTests(language="java", workers=1, cpu_seconds=2.0, wall_seconds=10.0, memory_mb=64)


def _passes(reward: CodeTests, source: str) -> dict[str, object]:
    result = reward.score(_java(source))
    assert result.status is Status.OK, result.error
    assert result.info["compile"]["status"] == "ok", result.info["compile"]
    assert [t["verdict"] for t in result.info["tests"]] == ["pass"], result.info["tests"]
    assert result.score == 1.0
    return dict(result.info)


@pytest.mark.slow
def test_package_after_comments_with_a_helper_class_after_main(reward: CodeTests) -> None:
    # The shape IDE-kept Codeforces solutions have: a package line, `public class Main`, a
    # reader class after it.
    source = (
        "/*\n * package not.this;\n */\n// class Decoy {}\npackage codeforces;\n\nimport java.util.*;\n\n"
        "public class Main {\n    " + MAIN.format(body="System.out.println(new Reader().sum());") + "\n}\n"
        "class Reader {\n    int sum() { Scanner in = new Scanner(System.in); return in.nextInt() + in.nextInt(); }\n}\n"
    )
    _passes(reward, source)


@pytest.mark.slow
def test_package_main_prints_its_qualified_class_name(reward: CodeTests) -> None:
    # The class really is foo.bar.Main at run time (nothing stripped the package line).
    source = "package foo.bar;\npublic class Main { " + MAIN.format(body="System.out.println(Main.class.getName());") + " }"
    result = reward.score(Sample(response=f"```java\n{source}\n```", reference={"cases": [{"input": "", "output": "foo.bar.Main\n"}]}))
    assert result.score == 1.0, result.info


@pytest.mark.slow
def test_unicode_package_and_class_names(reward: CodeTests) -> None:
    _passes(reward, "package café.ñandú;\npublic class Größe { " + MAIN.format(body=SUM) + " }")


@pytest.mark.slow
def test_unicode_escaped_package_keyword(reward: CodeTests) -> None:
    _passes(reward, "\\u0070ackage esc.aped;\npublic class Main { " + MAIN.format(body=SUM) + " }")


@pytest.mark.slow
def test_package_keyword_hiding_identifier_ignorable_characters(reward: CodeTests) -> None:
    # javac reads `pack\u200bage` as the keyword and `fo\u00ado` as `foo`: the classes land in
    # foo/bar/, so the program must be built as a packaged one and run as foo.bar.Main.
    source = "pack\u200bage fo\u00ado.b\u2060ar;\npublic class Ma\ufeffin { " + MAIN.format(body=SUM) + " }"
    _passes(reward, source)


@pytest.mark.slow
def test_package_named_record_holding_a_record(reward: CodeTests) -> None:
    # `record` is a keyword only where a record is declared: a package may be called so.
    _passes(reward, "package record.enums;\npublic record Main(int x) { " + MAIN.format(body=SUM) + " }")


@pytest.mark.slow
def test_public_class_not_first_and_main_elsewhere(reward: CodeTests) -> None:
    # javac wants Lib.java (the public class); the program's entry point is Runner.
    source = "package p.q;\nclass Runner { " + MAIN.format(body="System.out.println(Lib.sum());") + " }\n"
    source += "public class Lib { static int sum() { java.util.Scanner in = new java.util.Scanner(System.in); return in.nextInt() + in.nextInt(); } }"
    _passes(reward, source)


@pytest.mark.slow
def test_package_word_in_strings_and_comments_of_an_unpackaged_program(reward: CodeTests) -> None:
    source = (
        '// package fake.one;\npublic class Main {\n    static final String NOTE = "package fake.two;";\n'
        '    static final String BLOCK = """\n        package fake.three;\n        """;\n    '
        + MAIN.format(body=SUM)
        + "\n}"
    )
    _passes(reward, source)


@pytest.mark.slow
def test_packaged_program_that_does_not_compile_is_a_compile_error(reward: CodeTests) -> None:
    result = reward.score(_java('package p;\npublic class Main { public static void main(String[] a) { int x = "s"; } }'))
    assert result.status is Status.OK and result.score == 0.0
    assert result.info["compile"]["status"] == "compile_error"
    assert "incompatible types" in result.info["compile"]["message"]
