from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("garden", "0021_name_article")]

    operations = [
        migrations.AddField(
            model_name="retrievalcalibration",
            name="source",
            field=models.CharField(
                choices=[("golden", "golden set"), ("probes", "probes")],
                default="golden",
                help_text="What it was fitted on: a golden set, or probes the garden made of itself.",
                max_length=10,
            ),
        ),
        migrations.AlterField(
            model_name="retrievalcalibration",
            name="expected",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="Its figures on the golden set or the probes (refusals, answers, recall@5), and held out.",
            ),
        ),
    ]
