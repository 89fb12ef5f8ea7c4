"""QR codes of our links (issue 30: a lobby's join link to paste into the forum or a group, a
player's key to keep), made by the `qrcode` dependency: PNG (pure Python, pypng), and SVG, as a
file or inline in a page (an <svg> element: no image request carries the link)."""

from __future__ import annotations

import io
import re

import qrcode
import qrcode.constants
from qrcode.image.pure import PyPNGImage
from qrcode.image.svg import SvgPathImage


def _code(data: str) -> qrcode.QRCode:
    # (M: a phone reads it from a screen or a printed forum post, with room for error)
    qr = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, border=2)
    qr.add_data(data)
    qr.make(fit=True)
    return qr


def png(data: str, *, box: int = 8) -> bytes:
    qr = _code(data)
    qr.box_size = box
    out = io.BytesIO()
    qr.make_image(image_factory=PyPNGImage).save(out)
    return out.getvalue()


def svg(data: str) -> bytes:
    """A standalone SVG file."""
    out = io.BytesIO()
    _code(data).make_image(image_factory=SvgPathImage).save(out)
    return out.getvalue()


def inline_svg(data: str, label: str) -> str:
    """The <svg> element alone, to put in a page (our own markup: the link it encodes is
    drawn, never written into it), scaled by the page's style and labelled for readers."""
    text = svg(data).decode("utf-8")
    text = re.sub(r"^<\?xml[^>]*>\s*", "", text)
    text = text.replace(' id="qr-path"', "")
    text = re.sub(r'\swidth="[^"]*"\s+height="[^"]*"', "", text, count=1)
    label = label.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return text.replace("<svg ", f'<svg class="qr" role="img" aria-label="{label}" ', 1)
