from django.apps import AppConfig
from django.db.models.signals import post_migrate


class VerifierConfig(AppConfig):
    name = "verifier"
    verbose_name = "Claim verification"

    def ready(self) -> None:
        from verifier.encoder import encoder_use
        from verifier.roles import roles_ensure

        encoder_use()

        # After every migrate, so the groups always match the permissions the code defines.
        post_migrate.connect(roles_ensure, sender=self)
