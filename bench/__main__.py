"""`python -m bench [options]`: benchmark figures as JSON (see `bench.cli`)."""

import sys

from bench import django_setup

django_setup()  # before bench.cli, whose sections import the models

from bench.cli import main  # noqa: E402

sys.exit(main())
