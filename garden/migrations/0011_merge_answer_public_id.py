from django.db import migrations


class Migration(migrations.Migration):
    # Joins the answers' random addresses (0007, made on its own branch beside 0008-0010) to the rest.

    dependencies = [
        ("garden", "0007_answer_public_id"),
        ("garden", "0010_unicode_slugs"),
    ]

    operations = []
