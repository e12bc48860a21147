"""One use case per action, called by every surface: the pages (`dashboard/views/`), the JSON API
(`dashboard/api.py`), the MCP server (`dashboard/mcp_server.py`) and the command line (`manage.py ask`).

An action takes the caller (the request a surface received: its user, session, personal token and address;
see `callers.py`) and the input the surface parsed, and takes every step a surface must not take for itself:
whether the caller may (a token's scope, a role), the rate limit, whose Claude spend it is, and what of the
garden the caller may see. It returns what was done, or raises `Refused` with the outcome (forbidden, not found,
invalid, limited, busy, withheld) and the message to show; the surface then only shapes the result (HTML, JSON,
a tool's result or error, printed lines). docs/decisions/0008-one-use-case-per-action.md says why.

    asking.py     ask, ask streamed (a follow-up is a question asked in a conversation)
    answers.py    read an answer, its verdict; mark an answer, report a claim
    checking.py   fact-check a text
    reading.py    search the garden's passages, read an article
"""
