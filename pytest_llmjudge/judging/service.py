"""The judging service of one run: judge configurations, local servers, verdict cache, scheduler
and outcomes. Knows nothing of pytest: the glue hands it cases and asks for their outcomes.

A case is anything with a ``nodeid``, a ``benchmark``, a ``case`` and a compiled ``request``.
Deterministic outcomes (checks, cache hits, replay misses) are settled when a case is scheduled;
the rest are judged in the background, each waited for only when its item runs.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..suite.settings import RunSettings
from .verdict import JudgeFailure, Outcome

if TYPE_CHECKING:
    from ..compile.request import CompiledRequest
    from ..local.server import LocalServer
    from ..suite.files import Benchmark, Case
    from .cache import VerdictCache
    from .llmjudge import JudgeConfig
    from .scheduler import Job, Scheduler, Waiting

CACHE_BATCH, CACHE_BATCH_SECONDS = 64, 0.5  # verdicts per cache transaction, at most this late
NO_MODEL_MESSAGE = (
    "{count} case(s) need a judge model and none is configured; nothing was sent to any model.\n"
    "Set one (highest precedence first):\n"
    "  judge: {{model: ...}}            in a benchmark file\n"
    "  --llmjudge-model MODEL          on the command line (e.g. openai:gpt-4o,\n"
    "                                  anthropic:claude-sonnet-4-5, ollama:llama3.2,\n"
    "                                  or 'local' for the bundled offline model)\n"
    "  LLMJUDGE_MODEL=MODEL            in the environment\n"
    "  llmjudge_model = MODEL          in the [pytest] ini options\n"
    "  def pytest_llmjudge_model(config): ...   a hook in conftest.py returning a pydantic-ai Model\n"
    "Add --llmjudge-base-url URL for an OpenAI-compatible server (vLLM, Ollama, llama.cpp)."
)


class JudgeSetupError(Exception):
    """The run cannot judge at all (no model, an unusable cache, a local server that won't start)."""


class CaseToJudge(Protocol):
    @property
    def nodeid(self) -> str: ...
    @property
    def benchmark(self) -> Benchmark: ...
    @property
    def case(self) -> Case: ...
    @property
    def request(self) -> CompiledRequest: ...


@dataclass(frozen=True)
class JudgeChoice:
    """A benchmark's judge: its own ``judge:`` settings over the run's (``None`` = not set)."""

    model: str | None
    base_url: str | None
    temperature: float | None
    max_tokens: int | None
    timeout: float

    @classmethod
    def of(cls, benchmark: Benchmark, run: RunSettings) -> JudgeChoice:
        own = benchmark.spec.judge
        return cls(
            (own.model if own and own.model else None) or run.model,
            (own.base_url if own and own.base_url else None) or run.base_url,
            own.temperature if own and own.temperature is not None else run.temperature,
            own.max_tokens if own and own.max_tokens is not None else run.max_tokens,
            own.timeout if own and own.timeout is not None else run.timeout,
        )


@dataclass(eq=False)
class JudgingService:
    settings: RunSettings
    root: Path
    default_model: Callable[[], Any]  # the pytest_llmjudge_model hook: a model object or None
    waiting: Callable[[], Waiting | None] = lambda: None  # the status line, made on first need
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    local_urls: dict[str, str] = field(default_factory=dict)
    cache_write_errors: list[str] = field(default_factory=list)
    cache_hits: int = 0
    scheduler: Scheduler[Outcome] | None = None
    # a case's samples (judged ``judge.repeats`` times) into its one outcome; None keeps sample 0
    combine: Callable[[Benchmark, list[Outcome]], Outcome] | None = None
    _repeats: dict[str, int] = field(default_factory=dict)
    _configs: dict[JudgeChoice, JudgeConfig] = field(default_factory=dict)
    _local_servers: dict[str, LocalServer] = field(default_factory=dict)
    _cache: VerdictCache | None = None
    _keyless: set[str] = field(default_factory=set)  # benchmark base URLs not sent the API key
    # local judges not started yet: id of the placeholder model -> (placeholder, spec, started config)
    _deferred_local: dict[int, tuple[Any, str, JudgeConfig | None]] = field(default_factory=dict)

    # -- configurations ---------------------------------------------------------------------

    def judge_config(self, benchmark: Benchmark) -> JudgeConfig:
        """The judge for ``benchmark``; raises LookupError when no model is configured anywhere."""
        from .llmjudge import JudgeConfig
        from .models import build_model, judge_label, model_label, model_settings, replay_only_model

        choice = JudgeChoice.of(benchmark, self.settings)
        if choice not in self._configs:
            value: Any = choice.model
            if value is None:
                value = self.default_model()
            if value is None:
                raise LookupError("no judge model")
            settings = model_settings(choice.temperature, choice.max_tokens, choice.timeout)
            if isinstance(value, str):
                label = judge_label(value, choice.base_url)
                if self.settings.cache == "replay":
                    model = replay_only_model(label)  # never called: no server, no API key
                elif label.startswith("local:"):
                    # started only when a case needs it (``_start``): a cached run needs no server
                    model = replay_only_model(label)
                    self._deferred_local[id(model)] = (model, value, None)
                else:
                    send_key = may_send_key(benchmark, self.settings.base_url, self._keyless)
                    model = build_model(value, choice.base_url, send_key=send_key)
            else:
                model = build_model(value)
                label = model_label(model)
            self._configs[choice] = JudgeConfig(model, label, settings)
        return self._configs[choice]

    def local_model(self, spec: str) -> Any:
        """A judge served by a llama.cpp server this run starts (or an xdist controller started)."""
        from ..local.server import LocalServerError, available_cores, server_for_session
        from .models import openai_compatible_model

        if spec not in self._local_servers:
            log = self.root / ".llmjudge" / "local-server.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._local_servers[spec] = server_for_session(
                    spec, log_path=log, parallel=local_slots(available_cores(), self.settings.concurrency)
                )
            except LocalServerError as exc:
                raise JudgeSetupError(str(exc)) from None
        server = self._local_servers[spec]
        self.local_urls[server.model_name] = server.url
        return openai_compatible_model(server.url, server.model_name)

    # -- scheduling -------------------------------------------------------------------------

    def has(self, nodeid: str) -> bool:
        return nodeid in self.outcomes or (self.scheduler is not None and self.scheduler.has(nodeid))

    def schedule(self, cases: Sequence[CaseToJudge]) -> None:
        """Settle what checks and the cache decide now; start judge calls for the rest."""
        from .models import ModelConfigError

        needs_judge = []
        for case in cases:
            if self.has(case.nodeid):
                continue
            kind = case.benchmark.spec.evaluator_type
            if kind == "manual_sme":
                continue
            if kind in {"code", "hybrid"}:
                checked = run_checks(case)
                if kind == "code" or not checked.verdict or not checked.verdict.passed:
                    self.outcomes[case.nodeid] = checked
                    continue
            needs_judge.append(case)
        if not needs_judge:
            return
        judged: list[tuple[CaseToJudge, JudgeConfig]] = []
        missing = 0
        for case in needs_judge:
            try:
                judged.append((case, self.judge_config(case.benchmark)))
            except LookupError:
                missing += 1
            except ModelConfigError as exc:
                own = case.benchmark.spec.judge
                if own and own.model:  # the benchmark's own model: an error of its cases only
                    where = case.benchmark.judge_model_location or case.benchmark.location
                    failure = JudgeFailure("judge-setup", f"{where}: judge.model: {exc}")
                    self.outcomes[case.nodeid] = Outcome(None, failure, model=own.model, attempts=0)
                    continue
                raise JudgeSetupError(f"judge model: {exc}") from None
        if missing:
            raise JudgeSetupError(NO_MODEL_MESSAGE.format(count=missing))
        self._start(judged)

    def _start(self, judged: list[tuple[CaseToJudge, JudgeConfig]]) -> None:
        """Outcomes the cache settles now (one lookup for all); the rest go to the scheduler."""
        from .cache import CacheError
        from .llmjudge import judge_once, load_llmjudge
        from .retries import CaseJob, RetryPolicy, judge_uncached, settle_from_cache

        samples: list[tuple[str, JudgeConfig]] = []  # (sample key, judge) per judge call
        jobs = []
        for case, config in judged:
            repeats = self._repeats.setdefault(case.nodeid, sample_count(case.benchmark, self.settings))
            for index in range(repeats):
                samples.append((sample_key(case.nodeid, index), config))
                jobs.append(
                    CaseJob(
                        case.benchmark.code,
                        case.case.id,
                        case.request,
                        partial(judge_once, config=config),
                        config.model_name,
                        config.settings,
                        index,
                        endpoint=endpoint(config.model),
                    )
                )
        cache, mode = self.verdict_cache(), self.settings.cache
        pending: list[tuple[str, Job[Outcome]]] = []
        cached = 0
        try:
            settled_now = settle_from_cache(jobs, cache, mode)
        except CacheError as exc:  # damage found only when read
            raise JudgeSetupError(f"--llmjudge-cache-path: {exc}") from None
        for (key, config), job, settled in zip(samples, jobs, settled_now, strict=True):
            if settled is not None:
                self.outcomes[key] = settled
                cached += settled.cached
                continue
            config = self._with_server(config)
            job = replace(job, call=partial(judge_once, config=config), endpoint=endpoint(config.model))
            # each configuration its own timeout: a benchmark's judge.timeout is not capped by the run's
            policy = RetryPolicy(
                attempts=self.settings.attempts, timeout=config.settings.get("timeout", 60.0)
            )
            pending.append((key, partial(judge_uncached, job, policy=policy, cache=cache, mode=mode)))
        self.cache_hits += cached
        if pending:
            load_llmjudge()
            self._scheduler().start(pending)
        if self.scheduler is not None:  # the status line counts the cases the cache settled
            self.scheduler.progress.cache_hits = self.cache_hits

    def _with_server(self, config: JudgeConfig) -> JudgeConfig:
        """``config`` with its local judge server started, the first time a case needs it."""
        deferred = self._deferred_local.get(id(config.model))
        if deferred is None:
            return config
        placeholder, spec, started = deferred
        if started is None:
            started = replace(config, model=self.local_model(spec))
            self._deferred_local[id(placeholder)] = (placeholder, spec, started)
            for choice, known in self._configs.items():
                if known is config:
                    self._configs[choice] = started
        return started

    def verdict_cache(self) -> VerdictCache | None:
        """The run's verdict cache, opened on first use and closed with the run; None when off."""
        if self.settings.cache == "off":
            return None
        if self._cache is None:
            from .cache import CacheError, VerdictCache

            path = self.root / self.settings.cache_path
            if self.settings.cache == "replay" and not path.exists():
                return None  # replay never creates a cache: every case is a (cheap) miss
            try:
                self._cache = VerdictCache(path, batch=CACHE_BATCH, batch_seconds=CACHE_BATCH_SECONDS)
            except CacheError as exc:
                raise JudgeSetupError(f"--llmjudge-cache-path: {exc}") from None
        return self._cache

    def check_cache(self) -> None:
        """Open and close the verdict cache now, so an unusable file is one ``JudgeSetupError``
        before any work starts (an xdist controller, before each worker meets it)."""
        cache = self.verdict_cache()
        if cache is not None:
            cache.close()
            self._cache = None

    def _scheduler(self) -> Scheduler[Outcome]:
        if self.scheduler is None:
            from .retries import tally
            from .scheduler import Scheduler

            s = self.settings
            self.scheduler = Scheduler(s.concurrency, s.rpm, tally, self.waiting())
        return self.scheduler

    def outcome(self, case: CaseToJudge) -> Outcome:
        """``case``'s outcome, waiting for its judge calls if they are still running; a case judged
        more than once gets the outcome ``combine`` makes of its samples."""
        if case.nodeid not in self.outcomes:
            if not self.has(case.nodeid):
                self.schedule([case])
            if case.nodeid not in self.outcomes:
                self.outcomes[case.nodeid] = self._scheduler().result(case.nodeid)
        repeats = self._repeats.pop(case.nodeid, 1)
        if repeats > 1:
            samples = [self.outcomes[case.nodeid]]
            for index in range(1, repeats):
                key = sample_key(case.nodeid, index)
                samples.append(
                    self.outcomes.pop(key) if key in self.outcomes else self._scheduler().result(key)
                )
            combined = self.combine(case.benchmark, samples) if self.combine else samples[0]
            self.outcomes[case.nodeid] = combined
        return self.outcomes[case.nodeid]

    def cancel_pending(self, keep: Container[str] = ()) -> None:
        """Drop judge calls not yet started (deselected items, or -x / --maxfail stopped the run)."""
        if self.scheduler is not None:
            self.scheduler.cancel_pending(_SamplesOf(keep))

    def close(self) -> None:
        """Stop the scheduler, write the cache, stop the local servers this run started."""
        if self.scheduler is not None:
            self.scheduler.close()
            self.scheduler = None
        if self._cache is not None:
            self._cache.close()
            self.cache_write_errors += self._cache.write_errors
            self._cache = None
        for server in self._local_servers.values():
            server.stop()
        self._local_servers.clear()


SAMPLE_SEPARATOR = "\0sample "


def sample_key(nodeid: str, index: int) -> str:
    """The name sample ``index`` of a case goes by in the scheduler (sample 0: the node id)."""
    return f"{nodeid}{SAMPLE_SEPARATOR}{index}" if index else nodeid


def sample_count(benchmark: Benchmark, settings: RunSettings) -> int:
    """How many times a benchmark's cases are judged: its ``judge.repeats``, else the run's."""
    from ..suite.settings import judge_setting

    return int(judge_setting(benchmark, settings, "repeats"))


@dataclass(frozen=True)
class _SamplesOf:
    """Keeps every sample of the kept node ids."""

    nodeids: Container[str]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.split(SAMPLE_SEPARATOR, 1)[0] in self.nodeids


def may_send_key(benchmark: Benchmark, run_base_url: str | None, warned: set[str]) -> bool:
    """A benchmark's own ``judge.base_url`` gets the API key only if the run allows that server
    (its own base URL, or this machine); else a placeholder key goes, and the run says so once."""
    import warnings

    from .models import key_allowed

    own = benchmark.spec.judge
    url = own.base_url if own and own.base_url else None
    if url is None or key_allowed(url, (run_base_url or "",)):
        return True
    if url not in warned:
        warned.add(url)
        warnings.warn(
            f"{benchmark.location}: judge.base_url: {url} is neither the run's base URL "
            "(--llmjudge-base-url) nor this machine; the API key is not sent there",
            UserWarning,
            stacklevel=1,
        )
    return False


def run_checks(case: CaseToJudge) -> Outcome:
    """The deterministic checks of a ``code`` or ``hybrid`` case; a broken check errors its case."""
    from .checks import CheckConfigError
    from .checks import run_checks as run

    try:
        verdict = run(case.case, list(case.benchmark.spec.checks or ()))
    except CheckConfigError as exc:
        return Outcome(None, JudgeFailure("check-config", str(exc)), "checks")
    except Exception as exc:  # a check function that raises errors its case, not the run
        return Outcome(None, JudgeFailure("check-error", f"{type(exc).__name__}: {exc}"), "checks")
    return Outcome(verdict, None, "checks")


def endpoint(model: Any) -> str:
    """The server a model calls (its provider and base URL): Retry-After pauses are per server."""
    return f"{getattr(model, 'system', '')}@{getattr(model, 'base_url', None) or ''}"


def local_slots(cores: int, concurrency: int) -> int:
    """Parallel slots of the local judge: on 2 cores one slot judged 10 cases faster than two
    (32 s vs 37 s, bench/local_judge.py), since both slots compete for the same cores."""
    return max(1, min(concurrency, 1 if cores <= 2 else 2))
