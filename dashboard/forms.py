from django import forms
from django.conf import settings


class AskForm(forms.Form):
    question = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "Ask the garden a question…"}),
        max_length=settings.QUESTION_MAX_CHARS,
        required=False,
    )
