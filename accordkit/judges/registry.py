"""The judges accordkit knows, by name."""

from __future__ import annotations

from . import gsrt, nl_assertions, outcome, review, usersim
from .calls import JudgeSpec

__all__ = ["JUDGES", "get_judge"]

JUDGES: dict[str, JudgeSpec] = {
    spec.name: spec for spec in (usersim.SPEC, outcome.SPEC, nl_assertions.SPEC, gsrt.SPEC,
                                 review.SPEC)
}


def get_judge(name: str) -> JudgeSpec:
    """The judge called ``name``.

    Raises
    ------
    ValueError
        Unknown name (the message lists the known ones).

    Examples
    --------
    >>> get_judge("gsrt").name
    'gsrt'
    """
    try:
        return JUDGES[name]
    except KeyError:
        raise ValueError(f"unknown judge {name!r}; expected one of {sorted(JUDGES)}") from None
