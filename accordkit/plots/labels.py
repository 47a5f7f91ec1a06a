"""Short configuration labels for tables and figures, the full label kept for hover.

A configuration label (:func:`accordkit.tables.tau2.configuration_label`) names four
things: ``agent_model (method) | user: user_model (user_implementation)``, with the
benchmark in front when a table holds several (``tau2: …``). In one table most of it is
often the same on every row, and the rows are wide for nothing. :func:`short_labels`
drops what every label of a table shares, keeping the labels distinct; the report shows
the short label with the full one as its hover text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ConfigurationParts", "parse_configuration", "short_labels", "shared_part"]

_LABEL = re.compile(
    r"^(?:(?P<benchmark>[A-Za-z0-9_.-]+): )?(?P<agent>.+?) \((?P<method>[^()]*)\)"
    r" \| user: (?P<user>.+?) \((?P<user_impl>[^()]*)\)$", re.DOTALL)


@dataclass(frozen=True)
class ConfigurationParts:
    """The parts of a configuration label."""

    benchmark: str | None
    agent: str
    method: str
    user: str
    user_impl: str

    def text(self, *, benchmark: bool = True, method: bool = True, user: bool = True) -> str:
        """The label with only the wanted parts."""
        out = f"{self.benchmark}: " if benchmark and self.benchmark else ""
        out += self.agent + (f" ({self.method})" if method else "")
        if user:
            out += f" | user: {self.user} ({self.user_impl})"
        return out


def parse_configuration(label: str) -> ConfigurationParts | None:
    """The parts of a configuration label, or None when ``label`` is not one.

    Examples
    --------
    >>> parse_configuration("gpt-4.1 (llm_agent) | user: gpt-4.1 (?)").method
    'llm_agent'
    >>> parse_configuration("airline") is None
    True
    """
    match = _LABEL.match(label)
    if match is None:
        return None
    return ConfigurationParts(**match.groupdict())


def short_labels(labels: Iterable[str]) -> dict[str, str]:
    """Each configuration label of a table -> its short form (parts every label shares
    dropped, the short forms still distinct). Text that is no configuration label, or a
    table with one label, keeps its text.

    Examples
    --------
    >>> short_labels(["a (react) | user: u (sim)", "b (react) | user: u (sim)"])
    {'a (react) | user: u (sim)': 'a', 'b (react) | user: u (sim)': 'b'}
    >>> short_labels(["a (react) | user: u (sim)", "a (tools) | user: u (sim)"])
    {'a (react) | user: u (sim)': 'a (react)', 'a (tools) | user: u (sim)': 'a (tools)'}
    """
    distinct = list(dict.fromkeys(labels))
    parsed = {label: parse_configuration(label) for label in distinct}
    parts = [p for p in parsed.values() if p is not None]
    if len(parts) < 2:
        return {label: label for label in distinct}

    def same(attr: str) -> bool:
        return len({getattr(p, attr) for p in parts}) == 1

    keep = {"benchmark": not same("benchmark"), "method": not same("method"),
            "user": not (same("user") and same("user_impl"))}
    short = {label: (p.text(**keep) if p is not None else label)
             for label, p in parsed.items()}
    if len(set(short.values())) < len(short):   # never merge two configurations
        return {label: label for label in distinct}
    return short


def shared_part(labels: Iterable[str]) -> str:
    """What :func:`short_labels` dropped, said once (empty when nothing was dropped).

    Examples
    --------
    >>> shared_part(["a (react) | user: u (sim)", "b (react) | user: u (sim)"])
    'agent implementation react; user u (sim)'
    """
    parts = [p for p in map(parse_configuration, dict.fromkeys(labels)) if p is not None]
    if len(parts) < 2:
        return ""
    said = []
    if len({p.benchmark for p in parts}) == 1 and parts[0].benchmark:
        said.append(f"benchmark {parts[0].benchmark}")
    if len({p.method for p in parts}) == 1:
        said.append(f"agent implementation {parts[0].method}")
    if len({(p.user, p.user_impl) for p in parts}) == 1:
        said.append(f"user {parts[0].user} ({parts[0].user_impl})")
    return "; ".join(said)
