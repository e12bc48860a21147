from django.apps import AppConfig
from django.db.models.signals import post_migrate


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        from verifier.roles import roles_ensure

        # After every migrate, so the groups always match the permissions the code defines: at this app's turn of
        # post_migrate, after the garden's and the verifier's, so every permission the roles name exists by then
        # (operators' Verify-all permission is this app's).
        post_migrate.connect(roles_ensure, sender=self)
