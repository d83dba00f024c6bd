"""The compiled selection kernel against the numpy selectors it stands in for, on hostile
arrays (NaN, infinities, signed zeros, ties, masks, abstentions), and its loading and build:
a stale or missing library falls back to numpy, and the wheel carries the library."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename

from rewardlab.errors import ArrayError
from rewardlab.select import (
    _kernel,
    best_of_n,
    filtered_vote,
    hybrid_vote,
    majority_vote,
    weighted_vote,
)
from rewardlab.select.selectors import Selection

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    _kernel.LIBRARY is None and not os.environ.get("CI"),
    reason="the selection kernel is not built (python hatch_build.py)",
)


@contextmanager
def numpy_selectors() -> Iterator[None]:
    saved, _kernel.LIBRARY = _kernel.LIBRARY, None
    try:
        yield
    finally:
        _kernel.LIBRARY = saved


def compare(select: Callable[..., Selection], *args: object, labels: object = None, **kwargs: object) -> None:
    """`select(*args, **kwargs)` by the kernel and by numpy: the same picks and weights, bit for
    bit, and the same credit for `labels` (to rounding: numpy sums in another order)."""
    compiled = select(*args, **kwargs)
    compiled_credit = None if labels is None else compiled.credit(labels)
    with numpy_selectors():  # the credit too: it runs the kernel when there is one
        reference = select(*args, **kwargs)
        reference_credit = None if labels is None else reference.credit(labels)
    np.testing.assert_array_equal(compiled.chosen, reference.chosen)
    np.testing.assert_array_equal(compiled.weight, reference.weight)
    if labels is not None:
        np.testing.assert_allclose(compiled_credit, reference_credit, rtol=1e-12, atol=0)


SCORES = st.sampled_from([0.0, -0.0, 0.5, 0.5, 1.0, -1.0, 1e300, -1e300, -np.inf, np.nan, 5e-324, 0.1 + 0.2])
SHAPES = st.tuples(st.integers(0, 12), st.integers(1, 12))


def shaped(elements: st.SearchStrategy, dtype: object) -> st.SearchStrategy:
    return SHAPES.flatmap(lambda shape: hnp.arrays(dtype, shape, elements=elements))


def test_ci_has_the_kernel():
    if os.environ.get("CI"):
        assert _kernel.LIBRARY is not None, "CI must run the compiled selectors (make builds them)"


@settings(max_examples=300)
@given(shaped(SCORES, np.float64), st.data())
def test_best_of_n_equals_numpy_with_ties_nan_infinities_and_masks(scores, data):
    mask = data.draw(st.none() | hnp.arrays(np.bool_, scores.shape))
    labels = data.draw(hnp.arrays(np.float64, scores.shape, elements=st.sampled_from([0.0, 1.0, 0.25, np.nan, np.inf])))
    compare(best_of_n, scores, mask, labels=labels)


def test_best_of_n_refuses_plus_infinity_on_both_paths():
    with pytest.raises(ArrayError, match=r"\+inf"):
        best_of_n([[0.0, np.inf]])
    with numpy_selectors(), pytest.raises(ArrayError, match=r"\+inf"):
        best_of_n([[0.0, np.inf]])


@settings(max_examples=300)
@given(shaped(st.integers(-1, 11), np.int64), st.data())
def test_votes_equal_numpy_with_abstentions_masks_and_weights(raw, data):
    classes = np.where(raw < raw.shape[1], raw, -1)
    mask = data.draw(st.none() | hnp.arrays(np.bool_, classes.shape))
    labels = data.draw(hnp.arrays(np.float64, classes.shape, elements=st.sampled_from([0.0, 1.0, 0.5])))
    compare(majority_vote, classes, mask, labels=labels)
    weight_values = st.sampled_from([0.0, 0.0, 1.0, 0.5, 1e-9, 1.0 + 1e-6, 3.0, np.nan, 1e300])
    weights = data.draw(hnp.arrays(np.float64, classes.shape, elements=weight_values))
    compare(weighted_vote, classes, weights, mask)
    scores = data.draw(hnp.arrays(np.float64, classes.shape, elements=SCORES))
    compare(hybrid_vote, classes, scores, mask, labels=labels, top_k=2)
    compare(filtered_vote, classes, scores, mask, keep=0.5)


def test_a_large_random_problem_set_matches_on_every_selector():
    rng = np.random.default_rng(3)
    classes = rng.integers(0, 6, size=(5000, 16))
    scores = np.round(rng.random((5000, 16)), 2)  # many ties
    labels = (classes == 0).astype(np.float64)
    compare(best_of_n, scores, labels=labels)
    compare(majority_vote, classes, labels=labels)
    compare(weighted_vote, classes, scores, labels=labels)


def test_wide_rows_and_foreign_layouts_match():
    rng = np.random.default_rng(5)
    classes = rng.integers(-1, 90, size=(300, 90))
    scores = np.round(rng.random((300, 90)), 1)
    labels = rng.random((300, 90))
    compare(best_of_n, scores, labels=labels)  # wider than the numpy path's 52-column word
    compare(majority_vote, classes, labels=labels)
    compare(weighted_vote, classes, scores, labels=labels)
    big_endian, fortran = scores.astype(">f8"), np.asfortranarray(scores)
    for layout in (big_endian, fortran, scores[::-1], scores[:, ::-1]):
        compare(best_of_n, layout, labels=labels)
        compare(weighted_vote, classes, layout, labels=labels)
    np.testing.assert_array_equal(best_of_n(big_endian).chosen, best_of_n(scores).chosen)


def test_a_mask_whose_bytes_are_not_0_or_1_reads_as_true():
    # a bool view of uint8 data can hold 2: numpy reads it as True, and so must the kernel
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 3, size=(500, 8)).astype(np.uint8)
    scores, classes = np.round(rng.random((500, 8)), 1), rng.integers(-1, 8, size=(500, 8))
    for mask in (raw.view(np.bool_), raw != 0):
        compare(best_of_n, scores, mask)
        compare(majority_vote, classes, mask)
    np.testing.assert_array_equal(best_of_n(scores, raw.view(np.bool_)).chosen, best_of_n(scores, raw != 0).chosen)


@pytest.mark.parametrize(
    "bad", [np.zeros((3, 4), dtype=np.float32), np.zeros((3, 8))[:, ::2], np.zeros((4, 3))], ids=["float32", "strided", "shape"]
)
def test_arrays_of_the_wrong_kind_never_reach_the_c_code(bad):
    flags, count, first = np.zeros((3, 4), dtype=bool), np.zeros(3), np.zeros(3, dtype=np.int64)
    with pytest.raises(ValueError, match="kernel argument"):
        _kernel.tie_credit(bad, flags, count, first)
    with pytest.raises(ValueError, match="kernel argument"):
        _kernel.best_of_n(np.zeros((3, 4)), bad.astype(bool) if bad.shape != (3, 4) else bad)
    with pytest.raises(ValueError, match="kernel argument"):
        _kernel.vote(np.zeros((3, 4), dtype=np.int64), None, bad)


def test_a_class_id_out_of_range_is_refused_by_the_kernel_itself():
    with pytest.raises(ValueError, match=r"outside \[0, 3\)"):
        _kernel.vote(np.array([[0, 1, 3]]), None, None)
    with pytest.raises(ValueError, match=r"outside \[0, 3\)"):
        _kernel.vote(np.array([[0, -1, 2]]), None, None)
    weight, chosen = _kernel.vote(np.array([[0, -1, 1]]), np.array([[True, False, True]]), None)
    assert chosen.tolist() == [0] and weight.tolist() == [[0.5, 0.0, 0.5]]


def test_a_library_built_from_other_source_is_not_loaded(tmp_path):
    library = tmp_path / "lib_kernel.so.1"
    shutil.copy(_kernel._PATH, library)
    source = tmp_path / "_kernel.c"
    shutil.copy(_kernel._SOURCE, source)
    assert _kernel._load(library, source) is not None
    source.write_text(_kernel._SOURCE.read_text() + "\n/* edited */\n")
    with pytest.warns(RuntimeWarning, match="built from other source"):
        assert _kernel._load(library, source) is None
    assert _kernel._load(tmp_path / "absent.so", source) is None


def test_a_library_that_does_not_load_falls_back_with_a_warning(tmp_path):
    library = tmp_path / "lib_kernel.so.1"
    library.write_bytes(b"\x7fELF not really")
    with pytest.warns(RuntimeWarning, match="does not load"):
        assert _kernel._load(library, _kernel._SOURCE) is None


def test_the_build_script_reports_a_missing_compiler():
    done = subprocess.run(
        [sys.executable, str(ROOT / "hatch_build.py")], env={**os.environ, "CC": "/nonexistent/cc"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "did not build" in done.stderr and "/nonexistent/cc" in done.stderr
    assert _kernel._load(_kernel._PATH, _kernel._SOURCE) is not None  # the built one is untouched


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["default", "missing"])
def test_the_wheel_carries_the_kernel_or_is_pure_python_without_a_compiler(tmp_path, compiler):
    env = dict(os.environ)
    if compiler == "missing":
        env["CC"] = "/nonexistent/cc"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("rewardlab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
        if compiler == "missing":
            assert "rewardlab/select/lib_kernel.so.1" not in names
            assert "Root-Is-Purelib: true" in metadata and "Tag: py3-none-any" in metadata
            return
        # a manylinux tag (PEP 600), which a package index accepts, and one this machine installs
        arch = sysconfig.get_platform().split("-", 1)[1].replace("-", "_")
        assert "Root-Is-Purelib: false" in metadata
        assert re.search(rf"^Tag: py3-none-manylinux_2_\d+_{arch}$", metadata, flags=re.M), metadata
        _, _, _, tags = parse_wheel_filename(wheel.name)
        assert tags & set(sys_tags()), (tags, "not installable here")
        assert names.count("rewardlab/select/lib_kernel.so.1") == 1
        library = tmp_path / "lib_kernel.so.1"
        library.write_bytes(archive.read("rewardlab/select/lib_kernel.so.1"))
    loaded = _kernel._load(library, _kernel._SOURCE)
    assert loaded is not None
    assert loaded.kernel_source().decode() == hashlib.sha256(_kernel._SOURCE.read_bytes()).hexdigest()
