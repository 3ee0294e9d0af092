"""Tiny SVG charts for the HTML report (no plotting dependency): grouped bars, histograms, scatter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]


def _frame(width: int, height: int, body: list[str], title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'font-family="sans-serif" font-size="11" role="img"><title>{escape(title)}</title>'
            f'<text x="{width / 2}" y="14" text-anchor="middle" font-size="13">{escape(title)}</text>'
            + "".join(body) + "</svg>")


def grouped_bars(groups: Sequence[str], series: Mapping[str, Sequence[float | None]], title: str,
                 y_max: float = 100.0, refs: Mapping[str, Sequence[float | None]] | None = None,
                 width: int = 760, height: int = 300) -> str:
    """One group per label, one bar per series (values in %, None = no bar); `refs` draw dashed
    reference ticks across each group (random guess, human)."""
    left, right, top, bottom = 40, 150, 24, 60
    pw, ph = width - left - right, height - top - bottom
    names = list(series)
    gw = pw / max(1, len(groups))
    bw = gw * 0.8 / max(1, len(names))
    body = []
    for v in range(0, int(y_max) + 1, 20):
        y = top + ph - ph * v / y_max
        body.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
                    f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{v}</text>')
    for gi, g in enumerate(groups):
        x0 = left + gi * gw + gw * 0.1
        for si, name in enumerate(names):
            val = series[name][gi]
            if val is None:
                continue
            h = ph * min(val, y_max) / y_max
            body.append(f'<rect x="{x0 + si * bw:.1f}" y="{top + ph - h:.1f}" width="{bw * 0.9:.1f}" height="{h:.1f}" '
                        f'fill="{PALETTE[si % len(PALETTE)]}"><title>{escape(name)} {escape(g)}: {val:.1f}</title></rect>')
        body.append(f'<text x="{left + gi * gw + gw / 2:.1f}" y="{top + ph + 14}" text-anchor="end" '
                    f'transform="rotate(-30 {left + gi * gw + gw / 2:.1f} {top + ph + 14})">{escape(g)}</text>')
        for ri, (rname, vals) in enumerate((refs or {}).items()):
            if vals[gi] is None:
                continue
            y = top + ph - ph * min(vals[gi], y_max) / y_max
            body.append(f'<line x1="{left + gi * gw:.1f}" x2="{left + (gi + 1) * gw:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                        f'stroke="{["#000", "#c00"][ri % 2]}" stroke-dasharray="4 2"><title>{escape(rname)}: {vals[gi]:.1f}</title></line>')
    legend = [(n, PALETTE[i % len(PALETTE)], False) for i, n in enumerate(names)]
    legend += [(n, ["#000", "#c00"][i % 2], True) for i, n in enumerate(refs or {})]
    for i, (n, color, dashed) in enumerate(legend):
        y = top + 10 + i * 16
        mark = (f'<line x1="{left + pw + 10}" x2="{left + pw + 22}" y1="{y - 4}" y2="{y - 4}" stroke="{color}" stroke-dasharray="4 2"/>'
                if dashed else f'<rect x="{left + pw + 10}" y="{y - 9}" width="12" height="10" fill="{color}"/>')
        body.append(mark + f'<text x="{left + pw + 26}" y="{y}">{escape(n[:20])}</text>')
    body.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}" stroke="#333"/>')
    return _frame(width, height, body, title)


def histogram(counts: Mapping[int, int], title: str, x_label: str, width: int = 360, height: int = 200) -> str:
    """Bars for integer x (0..max) with their counts."""
    left, right, top, bottom = 34, 10, 24, 36
    pw, ph = width - left - right, height - top - bottom
    xs = list(range(0, (max(counts) if counts else 0) + 1))
    ymax = max(counts.values(), default=1) or 1
    bw = pw / max(1, len(xs))
    body = []
    for i, x in enumerate(xs):
        c = counts.get(x, 0)
        h = ph * c / ymax
        body.append(f'<rect x="{left + i * bw + 1:.1f}" y="{top + ph - h:.1f}" width="{max(1.0, bw - 2):.1f}" height="{h:.1f}" '
                    f'fill="{"#e15759" if x == 0 else "#4e79a7"}"><title>{x}: {c}</title></rect>'
                    f'<text x="{left + i * bw + bw / 2:.1f}" y="{top + ph + 12}" text-anchor="middle">{x}</text>')
    body.append(f'<text x="{left + pw / 2}" y="{height - 4}" text-anchor="middle">{escape(x_label)}</text>'
                f'<text x="{left - 4}" y="{top + 8}" text-anchor="end">{ymax}</text>'
                f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}" stroke="#333"/>')
    return _frame(width, height, body, title)


def scatter(points: Sequence[tuple[float, float, str]], title: str, x_label: str, y_label: str,
            x_range=(0.0, 1.0), y_range=(-1.0, 1.0), width: int = 420, height: int = 300) -> str:
    left, right, top, bottom = 44, 12, 24, 40
    pw, ph = width - left - right, height - top - bottom

    def px(x):
        return left + pw * (x - x_range[0]) / (x_range[1] - x_range[0])

    def py(y):
        return top + ph - ph * (y - y_range[0]) / (y_range[1] - y_range[0])

    body = [f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>',
            f'<line x1="{left}" x2="{left + pw}" y1="{py(0):.1f}" y2="{py(0):.1f}" stroke="#bbb"/>']
    for x, y, label in points:
        body.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="#4e79a7" fill-opacity="0.6">'
                    f'<title>{escape(label)}: {x:.2f}, {y:.2f}</title></circle>')
    body.append(f'<text x="{left + pw / 2}" y="{height - 6}" text-anchor="middle">{escape(x_label)}</text>'
                f'<text x="12" y="{top + ph / 2}" text-anchor="middle" transform="rotate(-90 12 {top + ph / 2})">{escape(y_label)}</text>'
                f'<text x="{left - 4}" y="{top + 8}" text-anchor="end">{y_range[1]:g}</text>'
                f'<text x="{left - 4}" y="{top + ph}" text-anchor="end">{y_range[0]:g}</text>'
                f'<text x="{left}" y="{top + ph + 12}" text-anchor="middle">{x_range[0]:g}</text>'
                f'<text x="{left + pw}" y="{top + ph + 12}" text-anchor="middle">{x_range[1]:g}</text>')
    return _frame(width, height, body, title)
