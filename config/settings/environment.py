"""How the settings read the environment (django-environ): the one `env`, which also reads the addresses
`make run` and `make test` leave in `.run/services.env`, and the settings a plain `env(...)` cannot read: an
enumerated one, refused when it names none of its choices, and a list of model prices."""

import decimal
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

# `make run` / `make test` write the addresses of the services they started here; real env vars win.
SERVICES_ENV = Path(__file__).resolve().parent.parent.parent / ".run" / "services.env"

env = environ.Env()
environ.Env.read_env(SERVICES_ENV, overwrite=False)

NOT_A_CHOICE = "{name}={value!r} is not one of: {choices}. Correct it in the environment and start again."
NOT_A_PRICE = "{name}: {item!r} is not MODEL=INPUT/OUTPUT (USD per million tokens)."


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """An enumerated setting, refused at start-up when it names none of its choices: a typo must stop every
    process with a clear error, not quietly run something else (or fail later, on the first request)."""
    value = str(env(name, default=default))
    if value not in choices:
        raise ImproperlyConfigured(NOT_A_CHOICE.format(name=name, value=value, choices=", ".join(choices)))
    return value


def env_prices(name: str) -> dict[str, tuple[decimal.Decimal, decimal.Decimal]]:
    """USD per million input/output tokens by model-name prefix, from a list ("gpt-4.1-mini=0.4/1.6,gpt-4.1=2/8");
    refused at start-up when an item is not of that form."""
    prices: dict[str, tuple[decimal.Decimal, decimal.Decimal]] = {}
    for item in env.list(name, default=[]):
        prefix, _, pair = item.partition("=")
        try:
            paid_in, paid_out = (decimal.Decimal(price) for price in pair.split("/"))
        except (ValueError, decimal.InvalidOperation):
            raise ImproperlyConfigured(NOT_A_PRICE.format(name=name, item=item)) from None
        prices[prefix.strip()] = (paid_in, paid_out)
    return prices
