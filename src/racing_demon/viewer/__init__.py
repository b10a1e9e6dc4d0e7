"""The game viewer: one self-contained HTML file that replays a log and re-verifies it in
the browser (``racing-demon view``, docs/viewer.md).

``page_data`` builds the data the page embeds (``viewer.model``; ``viewer_data`` is the same
unpacked, as its schema describes it), ``render_page`` inlines it with the page's assets
(``viewer.page``), and ``build_page`` does both.
"""

from __future__ import annotations

from racing_demon.files import LogFile
from racing_demon.verify import Report, Settings
from racing_demon.viewer.model import VIEWER_FORMAT, page_data, viewer_data
from racing_demon.viewer.page import page_parts, render_page

__all__ = ["VIEWER_FORMAT", "build_page", "page_data", "page_parts", "render_page", "viewer_data"]


def build_page(log: LogFile, settings: Settings, report: Report | None = None) -> str:
    """The HTML page of ``log``, verified with ``settings`` (or as ``report`` says);
    OSError when the file cannot be read at all."""
    return render_page(page_data(log, settings, report))
