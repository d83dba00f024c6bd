"""`RemoteExecutor`: a reward server as the `Executor` of a recorded run (``rewardlab score --remote``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rewardlab.core import GroupKey, RewardResult, Sample, spec_hash
from rewardlab.errors import UsageError

__all__ = ["RemoteExecutor"]


class RemoteExecutor:
    """An `Executor` that sends batches to a reward server (`Client.score`).

    Args:
        url: the server.
        reward: the served reward's name.
        token: bearer token, if the server needs one.
        client_options: passed to `Client` (retries, timeouts...).
    """

    def __init__(self, url: str, reward: str, *, token: str | None = None, **client_options: Any):
        from rewardlab.serve.client import Client

        self.reward = reward
        self.client = Client(url, token=token, **client_options)
        self._group_keys: frozenset[GroupKey] | None = None

    @property
    def group_keys(self) -> frozenset[GroupKey]:
        """What the served reward groups by (asked of the server once): a recorded run and the
        client keep its groups whole (`rewardlab.runner.groups`)."""
        if self._group_keys is None:
            self._group_keys = frozenset(self._info().get("group_keys", ()))
        return self._group_keys

    @classmethod
    def for_spec(cls, url: str, spec: str | Path, *, token: str | None = None) -> tuple[RemoteExecutor, str]:
        """The executor for `spec` on the server at `url`, and the spec hash to stamp rows with.

        `spec` is the served reward's name, or a spec file whose ``[reward] name`` is served
        (its hash must then match the server's, so the rows are stamped truthfully).

        Raises:
            UsageError: the server serves another version of the spec file.
            ServerError: the server does not serve that name, or cannot be reached.
        """
        local = None
        if Path(spec).is_file():
            from rewardlab.compose import build

            local = build(Path(spec))
        executor = cls(url, local.name if local is not None else str(spec), token=token)
        served = executor.spec_hash()
        if local is not None and spec_hash(local) != served:
            executor.close()
            raise UsageError(
                f"the server's {executor.reward!r} has spec hash {served}, the local spec {spec_hash(local)}; "
                "restart the server with this spec or pass the served name instead of the file"
            )
        return executor, served

    def map(self, samples: Sequence[Sample]) -> list[RewardResult]:
        return self.client.score(self.reward, list(samples), group_keys=self.group_keys)

    def spec_hash(self) -> str:
        """The served reward's spec hash (what its results are stamped with)."""
        return str(self._info()["spec_hash"])

    def _info(self) -> dict[str, Any]:
        from rewardlab.errors import ServerError

        for info in self.client.rewards():
            if info["name"] == self.reward:
                if self._group_keys is None:
                    self._group_keys = frozenset(info.get("group_keys", ()))
                return info
        raise ServerError(404, "unknown_reward", f"the server does not serve {self.reward!r}")

    def close(self) -> None:
        self.client.close()
