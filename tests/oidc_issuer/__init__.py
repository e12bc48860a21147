"""A real OpenID Connect provider for the tests: django-oidc-provider in a Django project of its own (its own
settings, a SQLite database in a temporary folder), served by `runserver` on a free port. `issuer.py` starts it,
with the users, groups, client and RSA key a test asks for."""
