"""The sympy side of the equivalence check. Runs only inside a worker process (see worker.py).

LaTeX is parsed by `latex2sympy2_extended` (the parser Math-Verify also uses), never by hand.
Floats in the parse are turned into exact rationals of their decimal text, so `0.5x` equals
`x/2` exactly; decimals that mean *roundings* are handled by the caller with the
significant-figure rule (fastpath.py) on the value `numeric()` returns.

Expression equality, cheapest test first:
1. structural equality or `a - b` auto-simplifying to 0;
2. evaluation at random points (or of the constant) to 30 digits: a clear difference is a
   proof of inequality (fast rejection);
3. `expand(a - b) == 0` (polynomial identities), then `simplify(a - b) == 0`;
4. otherwise equality at every sampled point within `rel_tol` is accepted ("numerically equal";
   Schwartz-Zippel makes this sound with high probability for polynomials).
"""

from __future__ import annotations

import cmath
import contextlib
import random
import re
from functools import lru_cache
from typing import Any

try:
    import sympy
    from latex2sympy2_extended import latex2sympy
    from latex2sympy2_extended.math_normalization import NormalizationConfig
    from sympy import Basic, Eq, FiniteSet, Float, Interval, MatrixBase, Rational, Union
    from sympy.core.function import AppliedUndef
    from sympy.core.relational import Relational
    from sympy.matrices.expressions import MatrixExpr
    from sympy.parsing.sympy_parser import (
        implicit_multiplication,
        parse_expr,
        standard_transformations,
    )
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.errors import ParseFailure

_NORM = NormalizationConfig(basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="none", equations=False)
_DIGITS = 30
_POINTS = 3


# The plain-algebra subset of LaTeX: digits, lowercase one-letter variables, + - * / ^ ( ) { }
# and \frac, \sqrt, \pi, \cdot, \times. As latex2sympy reads them, `e` is Euler's number and `i`
# a symbol (compare() makes it the imaginary unit when it is the only letter).
# latex2sympy's ANTLR parser takes ~20 ms per answer; sympy's own expression parser takes
# ~0.5 ms on this subset, which covers most polynomial and radical answers.
# tests/verify/math/test_math_symbolic.py checks both parsers agree on it.
_SIMPLE_RE = re.compile(r"^[0-9a-z+\-*/^(){}. ]+$")
_FRAC_RE = re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}")
_SQRT_RE = re.compile(r"\\sqrt\{([^{}]*)\}")
_SHORT_FRAC_RE = re.compile(r"\\frac(\d)(\d)")
_SHORT_SQRT_RE = re.compile(r"\\sqrt\s*(\d)")  # `\sqrt2`, `\sqrt 2`: one digit, as TeX reads it
_EXP_BRACE_RE = re.compile(r"\^\{([^{}]*)\}")
_WORD_RE = re.compile(r"[a-z]+")
_TRANSFORMS = (*standard_transformations, implicit_multiplication)


# One relation between two plain-algebra sides (`y = -\frac{1}{2}x + \frac{3}{4}`, `x \le 1`).
_RELATION_SPLIT_RE = re.compile(r"\\leq?(?![a-zA-Z])|\\geq?(?![a-zA-Z])|<|>|=")
_RELATIONS = {"=": sympy.Eq, "<": sympy.StrictLessThan, ">": sympy.StrictGreaterThan, "\\le": sympy.LessThan, "\\leq": sympy.LessThan, "\\ge": sympy.GreaterThan, "\\geq": sympy.GreaterThan}


def _fast_parse(latex: str) -> Any:
    """`latex` as sympy through `parse_expr` when it is plain algebra or one relation between
    two plain-algebra sides, else None."""
    ops = list(_RELATION_SPLIT_RE.finditer(latex))
    if not ops:
        return _fast_parse_side(latex)
    if len(ops) > 1:
        return None  # chains (`1 < x < 2`, `a = b = c`) and `<=` spelt out: latex2sympy's reading
    lhs, rhs = latex[: ops[0].start()].strip(), latex[ops[0].end() :].strip()
    left = _fast_parse_side(lhs) if lhs else None
    right = _fast_parse_side(rhs) if rhs and left is not None else None
    if right is None:
        return None
    return _RELATIONS[ops[0].group(0)](left, right, evaluate=False)


def _fast_parse_side(latex: str) -> Any:
    """One side: plain algebra through `parse_expr`, else None."""
    if re.search(r"\d\s*\\frac", latex) or re.search(r"\\frac(?:\{[^{}]*\}\{[^{}]*\}|\d\d)\s*\d", latex):
        # `2\frac{1}{2}` is the mixed number 5/2 to latex2sympy (and to MATH), not 1, and
        # latex2sympy reads `\frac{1}{2}22` its own way: leave both to it
        return None
    s = latex.replace("\\cdot", "*").replace("\\times", "*").replace("\\pi", " PI ")
    s = _SHORT_FRAC_RE.sub(r"\\frac{\1}{\2}", _SHORT_SQRT_RE.sub(r"\\sqrt{\1}", s))
    for _ in range(4):  # innermost first; deeper nesting goes to latex2sympy
        s = _SQRT_RE.sub(r" SQRT(\1)", _FRAC_RE.sub(r"((\1)/(\2))", _EXP_BRACE_RE.sub(r"^(\1)", s)))
    if "\\" in s or not _SIMPLE_RE.match(s.replace("SQRT", "").replace("PI", "")):
        return None
    if re.search(r"/\s*\d+\s*[a-z(]", s) or re.search(r"[a-z]\s*\(", s) or re.search(r"\^\s*(?:\d{2}|\d*\.)", s):
        return None  # `1/2x`, `x(2)` (a call to latex2sympy), `x^22`: let latex2sympy decide
    if re.search(r"\d\s*e|e\s*\d|[a-z][ei]|[ei][a-z]", s):
        return None  # `1e5`, `e2` (scientific notation?) and runs with e or i (`ie`, `be`): latex2sympy's reading
    s = s.replace("{", "(").replace("}", ")").replace("^", "**")
    s = re.sub(r"([a-z])(?=\d)", r"\1*", s)  # `x2` is x * 2, not a name
    s = _WORD_RE.sub(lambda m: "*".join(m.group(0)), s)  # `ab` is a * b
    s = s.replace("SQRT", "sqrt").replace("PI", "pi")
    names = {c: sympy.Symbol(c) for c in set(re.findall(r"\b[a-z]\b", s))}
    names.pop("e", None)
    return parse_expr(s, local_dict={**names, "sqrt": sympy.sqrt, "pi": sympy.pi, "e": sympy.E}, transformations=_TRANSFORMS)


@lru_cache(maxsize=4096)
def _parse_cached(latex: str, radians: bool) -> tuple[bool, Any]:
    # Failures are cached too: a broken gold answer repeats for every response of its prompt,
    # and a failing parse costs tens of milliseconds (parser error recovery).
    try:
        fast = _fast_parse(latex)
    except Exception:  # anything parse_expr dislikes goes to the full LaTeX parser
        fast = None
    if fast is not None:
        return True, _exact(fast)
    try:
        return True, _exact(latex2sympy(latex, normalization_config=_NORM, convert_degrees=radians))
    except Exception as exc:
        return False, f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"


def parse(latex: str, radians: bool = False) -> Any:
    """`latex` as a sympy object, floats made exact. Raises `ParseFailure` on unparseable input."""
    ok, value = _parse_cached(latex, radians)
    if not ok:
        raise ParseFailure(value)
    return value


def _exact(expr: Any) -> Any:
    if isinstance(expr, MatrixBase):
        return expr.applyfunc(_exact)
    if isinstance(expr, Basic) and expr.atoms(Float):
        return expr.xreplace({f: Rational(str(f)) for f in expr.atoms(Float)})
    return expr


# One answer of each common shape, and one malformed answer. ANTLR builds its prediction DFA
# lazily, so the first parse of each construct (and of an error) costs 10-100 ms; paying that at
# worker start-up (~0.3 s) keeps it out of the first verdicts.
_WARM_UP = (
    "\\frac{x^2}{2}", "(1, 2]", "x = 1", "1:2", "1+)", "\\sin(x)+\\sqrt{2}", "\\text{a}", "\\{1,2\\}",
    "2\\frac{1}{3}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "\\sum_{k=0}^{n-1} a_k a_{n-k}",
)


def warm_up() -> None:
    """Parse `_WARM_UP` once with the full LaTeX parser and evaluate a value, then forget them."""
    for latex in _WARM_UP:
        with contextlib.suppress(Exception):  # the malformed one raises, by design
            latex2sympy(latex, normalization_config=_NORM)
    compare("\\frac{x^2}{2}", "x", 1e-9, True, False)
    _parse_cached.cache_clear()


_UNIT_ALIASES = {"sec": "second", "secs": "second", "min": "minute", "mins": "minute", "hr": "hour", "hrs": "hour", "lb": "pound", "lbs": "pound"}


@lru_cache(maxsize=256)
def unit_in_si(unit: str) -> tuple[str, str] | None:
    """(factor, SI dimension) of a unit name like `km`, `hours` or `cm^2`, by
    `sympy.physics.units`; None for names it does not know (`dollars`)."""
    from sympy.physics import units as u

    name, _, power = unit.replace(" ", "").partition("^")
    quantity = getattr(u, _UNIT_ALIASES.get(name, name), None)
    if quantity is None and name.endswith("s"):
        quantity = getattr(u, _UNIT_ALIASES.get(name[:-1], name[:-1]), None)
    if not isinstance(quantity, u.Quantity):
        return None
    expr = u.convert_to(quantity ** int(power or 1), [u.meter, u.kilogram, u.second, u.ampere, u.kelvin, u.mole, u.candela])
    factor, dimension = expr.as_coeff_Mul()
    if not factor.is_Rational:
        return None
    return str(factor), str(dimension)


def numeric(latex: str, radians: bool = False) -> str | None:
    """The value of a constant real expression to 30 significant digits, or None (also when
    `latex` does not parse: `compare` then reports which side failed)."""
    try:
        expr = parse(latex, radians)
    except Exception:
        return None
    if not isinstance(expr, sympy.Expr) or expr.free_symbols:
        return None
    value = sympy.N(expr, _DIGITS)
    if not value.is_real or not value.is_finite:
        return None
    return str(value)


def compare(reference: str, candidate: str, rel_tol: float, equations: bool, radians: bool) -> tuple[str, str, str, str]:
    """(`equivalent`|`not_equivalent`|`undecided`, reason, reference as sympy, candidate as sympy)."""
    try:
        ref = parse(reference, radians)
    except Exception as exc:
        return "undecided", f"reference could not be parsed: {exc}", "", ""
    try:
        cand = parse(candidate, radians)
    except Exception as exc:
        return "not_equivalent", f"candidate could not be parsed: {exc}", str(ref)[:200], ""
    ref, cand = _imaginary_unit(ref, cand)
    same, reason = _equal(ref, cand, rel_tol, equations)
    outcome = "equivalent" if same else "undecided" if same is None else "not_equivalent"
    return outcome, reason, str(ref)[:200], str(cand)[:200]


def _imaginary_unit(a: Any, b: Any) -> tuple[Any, Any]:
    """Both answers with `i` read as the imaginary unit when it is the only letter either has
    (`(1+4i)^2` against `-15+8i`, `i^2` against `-1`): a closed-form answer whose one letter is
    `i` is a complex number. With any other unknown, `i` stays a name (an index, a variable)."""
    names = set()
    for x in (a, b):
        if isinstance(x, Basic):
            names |= x.free_symbols
    if not names or any(getattr(sym, "name", None) != "i" for sym in names):
        return a, b
    unit = {sym: sympy.I for sym in names}
    return (a.xreplace(unit) if isinstance(a, Basic) else a), (b.xreplace(unit) if isinstance(b, Basic) else b)


def _equal(a: Any, b: Any, rel_tol: float, equations: bool) -> tuple[bool | None, str]:
    """(True, why) / (False, why) / (None, why) when nothing could show either."""
    if isinstance(a, MatrixExpr) or isinstance(b, MatrixExpr):  # `A + B`, `A B`: evaluate
        a, b = (x.doit() if isinstance(x, MatrixExpr) else x for x in (a, b))
    if isinstance(a, MatrixBase) or isinstance(b, MatrixBase):
        if not (isinstance(a, MatrixBase) and isinstance(b, MatrixBase)) or a.shape != b.shape:
            return False, "matrix shapes differ"
        return _all_equal(list(a), list(b), rel_tol, equations, "matrix entries")
    if equations:
        if isinstance(a, Eq) and not isinstance(b, Eq) and isinstance(a.lhs, sympy.Symbol):
            return _equal(a.rhs, b, rel_tol, equations)
        if isinstance(b, Eq) and not isinstance(a, Eq) and isinstance(b.lhs, sympy.Symbol):
            return _equal(a, b.rhs, rel_tol, equations)
        if isinstance(a, Eq) and isinstance(b, Eq):
            return _equations_equal(a, b, rel_tol)
    if isinstance(a, Relational) and isinstance(b, Relational) and not isinstance(a, Eq):
        return _inequalities_equal(a, b, rel_tol)
    if isinstance(a, FiniteSet) and isinstance(b, FiniteSet):
        return _sets_equal(list(a), list(b), rel_tol, equations)
    if isinstance(a, Interval) and isinstance(b, Interval):
        if (a.left_open, a.right_open) != (b.left_open, b.right_open):
            return False, "interval ends differ (open vs closed)"
        return _all_equal([a.start, a.end], [b.start, b.end], rel_tol, equations, "interval ends")
    if isinstance(a, Union) and isinstance(b, Union):
        return _sets_equal(list(a.args), list(b.args), rel_tol, equations)
    if isinstance(a, sympy.Tuple) and isinstance(b, sympy.Tuple):
        if len(a) != len(b):
            return False, "tuple lengths differ"
        return _all_equal(list(a), list(b), rel_tol, equations, "tuple entries")
    if isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr):
        return _expr_equal(a, b, rel_tol)
    if isinstance(a, Basic) and isinstance(b, Basic) and type(a) is type(b):
        return (a == b), "structurally equal" if a == b else "different objects"
    return False, f"different kinds of answer ({type(a).__name__} vs {type(b).__name__})"


def _all_equal(xs: list[Any], ys: list[Any], rel_tol: float, equations: bool, what: str) -> tuple[bool | None, str]:
    for x, y in zip(xs, ys, strict=True):
        same, reason = _equal(x, y, rel_tol, equations)
        if not same:
            return same, f"{what} differ: {reason}"
    return True, f"{what} equal"


def _sets_equal(xs: list[Any], ys: list[Any], rel_tol: float, equations: bool) -> tuple[bool, str]:
    if len(xs) != len(ys):
        return False, f"sets have {len(xs)} and {len(ys)} elements"
    left = list(ys)
    for x in xs:
        match = next((i for i, y in enumerate(left) if _equal(x, y, rel_tol, equations)[0]), None)
        if match is None:
            return False, f"no element equal to {x}"
        left.pop(match)
    return True, "sets equal"


def _equations_equal(a: Eq, b: Eq, rel_tol: float) -> tuple[bool | None, str]:
    if a.lhs == b.lhs and isinstance(a.lhs, sympy.Symbol):
        return _expr_equal(a.rhs, b.rhs, rel_tol)
    da, db = a.lhs - a.rhs, b.lhs - b.rhs
    if _expr_equal(da, db, rel_tol)[0] or _expr_equal(da, -db, rel_tol)[0]:
        return True, "same equation"
    proportional = _proportional(da, db)
    if proportional is not None:  # decided by values, without simplify (~100 ms and more)
        return proportional, "equations equal up to a constant factor" if proportional else "different equations"
    ratio = sympy.simplify(da / db) if db != 0 else None
    if ratio is not None and ratio.is_number and ratio != 0:
        return True, "equations equal up to a constant factor"
    return False, "different equations"


def _proportional(da: Any, db: Any) -> bool | None:
    """Whether `da / db` is one nonzero constant, read from their values at the random points of
    `_samples`: a ratio that differs between two points proves the equations differ, the same
    ratio at every point is accepted as `_expr_equal` accepts equal values. None when fewer than
    two points give a usable ratio (no unknowns, poles): simplify decides then."""
    if not (da.free_symbols | db.free_symbols):
        return None
    ratios = []
    for va, vb in _samples(da, db):
        ca, cb = complex(va), complex(vb)
        if abs(cb) > 1e-12 and abs(ca) > 1e-12:
            ratios.append(ca / cb)
        elif abs(cb) > 1e-12 or abs(ca) > 1e-12:
            return False  # one side vanishes where the other does not: different solution sets
    if len(ratios) < 2:
        return None
    return all(abs(r - ratios[0]) <= 1e-12 * abs(ratios[0]) for r in ratios[1:])


def _inequalities_equal(a: Relational, b: Relational, rel_tol: float) -> tuple[bool | None, str]:
    """`x > 3` equals `3 < x`: same direction after `.canonical`, same `lhs - rhs`."""
    ca, cb = a.canonical, b.canonical
    if type(ca) is not type(cb):
        return False, f"different relations ({type(ca).__name__} vs {type(cb).__name__})"
    same, reason = _expr_equal(ca.lhs - ca.rhs, cb.lhs - cb.rhs, rel_tol)
    return same, f"inequalities: {reason}"


def _close(x: Any, y: Any, rel_tol: float) -> bool:
    # Relative only: an absolute floor would make 2^-99 equal 2^-98 (Math-Verify's bug).
    cx, cy = complex(x), complex(y)
    if not (cmath.isfinite(cx) and cmath.isfinite(cy)):
        return cx == cy  # `inf <= rel_tol * inf` would make 5 "close" to infinity
    diff = abs(cx - cy)
    scale = max(abs(cx), abs(cy))
    return diff <= rel_tol * scale


def _samples(a: sympy.Expr, b: sympy.Expr) -> list[tuple[Any, Any]]:
    symbols = sorted((a - b).free_symbols, key=str)
    rng = random.Random(12345)  # fixed seed: the same pair always gets the same verdict
    # A symbol in the limits of a sum or product (`\sum_{k=0}^{n-1}`) takes integer values: a
    # sum up to 37/13 means nothing, and evalf would run Euler-Maclaurin on it for seconds.
    series = (a - b).atoms(sympy.Sum, sympy.Product)
    counters = {sym for term in series for limit in term.limits for end in limit[1:] for sym in end.free_symbols}
    points = [{}] if not symbols else [
        {s: sympy.Integer(rng.randint(2, 9)) if s in counters else Rational(rng.randint(1, 97), rng.randint(1, 31)) for s in symbols}
        for _ in range(_POINTS)
    ]
    values = []
    for point in points:
        try:
            va = sympy.N(_finite(a.xreplace(point), series), _DIGITS)
            vb = sympy.N(_finite(b.xreplace(point), series), _DIGITS)
            complex(va), complex(vb)
        except (TypeError, ValueError, ZeroDivisionError):
            continue  # a pole or a non-numeric value at this point: try the others
        values.append((va, vb))
    return values


def _finite(expr: Any, series: set[Any]) -> Any:
    """`expr` with its sums and products (now with integer limits) written out."""
    return expr.doit() if series else expr


def _expr_equal(a: sympy.Expr, b: sympy.Expr, rel_tol: float) -> tuple[bool | None, str]:
    if a == b or str(a) == str(b):  # same printed form: the same expression (symbols may differ only in assumptions)
        return True, "identical"
    diff = (a - b).doit()
    if diff == 0:
        return True, "identical after automatic simplification"
    if diff.is_Rational:  # exact constants: exact answer, no tolerance (1/2^99 vs 1/2^98)
        return False, f"exact values differ by {diff}"
    values = _samples(a, b)
    for va, vb in values:
        if max(abs(complex(va)), abs(complex(vb))) < 1e-20:
            continue  # near zero a relative test says nothing; leave it to expand/simplify
        if not _close(va, vb, rel_tol):
            return False, f"values differ ({sympy.N(va, 8)} vs {sympy.N(vb, 8)})"
    if sympy.expand(diff) == 0:
        return True, "equal after expand"
    near_zero = any(max(abs(complex(va)), abs(complex(vb))) < 1e-20 for va, vb in values)
    if values and not near_zero:
        return True, f"numerically equal at {len(values)} point(s) to {_DIGITS} digits"
    if not values and diff.atoms(AppliedUndef):
        # `m(b)` (a letter before brackets read as a function): no point evaluates it, and
        # simplify spends up to seconds on a difference that holds an unknown function
        return None, "a - b holds an unknown function and could not be evaluated"
    if sympy.simplify(diff) == 0:
        return True, "equal after simplify"
    if values and all(_close(va, vb, rel_tol) for va, vb in values):
        return True, f"numerically equal at {len(values)} point(s) to {_DIGITS} digits"
    return None, "no sample point could be evaluated and simplify did not reduce a - b to 0"
