"""A model served over the OpenAI API (Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter, OpenAI itself),
called through the official `openai` SDK as Claude is called through `providers.claude`.

`config` holds `OpenAIConfig` and `openai_config()` (the settings' `OPENAI_BASE_URL`, `OPENAI_API_KEY`, prices);
`client` makes one call (`call_openai`), `streaming` a streamed one (`OpenAIStream`). Replies and failures are
the ones the Claude client gives (`modelcalls.ModelReply`, `providers.errors.ModelError`), so `providers.chat`
calls either model alike. Plain
Python: only `openai_config()` reads Django settings, when called. The SDK is imported with `call_openai` or
`OpenAIStream`, not with the package, as `providers.claude` does with its own.
"""

from typing import TYPE_CHECKING

from providers.lazy import lazy_getattr
from providers.openai.config import OpenAIConfig, openai_config

if TYPE_CHECKING:
    from providers.openai.client import call_openai
    from providers.openai.streaming import OpenAIStream

__all__ = ["OpenAIConfig", "OpenAIStream", "call_openai", "openai_config"]


# `call_openai` and `OpenAIStream`, imported with the SDK when first asked for.
__getattr__ = lazy_getattr(
    __name__, {"call_openai": "providers.openai.client", "OpenAIStream": "providers.openai.streaming"}
)
