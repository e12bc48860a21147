"""A model served over the OpenAI API (Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter, OpenAI itself),
called through the official `openai` SDK as Claude is called through `providers.claude`.

`config` holds `OpenAIConfig` and `openai_config()` (the settings' `OPENAI_BASE_URL`, `OPENAI_API_KEY`, prices);
`client` makes one call (`call_openai`), `streaming` a streamed one (`OpenAIStream`). Replies and failures are
the ones the Claude client gives (`modelcalls.ModelReply`, `providers.errors.ModelError`), so `providers.chat`
calls either model alike. Plain
Python: only `openai_config()` reads Django settings, when called.
"""

from providers.openai.client import call_openai
from providers.openai.config import OpenAIConfig, openai_config
from providers.openai.streaming import OpenAIStream

__all__ = ["OpenAIConfig", "OpenAIStream", "call_openai", "openai_config"]
