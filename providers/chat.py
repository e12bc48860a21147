"""A chat model that writes text: Claude, or a model served over the OpenAI API, called alike.

Whoever writes with a model (the answers, the condensed follow-ups, the judges through `verifier`) holds a
`ChatConfig` and calls `chat_call` or `chat_stream`; which SDK speaks is the config's kind. Both give a
`ModelReply` and fail with a `ModelError`, and both price by `config.prices`. The SDKs are imported at the first
call, not with this module (which every asking module imports).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, Unpack

from providers.claude import ClaudeConfig
from providers.openai import OpenAIConfig

if TYPE_CHECKING:
    from modelcalls import ModelReply
    from providers.claude import ClaudeStream
    from providers.claude.client import Call
    from providers.openai import OpenAIStream

ChatConfig = ClaudeConfig | OpenAIConfig


def chat_call(config: ChatConfig, **call: Unpack[Call]) -> ModelReply:
    """One call to the model `config` reaches (`call_claude` or `call_openai`)."""
    if isinstance(config, OpenAIConfig):
        from providers.openai import call_openai

        return call_openai(config, **call)
    from providers.claude import call_claude

    return call_claude(config, **call)


def chat_stream(
    config: ChatConfig, *, model: str, system: str, messages: list[dict[str, Any]], max_tokens: int
) -> ClaudeStream | OpenAIStream:
    """One streamed call to the model `config` reaches, not yet begun (iterate its `text()`)."""
    if isinstance(config, OpenAIConfig):
        from providers.openai import OpenAIStream

        return OpenAIStream(config, model=model, system=system, messages=messages, max_tokens=max_tokens)
    from providers.claude import ClaudeStream

    return ClaudeStream(config, model=model, system=system, messages=messages, max_tokens=max_tokens)


def load(config: ChatConfig) -> None:
    """Import the SDK that reaches `config`'s model now (about a second of CPU), so that a server's first call to
    it does not wait for the import: the servers' start-ups call this for the models they are configured with."""
    kind = "openai" if isinstance(config, OpenAIConfig) else "claude"
    for module in ("client", "streaming"):
        import_module(f"providers.{kind}.{module}")
