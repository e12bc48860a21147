"""A package's names imported when first asked for (PEP 562): for those that bring in a heavy SDK, so that importing
the package's light parts (a config, the prices) does not."""

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_getattr(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A `__getattr__` for `package`: each name of `homes` is imported from the module it names when first asked
    for; any other name is missing, as ever."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(homes[name]), name)

    return __getattr__
