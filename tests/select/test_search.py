"""Search on the offline simulator: what each algorithm guarantees, one property per test."""

from __future__ import annotations

import numpy as np
import pytest

from rewardlab.errors import ArrayError
from rewardlab.select.adaptive import (
    adaptive_vote,
    beta_stop_confidence,
    fit_calibrator,
    rejection_threshold,
)
from rewardlab.select.generate import Problem, Step, StepGenerator, StepScorer, TokenMeter
from rewardlab.select.options import SimulatorConfig
from rewardlab.select.search import (
    aggregate_prefix,
    beam_search,
    best_first_search,
    best_of_n_search,
    early_rejection_search,
    rollouts,
)
from rewardlab.select.simulator import StepSimulator, judge


def accuracy(results, problems):
    return float(np.mean([judge(p, r.answer) for p, r in zip(problems, results, strict=True)]))


def test_simulator_satisfies_both_protocols():
    sim = StepSimulator(seed=0)
    assert isinstance(sim, StepGenerator) and isinstance(sim.prm, StepScorer)


def test_simulator_is_reproducible_from_its_seed():
    a, b = StepSimulator(seed=3), StepSimulator(seed=3)
    pa, pb = a.problems(5), b.problems(5)
    assert pa == pb
    ra = [best_of_n_search(a, a.prm, p, 4) for p in pa]
    rb = [best_of_n_search(b, b.prm, p, 4) for p in pb]
    assert [r.answer for r in ra] == [r.answer for r in rb] and [r.tokens for r in ra] == [r.tokens for r in rb]


def test_correct_chains_end_in_the_reference_and_broken_ones_never_do():
    sim = StepSimulator(seed=1)
    for problem in sim.problems(30):
        finished, _ = rollouts(sim, sim.prm, problem, 6)
        for node in finished:
            assert (node.answer == problem.reference) == bool(node.steps[-1].meta["ok"])


def test_prm_is_informative_but_noisy():
    sim = StepSimulator(seed=2)
    good, bad = [], []
    for problem in sim.problems(60):
        finished, _ = rollouts(sim, sim.prm, problem, 4)
        for node in finished:
            for step, score in zip(node.steps, node.scores, strict=True):
                (good if step.meta["ok"] else bad).append(score)
    assert np.mean(good) > np.mean(bad) + 0.2
    assert min(good) < 0.5 < max(bad)  # some good steps look bad and the reverse


def test_extending_a_complete_solution_is_refused():
    sim = StepSimulator(seed=0)
    problem = sim.problems(1)[0]
    finished, _ = rollouts(sim, sim.prm, problem, 1)
    with pytest.raises(ArrayError, match="complete"):
        sim.extend(problem, [finished[0].steps])


def test_beam_search_samples_width_times_expand_steps_every_round_the_first_too():
    class Counting:
        def __init__(self, sim):
            self.sim, self.rounds = sim, []

        def extend(self, problem, prefixes):
            self.rounds.append(len(prefixes))
            return self.sim.extend(problem, prefixes)

    sim = StepSimulator(SimulatorConfig(steps=(3, 3), detour=0.0), seed=3)
    gen = Counting(sim)
    beam_search(gen, sim.prm, sim.problems(1)[0], width=3, expand=2)
    assert gen.rounds[0] == 3 * 2  # Snell et al. 2024: N = width x expand first steps
    assert all(r <= 3 * 2 for r in gen.rounds)


def test_token_meter_counts_every_generated_step():
    sim = StepSimulator(seed=0)
    problem = sim.problems(1)[0]
    result = beam_search(sim, sim.prm, problem, width=3, expand=2)
    assert result.tokens > sum(s.tokens for s in result.solution.steps)  # the pruned branches count too
    meter = TokenMeter(sim)
    steps = meter.extend(problem, [(), ()])
    assert meter.tokens == sum(s.tokens for s in steps) and meter.steps == 2


def test_beam_search_with_a_sharp_prm_solves_almost_everything():
    sim = StepSimulator(SimulatorConfig(prm_separation=8.0), seed=4)
    problems = sim.problems(40)
    results = [beam_search(sim, sim.prm, p, width=4, expand=4) for p in problems]
    assert accuracy(results, problems) >= 0.95
    assert all(len(r.finished) == 4 for r in results)


def test_beam_search_with_an_uninformative_prm_is_no_better_than_one_sample():
    # detour=0: broken chains are not longer, so finishing first says nothing about correctness
    sim = StepSimulator(SimulatorConfig(prm_separation=0.0, detour=0.0), seed=5)
    problems = sim.problems(150)
    beam = accuracy([beam_search(sim, sim.prm, p, width=4, expand=4) for p in problems], problems)
    single = accuracy([best_of_n_search(sim, sim.prm, p, 1) for p in problems], problems)
    assert abs(beam - single) < 0.12  # search cannot create signal the PRM lacks


def test_beam_search_favours_solutions_that_finish_first():
    # With broken chains running longer (detour), the first solutions to leave the beam are
    # more often correct, even under a PRM that knows nothing: a length bias to keep in mind.
    sim = StepSimulator(SimulatorConfig(prm_separation=0.0, detour=4.0), seed=5)
    problems = sim.problems(150)
    beam = accuracy([beam_search(sim, sim.prm, p, width=4, expand=4) for p in problems], problems)
    single = accuracy([best_of_n_search(sim, sim.prm, p, 1) for p in problems], problems)
    assert beam > single + 0.05


def test_best_first_search_returns_a_complete_solution_within_budget():
    sim = StepSimulator(seed=6)
    for problem in sim.problems(10):
        result = best_first_search(sim, sim.prm, problem, expand=2, max_tokens=3000)
        assert result.solution is not None and result.solution.complete
        assert result.tokens <= 3000 + 2 * 200  # the last expansion may cross the budget


def test_best_first_search_with_no_budget_left_returns_nothing_complete():
    sim = StepSimulator(seed=6)
    result = best_first_search(sim, sim.prm, sim.problems(1)[0], expand=1, max_tokens=1)
    assert result.answer is None and np.isnan(result.score)


def test_early_rejection_that_rejects_nothing_is_best_of_n():
    a, b = StepSimulator(seed=7), StepSimulator(seed=7)
    never = lambda scores, depths: np.ones(len(scores))  # noqa: E731  # every prefix certain to succeed
    for pa, pb in zip(a.problems(10), b.problems(10), strict=True):
        bon = best_of_n_search(a, a.prm, pa, 8)
        er = early_rejection_search(b, b.prm, pb, 8, never, threshold=0.5, prune_dominated=False)
        assert (bon.answer, bon.tokens) == (er.answer, er.tokens)


@pytest.mark.parametrize("aggregate", ["min", "product"])
def test_pruning_dominated_prefixes_never_changes_the_pick_and_saves_tokens(aggregate):
    never = lambda scores, depths: np.ones(len(scores))  # noqa: E731
    a, b = StepSimulator(seed=7), StepSimulator(seed=7)
    saved = 0
    for pa, pb in zip(a.problems(40), b.problems(40), strict=True):
        bon = best_of_n_search(a, a.prm, pa, 8, aggregate=aggregate)
        er = early_rejection_search(b, b.prm, pb, 8, never, threshold=0.5, aggregate=aggregate)
        assert (er.answer, er.score) == (bon.answer, bon.score)
        assert er.tokens <= bon.tokens
        saved += bon.tokens - er.tokens
    assert saved > 0  # broken chains run longer: their tails are cut once a better one finished


class _OverOnePRM:
    def score(self, problem, prefixes):
        return [1.5 for _ in prefixes]


def test_product_bound_refuses_step_scores_above_one():
    # hard problems whose broken chains wander long: some chain finishes while others are open
    sim = StepSimulator(SimulatorConfig(step_accuracy=(1.0, 1.0), detour=6.0), seed=7)
    never = lambda scores, depths: np.ones(len(scores))  # noqa: E731
    problem = sim.problems(1, seed=3)[0]
    with pytest.raises(ArrayError, match="outside"):
        early_rejection_search(sim, _OverOnePRM(), problem, 8, never, aggregate="product")
    early_rejection_search(sim, _OverOnePRM(), problem, 8, never, aggregate="product", prune_dominated=False)


@pytest.mark.slow
def test_rejection_threshold_bounds_the_loss_on_fresh_problems():
    sim = StepSimulator(seed=11)
    calibrator = fit_calibrator(sim, sim.prm, sim.problems(120, seed=12), judge, n=6, aggregate="product")
    threshold = rejection_threshold(sim, sim.prm, sim.problems(150, seed=13), judge, calibrator, n=8,
                                    max_loss=0.02, aggregate="product")  # fmt: skip
    assert 0 < threshold < 1
    lost = 0
    problems = sim.problems(150, seed=14)
    a, b = StepSimulator(seed=11), StepSimulator(seed=11)
    for pa, pb in zip(problems, problems, strict=True):
        bon = best_of_n_search(a, a.prm, pa, 8, aggregate="product")
        er = early_rejection_search(b, b.prm, pb, 8, calibrator, threshold=threshold, aggregate="product")
        lost += judge(pa, bon.answer) and not judge(pb, er.answer)
    assert lost / len(problems) <= 0.02 + 2 * np.sqrt(0.02 * 0.98 / len(problems))  # the bound, with sampling slack


@pytest.mark.parametrize("prune_dominated", [True, False])
def test_replayed_rejection_is_the_search_it_replays(prune_dominated):
    from rewardlab.select.search import replay_rejection

    calibrated = lambda scores, depths: np.clip(np.asarray(scores) * 1.3, 0, 1)  # noqa: E731  # any monotone map
    a, b = StepSimulator(seed=23), StepSimulator(seed=23)
    for pa, pb in zip(a.problems(30), b.problems(30), strict=True):
        chains, _ = rollouts(a, a.prm, pa, 8)
        p = [calibrated(np.array([aggregate_prefix(c.scores[:d], "product") for d in range(1, len(c.scores) + 1)]), None)
             for c in chains]  # fmt: skip
        picked, tokens = replay_rejection(chains, p, threshold=0.4, aggregate="product", prune_dominated=prune_dominated)
        searched = early_rejection_search(b, b.prm, pb, 8, calibrated, threshold=0.4, aggregate="product",
                                          prune_dominated=prune_dominated)  # fmt: skip
        assert (picked.answer, tokens) == (searched.answer, searched.tokens)


def test_rejection_threshold_is_zero_without_enough_problems():
    sim = StepSimulator(seed=11)
    always = lambda scores, depths: np.full(len(scores), 0.9)  # noqa: E731
    assert rejection_threshold(sim, sim.prm, sim.problems(20), judge, always, n=4, max_loss=0.01) == 0.0


def test_early_rejection_always_keeps_one_solution():
    sim = StepSimulator(seed=8)
    hopeless = lambda scores, depths: np.zeros(len(scores))  # noqa: E731
    for problem in sim.problems(10):
        result = early_rejection_search(sim, sim.prm, problem, 8, hopeless, threshold=0.5)
        assert result.solution is not None and len(result.finished) == 1


def test_calibrator_is_calibrated_on_fresh_problems():
    from rewardlab.evaluate.calibration import ece

    sim = StepSimulator(seed=9)
    calibrator = fit_calibrator(sim, sim.prm, sim.problems(150, seed=10), judge, n=6, aggregate="product")
    probs, labels = [], []
    for problem in sim.problems(150, seed=11):
        finished, _ = rollouts(sim, sim.prm, problem, 4)
        for node in finished:
            for depth in range(1, len(node.scores) + 1):
                probs.append(calibrator(np.array([aggregate_prefix(node.scores[:depth], "product")]), np.array([depth]))[0])
                labels.append(judge(problem, node.answer))
    assert ece(probs, labels) < 0.05
    assert min(probs) >= 0.0 and max(probs) <= 1.0


def test_beta_stop_confidence_is_the_beta_tail():
    from scipy.stats import beta

    for top, second in ((4, 0), (5, 3), (2, 2)):
        assert beta_stop_confidence(top, second) == pytest.approx(beta.sf(0.5, top + 1, second + 1))


def test_beta_stop_confidence_is_adaptive_consistencys_integral():
    # Aggarwal et al. 2023 (Adaptive-Consistency): with a votes for the leader and b for the
    # runner-up, stop when  int_0.5^1 x^a (1-x)^b dx / int_0^1 x^a (1-x)^b dx  >= threshold
    from scipy import integrate

    for a, b in ((1, 0), (4, 0), (5, 3), (9, 2), (7, 7), (30, 12)):
        def density(x, a=a, b=b):
            return x**a * (1 - x) ** b

        tail = integrate.quad(density, 0.5, 1)[0] / integrate.quad(density, 0, 1)[0]
        assert beta_stop_confidence(a, b) == pytest.approx(tail, rel=1e-9)


def test_adaptive_vote_stops_after_four_unanimous_samples():
    sim = StepSimulator(SimulatorConfig(step_accuracy=(1e6, 1e-3)), seed=12)  # every chain correct
    result = adaptive_vote(sim, sim.prm, sim.problems(1)[0], max_n=16, confidence=0.95)
    # 1 - I_1/2(n + 1, 1) = 1 - 2^-(n+1) first reaches 0.95 at n = 4
    assert (result.samples, result.stopped) == (4, "vote")


def test_adaptive_vote_uses_the_whole_budget_when_answers_split():
    sim = StepSimulator(SimulatorConfig(step_accuracy=(1.0, 1.0), distractors=6), seed=13)
    results = [adaptive_vote(sim, sim.prm, p, max_n=6, confidence=0.99) for p in sim.problems(10)]
    assert any(r.stopped == "budget" and r.samples == 6 for r in results)


class _ScriptedGenerator:
    """Each solution is one final step whose answer is the next of `answers` (None: the solution
    never ends: every step is a non-final one)."""

    def __init__(self, answers):
        self.answers, self.calls = list(answers), 0

    def extend(self, problem, prefixes):
        steps = []
        for prefix in prefixes:
            if not prefix:  # a new solution: take its scripted answer
                self.calls += 1
                answer = self.answers.pop(0) if self.answers else None
                steps.append(Step("loop", 5) if answer == "never" else Step(f"= {answer}", 5, final=True, answer=answer))
            else:
                steps.append(Step("still going", 5))  # a solution that never ends keeps going
        return steps


class _Flat:
    def score(self, problem, prefixes):
        return [0.5] * len(prefixes)


def test_adaptive_vote_stops_at_max_n_when_solutions_never_finish():
    gen = _ScriptedGenerator(["never"] * 100)
    result = adaptive_vote(gen, _Flat(), Problem("p"), max_n=3)
    assert (result.samples, result.stopped, result.answer, gen.calls) == (3, "budget", None, 3)
    assert result.tokens == 3 * 64 * 5  # every draw ran to the step limit, and its tokens count


def test_adaptive_vote_groups_equivalent_answers_and_missing_answers_do_not_vote():
    # three ways to write one half, two missing answers: the half wins with 3 votes (exact
    # strings would give three one-vote classes and a tie)
    gen = _ScriptedGenerator([None, "\\frac{1}{2}", "0.5", None, "3", "1/2"])
    result = adaptive_vote(gen, _Flat(), Problem("p"), max_n=6, confidence=0.99)
    assert (result.answer, result.stopped, result.samples) == ("\\frac{1}{2}", "budget", 6)
    exact = adaptive_vote(_ScriptedGenerator(["\\frac{1}{2}", "0.5", "3", "3"]), _Flat(), Problem("p"), max_n=4,
                          confidence=0.99, equivalence="exact")  # fmt: skip
    assert exact.answer == "3"


def test_a_calibrator_from_few_rollouts_pools_every_depth_into_one_map():
    # 5 problems x 4 rollouts: fewer than min_examples prefixes even at depth 1
    sim = StepSimulator(seed=0)
    calibrator = fit_calibrator(sim, sim.prm, sim.problems(5), judge, n=4)
    assert len(calibrator.models) == 1 and calibrator.examples < 200
    p = calibrator(np.array([0.1, 0.5, 0.9]), np.array([1, 3, 7]))
    assert np.all((p >= 0) & (p <= 1)) and p[0] <= p[2]  # a probability, rising with the score


def test_adaptive_vote_needs_calibrator_and_threshold_together():
    sim = StepSimulator(seed=0)
    with pytest.raises(ArrayError, match="both"):
        adaptive_vote(sim, sim.prm, sim.problems(1)[0], reward_threshold=0.9)


def test_unknown_aggregate_is_refused():
    with pytest.raises(ArrayError, match="aggregate"):
        aggregate_prefix([0.5], "median")  # type: ignore[arg-type]


def test_any_reward_drives_a_search_and_its_errors_are_counted():
    from rewardlab.core import ErrorKind, RewardResult, reward
    from rewardlab.select.generate import RewardScorer

    @reward(range=(0, 1), register=False)
    def step_signal(sample):
        # a "PRM" that reads the simulator's step text; fails on the third step of any chain
        if len(sample.steps) == 3:
            return RewardResult.failure(ErrorKind.PARSE, "cannot read step 3")
        return 0.5

    sim = StepSimulator(SimulatorConfig(steps=(4, 4)), seed=14)
    scorer = RewardScorer(step_signal)
    result = best_of_n_search(sim, scorer, sim.problems(1)[0], 3)
    assert len(result.finished) == 3
    assert scorer.errors == 3 and scorer.error_kinds == {"parse": 3}
    assert all(node.scores[2] == float("-inf") for node in result.finished)


def test_diverse_tree_search_finishes_one_solution_per_tree_and_beats_one_sample():
    from rewardlab.select.search import diverse_tree_search

    sim = StepSimulator(SimulatorConfig(detour=0.0), seed=15)
    problems = sim.problems(120)
    results = [diverse_tree_search(sim, sim.prm, p, trees=4, expand=4) for p in problems]
    assert all(len(r.finished) == 4 for r in results)
    single = StepSimulator(SimulatorConfig(detour=0.0), seed=15)
    one = accuracy([best_of_n_search(single, single.prm, p, 1) for p in problems], problems)
    assert accuracy(results, problems) > one + 0.05


def test_one_tree_of_dvts_is_greedy_beam_search_of_width_one():
    from rewardlab.select.search import diverse_tree_search

    a, b = StepSimulator(seed=16), StepSimulator(seed=16)
    for pa, pb in zip(a.problems(5), b.problems(5), strict=True):
        tree = diverse_tree_search(a, a.prm, pa, trees=1, expand=3)
        beam = beam_search(b, b.prm, pb, width=1, expand=3)
        assert (tree.answer, tree.tokens) == (beam.answer, beam.tokens)


def test_mcts_with_a_sharp_prm_solves_almost_everything():
    from rewardlab.select.mcts import mcts_search

    sim = StepSimulator(SimulatorConfig(prm_separation=8.0, detour=0.0), seed=17)
    problems = sim.problems(40)
    results = [mcts_search(sim, sim.prm, p, simulations=24, expand=3) for p in problems]
    assert accuracy(results, problems) >= 0.9


def test_mcts_that_finishes_nothing_completes_the_most_visited_path_greedily():
    from rewardlab.select.mcts import mcts_search

    sim = StepSimulator(SimulatorConfig(steps=(8, 8)), seed=18)
    meter_sim = StepSimulator(SimulatorConfig(steps=(8, 8)), seed=18)
    problem = sim.problems(1)[0]
    result = mcts_search(sim, sim.prm, problem, simulations=1, expand=3, rollout=False)  # one expansion: 1 of 8 steps
    assert result.answer is not None and len(result.finished) == 1 and len(result.solution.steps) >= 8
    first = TokenMeter(meter_sim).extend(problem, [(), (), ()])  # the same 3 first steps (keyed randomness)
    assert result.tokens > sum(s.tokens for s in first)  # and the greedy completion's steps on top


def test_mcts_refuses_zero_simulations():
    from rewardlab.select.mcts import mcts_search

    sim = StepSimulator(seed=0)
    with pytest.raises(ArrayError, match="simulations"):
        mcts_search(sim, sim.prm, sim.problems(1)[0], simulations=0)


def test_mcts_rollouts_make_one_solution_a_simulation_sharing_prefixes():
    from rewardlab.select.mcts import mcts_search

    a, b = StepSimulator(seed=19), StepSimulator(seed=19)
    for pa, pb in zip(a.problems(10), b.problems(10), strict=True):
        tree = mcts_search(a, a.prm, pa, simulations=16, expand=2)
        flat = best_of_n_search(b, b.prm, pb, 16)
        assert len(tree.finished) >= 8  # a rollout per simulation that reaches an open leaf
        assert tree.tokens < flat.tokens  # the rollouts share the tree's prefixes


def test_mcts_stops_at_its_token_budget():
    from rewardlab.select.mcts import mcts_search

    sim = StepSimulator(seed=20)
    result = mcts_search(sim, sim.prm, sim.problems(1)[0], simulations=1000, expand=3, max_tokens=1500)
    assert 1500 <= result.tokens <= 1500 + 3 * 200 + 12 * 200  # the last simulation may cross it


def test_mcts_with_an_informative_prm_beats_one_sample_and_ignoring_it():
    from rewardlab.select.mcts import mcts_search

    problems = StepSimulator(seed=21).problems(150, seed=22)
    guided = [mcts_search(s, s.prm, p, simulations=12, expand=3) for s in [StepSimulator(seed=21)] for p in problems]
    blind_sim = StepSimulator(SimulatorConfig(prm_separation=0.0), seed=21)
    blind = [mcts_search(blind_sim, blind_sim.prm, p, simulations=12, expand=3) for p in problems]
    single = [best_of_n_search(s, s.prm, p, 1) for s in [StepSimulator(seed=21)] for p in problems]
    assert accuracy(guided, problems) > accuracy(blind, problems) + 0.05
    assert accuracy(guided, problems) > accuracy(single, problems) + 0.05


def test_the_batch_majority_vote_groups_equivalent_answers():
    from rewardlab.select.batch import SearchOptions, UnscoredVote, search_problems

    def answer(equivalence):
        gen = _ScriptedGenerator(["3", "\\frac{1}{2}", "0.5", "1/2", "3", None])
        options = SearchOptions(method="majority", n=6, equivalence=equivalence)
        return next(search_problems([Problem("p", reference="1/2")], gen, UnscoredVote(), options))["answer"]

    assert answer("math") == "\\frac{1}{2}"  # one half, written three ways: 3 votes against 2
    assert answer("exact") == "3"  # as strings, "3" is the only answer given twice
    with pytest.raises(ArrayError, match="equivalence"):
        SearchOptions(method="majority", equivalence="fuzzy")  # type: ignore[arg-type]


def test_calibrated_early_rejection_over_a_file_of_problems_spends_no_more_than_best_of_n():
    from rewardlab.select.batch import SearchOptions, calibrate_rejection, search_problems

    held = StepSimulator(seed=21).problems(120, seed=22)
    options = SearchOptions(method="early_rejection", n=8, aggregate="product", max_loss=0.02)
    rule = calibrate_rejection(StepSimulator(seed=21), StepSimulator(seed=21).prm, held, options)
    assert 0.0 <= rule.threshold < 1.0 and rule.examples > 0
    problems = StepSimulator(seed=23).problems(60, seed=24)
    sim_a, sim_b = StepSimulator(seed=23), StepSimulator(seed=23)  # same draws, keyed by prefix
    rejected = list(search_problems(problems, sim_a, sim_a.prm, options, rule))
    full = list(search_problems(problems, sim_b, sim_b.prm, SearchOptions(method="best_of_n", n=8, aggregate="product")))
    assert all(r["tokens"] <= f["tokens"] for r, f in zip(rejected, full, strict=True))  # it only cuts chains short
    assert sum(r["tokens"] for r in rejected) < sum(f["tokens"] for f in full)
    with pytest.raises(ArrayError, match="RejectionRule"):
        next(search_problems(problems, sim_a, sim_a.prm, options))
