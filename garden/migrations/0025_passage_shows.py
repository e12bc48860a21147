"""Each passage records where the notes live whose words it holds (`Passage.shows`, decision 0006). A passage
stored before knew only its revision's (`ArticleRevision.shows`): it is given them all, so it fails closed (read
only by readers of every note its page borrowed from) until its note is next imported."""

import django.contrib.postgres.fields
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("garden", "0024_answer_abstained"),
    ]

    operations = [
        migrations.AddField(
            model_name="passage",
            name="shows",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(),
                blank=True,
                default=list,
                help_text="Where the notes live whose words this passage holds (the Logseq blocks its note "
                "references): only their readers may read it (decision 0006).",
                size=None,
            ),
        ),
        migrations.RunSQL(
            "UPDATE garden_chunk c SET shows = r.shows FROM garden_articlerevision r "
            "WHERE c.revision_id = r.id AND r.shows <> '{}'",
            migrations.RunSQL.noop,
        ),
    ]
