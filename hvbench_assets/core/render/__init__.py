"""Question videos: marked boxes on the source clip, and fixed-size crop clips of one track (cut by
core/media/crops.py, which L1 uses while it tracks)."""

from hvbench_assets.core.media.crops import CropClipWriter, crop_to, render_crop
from hvbench_assets.core.render.marked import HIGHLIGHT_BGR, draw_box, render_marked

__all__ = ["HIGHLIGHT_BGR", "CropClipWriter", "crop_to", "draw_box", "render_crop", "render_marked"]
