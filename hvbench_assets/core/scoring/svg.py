"""Charts for the HTML report, drawn with matplotlib and inlined as SVG (text kept as text, so the report
stays searchable). matplotlib lays out ticks and rotated labels and `bbox_inches="tight"` keeps every
label inside the picture, which hand-drawn SVG kept getting wrong."""

from __future__ import annotations

import contextlib
import contextvars
import io
from collections.abc import Iterator, Mapping, Sequence

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]
REF_COLORS = ["#000000", "#cc0000"]


def _figure(width_px: int, height_px: int):
    from matplotlib.figure import Figure

    return Figure(figsize=(width_px / 96, height_px / 96), dpi=96)


_PNG: contextvars.ContextVar[bool] = contextvars.ContextVar("hvbench_png_charts", default=False)


@contextlib.contextmanager
def png_charts() -> Iterator[None]:
    """Inside, the chart functions return PNG bytes instead of SVG text (images for the Dagster UI)."""
    token = _PNG.set(True)
    try:
        yield
    finally:
        _PNG.reset(token)


def _svg(fig, title: str):
    import matplotlib

    fig.suptitle(title, fontsize=11)
    if _PNG.get():
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight", dpi=72, metadata={"Software": None})
        return buf.getvalue()
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "hvbench"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # inline: no XML prolog / doctype


def grouped_bars(groups: Sequence[str], series: Mapping[str, Sequence[float | None]], title: str,
                 y_max: float = 100.0, refs: Mapping[str, Sequence[float | None]] | None = None,
                 width: int = 760, height: int = 300) -> str:
    """One group per label, one bar per series (values in %, None = no bar); `refs` draw dashed
    reference lines across each group (random guess, human)."""
    fig = _figure(width, height)
    ax = fig.add_subplot()
    names = list(series)
    bw = 0.8 / max(1, len(names))
    for si, name in enumerate(names):
        xs = [gi - 0.4 + bw * (si + 0.5) for gi, v in enumerate(series[name]) if v is not None]
        ys = [min(v, y_max) for v in series[name] if v is not None]
        ax.bar(xs, ys, width=bw * 0.9, color=PALETTE[si % len(PALETTE)], label=name[:40])
    for ri, (rname, vals) in enumerate((refs or {}).items()):
        for gi, v in enumerate(vals):
            if v is not None:
                ax.hlines(min(v, y_max), gi - 0.45, gi + 0.45, colors=REF_COLORS[ri % 2], linestyles="dashed",
                          label=rname if gi == next(i for i, x in enumerate(vals) if x is not None) else None)
    ax.set_xticks(range(len(groups)), [str(g) for g in groups], rotation=30, ha="right", rotation_mode="anchor")
    ax.set_ylim(0, y_max)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.grid(axis="y", color="#dddddd")
    ax.set_axisbelow(True)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return _svg(fig, title)


def histogram(counts: Mapping[int, int], title: str, x_label: str, width: int = 360, height: int = 220) -> str:
    """Bars for integer x (0..max) with their counts; x = 0 in red (e.g. distractors nobody chose)."""
    from matplotlib.ticker import MaxNLocator

    fig = _figure(width, height)
    ax = fig.add_subplot()
    xs = list(range(0, (max(counts) if counts else 0) + 1))
    ax.bar(xs, [counts.get(x, 0) for x in xs], color=["#e15759" if x == 0 else "#4e79a7" for x in xs])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=6))
    ax.set_xlabel(x_label)
    ax.set_ylabel("count")
    ax.grid(axis="y", color="#dddddd")
    ax.set_axisbelow(True)
    return _svg(fig, title)


def scatter(points: Sequence[tuple[float, float, str]], title: str, x_label: str, y_label: str,
            x_range=(0.0, 1.0), y_range=(-1.0, 1.0), width: int = 420, height: int = 300) -> str:
    fig = _figure(width, height)
    ax = fig.add_subplot()
    ax.scatter([p[0] for p in points], [p[1] for p in points], s=14, color="#4e79a7", alpha=0.6)
    ax.axhline(0.0, color="#bbbbbb", linewidth=0.8)
    ax.set_xlim(*x_range)
    ax.set_ylim(*y_range)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    return _svg(fig, title)
