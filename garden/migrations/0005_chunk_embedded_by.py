from django.db import migrations, models


class Migration(migrations.Migration):
    # Chunks stored before this were embedded by the configured backend, torch unless EMBEDDING_BACKEND was
    # set: they are marked torch, and an import under another backend embeds them again.
    dependencies = [
        ("garden", "0004_hnsw_m32_ef_construction400"),
    ]

    operations = [
        migrations.AddField(
            model_name="chunk",
            name="embedded_by",
            field=models.CharField(default="torch", max_length=40),
            preserve_default=False,
        ),
    ]
