"""Server-side SVG charts (no JavaScript, no CDN)."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT, PAD = 640, 220, 40


def line_chart(points: Sequence[tuple[str, float]], *, title: str) -> SafeString:
    """A labelled line chart of values in [0, 1] (shown as percentages), oldest first."""
    if not points:
        return mark_safe("")
    top = max(0.05, max(value for _, value in points) * 1.2)
    step = (WIDTH - 2 * PAD) / max(len(points) - 1, 1)

    def xy(i: int, value: float) -> tuple[float, float]:
        return PAD + i * step, HEIGHT - PAD - (value / top) * (HEIGHT - 2 * PAD)

    coords = [xy(i, value) for i, (_, value) in enumerate(points)]
    path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(coords))
    marks = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4"><title>{escape(label)}: {value:.1%}</title></circle>'
        f'<text x="{x:.1f}" y="{y - 9:.1f}" text-anchor="middle" class="value">{value:.1%}</text>'
        f'<text x="{x:.1f}" y="{HEIGHT - PAD + 16}" text-anchor="middle" class="axis">{escape(label[:14])}</text>'
        for (x, y), (label, value) in zip(coords, points, strict=True)
    )
    grid = "".join(
        f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
        f'<text x="{PAD - 6}" y="{y + 4:.1f}" text-anchor="end" class="axis">{fraction * top:.0%}</text>'
        for fraction in (0, 0.5, 1)
        for y in [HEIGHT - PAD - fraction * (HEIGHT - 2 * PAD)]
    )
    return mark_safe(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">'
        f'<title>{escape(title)}</title>{grid}<path d="{path}" class="line"/>{marks}</svg>'
    )
