"""The claim-checking engine: plain Python, no Django (see docs/architecture.md)."""
