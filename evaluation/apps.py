from django.apps import AppConfig
from django.db.models.signals import post_migrate


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        from verifier.roles import roles_ensure

        # Operators' Verify-all permission is this app's, created at this app's turn of post_migrate (after the
        # verifier's): the groups are made again then, so a fresh database gives it to them.
        post_migrate.connect(roles_ensure, sender=self)
