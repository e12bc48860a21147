from django.conf import settings
from django.db import migrations


class Migration(migrations.Migration):
    """The ledger books every model call (answers, condensing, served models), not only the judge's: `JudgeSpend`
    is `Spend`, and its table `verifier_spend`."""

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("verifier", "0021_claim_passage_column"),
    ]

    operations = [
        migrations.RenameModel(old_name="JudgeSpend", new_name="Spend"),
    ]
