"""One self-contained HTML page: the template with the stylesheet, the scripts and the data
inlined (docs/viewer.md). Nothing on the page loads from anywhere else, and the same data
gives the same bytes.

The template ``assets/viewer.html`` holds each placeholder exactly once: ``/*RD:CSS*/``
inside its ``<style>``, ``/*RD:JS*/`` inside its one module script (check.js, table.js,
then view.js: the checks, the table's renderer the play page shares, the page; with the
engine, engine.js before view.js), ``<!--RD:DATA-->`` where the data's ``<script
type="application/json">`` goes, and ``<!--RD:ENGINE-->`` where a page made with the
engine (``viewer.engine``) holds the runtime's files, the Python bundle and its options;
such a page's CSP admits only what Pyodide needs besides: ``blob:`` scripts (the loader
and the glue, imported from memory) and ``'wasm-unsafe-eval'`` (compiling the wasm).
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
from collections.abc import Iterable, Iterator
from importlib import resources
from typing import Any

from racing_demon.viewer.engine import EnginePage, engine_bundle

CSS_PLACEHOLDER = "/*RD:CSS*/"
JS_PLACEHOLDER = "/*RD:JS*/"
DATA_PLACEHOLDER = "<!--RD:DATA-->"
ENGINE_PLACEHOLDER = "<!--RD:ENGINE-->"
DATA_ELEMENT_ID = "rd-data"
SCRIPTS = ("check.js", "table.js", "view.js")
ENGINE_SCRIPTS = ("check.js", "table.js", "engine.js", "view.js")
SCRIPT_POLICY = "script-src 'unsafe-inline'"
ENGINE_SCRIPT_POLICY = "script-src 'unsafe-inline' blob: 'wasm-unsafe-eval'"
PACKED_FIELDS = frozenset({"records", "frames", "audit"})
_PLACEHOLDERS = re.compile(
    "|".join(
        re.escape(text)
        for text in (CSS_PLACEHOLDER, JS_PLACEHOLDER, DATA_PLACEHOLDER, ENGINE_PLACEHOLDER)
    )
)
# Escaped in the JSON so that no string in it can end the script element or open a
# comment in it, and so that the JSON is also valid JavaScript source; lone surrogates
# (a file name that is not UTF-8 reads with them) because UTF-8 cannot hold them.
_JSON_ESCAPED = re.compile("[<>&\u2028\u2029\ud800-\udfff]")
_SURROGATES = re.compile("[\ud800-\udfff]")


class TemplateError(ValueError):
    """An asset that cannot make a sound page (a placeholder missing or repeated, or an
    asset that would end its own element)."""


def asset(name: str) -> str:
    """An asset file shipped with the package, as text."""
    return resources.files("racing_demon.viewer").joinpath("assets", name).read_text("utf-8")


def data_json(data: Any) -> str:
    """The data as compact JSON that is safe inside a script element."""
    return _escaped(json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False))


def _escaped(text: str, escaped: re.Pattern[str] = _JSON_ESCAPED) -> str:
    """JSON text with the characters ``escaped`` matches written as ``\\uXXXX`` escapes
    (they only occur inside its strings, where an escape means the same)."""
    return escaped.sub(lambda match: f"\\u{ord(match[0]):04x}", text)


def json_text(value: Any) -> str:
    """``value`` as the compact JSON every part of the data is written in."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class Packer:
    """JSON text gzipped as it is written (mtime 0, so the same text gives the same bytes):
    the builder writes the packed fields record by record and never holds them whole."""

    def __init__(self, compresslevel: int = 9) -> None:
        self._buffer = io.BytesIO()
        self._gzip = gzip.GzipFile(
            fileobj=self._buffer, mode="wb", compresslevel=compresslevel, mtime=0
        )

    def write(self, text: str) -> None:
        self._gzip.write(_escaped(text, _SURROGATES).encode("utf-8"))

    def write_from(self, other: Packer) -> None:
        """What ``other`` packed, unpacked into this one a piece at a time."""
        with gzip.GzipFile(fileobj=io.BytesIO(other.close()), mode="rb") as stream:
            while piece := stream.read(1 << 16):
                self._gzip.write(piece)

    def close(self) -> bytes:
        """The gzip bytes; nothing can be written after."""
        self._gzip.close()
        return self._buffer.getvalue()

    def packed(self) -> dict[str, str]:
        return {"encoding": "gzip+base64", "data": base64.b64encode(self.close()).decode("ascii")}


def packed(data: Any) -> Any:
    """The data as the page holds it: the words, frames and audit gzipped (mtime 0) and
    base64-encoded under ``packed``, the rest as it is. They are most of a page's bytes
    (about 700 KB of JSON for 2,000 records) and gzip shrinks them about sevenfold; view.js
    unpacks them with the browser's DecompressionStream before the first frame.
    ``viewer.model.page_data`` packs them so as it builds them; data already packed is
    returned as it is."""
    if not isinstance(data, dict) or not PACKED_FIELDS & data.keys():
        return data
    packer = Packer()
    packer.write(json_text({name: value for name, value in data.items() if name in PACKED_FIELDS}))
    outer = {name: value for name, value in data.items() if name not in PACKED_FIELDS}
    outer["packed"] = packer.packed()
    return outer


def unpacked(data: Any) -> Any:
    """The data ``packed`` made, as it was."""
    if not isinstance(data, dict) or "packed" not in data:
        return data
    blob = base64.b64decode(data["packed"]["data"], validate=True)
    inner = json.loads(gzip.decompress(blob))
    return {**{name: value for name, value in data.items() if name != "packed"}, **inner}


def render_page(
    data: Any, assets: dict[str, str] | None = None, engine: EnginePage | None = None
) -> str:
    """The page for ``data``; ``assets`` maps an asset's file name to its text, in place of
    the packaged one (a test's own template); ``engine``: the runtime it inlines."""
    return "".join(page_parts(data, assets, engine))


def engine_elements(engine: EnginePage | None) -> Iterator[str]:
    """The engine's elements (none without it): the options, the bundle, the licence
    notices, then each runtime file in base64."""
    if engine is None:
        return
    for element_id, value in (
        ("rd-engine-config", engine.config()),
        ("rd-engine-bundle", engine_bundle()),
        ("rd-runtime-notices", engine.notices()),
    ):
        yield f'<script type="application/json" id="{element_id}">{data_json(value)}</script>\n'
    for name, pieces in engine.runtime_parts():
        yield f'<script type="application/octet-stream" id="rd-runtime-{name}">'
        yield from pieces
        yield "</script>\n"


def page_parts(
    data: Any, assets: dict[str, str] | None = None, engine: EnginePage | None = None
) -> Iterator[str]:
    """The page for ``data`` in the pieces it is made of, in order: a writer writes them
    one by one rather than copying them into one string first."""
    chosen = assets or {}

    def text(name: str) -> str:
        return chosen[name] if name in chosen else asset(name)

    css = text("viewer.css")
    if "</style" in css.lower():
        raise TemplateError("viewer.css would end its <style> element")
    script = "\n".join(text(name) for name in (SCRIPTS if engine is None else ENGINE_SCRIPTS))
    if "</script" in script.lower() or "<!--" in script:
        raise TemplateError("the scripts would end their <script> element")
    page = text("viewer.html")
    if engine is not None:
        if page.count(SCRIPT_POLICY) != 1:
            raise TemplateError(
                f"viewer.html holds {SCRIPT_POLICY} {page.count(SCRIPT_POLICY)} times"
            )
        page = page.replace(SCRIPT_POLICY, ENGINE_SCRIPT_POLICY)
    element = (
        f'<script type="application/json" id="{DATA_ELEMENT_ID}">',
        data_json(packed(data)),
        "</script>",
    )
    values: dict[str, Iterable[str]] = {
        CSS_PLACEHOLDER: (css,),
        JS_PLACEHOLDER: (script,),
        DATA_PLACEHOLDER: element,
    }
    # A template without the engine's place makes pages without the engine only.
    if engine is not None or ENGINE_PLACEHOLDER in page:
        values[ENGINE_PLACEHOLDER] = engine_elements(engine)
    for placeholder in values:
        count = page.count(placeholder)
        if count != 1:
            raise TemplateError(f"viewer.html holds {placeholder} {count} times, not once")
    # One pass over the template, so that nothing inlined is ever read as a placeholder.
    position = 0
    for match in _PLACEHOLDERS.finditer(page):
        yield page[position : match.start()]
        yield from values[match[0]]
        position = match.end()
    yield page[position:]
