"""The Verify-all runs' chart: their headline and answered rate, oldest first, as server-side SVG (no JavaScript,
no CDN)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from evaluation.models import RunStatus, VerifyRun
from evaluation.report import stored_report

WIDTH, HEIGHT, PAD = 640, 220, 40
# How each series is drawn besides its colour (dash pattern, marker, value label above or below the point), so
# that neither the lines nor their legend rely on colour alone.
STYLES = (("", "circle", -9), ("6 4", "square", 18))


@dataclass(frozen=True)
class Series:
    """One line of a chart: its name, as the legend writes it, and one value in [0, 1] per label (None where
    that run has none)."""

    name: str
    values: Sequence[float | None]


def _marker(shape: str, x: float, y: float, css: str, tooltip: str = "") -> str:
    inner = f"<title>{escape(tooltip)}</title>" if tooltip else ""
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" class="{css}">{inner}</circle>'
    return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" class="{css}">{inner}</rect>'


def line_chart(labels: Sequence[str], series: Sequence[Series], *, title: str) -> SafeString:
    """A labelled line chart of rates (shown as percentages), one point per label, oldest first, with a legend
    in text; a series is drawn with its own dash pattern and marker. At most two series."""
    values = [value for line in series for value in line.values if value is not None]
    if not labels or not values:
        return mark_safe("")
    top = min(1.0, max(0.05, max(values) * 1.2))
    step = (WIDTH - 2 * PAD) / max(len(labels) - 1, 1)

    def xy(i: int, value: float) -> tuple[float, float]:
        return PAD + i * step, HEIGHT - PAD - (value / top) * (HEIGHT - 2 * PAD)

    parts = [
        f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
        f'<text x="{PAD - 6}" y="{y + 4:.1f}" text-anchor="end" class="axis">{fraction * top:.0%}</text>'
        for fraction in (0, 0.5, 1)
        for y in [HEIGHT - PAD - fraction * (HEIGHT - 2 * PAD)]
    ]
    parts += [
        f'<text x="{PAD + i * step:.1f}" y="{HEIGHT - PAD + 16}" text-anchor="middle" class="axis">'
        f"{escape(label[:14])}</text>"
        for i, label in enumerate(labels)
    ]
    for number, (line, (dashes, shape, label_dy)) in enumerate(zip(series, STYLES, strict=False)):
        css = f"series-{number}"
        dash = f' stroke-dasharray="{dashes}"' if dashes else ""
        points = [(i, value, *xy(i, value)) for i, value in enumerate(line.values) if value is not None]
        # A run without this figure leaves a gap: the line is not drawn across it.
        path = " ".join(
            f"{'L' if k and points[k - 1][0] == i - 1 else 'M'}{x:.1f},{y:.1f}"
            for k, (i, _, x, y) in enumerate(points)
        )
        parts.append(f'<path d="{path}" class="line {css}"{dash}/>')
        parts += [
            _marker(shape, x, y, css, f"{labels[i]}: {line.name} {value:.1%}")
            + f'<text x="{x:.1f}" y="{y + label_dy:.1f}" text-anchor="middle" class="value">{value:.1%}</text>'
            for i, value, x, y in points
        ]
        legend_x, legend_y = PAD + number * (WIDTH - 2 * PAD) / 2, 14
        parts.append(
            f'<g class="legend"><line x1="{legend_x:.1f}" x2="{legend_x + 24:.1f}" y1="{legend_y - 4}" '
            f'y2="{legend_y - 4}" class="line {css}"{dash}/>{_marker(shape, legend_x + 12, legend_y - 4, css)}'
            f'<text x="{legend_x + 30:.1f}" y="{legend_y}">{escape(line.name)}</text></g>'
        )
    return mark_safe(
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>{''.join(parts)}</svg>"
    )


def runs_chart(runs: Sequence[VerifyRun]) -> SafeString:
    """The unverified claim rate of the finished runs among `runs` (newest first), with the share of answers
    that state the expected fact; empty when none has a headline."""
    finished = [
        (run.label, report)
        for run in reversed(runs)
        if run.status == RunStatus.DONE
        and (report := stored_report(run)) is not None
        and report.unverified_claim_rate is not None
    ]
    return line_chart(
        [label for label, _ in finished],
        [
            Series("Unverified claim rate (lower is better)", [r.unverified_claim_rate for _, r in finished]),
            Series("Answers stating the fact (higher is better)", [r.answered_rate for _, r in finished]),
        ],
        title="Unverified claim rate across runs (lower is better), with the share of answers that state the "
        "expected fact (higher is better)",
    )
