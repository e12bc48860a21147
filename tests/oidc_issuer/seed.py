"""Fill the test provider's database from a JSON spec on stdin: its RSA key, clients, groups and users."""

import json
import sys

import django


def main() -> None:
    django.setup()
    from django.contrib.auth.models import Group, User
    from oidc_provider.models import Client, ResponseType, RSAKey

    spec = json.load(sys.stdin)
    RSAKey.objects.create(key=spec["key_pem"])
    for client in spec["clients"]:
        made = Client.objects.create(
            name=client["client_id"],
            client_type="confidential",
            client_id=client["client_id"],
            client_secret=client["client_secret"],
            jwt_alg="RS256",
            require_consent=False,
            reuse_consent=True,
            _redirect_uris="\n".join(client["redirect_uris"]),
            _post_logout_redirect_uris="\n".join(client["post_logout_redirect_uris"]),
            _scope="openid profile email",
        )
        made.response_types.add(ResponseType.objects.get(value="code"))
    for user in spec["users"]:
        made = User.objects.create_user(user["username"], user.get("email", ""), user["password"])
        for name in user["groups"]:
            made.groups.add(Group.objects.get_or_create(name=name)[0])


if __name__ == "__main__":
    main()
