"""``JudgeOptions``: every option of a judge run, once — default, check, flag, cache key.

``judge``, ``run_judge``, ``arun_judge``, ``run_judge_on_ray`` and ``accordkit judge`` all
take their options from :class:`JudgeOptions`:

* the functions accept each field as a keyword argument (their signatures are built from
  the fields by :func:`takes_options`) or the whole object as ``options=``;
* the command line's flags are made from each field's :class:`Flag` (``None``: an option of
  Python only, such as a mapping of request parameters);
* the checks run when the object is made, so a bad option is refused before anything is
  loaded or sent;
* :attr:`JudgeOptions.request_params` is what every request sends and what its cache key
  and its cache entry hold.

A new option is one new field here (with its documentation and its flag); the tests hold
the functions' parameters and the flags to the fields.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from numbers import Integral
from pathlib import Path
from typing import Any, TypeVar

from .calls import JudgeSpec
from .pricing import Price, check_prices, resolve_price
from .registry import JUDGES, get_judge

__all__ = ["JudgeOptions", "Flag", "DEFAULT_PARAMS", "check_shard", "takes_options"]

#: Request parameters sent with every call (part of the cache key); temperature 0 as in
#: both papers' judges. ``completion_kwargs`` adds to or overrides them.
DEFAULT_PARAMS: dict[str, Any] = {"temperature": 0}

#: litellm parameters that carry credentials (``aws_secret_access_key``, ``azure_ad_token``,
#: ``vertex_credentials``, ...); ``max_tokens`` and the like are fine.
_SECRET_KWARG = re.compile(r"(^|_)(api_?key|key|secret|password|token|credentials?)$|secret",
                           re.IGNORECASE)
_FORBIDDEN_KWARGS = ("api_key", "api_base", "base_url", "timeout", "num_retries",
                     "max_retries", "messages", "model")
#: Header names (and nested keys) that carry credentials: ``Authorization``,
#: ``Proxy-Authorization``, ``Authentication``, ``X-Auth``, ``X-Auth-Token``,
#: ``X-Authenticate``, ``api-key`` (Azure), ``x-api-key``, ``Ocp-Apim-Subscription-Key``,
#: cookies (not ``author`` or ``authority``).
_SECRET_HEADER = re.compile(
    r"(^|_)auth(orization|entication|enticate|n|z)?($|_)|api_?key|subscription_key|cookie",
    re.IGNORECASE)
#: Values that are credentials whatever their key is called: an HTTP authorization value,
#: or a provider key (``sk-...``, as OpenAI's, Anthropic's and many proxies' keys begin).
_SECRET_VALUE = re.compile(r"^\s*((bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"
                           r"|sk-[A-Za-z0-9_-]{8,})\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Flag:
    """How an option is spelled on the ``accordkit judge`` command line.

    Attributes
    ----------
    names : tuple of str
        The flag and its aliases (``("--judge", "--task")``).
    help : str
        The help line; ``%(default)s`` stands for the field's default.
    type : callable, optional
        Converts the command-line text (``int``, ``float``); None keeps the text.
    metavar : str, optional
        The value's name in the usage line.
    action : str, optional
        An argparse action: ``"store_false"`` for a flag that turns a ``True`` option off
        (``--rejudge`` sets ``skip_stored=False``).
    choices : callable, optional
        Returns the allowed values (asked when the parser is built).
    """

    names: tuple[str, ...]
    help: str
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    action: str | None = None
    choices: Callable[[], list[str]] | None = None


def _option(default: Any = dataclasses.MISSING, *, flag: Flag | None) -> Any:
    """A field of :class:`JudgeOptions`; every field says whether it has a flag."""
    return field(default=default, metadata={"flag": flag})


def check_shard(shard: tuple[int, int] | str | None) -> tuple[int, int] | None:
    """``(i, n)`` from ``(i, n)`` or ``"i/n"`` (1 <= i <= n), or None.

    Examples
    --------
    >>> check_shard("2/3")
    (2, 3)
    """
    if shard is None:
        return None
    if isinstance(shard, str):
        part, _, total = shard.partition("/")
        if not (part.strip().isdigit() and total.strip().isdigit()):
            raise ValueError(f"shard must look like i/n (e.g. 1/4), got {shard!r}")
        shard = (int(part), int(total))
    i, n = shard
    if not (1 <= i <= n):
        raise ValueError(f"shard {i}/{n}: need 1 <= i <= n")
    return int(i), int(n)


def _judge_names() -> list[str]:
    return sorted(JUDGES)


@dataclass(frozen=True, kw_only=True)
class JudgeOptions:
    """The options of one judge run, checked when made.

    Every field is also a keyword argument of :func:`~accordkit.judges.judge`,
    :func:`~accordkit.judges.run_judge` and :func:`~accordkit.judges.arun_judge`; the
    fields with a flag are options of ``accordkit judge``.

    Parameters
    ----------
    judge : {"usersim_tests", "outcome", "nl_assertions", "gsrt", "review"}
        Which judge (see ``docs/judges.md``). Required. Flag ``--judge`` (``--task``).
    model : str
        litellm model name, e.g. ``"gpt-4o-mini"``, ``"anthropic/claude-sonnet-4-5"``,
        ``"openai/<served name>"`` with ``api_base`` for an OpenAI-compatible server
        (vLLM). Required, not blank; part of the cache key. Flag ``--model``.
    api_base : str, optional
        Base URL of an OpenAI-compatible server. Default None (the provider's). Not part
        of the cache key. Flag ``--api-base``.
    concurrency : int
        Requests in flight at once; a positive integer, default 8. Flag ``--concurrency``.
    cache_dir : str or Path, optional
        Reply cache; default None: ``$ACCORDKIT_JUDGE_CACHE``, else ``./.cache/judges``.
        Flag ``--cache``.
    max_cost : float, optional
        USD cap for this run: a finite number >= 0, default None (no cap). It needs a
        known price; requests that would pass it are not sent (their items get an error;
        exit code 2). Flag ``--max-cost``.
    price_in, price_out : float, optional
        USD per million input / output tokens, finite and >= 0, both or neither; default
        None (litellm's price list). Flags ``--price-in``, ``--price-out``.
    timeout : float
        Seconds per attempt, > 0; default 60. Flag ``--timeout``.
    max_attempts : int
        Attempts per request on 429 / 5xx / timeouts / connection errors, the first
        included; a positive integer, default 10. Flag ``--max-attempts``.
    progress : bool
        Show a tqdm bar with the live cost; default True. Flag ``--no-progress`` turns it
        off.
    skip_stored : bool
        Skip episodes that already hold this judge's output (stored NL verdicts, goal-shift
        judge output, preference judgments); default True. ``False`` judges them again.
        Flag ``--rejudge`` sets it to False.
    completion_kwargs : mapping, optional
        Extra litellm parameters, e.g. ``{"max_tokens": 400}`` or
        ``{"mock_response": "yes"}`` for offline tests; default None. They are part of the
        cache key and stored with every cached reply, so they must be JSON data, and API
        keys are refused (by name, also inside nested headers or bodies, and by value).
        Python only (no flag).
    backoff : (float, float)
        Base and cap, in seconds, of the exponential backoff between attempts:
        ``0 <= base <= cap``, finite; default ``(1.0, 60.0)``. Python only.
    seed : int, optional
        Seed of the backoff jitter; default None. It changes no request, so it is not part
        of the cache key. Python only.
    shard : (int, int) or "i/n", optional
        Judge only shard ``i`` of ``n`` (``1 <= i <= n``; a fixed share of the requests by
        their hash), to split one job over processes or machines; combine the verdict
        files with :func:`~accordkit.judges.merge_verdicts` (``accordkit judge merge``).
        Default None (the whole job); ``"i/n"`` is read as ``(i, n)``. Flag ``--shard``.

    Raises
    ------
    ValueError
        An option out of its bounds (the message names it), an unknown judge, or a
        credential in ``completion_kwargs``.

    Examples
    --------
    >>> o = JudgeOptions(judge="gsrt", model="gpt-4o-mini", shard="1/2")
    >>> o.concurrency, o.shard, o.request_params
    (8, (1, 2), {'temperature': 0})
    >>> o.replace(concurrency=0)
    Traceback (most recent call last):
    ...
    ValueError: concurrency must be a positive integer, got 0
    """

    judge: str = _option(flag=Flag(("--judge", "--task"), "which judge",
                                   choices=_judge_names))
    model: str = _option(flag=Flag(
        ("--model",), "litellm model name (gpt-4o-mini, anthropic/..., openai/<served>)"))
    api_base: str | None = _option(None, flag=Flag(
        ("--api-base",), "base URL of an OpenAI-compatible server (e.g. vLLM)"))
    concurrency: int = _option(8, flag=Flag(
        ("--concurrency",), "requests in flight (default %(default)s)", type=int))
    cache_dir: str | Path | None = _option(None, flag=Flag(
        ("--cache",), "reply cache (default $ACCORDKIT_JUDGE_CACHE or ./.cache/judges)",
        metavar="DIR"))
    max_cost: float | None = _option(None, flag=Flag(
        ("--max-cost",), "stop requesting once this run would spend more (needs a price)",
        type=float, metavar="USD"))
    price_in: float | None = _option(None, flag=Flag(
        ("--price-in",), "input price, USD per million tokens (with --price-out)",
        type=float, metavar="USD_PER_MTOK"))
    price_out: float | None = _option(None, flag=Flag(
        ("--price-out",), "output price, USD per million tokens (with --price-in)",
        type=float, metavar="USD_PER_MTOK"))
    timeout: float = _option(60, flag=Flag(
        ("--timeout",), "seconds per attempt (default %(default)s)", type=float))
    max_attempts: int = _option(10, flag=Flag(
        ("--max-attempts",), "attempts per request on 429/5xx/timeouts (default %(default)s)",
        type=int))
    progress: bool = _option(True, flag=Flag(("--no-progress",), "no progress bar",
                                             action="store_false"))
    skip_stored: bool = _option(True, flag=Flag(
        ("--rejudge",), "also judge episodes that already hold this judge's stored output",
        action="store_false"))
    completion_kwargs: Mapping[str, Any] | None = _option(None, flag=None)
    backoff: tuple[float, float] = _option((1.0, 60.0), flag=None)
    seed: int | None = _option(None, flag=None)
    shard: tuple[int, int] | str | None = _option(None, flag=Flag(
        ("--shard",), "judge only share I of N of the requests (fixed by request hash); "
        "run 1/N ... N/N in parallel, then `accordkit judge merge`", metavar="I/N"))

    def __post_init__(self) -> None:
        # the order of the checks is the order a caller has always seen them in
        object.__setattr__(self, "shard", check_shard(self.shard))
        get_judge(self.judge)
        model, concurrency, max_attempts = self.model, self.concurrency, self.max_attempts
        timeout, max_cost = self.timeout, self.max_cost
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a litellm model name, got {model!r}")
        if not _positive_int(concurrency):
            raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
        if not _positive_int(max_attempts):
            raise ValueError(f"max_attempts must be a positive integer, got {max_attempts!r}")
        if not _number(timeout) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if max_cost is not None and (not _number(max_cost) or not math.isfinite(max_cost)
                                     or max_cost < 0):
            raise ValueError(f"max_cost must be a non-negative number of USD, got {max_cost!r}")
        kwargs = self.completion_kwargs
        if kwargs is not None and not isinstance(kwargs, Mapping):
            raise ValueError("completion_kwargs must be a mapping of litellm parameters, "
                             f"got a {type(kwargs).__name__}")
        for name in kwargs or {}:
            if name in _FORBIDDEN_KWARGS or _SECRET_KWARG.search(name):
                raise ValueError(f"completion_kwargs may not set {name!r}: API keys come only "
                                 "from the environment, and the runner sets the others itself")
        where = _credential_inside(kwargs or {})
        if where is not None:
            raise ValueError(f"completion_kwargs may not carry a credential ({where}): request "
                             "parameters are stored with every cached reply; API keys come "
                             "only from the environment")
        if kwargs is not None:   # a copy: a later change to the caller's dict changes nothing
            object.__setattr__(self, "completion_kwargs", dict(kwargs))
        check_prices(self.price_in, self.price_out)
        backoff = self.backoff
        if not (isinstance(backoff, tuple | list) and len(backoff) == 2
                and all(_number(b) and math.isfinite(b) and b >= 0 for b in backoff)
                and backoff[0] <= backoff[1]):
            raise ValueError("backoff must be (base, cap) in seconds, two finite numbers "
                             f"with 0 <= base <= cap, got {backoff!r}")
        object.__setattr__(self, "backoff", (float(backoff[0]), float(backoff[1])))
        if self.seed is not None and (not isinstance(self.seed, Integral)
                                      or isinstance(self.seed, bool)):
            raise ValueError(f"seed must be an integer or None, got {self.seed!r}")

    # ------------------------------------------------------------------ derived values

    @property
    def spec(self) -> JudgeSpec:
        """The judge's :class:`~accordkit.judges.calls.JudgeSpec`."""
        return get_judge(self.judge)

    @property
    def request_params(self) -> dict[str, Any]:
        """The parameters every request sends besides the model and the messages:
        :data:`DEFAULT_PARAMS` updated by ``completion_kwargs``. They are part of each
        request's cache key and stored with each cached reply (never a key: see the
        checks of ``completion_kwargs``)."""
        return {**DEFAULT_PARAMS, **dict(self.completion_kwargs or {})}

    def check_storable(self) -> None:
        """``ValueError`` naming a request parameter the cache cannot store (not JSON).

        Asked before the first request is sent: an answer to such a request would be paid
        for on every run and never kept.

        Examples
        --------
        >>> JudgeOptions(judge="gsrt", model="m",
        ...              completion_kwargs={"response_format": object}).check_storable()
        Traceback (most recent call last):
        ...
        ValueError: request parameter 'response_format' cannot be stored in the judge cache (a type, not JSON data); pass JSON data (e.g. a JSON schema as a dict)
        """
        _check_storable(self.request_params)

    def price(self, *, warn: bool) -> Price | None:
        """The judge model's price (:func:`~accordkit.judges.pricing.resolve_price`).

        Raises
        ------
        ValueError
            ``max_cost`` is set and the price is unknown (before any request).
        """
        price = resolve_price(self.model, price_in=self.price_in, price_out=self.price_out,
                              warn=warn)
        if self.max_cost is not None and price is None:
            raise ValueError(f"max_cost needs a price, and judge model {self.model!r} has "
                             "none in litellm's price list: give price_in and price_out "
                             "(--price-in/--price-out, USD per million tokens)")
        return price

    def replace(self, **changes: Any) -> JudgeOptions:
        """A copy with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_call(cls, where: str, options: JudgeOptions | None,
                  keywords: Mapping[str, Any]) -> JudgeOptions:
        """The options of a call to ``where`` that got ``options=`` and/or keywords.

        A keyword beside ``options`` must equal the object's value (after the same
        normalisation); a different one is a ``TypeError`` naming the option, never its
        value (it may be a secret).

        Examples
        --------
        >>> o = JudgeOptions(judge="gsrt", model="m", concurrency=4)
        >>> JudgeOptions.from_call("judge", o, {"concurrency": 4}) is o
        True
        >>> JudgeOptions.from_call("judge", o, {"concurrency": 2})
        Traceback (most recent call last):
        ...
        TypeError: judge() got concurrency both in options and as a keyword, with different values: give each option once (options.replace(concurrency=...) changes one)
        """
        unknown = [name for name in keywords if name not in _NAMES]
        if unknown:
            raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
        if options is None:
            missing = [name for name in _REQUIRED if name not in keywords]
            if missing:
                raise TypeError(f"{where}() missing required keyword argument(s): "
                                + ", ".join(repr(m) for m in missing))
            return cls(**keywords)
        if not isinstance(options, JudgeOptions):
            raise TypeError(f"{where}() options must be a JudgeOptions, got a "
                            f"{type(options).__name__}")
        if not keywords:
            return options
        merged = options.replace(**keywords)
        clash = [name for name in keywords if getattr(merged, name) != getattr(options, name)]
        if clash:
            raise TypeError(
                f"{where}() got {', '.join(clash)} both in options and as a keyword, with "
                f"different values: give each option once (options.replace({clash[0]}=...) "
                "changes one)")
        return options


_FIELDS = dataclasses.fields(JudgeOptions)
_NAMES = frozenset(f.name for f in _FIELDS)
_REQUIRED = tuple(f.name for f in _FIELDS if f.default is dataclasses.MISSING)


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _credential_inside(value: Any, path: str = "") -> str | None:
    """Where a credential sits inside nested request parameters (``extra_headers``,
    ``headers``, ``extra_body``, ...), as ``"extra_headers.Authorization"``, or None."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = str(key)
            here = f"{path}.{name}" if path else name
            normal = name.replace("-", "_")
            if path and (_SECRET_KWARG.search(normal) or _SECRET_HEADER.search(normal)) \
                    and not isinstance(item, Mapping | list | tuple):
                return here  # (a mapping is looked into: {"auth": {"token": ...}})
            found = _credential_inside(item, here)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _credential_inside(item, f"{path}[{i}]")
            if found is not None:
                return found
    elif isinstance(value, str) and _SECRET_VALUE.search(value):
        return path or "a value"
    return None


def _check_storable(params: Mapping[str, Any]) -> None:
    """``ValueError`` naming a request parameter that cannot be written as JSON.

    Examples
    --------
    >>> _check_storable({"temperature": 0, "response_format": {"type": "json_object"}})
    """
    import json

    for name, value in params.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"request parameter {name!r} cannot be stored in the judge cache (a "
                f"{type(value).__name__}, not JSON data); pass JSON data (e.g. a JSON "
                "schema as a dict)") from None


# --------------------------------------------------------------------------- signatures

_F = TypeVar("_F", bound=Callable[..., Any])

#: The line of a docstring that :func:`takes_options` replaces by the fields' entries.
OPTIONS_DOC_LINE = "    .. the fields of JudgeOptions go here"


def _fields_doc() -> str:
    """The ``Parameters`` entries of :class:`JudgeOptions`' docstring, as written."""
    doc = inspect.cleandoc(JudgeOptions.__doc__ or "")
    body = doc.split("Parameters\n----------\n", 1)[-1].split("\n\nRaises\n", 1)[0]
    return "\n".join(("    " + line) if line else "" for line in body.splitlines())


def takes_options(fn: _F) -> _F:
    """Give ``fn(ds, *, ..., options=None, **keywords)`` the fields of
    :class:`JudgeOptions` as its keyword parameters: in its signature (what ``help``,
    Jupyter and :func:`inspect.signature` show) and in its docstring, where the line
    :data:`OPTIONS_DOC_LINE` stands.

    The function itself receives them in ``**keywords`` and reads them with
    :meth:`JudgeOptions.from_call`.
    """
    sig = inspect.signature(fn)
    own = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    taken = {p.name for p in own}
    fields = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY,
                                default=(inspect.Parameter.empty
                                         if f.default is dataclasses.MISSING else f.default),
                                annotation=f.type)
              for f in _FIELDS if f.name not in taken]
    first_kw = next((k for k, p in enumerate(own) if p.kind is inspect.Parameter.KEYWORD_ONLY),
                    len(own))
    params = [*own[:first_kw], *fields, *own[first_kw:]]
    fn.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    if fn.__doc__ and OPTIONS_DOC_LINE in fn.__doc__:
        fn.__doc__ = fn.__doc__.replace(OPTIONS_DOC_LINE, _fields_doc())
    return fn
