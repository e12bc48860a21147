"""The view_logs permission says what it shows: the spending on every model call, answers' and the judge's
alike (Spend books both). Django creates a missing permission after migrating but never renames one, so the
stored name is written here too."""

from django.db import migrations

OLD = "Can read the answer logs and the judge's spending"
NEW = "Can read the answer logs and the spending on models"


def _renamed(old: str, new: str):
    def rename(apps, schema_editor):
        apps.get_model("auth", "Permission").objects.filter(
            content_type__app_label="verifier", codename="view_logs", name=old
        ).update(name=new)

    return rename


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("verifier", "0024_blocked_by_a_critic"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="verification",
            options={"ordering": ["-created_at"], "permissions": [("view_logs", NEW)]},
        ),
        migrations.RunPython(_renamed(OLD, NEW), _renamed(NEW, OLD)),
    ]
