"""uvicorn's server, telling the reward service when a stop signal arrives (see `run_server`)."""

from __future__ import annotations

from types import FrameType

try:
    import uvicorn
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab.serve.service import RewardService


class DrainingServer(uvicorn.Server):
    """On SIGTERM/SIGINT, `RewardService.drain` first (readiness fails, new work is refused),
    then uvicorn's own graceful stop."""

    def __init__(self, config: uvicorn.Config, service: RewardService):
        super().__init__(config)
        self.service = service

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.service.drain()
        super().handle_exit(sig, frame)
