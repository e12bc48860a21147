"""A personal API token's scopes (read, ask, check): what it may do. Tokens made before this get all three, so
that nothing that worked with them stops working; new ones get what their owner ticks."""

import django.contrib.postgres.fields
from django.db import migrations, models


def every_scope(apps, schema_editor):
    ApiToken = apps.get_model("verifier", "ApiToken")
    ApiToken.objects.update(scopes=["read", "ask", "check"])


class Migration(migrations.Migration):
    dependencies = [
        ("verifier", "0019_apitoken_password_marker"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="scopes",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(
                    choices=[
                        ("read", "Read: search the garden and read its articles"),
                        (
                            "ask",
                            "Ask: ask and follow up, read answers and verdicts, mark answers, report claims",
                        ),
                        ("check", "Check: fact-check a text"),
                    ],
                    max_length=8,
                ),
                default=list,
                help_text="What the token may do (verifier.scopes): read, ask, check.",
                size=None,
            ),
        ),
        migrations.RunPython(every_scope, migrations.RunPython.noop),
    ]
