"""Titles, names, paths, tags and aliases of any length a file system allows (no limit on their columns), and
where the notes live whose words a revision holds (`ArticleRevision.shows`: resolved Logseq block references)."""

import django.contrib.postgres.fields
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('garden', '0011_merge_answer_public_id'),
    ]

    operations = [
        migrations.AddField(
            model_name='articlerevision',
            name='shows',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(), blank=True, default=list, help_text='Where the notes live whose words this version holds (the Logseq blocks it references): it is withheld, and so is every answer quoting it, while one of them is.', size=None),
        ),
        migrations.AlterField(
            model_name='article',
            name='aliases',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(), blank=True, default=list, size=None),
        ),
        migrations.AlterField(
            model_name='article',
            name='garden',
            field=models.CharField(blank=True, help_text='The folder of the garden its note belongs to; empty for an article written in the admin.'),
        ),
        migrations.AlterField(
            model_name='article',
            name='path',
            field=models.CharField(blank=True, help_text="Where the note lives in its garden, without .md: 'Sync/Security'."),
        ),
        migrations.AlterField(
            model_name='article',
            name='tags',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(), blank=True, default=list, size=None),
        ),
        migrations.AlterField(
            model_name='article',
            name='title',
            field=models.CharField(),
        ),
        migrations.AlterField(
            model_name='articlerevision',
            name='source_path',
            field=models.CharField(blank=True),
        ),
        migrations.AlterField(
            model_name='articlerevision',
            name='title',
            field=models.CharField(),
        ),
        migrations.AlterField(
            model_name='image',
            name='name',
            field=models.CharField(),
        ),
        migrations.AlterField(
            model_name='link',
            name='text',
            field=models.CharField(blank=True),
        ),
        migrations.AlterField(
            model_name='link',
            name='written',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(), blank=True, default=list, help_text='The targets as the note writes them (lower case, no .md): how its page finds the link.', size=None),
        ),
        migrations.AlterField(
            model_name='sync',
            name='folders',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(), default=list, size=None),
        ),
        migrations.AlterField(
            model_name='theme',
            name='keywords',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(), blank=True, default=list, size=None),
        ),
        migrations.AlterField(
            model_name='topic',
            name='aliases',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(), blank=True, default=list, size=None),
        ),
    ]
