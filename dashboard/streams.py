"""A streamed question as Server-Sent Events (`text/event-stream`), for the API and the pages alike.

Each event of `garden.answering.streaming` becomes one SSE event: a `delta` with text to add, then one named by
whoever renders the stored answer (the API's `answer` with its JSON, a page's with its HTML). The stream books
each step to its asker itself (`dashboard.actions.asking.CallerStream`). Closing the response (the reader went away) closes the stream, which stores
the answer as left unfinished and gives back the Claude slot.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator

from django.http import StreamingHttpResponse

from dashboard.actions.asking import CallerStream
from garden.answering.streaming import AskEventKind
from garden.models import Answer

EVENT_STREAM = "text/event-stream"


def sse_event(name: str, data: str) -> str:
    """One Server-Sent Event: its name, and its data a `data:` line a line."""
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"event: {name}\n{lines}\n"


class ServerSentEvents:
    """The events of `stream` framed as SSE; `close()` closes the stream too, even if it was never read."""

    def __init__(
        self,
        stream: CallerStream,
        *,
        delta: Callable[[str], str],
        answer: Callable[[Answer], tuple[str, str]],
    ) -> None:
        self._stream = stream
        self._delta = delta
        self._answer = answer
        self._events = self._framed()
        self.ending = ""

    def __iter__(self) -> Iterator[str]:
        return self._events

    def close(self) -> None:
        try:
            self._events.close()
        finally:
            self._stream.close()

    def _framed(self) -> Generator[str, None, None]:
        while True:
            event = next(self._stream, None)
            if event is None:
                if self.ending:
                    yield self.ending
                return
            if event.kind == AskEventKind.DELTA:
                yield sse_event("delta", self._delta(event.text))
            else:
                assert event.answer is not None
                yield sse_event(*self._answer(event.answer))


def event_stream_response(
    events: ServerSentEvents | Iterable[str], *, ending: str = ""
) -> StreamingHttpResponse:
    """The response that sends `events` as they come: not cached, not buffered by a proxy in front. `ending`:
    the name of an event sent last, which tells a browser's `EventSource` the stream is over (it would
    otherwise connect again)."""
    if ending and isinstance(events, ServerSentEvents):
        events.ending = sse_event(ending, "")
    response = StreamingHttpResponse(events, content_type=EVENT_STREAM)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = (
        "no"  # nginx would otherwise hold the words back until the answer is whole
    )
    return response
