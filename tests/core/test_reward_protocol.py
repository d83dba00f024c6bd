import asyncio
import math

from rewardlab.core import (
    BaseReward,
    ErrorKind,
    Reward,
    RewardResult,
    Sample,
    Status,
    reward,
    spec_hash,
)
from rewardlab.core.sample import content_hash
from rewardlab.errors import ScoringError


@reward("t.short", range=(0, 1))
def short(sample, *, max_chars=5):
    return len(sample.response_text) <= max_chars


def test_function_reward_follows_the_protocol():
    assert isinstance(short, Reward)
    assert short.score(Sample(response="hi")).score == 1.0
    assert short(max_chars=1).score(Sample(response="hi")).score == 0.0


def test_exception_becomes_a_crash_error_not_zero():
    @reward("t.boom")
    def boom(sample):
        raise KeyError("nope")

    r = boom.score(Sample(response="x"))
    assert r.status is Status.ERROR and r.error.kind is ErrorKind.CRASH and "KeyError" in r.error.message


def test_scoring_error_keeps_its_kind():
    @reward("t.parse")
    def parse(sample):
        raise ScoringError("parse", "cannot read the reference")

    assert parse.score(Sample(response="x")).error.kind is ErrorKind.PARSE


def test_none_is_skipped():
    @reward("t.none")
    def none(sample):
        return None

    assert none.score(Sample(response="x")).status is Status.SKIPPED


def test_nan_and_out_of_range_and_wrong_type_are_invalid_output():
    @reward("t.bad", range=(0, 1))
    def bad(sample):
        return {"nan": math.nan, "big": 2.0, "str": "1"}[sample.response]

    for response in ("nan", "big", "str"):
        r = bad.score(Sample(response=response))
        assert r.error is not None and r.error.kind is ErrorKind.INVALID_OUTPUT, response


def test_score_batch_keeps_order_and_isolates_failures():
    @reward("t.div")
    def div(sample):
        return 1 / int(sample.response)

    results = div.score_batch([Sample(response=s) for s in ("1", "0", "4")])
    assert [r.score for r in results] == [1.0, None, 0.25]


def test_async_batch():
    results = asyncio.run(short.ascore_batch([Sample(response="a"), Sample(response="abcdefg")]))
    assert [r.score for r in results] == [1.0, 0.0]


def test_vectorised_compute_batch_with_wrong_length_is_an_error_per_row():
    class Broken(BaseReward):
        name = "t.broken"

        def compute_batch(self, samples):
            return [1.0]

    results = Broken().score_batch([Sample(response="a"), Sample(response="b")])
    assert all(r.error.kind is ErrorKind.INVALID_OUTPUT for r in results)


def test_spec_hash_changes_with_the_function_body():
    @reward("t.same")
    def one(sample):
        return 1

    @reward("t.same")
    def two(sample):
        return 2

    assert one.describe() != two.describe()
    assert isinstance(RewardResult.ok(1.0), RewardResult)


def test_spec_hash_prefers_the_rewards_own_spec_hash():
    @reward("t.own", register=False)
    def plain(sample):
        return 1

    assert spec_hash(plain) == content_hash(plain.describe())
    plain.spec_hash = "from-the-spec"
    assert spec_hash(plain) == "from-the-spec"


def test_spec_hash_ignores_an_empty_or_non_string_attribute():
    @reward("t.empty", register=False)
    def plain(sample):
        return 1

    plain.spec_hash = ""
    assert spec_hash(plain) == content_hash(plain.describe())
    plain.spec_hash = 7
    assert spec_hash(plain) == content_hash(plain.describe())


class _BareProtocol:
    """A reward that implements only the protocol's required members (as a third party may)."""

    name = "t.bare"
    range = (0.0, 1.0)

    def score(self, sample):
        return RewardResult.ok(1.0)

    def score_batch(self, samples):
        return [self.score(s) for s in samples]

    async def ascore_batch(self, samples):
        return self.score_batch(samples)

    def describe(self):
        return {"use": self.name}


class _Times:
    def __init__(self):
        self.seen = []

    def observe(self, component, seconds, samples):
        self.seen.append((component, samples))


def test_capabilities_have_one_default_for_base_rewards_and_bare_protocol_rewards():
    from rewardlab.core import batches_in_process, group_keys, observed
    from rewardlab.core.reward import observer_of

    bare, base = _BareProtocol(), short
    assert isinstance(bare, Reward)
    times = _Times()
    for r in (bare, base):
        assert group_keys(r) == frozenset() and batches_in_process(r) is False
        assert spec_hash(r) == content_hash(r.describe())
        assert observed(r, times) is r and observer_of(r) is None  # no parts: nothing to tell
    assert (base.group_keys, base.spec_hash, base.batches_in_process, base.observer) == (frozenset(), None, False, None)


def test_a_composite_declares_its_parts_capabilities():
    from rewardlab.compose import Component, Weighted
    from rewardlab.core import batches_in_process, group_keys, observed
    from rewardlab.core.reward import observer_of

    class InProcess(BaseReward):
        name = "t.in_process"
        batches_in_process = True
        group_keys = frozenset({"group"})

        def compute(self, sample):
            return 1.0

    plain = Weighted([Component("a", short)])
    mixed = Weighted([Component("a", short), Component("m", InProcess())])
    assert (batches_in_process(plain), group_keys(plain)) == (False, frozenset())
    assert (batches_in_process(mixed), group_keys(mixed)) == (True, frozenset({"group"}))
    times = _Times()
    seen = observed(mixed, times)
    assert seen is not mixed and observer_of(seen) is times and observer_of(mixed) is None
    seen.score_batch([Sample(response="hi")])
    assert times.seen == [("a", 1), ("m", 1)]
