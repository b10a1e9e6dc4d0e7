"""What the serve tests share."""

from __future__ import annotations

from serve.standins import install

install()
