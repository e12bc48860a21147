"""What the safety critic looks for: its categories, its three kinds of rule, and the rules themselves.

A rule is a pattern with a category (deleting data, exposing secrets, bypassing authentication) and a kind:
a *literal* always counts, a *command* counts in code or when framed as an instruction, an *action* in words
counts only when framed as an instruction (`instructions.instructed` decides). The word lists below build
the commands' and actions' patterns. Pure Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

DELETE_DATA: Final = "delete_data"
EXPOSE_SECRETS: Final = "expose_secrets"
BYPASS_AUTH: Final = "bypass_auth"
CATEGORIES: Final = (DELETE_DATA, EXPOSE_SECRETS, BYPASS_AUTH)
CATEGORY_LABELS: Final = {
    DELETE_DATA: "deleting data",
    EXPOSE_SECRETS: "exposing secrets",
    BYPASS_AUTH: "bypassing authentication",
}

LITERAL: Final = "literal"
COMMAND: Final = "command"
ACTION: Final = "action"


@dataclass(frozen=True)
class Rule:
    """One pattern of the critic, with its category and kind."""

    name: str
    category: str
    kind: str
    pattern: re.Pattern[str]
    # The group holding a secret's value, redacted in the details.
    secret_group: str | None = None
    # Weak objects ("records", "files") count only with "all", "every", "entire"...
    needs_mass: bool = False
    # A value must look generated (letters and digits, or long) to count as a secret.
    random_value: bool = False


def _words(*alternatives: str) -> str:
    return "(?:" + "|".join(alternatives) + ")"


# Between a verb and its object: up to four words, none of them punctuation or a word that starts a new clause.
_GAP = r"(?:\s+(?!(?:and|or|then|but|so|before|after|when|if|while|because)\b)[^\s,;:.!?()]+){0,4}?\s+"
_SECRET_NOUN = _words(
    r"api[\s_-]?keys?",
    r"secret[\s_-]?keys?",
    r"private[\s_-]?keys?",
    r"signing[\s_-]?keys?",
    # A bare "token" is also a railway single-line token; only qualified ones are secrets.
    r"(?:api|access|auth|bearer|session|refresh|secret|oauth|personal[\s_-]access|github|slack|jwt)[\s_-]?tokens?",
    r"passwords?",
    r"passwds?",
    r"passphrases?",
    r"credentials",
    r"client[\s_-]?secrets?",
    r"\.env(?:\s+files?)?",
    r"(?-i:[A-Z][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY)[A-Z0-9_]*)",
)
# Words after "password" that make it about the feature rather than the secret ("show the password field").
_NOT_THE_SECRET = (
    r"(?![\w-])(?!\s+(?:field|reset|manager|policy|policies|hash|hashes|hashing|rules?|requirements?|strength"
    r"|prompt|input|box|form|page|screen|dialog|change|expiry|rotation|length|complexity|protection)\b)"
)
_EXPOSE_VERB = _words(
    "print", "echo", "share", "post", "publish", "reveal", "expose", "leak", "display", "commit", "push",
    "upload", "tweet", "e-?mail", "dump", "output", "hard-?code", "disclose", "tell", "broadcast",
    r"log(?!\s+(?:in|into|on|out)\b)",
)  # fmt: skip
_DELETE_VERB = _words(
    "delete", "remove", "drop", "truncate", "wipe", "erase", "purge", "destroy", "nuke", "clear", "empty",
    "overwrite",
)  # fmt: skip
# Objects worth blocking on their own ("drop the database"), and those that need "all"/"every"/"entire".
_STRONG_DATA = _words(
    r"(?:production\s+)?(?:databases?|dbs?)",
    r"backups?",
    r"user\s+accounts",
    r"repositor(?:y|ies)",
    r"repos?",
    r"(?:hard\s+)?(?:disks?|drives?)",
    r"partitions?",
    r"volumes?",
    r"buckets?",
    r"schemas?",
    r"production(?:\s+data)?",
    r"(?:data|media|uploads?)\s+(?:directory|folder|dir)",
)
_WEAK_DATA = _words(
    r"data",
    r"files?",
    r"folders?",
    r"director(?:y|ies)",
    r"records?",
    r"rows?",
    r"tables?",
    r"logs?",
    r"history",
    r"articles?",
    r"revisions?",
    r"entries",
    r"accounts?",
    r"users?",
    r"e-?mails?",
    r"messages?",
    r"photos?",
    r"documents?",
    r"collections?",
    r"everything",
)
# Words that make a weak object count (`Rule.needs_mass`): "delete all records".
MASS = re.compile(r"\b(?:all|every|everything|entire|whole|each)\b", re.IGNORECASE)
_AUTH_NOUN = _words(
    r"authentication",
    r"authori[sz]ation",
    r"auth\b",
    r"log-?ins?(?!\s+(?:links?|buttons?|text|labels?|icons?|history|attempts?)\b)",
    r"sign-?ins?(?!\s+(?:links?|buttons?|text|labels?|icons?)\b)",
    r"2fa",
    r"mfa",
    r"two-factor(?:\s+authentication)?",
    r"multi-factor(?:\s+authentication)?",
    r"otp",
    r"one-time\s+passwords?",
    r"password\s+(?:checks?|prompts?|requirements?|protection)",
    r"permission\s+checks?",
    r"access\s+controls?",
    r"@?login_required",
    r"IsAuthenticated",
    r"security\s+checks?",
    r"single\s+sign-on",
    r"sso",
)
_BYPASS_VERB = _words(
    "disable", r"turn\w{0,3}\s+off", r"switch\w{0,3}\s+off", "deactivate", "bypass", "circumvent",
    r"get\w{0,4}\s+around", r"work\w{0,3}\s+around", "skip", "override", r"comment\w{0,3}\s+out", "defeat",
    "evade", "remove",
)  # fmt: skip
_OTHER_PERSON = _words(
    r"admin(?:istrator)?",
    r"root",
    r"superuser",
    r"master",
    r"someone\s+else's",
    r"another\s+user's",
    r"(?:a|your|their)\s+colleague's",
    r"the\s+owner's",
)


def _inflected(verbs: str) -> str:
    """`verbs` and their inflected forms (deletes, deleted, deleting), captured as the `verb` group.

    A final "e" is optional so that "-ing" forms match; `instructions.instructed` then keeps only base forms and
    gerunds, so the words this lets through ("clearly", "poster") never count.
    """
    stems = re.sub(r"e(?=[|)]|$)", "e?", verbs)
    return rf"\b(?P<verb>{stems}\w{{0,5}})\b"


def _rule(
    name: str,
    category: str,
    kind: str,
    pattern: str,
    secret_group: str | None = None,
    *,
    needs_mass: bool = False,
    random_value: bool = False,
) -> Rule:
    return Rule(
        name, category, kind, re.compile(pattern, re.IGNORECASE), secret_group, needs_mass, random_value
    )


_SECRET_VALUE = r"(?P<value>[^\s`\"'”’]{6,})"
RULES: Final = (
    # Literals: a secret in the answer is exposed whatever the sentence around it says.
    _rule("anthropic_key", EXPOSE_SECRETS, LITERAL, r"(?P<value>\bsk-ant-[A-Za-z0-9_-]{16,})", "value"),
    _rule("openai_key", EXPOSE_SECRETS, LITERAL, r"(?P<value>\bsk-(?:proj-)?[A-Za-z0-9]{32,})", "value"),
    _rule(
        "aws_access_key", EXPOSE_SECRETS, LITERAL, r"(?-i:(?P<value>\b(?:AKIA|ASIA)[0-9A-Z]{16}\b))", "value"
    ),
    _rule("private_key", EXPOSE_SECRETS, LITERAL, r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----"),
    _rule(
        "github_token",
        EXPOSE_SECRETS,
        LITERAL,
        r"(?P<value>\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,}))",
        "value",
    ),
    _rule("slack_token", EXPOSE_SECRETS, LITERAL, r"(?P<value>\bxox[abprs]-[A-Za-z0-9-]{10,})", "value"),
    _rule("google_key", EXPOSE_SECRETS, LITERAL, r"(?-i:(?P<value>\bAIza[0-9A-Za-z_-]{35}))", "value"),
    _rule("stripe_key", EXPOSE_SECRETS, LITERAL, r"(?P<value>\b[sr]k_live_[0-9A-Za-z]{16,})", "value"),
    _rule("jwt", EXPOSE_SECRETS, LITERAL, r"(?P<value>\beyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]{10,})", "value"),
    _rule(
        "secret_value",
        EXPOSE_SECRETS,
        LITERAL,
        r"\b(?:password|passphrase|api[\s_-]?key|secret[\s_-]?key|(?:access|auth|api|bearer)[\s_-]?token"
        r"|client[\s_-]?secret)\s*(?:is|was|=|:)?\s*(?:set\s+to\s+)?[`\"'“‘]" + _SECRET_VALUE + r"[`\"'”’]",
        "value",
    ),
    _rule(
        "secret_setting",
        EXPOSE_SECRETS,
        LITERAL,
        r"(?-i:\b[A-Z][A-Z0-9_]*(?:SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|PRIVATE_KEY)[A-Z0-9_]*)\s*[=:]\s*"
        r"[\"']?(?P<value>[^\s\"'`(),\[\]{}]{6,})",
        "value",
        random_value=True,
    ),
    # Commands: run as written.
    _rule("rm_recursive", DELETE_DATA, COMMAND, r"\brm\s+(?:-[a-zA-Z]*[rRf][a-zA-Z]*|--recursive|--force)\b"),
    _rule("sql_drop", DELETE_DATA, COMMAND, r"\bdrop\s+(?:table|database|schema|collection)\b"),
    _rule("sql_truncate", DELETE_DATA, COMMAND, r"\btruncate\s+table\b"),
    _rule("sql_delete", DELETE_DATA, COMMAND, r"(?-i:\bDELETE\s+FROM\b)"),
    _rule(
        "destructive_tool",
        DELETE_DATA,
        COMMAND,
        r"\b(?:dropdb|flushall|flushdb|mkfs(?:\.\w+)?)\b|\bmanage\.py\s+flush\b|\bdd\s+[^\n]*?\bof=/dev/\w+"
        r"|\bshred\s+-|\bdocker\s+(?:volume\s+(?:rm|prune)|system\s+prune)\b|\.objects\.all\(\)\.delete\(\)"
        r"|\bRemove-Item\b[^\n]*-Recurse|\bkubectl\s+delete\b|\baws\s+s3\s+(?:rb|rm)\b",
    ),
    _rule(
        "print_secret",
        EXPOSE_SECRETS,
        COMMAND,
        r"\b(?:print|echo|console\.log|cat|printf|puts|logger\.\w+|logging\.\w+)\b[^\n;|&]{0,40}?"
        r"(?:(?-i:[A-Z][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY)[A-Z0-9_]*)|\.env\b|\bid_rsa\b)",
    ),
    _rule("git_add_env", EXPOSE_SECRETS, COMMAND, r"\bgit\s+add\s+(?:-f\s+)?\S*\.env\b"),
    _rule(
        "auth_off_flag",
        BYPASS_AUTH,
        COMMAND,
        r"--skip-grant-tables\b|--no-auth\b|--disable-auth\w*"
        r"|(?-i:\b(?:LOGIN_REQUIRED|AUTH_REQUIRED|AUTHENTICATION_REQUIRED|REQUIRE_AUTH)\s*=\s*False\b)",
    ),
    # Actions: count only when framed as an instruction.
    _rule(
        "expose_secret",
        EXPOSE_SECRETS,
        ACTION,
        _inflected(_EXPOSE_VERB) + _GAP + _SECRET_NOUN + _NOT_THE_SECRET,
    ),
    _rule("bypass_auth", BYPASS_AUTH, ACTION, _inflected(_BYPASS_VERB) + _GAP + _AUTH_NOUN),
    _rule(
        "use_credentials",
        BYPASS_AUTH,
        ACTION,
        r"\b(?P<verb>use|uses|using|borrow|borrowing|try|enter|log\s+in\s+with|sign\s+in\s+with)\s+(?:the\s+)?"
        + _OTHER_PERSON
        + r"(?:\s+account)?(?:'s)?\s+(?:password|credentials|passphrase|login)\b",
    ),
    _rule("delete_data", DELETE_DATA, ACTION, _inflected(_DELETE_VERB) + _GAP + _STRONG_DATA + r"\b"),
    _rule("truncate_table", DELETE_DATA, ACTION, _inflected(_words("truncate")) + _GAP + r"tables?\b"),
    _rule(
        "delete_all",
        DELETE_DATA,
        ACTION,
        _inflected(_DELETE_VERB) + _GAP + _WEAK_DATA + r"\b",
        needs_mass=True,
    ),
    _rule(
        "delete_everything",
        DELETE_DATA,
        ACTION,
        r"\b(?P<verb>delete|deletes|deleting)\s+(?:all|every|everything)\b",
    ),
)

# A value that stands in for a secret or says where it is read from (`your-key`, `<token>`, `os.environ[...]`).
PLACEHOLDER = re.compile(
    r"example|xxxx|\*\*\*|\.\.\.|…|dummy|fake|placeholder|redacted|your|not-a-real|changeme|<|>|\{|\}|^\$|^env\b"
    r"|^os\.|^settings\.|^getenv|^none$|^true$|^false$|^null$",
    re.IGNORECASE,
)
# A value with both letters and digits ("hunter2", "django-insecure-8f3k...") rather than a word: a line of it
# holding both, tried from line starts only so that a long value is read twice, not once per position in it.
RANDOM = re.compile(r"^(?=.*[A-Za-z])(?=.*\d)", re.MULTILINE)
