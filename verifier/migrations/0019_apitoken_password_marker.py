"""A personal API token dies with its user's password: it keeps a digest of the password hash it was made under.
Tokens made before this take their user's password as it is now, so that they go on working until it changes."""

import hashlib

from django.db import migrations, models


def marker_from_password(apps, schema_editor):
    ApiToken = apps.get_model("verifier", "ApiToken")
    for token in ApiToken.objects.select_related("user").iterator():
        # As verifier.tokens.password_marker: a migration keeps its own copy, never the code of the day.
        token.password_marker = hashlib.sha256(token.user.password.encode()).hexdigest()
        token.save(update_fields=["password_marker"])


class Migration(migrations.Migration):
    dependencies = [
        ("verifier", "0018_apitoken_expires_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="password_marker",
            field=models.CharField(
                default="",
                help_text="SHA-256 of its user's password hash when made: a new password ends the token.",
                max_length=64,
            ),
            preserve_default=False,
        ),
        migrations.RunPython(marker_from_password, migrations.RunPython.noop),
    ]
