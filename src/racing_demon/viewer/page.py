"""One self-contained HTML page: the template with the stylesheet, the scripts and the data
inlined (docs/viewer.md). Nothing on the page loads from anywhere else, and the same data
gives the same bytes.

The template ``assets/viewer.html`` holds each placeholder exactly once: ``/*RD:CSS*/``
inside its ``<style>``, ``/*RD:JS*/`` inside its one module script (check.js, then
view.js), and ``<!--RD:DATA-->`` where the data's ``<script type="application/json">``
goes.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

CSS_PLACEHOLDER = "/*RD:CSS*/"
JS_PLACEHOLDER = "/*RD:JS*/"
DATA_PLACEHOLDER = "<!--RD:DATA-->"
DATA_ELEMENT_ID = "rd-data"
SCRIPTS = ("check.js", "view.js")
_PLACEHOLDERS = re.compile(
    "|".join(re.escape(text) for text in (CSS_PLACEHOLDER, JS_PLACEHOLDER, DATA_PLACEHOLDER))
)
# Escaped in the JSON so that no string in it can end the script element or open a
# comment in it, and so that the JSON is also valid JavaScript source.
_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


class TemplateError(ValueError):
    """An asset that cannot make a sound page (a placeholder missing or repeated, or an
    asset that would end its own element)."""


def asset(name: str) -> str:
    """An asset file shipped with the package, as text."""
    return resources.files("racing_demon.viewer").joinpath("assets", name).read_text("utf-8")


def data_json(data: Any) -> str:
    """The data as compact JSON that is safe inside a script element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return "".join(_JSON_ESCAPES.get(char, char) for char in text)


def render_page(data: Any, assets: dict[str, str] | None = None) -> str:
    """The page for ``data``; ``assets`` maps an asset's file name to its text, in place of
    the packaged one (a test's own template)."""
    chosen = assets or {}

    def text(name: str) -> str:
        return chosen[name] if name in chosen else asset(name)

    css = text("viewer.css")
    if "</style" in css.lower():
        raise TemplateError("viewer.css would end its <style> element")
    script = "\n".join(text(name) for name in SCRIPTS)
    if "</script" in script.lower() or "<!--" in script:
        raise TemplateError("the scripts would end their <script> element")
    page = text("viewer.html")
    element = f'<script type="application/json" id="{DATA_ELEMENT_ID}">{data_json(data)}</script>'
    values = {CSS_PLACEHOLDER: css, JS_PLACEHOLDER: script, DATA_PLACEHOLDER: element}
    for placeholder in values:
        count = page.count(placeholder)
        if count != 1:
            raise TemplateError(f"viewer.html holds {placeholder} {count} times, not once")
    # One pass, so that nothing inlined is ever read as a placeholder.
    return _PLACEHOLDERS.sub(lambda match: values[match[0]], page)
