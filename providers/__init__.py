"""What the apps call out to: the Claude client (`claude`) and the embedding backends (`embeddings`).

Below every app: nothing here imports the garden, the verifier, evaluation, the dashboard or the claim-checking
engine (an import-linter contract holds it). Only what must read Django settings or the cache does, and then
inside the function that needs it, so the engine's tests and `make eval` use these without Django.
"""
