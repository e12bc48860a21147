from django.apps import AppConfig


class VerifierConfig(AppConfig):
    name = "verifier"
    verbose_name = "Claim verification"
