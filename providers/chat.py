"""A chat model that writes text: Claude, or a model served over the OpenAI API, called alike.

Whoever writes with a model (the answers, the condensed follow-ups, the judges through `verifier`) holds a
`ChatConfig` and calls `chat_call` or `chat_stream`; which SDK speaks is the config's kind. Both give a
`ModelReply` and fail with a `ModelError`, and both price by `config.prices`.
"""

from __future__ import annotations

from typing import Any, Unpack

from modelcalls import ModelReply
from providers.claude import ClaudeConfig, ClaudeStream, call_claude
from providers.claude.client import Call
from providers.openai import OpenAIConfig, OpenAIStream, call_openai

ChatConfig = ClaudeConfig | OpenAIConfig


def chat_call(config: ChatConfig, **call: Unpack[Call]) -> ModelReply:
    """One call to the model `config` reaches (`call_claude` or `call_openai`)."""
    if isinstance(config, OpenAIConfig):
        return call_openai(config, **call)
    return call_claude(config, **call)


def chat_stream(
    config: ChatConfig, *, model: str, system: str, messages: list[dict[str, Any]], max_tokens: int
) -> ClaudeStream | OpenAIStream:
    """One streamed call to the model `config` reaches, not yet begun (iterate its `text()`)."""
    if isinstance(config, OpenAIConfig):
        return OpenAIStream(config, model=model, system=system, messages=messages, max_tokens=max_tokens)
    return ClaudeStream(config, model=model, system=system, messages=messages, max_tokens=max_tokens)
