"""Question videos: marked boxes on the source clip, and fixed-size crop clips of one track."""

from hvbench_assets.core.render.marked import HIGHLIGHT_BGR, render_marked

__all__ = ["HIGHLIGHT_BGR", "render_marked"]
