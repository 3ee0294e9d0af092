"""What Dagster's UI shows inline in a materialization's metadata, and pictures small enough for it.

Dagster 1.13 shows a Markdown value inline only when it is shorter than 1,000 characters (ui-core
`MetadataEntry.tsx`: `expandSmallValues && entry.mdStr.length < 1000`); a longer one sits behind
"[Show Markdown]". No other metadata type renders an image (a url or path value is a link), and a picture in
Markdown is a `data:` URI, so a picture on the first screen is a thumbnail of about 700 bytes. AVIF keeps the
most of a photo in that (a 160x120 frame at ~680 bytes, where WebP needs ~980 and JPEG ~1,150); its person tags are
drawn at the thumbnail's own scale so they stay legible."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable

import numpy as np

INLINE_MD_CHARS = 1000  # a Markdown value shorter than this shows inline
THUMBNAIL_WIDTHS = (64, 80, 96, 112, 128, 144, 160, 176, 200, 224, 256, 288, 320, 360)
THUMBNAIL_QUALITIES = (40, 25, 15, 8, 4)  # at the widest width that fits at all, the sharpest that fits
MIME = {"AVIF": "image/avif", "WEBP": "image/webp", ".avif": "image/avif", ".webp": "image/webp",
        ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


def md_image(alt: str, data: bytes, mime: str) -> str:
    """A picture as Markdown the UI renders (a `data:` URI)."""
    return f"![{alt}](data:{mime};base64,{base64.b64encode(data).decode()})"


def inline_bytes(alt: str) -> int:
    """The largest picture `md_image(alt, ...)` (AVIF or WebP) keeps short enough to show inline."""
    return (INLINE_MD_CHARS - 1 - len(md_image(alt, b"", MIME["AVIF"]))) // 4 * 3


def thumbnail(draw: Callable[[int], np.ndarray], max_bytes: int) -> tuple[bytes, str] | None:
    """The widest picture `draw(width)` (BGR) whose encoding fits `max_bytes`, at the best quality that fits at that
    width: (bytes, file suffix), or None when not even the narrowest fits. About ten encodings (~10 ms each): the
    width by bisection at the lowest quality (the size grows with the width), then the quality."""
    fmt, lowest = _format(), THUMBNAIL_QUALITIES[-1]
    fits: dict[int, bytes] = {}

    def fitting(width: int) -> bool:
        data = _encode(draw(width), fmt, lowest)
        if len(data) <= max_bytes:
            fits[width] = data
        return width in fits

    widths = sorted(THUMBNAIL_WIDTHS)
    lo, hi = 0, len(widths)  # widths[:lo] fit, widths[hi:] do not
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if fitting(widths[mid]) else (lo, mid)
    if lo == 0:
        return None
    width = widths[lo - 1]
    img = draw(width)
    best = next((d for q in THUMBNAIL_QUALITIES[:-1] if len(d := _encode(img, fmt, q)) <= max_bytes), fits[width])
    return best, f".{fmt.lower()}"


def _format() -> str:
    from PIL import features

    return "AVIF" if features.check("avif") else "WEBP"  # Pillow >= 11.2 encodes AVIF; WebP otherwise


def _encode(img: np.ndarray, fmt: str, quality: int) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    # speed 8: a tenth of the default's time (6) for 1-2 % more bytes
    Image.fromarray(np.ascontiguousarray(img[:, :, ::-1])).save(out, fmt, quality=quality, speed=8)
    return out.getvalue()
