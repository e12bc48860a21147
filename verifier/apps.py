from django.apps import AppConfig


class VerifierConfig(AppConfig):
    name = "verifier"
    verbose_name = "Claim verification"

    def ready(self) -> None:
        from verifier import checks  # noqa: F401  (registers the system checks)
        from verifier.encoder import encoder_use

        encoder_use()  # the groups are made after every migrate by the evaluation app (evaluation/apps.py)
