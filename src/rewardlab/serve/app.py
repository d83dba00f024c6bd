"""The FastAPI app: `create_app(rewards, cache, settings)`.

Routes (the OpenAPI schema at ``/openapi.json`` is generated from `rewardlab.serve.schemas`):

=========================================  =====================================================
``POST /v1/rewards/{name}:score``           a batch of samples -> results in order
``POST /get_reward``                        OpenRLHF's remote reward protocol
``GET  /v1/rewards``                        hosted rewards with spec hash, tree and schemas
``GET  /healthz``                           the process is up
``GET  /readyz``                            the server accepts work (503 while shutting down)
``GET  /metrics``                           Prometheus text format
=========================================  =====================================================

With ``settings.token`` set, ``/v1/*`` and ``/get_reward`` need ``Authorization: Bearer <token>``;
OpenRLHF, which sends no headers, uses ``POST /openrlhf/<token>/get_reward`` or a client address in
``settings.openrlhf_trusted_networks``.
Every error is JSON ``{"error": {"code", "message", "details"}}`` with a 4xx/5xx status; a bad
request never takes the server down.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

try:
    import orjson
    from fastapi import Depends, FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.openapi.utils import get_openapi
    from fastapi.responses import JSONResponse, Response
    from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
    from fastapi_offline import FastAPIOffline
    from prometheus_client import CONTENT_TYPE_LATEST
    from pydantic import BaseModel, ValidationError
    from starlette.exceptions import HTTPException as StarletteHTTPException
    from starlette.requests import ClientDisconnect
except ImportError as exc:  # an extra is missing: say which one to install
    from rewardlab._lazy import reraise_missing

    reraise_missing(exc, __name__)

from rewardlab._version import __version__
from rewardlab.compose.objectives import WEIGHTS_KEY
from rewardlab.core import Reward, RewardResult, Sample
from rewardlab.core.columns import component_names, objective_names
from rewardlab.core.jsontext import loads
from rewardlab.errors import ApiError, InputError, MappingError, NestingError, SampleFieldError
from rewardlab.runner.reward_log import RewardLogger
from rewardlab.serve.openrlhf import (
    COMMON_SPECIAL_TOKENS,
    in_trusted_network,
    openrlhf_reply,
    openrlhf_rows,
)
from rewardlab.serve.schemas import (
    ErrorResponse,
    OpenRLHFRequest,
    OpenRLHFResponse,
    RewardsOut,
    ScoreRequest,
    ScoreResponse,
    ScoresResponse,
)
from rewardlab.serve.service import ExecutorFactory, RewardService
from rewardlab.serve.settings import ServeSettings
from rewardlab.store import ResultStore

__all__ = ["create_app"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 404, 413, 422, 429, 500, 503, 504)
}


def _json_error(exc: ApiError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)


class _Limits:
    """ASGI middleware: refuse oversize bodies (413) and count requests by route and status."""

    def __init__(self, app: ASGIApp, *, max_bytes: int, service: RewardService):
        self.app = app
        self.max_bytes = max_bytes
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = {"code": 500}

        async def send_counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            length = int(dict(scope["headers"]).get(b"content-length", b"0"))
        except ValueError:
            length = 0
        if length > self.max_bytes:
            response = _json_error(self._too_large(length))
            await response(scope, receive, send_counted)
        else:
            await self.app(scope, self._bounded(receive), send_counted)
        route = scope.get("route")
        path = getattr(route, "path", None) or "unmatched"
        self.service.metrics.requests.labels(path, str(status["code"])).inc()

    def _too_large(self, size: int) -> ApiError:
        return ApiError(
            413, "body_too_large",
            f"request body of {size} bytes exceeds the limit of {self.max_bytes}; split the batch",
        )

    def _bounded(self, receive: Receive) -> Receive:
        seen = 0

        async def wrapped() -> Message:
            # Chunked bodies carry no Content-Length: count as they arrive.
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                # An HTTPException, because FastAPI turns any other error raised while it
                # reads the body into a generic 400.
                raise StarletteHTTPException(413, self._too_large(seen).message)
            return message

        return wrapped


def create_app(
    rewards: Mapping[str, Reward],
    cache: ResultStore | None = None,
    settings: ServeSettings | None = None,
    *,
    executor_factory: ExecutorFactory | None = None,
    logger: RewardLogger | None = None,
) -> FastAPI:
    """The reward server as an ASGI app, with every dependency passed in.

    Args:
        rewards: served name -> built reward (`rewardlab.compose.build(spec)`).
        cache: result store shared by all rewards; ``None`` disables caching.
        settings: limits, batching, backend and auth (`ServeSettings()` by default).
        executor_factory: ``(name, reward) -> Executor`` to override the backend (tests, Ray).
        logger: gets each computed batch's reward statistics (TensorBoard, W&B:
            `rewardlab.runner.reward_log`); the caller closes it.

    Returns:
        A FastAPI app; ``app.state.service`` is its `RewardService` (close it with
        ``await app.state.service.aclose()`` when not run under a lifespan-aware server).

    Examples:
        >>> from rewardlab.verify.text import ExactMatch
        >>> app = create_app({"exact": ExactMatch()}, settings=ServeSettings(workers=0))
        >>> sorted(r.path for r in app.routes if "rewards" in r.path)
        ['/v1/rewards', '/v1/rewards/{name}:score']
    """
    settings = settings or ServeSettings()
    service = RewardService(rewards, cache, settings, executor_factory=executor_factory, logger=logger)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        service.start()  # uvicorn runs this before it opens its listening socket
        yield
        await service.aclose()

    # The /docs and /redoc pages with their assets served from the package (fastapi-offline
    # ships Swagger UI 5 and ReDoc): FastAPI's own pages load them from a CDN, blank offline.
    app = FastAPIOffline(
        title="rewardlab reward server",
        version=__version__,
        description="Batched, cached reward scoring; see docs/serve.md.",
        lifespan=lifespan,
    )
    app.state.service = service
    _install_error_handlers(app)
    _install_routes(app, service)
    _install_openapi(app, (ScoreRequest, OpenRLHFRequest))
    app.add_middleware(_Limits, max_bytes=settings.max_body_bytes, service=service)  # added last: outermost
    return app


def _invalid(errors: list[Any], prefix: tuple[str, ...] = ()) -> ApiError:
    details = [{"loc": [*prefix, *e.get("loc", ())], "type": e.get("type"), "msg": e.get("msg")} for e in errors]
    if any(d["type"] == "json_invalid" for d in details):
        return ApiError(400, "malformed_json", "the request body is not valid JSON", details=details)
    where = "; ".join(f"{'.'.join(map(str, d['loc']))}: {d['msg']}" for d in details[:5])
    return ApiError(422, "invalid_request", f"the request does not match the schema: {where}", details=details)


_REQUEST_KEYS = ("samples", "use_cache", "reply", "objective_weights")
_REPLIES = ("results", "scores")


def parse_score_body(body: bytes) -> tuple[list[Sample], bool, str]:
    """Samples, `use_cache` and `reply` of a score request (the fields of `ScoreRequest`).

    The envelope is checked here; every sample by `Sample.from_dict`, the rules that the
    runner and `rewardlab.score` apply too. Every bad sample is reported, not only the first.

    Raises:
        ApiError: 400 for bytes that are not JSON, 422 (naming the field) for the wrong shape.
    """
    data = _json_body(body)
    problems = _envelope_problems(data)
    if problems:
        raise _invalid(problems, ("body",))
    samples: list[Sample] = []
    weights = data.get("objective_weights")
    for i, row in enumerate(data["samples"]):
        if weights is not None:
            row = _with_weights(row, weights)
        try:
            samples.append(Sample.from_dict(row))
        except SampleFieldError as exc:
            problems.append({"loc": ("samples", i, exc.field), "type": "invalid_sample", "msg": exc.reason})
        except InputError as exc:
            problems.append({"loc": ("samples", i), "type": "invalid_sample", "msg": exc.reason})
    if problems:
        raise _invalid(problems, ("body",))
    return samples, data.get("use_cache", True), data.get("reply", "results")


def _with_weights(row: Any, weights: Any) -> Any:
    """`row` with the request's `objective_weights` in its meta, unless it names its own (as a
    column or in `meta`): a sample's own weights win. The library checks the weights
    (`compose.objectives`), so a bad one is that row's `invalid_input` result."""
    if not isinstance(row, dict) or WEIGHTS_KEY in row:
        return row
    meta = row.get("meta")
    if isinstance(meta, dict) and WEIGHTS_KEY in meta:
        return row
    return {**row, WEIGHTS_KEY: weights}


def _json_body(body: bytes) -> Any:
    """The request body as JSON (raises `ApiError` 400: ``malformed_json``, or ``invalid_input``
    for JSON nested too deeply for the parser)."""
    try:
        return loads(body)
    except NestingError as exc:
        raise ApiError(400, "invalid_input", f"the request body cannot be read: {exc}") from exc
    except ValueError as exc:
        raise ApiError(400, "malformed_json", f"the request body is not valid JSON: {exc}") from exc


def parse_openrlhf_body(body: bytes) -> OpenRLHFRequest:
    """An OpenRLHF request (`OpenRLHFRequest`), parsed like a score request: 400 for bytes that
    are not JSON or are nested too deep, 422 (naming the field) for the wrong shape."""
    data = _json_body(body)
    try:
        return OpenRLHFRequest.model_validate(data)
    except ValidationError as exc:
        raise _invalid(list(exc.errors()), ("body",)) from exc


def _envelope_problems(data: Any) -> list[dict[str, Any]]:
    """What is wrong with a score request apart from its samples (pydantic's error shape)."""
    if not isinstance(data, dict):
        return [{"loc": (), "type": "model_type", "msg": f"the body must be a JSON object, got {type(data).__name__}"}]
    problems: list[dict[str, Any]] = [
        {"loc": (key,), "type": "extra_forbidden", "msg": f"unknown key; a score request has {', '.join(_REQUEST_KEYS)}"}
        for key in data
        if key not in _REQUEST_KEYS
    ]
    if "samples" not in data:
        problems.append({"loc": ("samples",), "type": "missing", "msg": "field required: the samples to score"})
    elif not isinstance(data["samples"], list):
        problems.append({"loc": ("samples",), "type": "list_type", "msg": "must be a list of samples"})
    if not isinstance(data.get("use_cache", True), bool):
        problems.append({"loc": ("use_cache",), "type": "bool_type", "msg": "must be true or false"})
    if not isinstance(data.get("objective_weights", {}), dict | list):
        problems.append({"loc": ("objective_weights",), "type": "model_type", "msg": "must be an object naming each objective, or a list"})
    if data.get("reply", "results") not in _REPLIES:
        problems.append({"loc": ("reply",), "type": "literal_error", "msg": "must be 'results' or 'scores'"})
    return problems


def score_columns(encoded: Sequence[bytes | RewardResult], objectives: Sequence[str] = ()) -> dict[str, Any]:
    """The ``scores`` / ``statuses`` / ``errors`` columns of results (encoded rows or objects),
    and with `objectives` (a spec's objective names) ``objectives``: one column per objective,
    null where it was not computed."""
    scores: list[float | None] = []
    statuses: list[str] = []
    errors: list[dict[str, Any]] = []
    vectors: list[Mapping[str, float | None]] = []
    for i, item in enumerate(encoded):
        if isinstance(item, RewardResult):
            scores.append(item.score)
            statuses.append(item.status.value)
            vectors.append(item.objectives or {})
            if item.error is not None:
                errors.append({"row": i, **item.error.to_dict()})
            continue
        row = loads(item)
        scores.append(row.get("score"))
        statuses.append(row["status"])
        vectors.append(row.get("objectives") or {})
        if "error" in row:
            errors.append({"row": i, **row["error"]})
    columns: dict[str, Any] = {"scores": scores, "statuses": statuses, "errors": errors}
    if objectives:
        columns["objectives"] = {name: [v.get(name) for v in vectors] for name in objectives}
    return columns


async def score_reply(service: RewardService, name: str, body: bytes) -> bytes:
    """The JSON reply to a score request for reward `name` with request `body` (raises `ApiError`)."""
    hosted = service.get(name)
    samples, use_cache, reply = parse_score_body(body)
    start = time.perf_counter()
    outcome = await service.score(name, samples, use_cache=use_cache, reply=reply)
    service.metrics.request_latency.labels(name).observe(time.perf_counter() - start)
    if reply == "scores":
        columns = {"reward": name, "spec_hash": hosted.spec_hash, "rewardlab_version": __version__,
                   **score_columns(outcome.encoded, objective_names(hosted.reward)), "cached": outcome.cached}  # fmt: skip
        return orjson.dumps(columns)
    # The results are JSON already (from the batch or the cache): join, don't re-encode.
    head = orjson.dumps({"reward": name, "spec_hash": hosted.spec_hash, "cached": outcome.cached})
    rows = cast("list[bytes]", outcome.encoded)  # all bytes when full results were asked for (see `ScoreOutcome`)
    return b"".join((head[:-1], b',"results":[', b",".join(rows), b"]}"))


def _body_schema(model: type[BaseModel]) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": ref}}}}


def _install_openapi(app: FastAPI, models: tuple[type[BaseModel], ...]) -> None:
    """OpenAPI from the routes, plus the request models the hot route parses by hand."""

    def build() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for model in models:
                js = model.model_json_schema(ref_template="#/components/schemas/{model}")
                for name, sub in js.pop("$defs", {}).items():
                    components.setdefault(name, sub)
                components.setdefault(model.__name__, js)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = build  # type: ignore[method-assign]


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _json_error(exc)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _json_error(_invalid(list(exc.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _json_error(_from_http_exception(exc))

    # A client that hangs up mid-body gets nothing; answering 400 keeps it out of the error log
    # (as an unhandled exception it was a logged traceback) and counts it in the metrics.
    @app.exception_handler(ClientDisconnect)
    async def gone(_: Request, exc: ClientDisconnect) -> JSONResponse:
        return _json_error(ApiError(400, "client_disconnected", "the client disconnected before sending the whole body"))


def _from_http_exception(exc: StarletteHTTPException) -> ApiError:
    codes = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}
    return ApiError(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail), headers=exc.headers)


def _check_token(service: RewardService, authorization: str | None) -> None:
    """Refuse (401) a request whose ``Authorization: Bearer`` header lacks the server's token."""
    token = service.settings.token
    if token is None:
        return
    scheme, _, given = (authorization or "").partition(" ")
    present = scheme.lower() == "bearer" and bool(given)
    # compare_digest: the time taken does not reveal how much of the token matched.
    if not present or not hmac.compare_digest(given.encode(), token.encode()):
        reason = "invalid bearer token" if present else "missing bearer token"
        raise ApiError(
            401, "unauthorized", f"{reason}; send 'Authorization: Bearer <token>'",
            headers={"WWW-Authenticate": "Bearer"},
        )


def _auth(service: RewardService) -> Callable[..., Awaitable[None]]:
    # Declared through HTTPBearer so the OpenAPI schema shows the security scheme.
    bearer = HTTPBearer(auto_error=False, description="set when the server was started with --token")

    # `async`, though it never awaits: FastAPI runs a plain `def` dependency on a thread, and
    # that hop (and the GIL turn-taking it starts) cost more per request than the check.
    async def check(request: Request, _: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        _check_token(service, request.headers.get("authorization"))

    return check


def _install_routes(app: FastAPI, service: RewardService) -> None:
    _install_ops_routes(app, service)
    _install_reward_routes(app, service, [Depends(_auth(service))])


def _install_ops_routes(app: FastAPI, service: RewardService) -> None:
    @app.get("/healthz", tags=["ops"], responses={503: {"model": ErrorResponse}})
    async def healthz() -> Any:
        """Liveness: 200 while every reward can take work again; 503 ``wedged`` when all of a
        reward's batch slots are held by batches running past its request timeout (only a
        restart frees them)."""
        wedged = {n: s for n, s in service.health().items() if not s["alive"]}
        if wedged:
            return _json_error(ApiError(
                503, "wedged", f"every batch slot of {', '.join(map(repr, wedged))} is held by a batch running past "
                "its request timeout; restart the server (set a per-sample --timeout so hung samples are killed)",
                details=[{"reward": n, **s} for n, s in wedged.items()],
            ))  # fmt: skip
        return {"status": "ok", "version": __version__}

    @app.get("/readyz", tags=["ops"], responses={503: {"model": ErrorResponse}})
    async def readyz() -> Any:
        """Readiness: 200 with queue depths when every reward can take work now; 503 while
        shutting down, or when a reward has a batch stuck past its request timeout or a full queue."""
        if service.closing:
            return _json_error(ApiError(503, "shutting_down", "the server is shutting down"))
        states = service.health()
        busy = {n: s for n, s in states.items() if not s["ready"]}
        if busy:
            return _json_error(ApiError(
                503, "not_ready", f"{', '.join(map(repr, busy))} cannot take work now (a batch stuck past the request "
                "timeout, or a full queue); send to another replica",
                details=[{"reward": n, **s} for n, s in busy.items()],
            ))  # fmt: skip
        return {"ready": True, "queued": {n: s["queued"] for n, s in states.items()}}

    @app.get("/metrics", tags=["ops"], response_class=Response)
    async def metrics() -> Response:
        """Prometheus metrics of this server."""
        return Response(service.metrics.render(), media_type=CONTENT_TYPE_LATEST)


def _install_reward_routes(app: FastAPI, service: RewardService, auth: list[Any]) -> None:
    @app.get("/v1/rewards", tags=["rewards"], response_model=RewardsOut, dependencies=auth, responses=_ERRORS)
    async def list_rewards() -> Any:
        """Hosted rewards with their spec hash, tree and the sample/result schemas."""
        return JSONResponse({"rewards": service.describe()})

    @app.post(
        "/v1/rewards/{name}:score", tags=["rewards"], response_model=ScoreResponse | ScoresResponse,
        dependencies=auth, responses=_ERRORS, openapi_extra=_body_schema(ScoreRequest),
    )
    async def score(name: str, request: Request) -> Any:
        """Score a batch of samples (`ScoreRequest`) with reward `name`, in order: one full result per
        sample, or with ``"reply": "scores"`` the totals, statuses and errors as columns."""
        return Response(await score_reply(service, name, await request.body()), media_type="application/json")

    # The body is parsed by hand (`parse_openrlhf_body`), as on the score route: FastAPI's own
    # parsing turns JSON nested too deep into an untyped error.
    body = _body_schema(OpenRLHFRequest)

    @app.post("/get_reward", tags=["openrlhf"], response_model=OpenRLHFResponse, responses=_ERRORS, openapi_extra=body)
    async def get_reward(request: Request) -> Any:
        """OpenRLHF's remote reward protocol (``--reward.remote_url http://host:port/get_reward``).

        With ``--token``: the bearer header, or a client in ``--openrlhf-trusted-network``."""
        _check_openrlhf_access(service, request, None)
        return await _openrlhf_answer(service, parse_openrlhf_body(await request.body()))

    @app.post(
        "/openrlhf/{token}/get_reward", tags=["openrlhf"], response_model=OpenRLHFResponse, responses=_ERRORS,
        openapi_extra=body,
    )
    async def get_reward_with_token(token: str, request: Request) -> Any:
        """``/get_reward`` with the server's token in the path, for OpenRLHF (it sends no headers)."""
        _check_openrlhf_access(service, request, token)
        return await _openrlhf_answer(service, parse_openrlhf_body(await request.body()))


def _check_openrlhf_access(service: RewardService, request: Request, path_token: str | None) -> None:
    """Refuse (401) an OpenRLHF request that has none of: the token in the path, a valid bearer
    header, a client address in the trusted networks (checked only when a token is set)."""
    token = service.settings.token
    if token is None:
        return
    if path_token is not None:
        if not hmac.compare_digest(path_token.encode(), token.encode()):
            raise ApiError(401, "unauthorized", "invalid token in the path /openrlhf/<token>/get_reward")
        return
    if request.headers.get("authorization") is not None:
        _check_token(service, request.headers.get("authorization"))
        return
    client = request.client.host if request.client is not None else None
    if not in_trusted_network(client, service.settings.openrlhf_trusted_networks):
        raise ApiError(
            401, "unauthorized",
            f"OpenRLHF sends no Authorization header; point --reward.remote_url at /openrlhf/<token>/get_reward, "
            f"or start the server with --openrlhf-trusted-network CIDR covering {client}",
        )


async def _openrlhf_answer(service: RewardService, body: OpenRLHFRequest) -> JSONResponse:
    settings = service.settings
    name = service.openrlhf_name
    tokens = settings.openrlhf_special_tokens if settings.openrlhf_special_tokens is not None else COMMON_SPECIAL_TOKENS
    try:
        rows = openrlhf_rows(body.query, body.prompts, body.labels, body.metas, special_tokens=tokens)
    except MappingError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    if service.openrlhf_group_problem is not None:  # a server not set up for OpenRLHF (else it did not start)
        raise ApiError(500, "openrlhf_group_reward", service.openrlhf_group_problem)
    if settings.openrlhf_error_reward is None:
        raise ApiError(
            500, "openrlhf_not_configured",
            "OpenRLHF cannot take a row without a number (it drops the reward and the step fails later): "
            "start the server with --openrlhf-error-reward VALUE, the reward sent for rows that cannot be "
            "scored (they are counted in extra_logs['rewardlab/error'])",
        )
    start = time.perf_counter()
    samples = [row for row in rows if isinstance(row, Sample)]
    scored = iter((await service.score(name, samples)).results if samples else ())
    service.metrics.request_latency.labels(name).observe(time.perf_counter() - start)
    # A row whose prompt could not be located in its query keeps its error result, in place.
    results = [next(scored) if isinstance(row, Sample) else row for row in rows]
    reward = service.get(name).reward
    reply = openrlhf_reply(results, error_reward=settings.openrlhf_error_reward,
                           components=component_names(reward), objectives=objective_names(reward))  # fmt: skip
    return JSONResponse(reply)
