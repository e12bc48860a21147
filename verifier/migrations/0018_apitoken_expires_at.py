"""Personal API tokens expire. A token made before this gets an expiry counted from its creation with the
API_TOKEN_DAYS of the time of migrating (default 90), so that no token lives for ever: one older than that is
expired at once, and its owner makes a new one on the account page."""

import datetime

from django.conf import settings
from django.db import migrations, models
from django.db.models import F


def expiry_from_creation(apps, schema_editor):
    ApiToken = apps.get_model("verifier", "ApiToken")
    days = datetime.timedelta(days=getattr(settings, "API_TOKEN_DAYS", 90))
    ApiToken.objects.filter(expires_at__isnull=True).update(expires_at=F("created_at") + days)


class Migration(migrations.Migration):
    dependencies = [
        ("verifier", "0017_verification_answers_question"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(expiry_from_creation, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(
                help_text="From then on the token is refused (API_TOKEN_DAYS after made)."
            ),
        ),
    ]
