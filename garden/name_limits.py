"""What a topic's or theme's slug and title hold, and so the longest name a question is searched for. A longer
name is a sentence, not one a question would use: it is left out of the vocabulary (its note still imports, and
is still found by its text). Pure Python, so the models, the vocabulary and answering share it without answering
reaching the note types the vocabulary reads."""

NAME_SLUG_LIMIT = 100
NAME_TITLE_LIMIT = 200
