from typing import Any


def groups_claim(id_token: dict[str, Any], user: Any, **kwargs: Any) -> dict[str, Any]:
    """The ID token with the user's groups and username, as a team's provider sends them."""
    id_token["groups"] = sorted(user.groups.values_list("name", flat=True))
    id_token["preferred_username"] = user.username
    return id_token
