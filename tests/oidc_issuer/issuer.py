"""Start the test provider (django-oidc-provider, `tests.oidc_issuer.settings`) in a process of its own, sign a
user in at it without a browser, and sign tokens with its own key (or another) for the tests that tamper."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from config.services import free_port

BASE_DIR = Path(__file__).resolve().parent.parent.parent
START_SECONDS = 120  # migrate and first answer, on a slow, busy machine

CLIENT_ID = "groundwork-test"
CLIENT_SECRET = "groundwork-test-secret"
PASSWORD = "team-password-1"


def rsa_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


@dataclass
class Member:
    """A user at the provider, with the groups its `groups` claim gives."""

    username: str
    groups: list[str]
    email: str = ""


@dataclass
class Issuer:
    """The provider on a free port, its database and log under `root`; `redirect_uris` are the relying party's
    callbacks (and `post_logout_redirect_uris` where its end-session page may send users back)."""

    root: Path
    redirect_uris: list[str]
    post_logout_redirect_uris: list[str]
    members: list[Member]
    port: int = field(default_factory=free_port)
    key_pem: str = field(default_factory=rsa_pem)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def issuer(self) -> str:
        return f"{self.url}/openid"

    @property
    def kid(self) -> str:
        return hashlib.md5(self.key_pem.encode()).hexdigest()

    @property
    def log(self) -> Path:
        return self.root / "issuer.log"

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.oidc_issuer.settings",
            "OIDC_TEST_ISSUER_DB": str(self.root / "issuer.sqlite3"),
            "OIDC_TEST_ISSUER_URL": self.url,
        }

    def _run(self, *args: str, stdin: str | None = None) -> None:
        subprocess.run(
            [sys.executable, *args], cwd=BASE_DIR, env=self._env(), input=stdin, text=True, check=True,
            capture_output=True,
        )  # fmt: skip

    def start(self) -> Issuer:
        self.root.mkdir(parents=True, exist_ok=True)
        if not (self.root / "issuer.sqlite3").exists():
            self._run("-m", "django", "migrate", "--verbosity", "0")
            spec = {
                "key_pem": self.key_pem,
                "clients": [
                    {
                        "client_id": CLIENT_ID,
                        "client_secret": CLIENT_SECRET,
                        "redirect_uris": self.redirect_uris,
                        "post_logout_redirect_uris": self.post_logout_redirect_uris,
                    }
                ],
                "users": [
                    {"username": m.username, "password": PASSWORD, "groups": m.groups, "email": m.email}
                    for m in self.members
                ],
            }
            self._run("-m", "tests.oidc_issuer.seed", stdin=json.dumps(spec))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "django", "runserver", f"127.0.0.1:{self.port}", "--noreload"],
            cwd=BASE_DIR,
            env=self._env(),
            stdin=subprocess.DEVNULL,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                requests.get(f"{self.issuer}/.well-known/openid-configuration", timeout=5).raise_for_status()
                return self
            except requests.RequestException:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the test provider did not start:\n{self.log.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)

    def settings(self) -> dict[str, Any]:
        """Groundwork's settings for signing in here."""
        return {
            "OIDC_ISSUER": self.issuer,
            "OIDC_CLIENT_ID": CLIENT_ID,
            "OIDC_CLIENT_SECRET": CLIENT_SECRET,
        }

    def sign_in(self, authorize_url: str, username: str, *, session: requests.Session | None = None) -> str:
        """Follow the relying party's redirect to the provider, sign `username` in at its login form (unless
        `session`, the browser's cookies there, is signed in already), and return the address the provider sends
        the browser back to (the relying party's callback)."""
        session = session or requests.Session()
        url = authorize_url
        for _ in range(10):
            if not url.startswith(self.url):
                return url
            response = session.get(url, allow_redirects=False, timeout=30)
            if response.status_code == 200 and "issuer-login" in response.text:
                token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.text)
                assert token is not None, response.text
                next_url = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["next"][0]
                response = session.post(
                    url,
                    data={
                        "csrfmiddlewaretoken": token.group(1),
                        "username": username,
                        "password": PASSWORD,
                        "next": next_url,
                    },
                    allow_redirects=False,
                    timeout=30,
                )
            assert response.status_code in (301, 302), (response.status_code, response.text[:2000])
            url = urllib.parse.urljoin(url, response.headers["Location"])
        raise AssertionError(f"the provider did not send the browser back: {url}")

    def signed(self, claims: Mapping[str, Any], *, key_pem: str | None = None) -> str:
        """An ID token with `claims`, signed with the provider's key (or `key_pem`) under the provider's key id."""
        return jwt.encode(dict(claims), key_pem or self.key_pem, algorithm="RS256", headers={"kid": self.kid})
