from django.db import migrations, models


class Migration(migrations.Migration):
    """A critic is not a check ("check" is fact-checking a given text): a finding names its critic."""

    dependencies = [
        ("verifier", "0022_rename_judgespend_spend"),
    ]

    operations = [
        migrations.RenameField(model_name="criticfinding", old_name="check_name", new_name="critic_name"),
        migrations.AlterField(
            model_name="criticfinding",
            name="error",
            field=models.TextField(blank=True, help_text="Set when the critic itself failed (it then passes: fail open)."),
        ),
        migrations.AlterModelOptions(
            name="criticfinding",
            options={"ordering": ["verification", "critic_name"]},
        ),
    ]
