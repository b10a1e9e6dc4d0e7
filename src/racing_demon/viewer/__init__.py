"""The game viewer: one self-contained HTML file that replays a log and re-verifies it in
the browser (``racing-demon view``, docs/viewer.md).

``viewer_data`` builds the data the page embeds (``viewer.model``), ``render_page`` inlines
it with the page's assets (``viewer.page``), and ``build_page`` does both.
"""

from __future__ import annotations

from pathlib import Path

from racing_demon.verify import Report, Settings
from racing_demon.viewer.model import VIEWER_FORMAT, viewer_data
from racing_demon.viewer.page import render_page

__all__ = ["VIEWER_FORMAT", "build_page", "render_page", "viewer_data"]


def build_page(log_path: Path, settings: Settings, report: Report | None = None) -> str:
    """The HTML page of the log at ``log_path``, verified with ``settings`` (or as
    ``report`` says); OSError when the file cannot be read at all."""
    return render_page(viewer_data(log_path, settings, report))
