"""Shared demonstrations for the learn tests (planned once per session: they are deterministic)."""

from __future__ import annotations

import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("torch")

from rewardlab.learn.demos import DemoSet
from rewardlab.learn.planners import TabularTask, office_tabular, plan_demos


@pytest.fixture(scope="session")
def coffee_mail() -> TabularTask:
    return office_tabular("coffee_mail")


@pytest.fixture(scope="session")
def office_demos(coffee_mail: TabularTask) -> DemoSet:
    """60 shortest-path demonstrations of coffee_mail from the paper's start and random cells."""
    return plan_demos(coffee_mail, 60, seed=0)


@pytest.fixture(scope="session")
def office_split(office_demos: DemoSet) -> tuple[DemoSet, DemoSet]:
    """(train, held-out) demonstrations."""
    return office_demos.split(0.25, seed=0)
