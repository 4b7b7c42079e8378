"""Names -> algorithm classes, shared by Python (`get_algorithm`) and the command line."""

from __future__ import annotations

import dataclasses

from ..names import natural_sorted, unknown_name
from .base import Algorithm

_REGISTRY: dict[str, type[Algorithm]] = {}


def register_algorithm(cls: type[Algorithm]) -> type[Algorithm]:
    """Class decorator: make `cls` available under `cls.name`."""
    _REGISTRY[cls.name] = cls
    return cls


def algorithm_names() -> list[str]:
    return natural_sorted(_REGISTRY)


def algorithm_class(name: str) -> type[Algorithm]:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(unknown_name("algorithm", name, _REGISTRY)) from None


def get_algorithm(name: str, preset: str | None = None, **params) -> Algorithm:
    """Build algorithm `name`, starting from its `preset` (if given), then `params`.

    Examples:
        >>> get_algorithm("pso", pop_size=64, preset="paper001").w
        1.0
    """
    cls = algorithm_class(name)
    settings: dict = {}
    if preset is not None:
        if preset not in cls.presets:
            known = ", ".join(cls.presets) or "none"
            raise ValueError(f"algorithm {name!r} has no preset {preset!r}; its presets: {known}")
        settings.update(cls.presets[preset])
    settings.update(params)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = [k for k in settings if k not in fields]
    if unknown:
        raise ValueError(
            f"algorithm {name!r} has no parameter {unknown[0]!r}; its parameters are: {', '.join(sorted(fields))}"
        )
    return cls(**settings)
