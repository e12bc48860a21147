"""Settings for `make run` on a developer's machine: DEBUG on unless the environment says otherwise."""

from config.settings.base import *  # noqa: F403
from config.settings.environment import env

DEBUG = env.bool("DEBUG", default=True)
