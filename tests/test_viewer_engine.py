"""The engine page's Python bundle (viewer/engine.py) and the page that inlines it.

The design (section C): "The Python files inlined are read from the installed package
(importlib.resources), the modules the engine imports only (a list computed by a script and
checked by a test, or by importing in a child process), so the page always runs the very
code that wrote it."
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

from racing_demon.log.reader import Limits
from racing_demon.runtime import FILES, Runtime
from racing_demon.viewer.engine import BUNDLE_FORMAT, EngineOptions, EnginePage, engine_bundle
from racing_demon.viewer.page import ENGINE_SCRIPT_POLICY, SCRIPT_POLICY, render_page

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "racing_demon"

# A child process judges a sample log as the page does, then lists the package's modules
# it loaded, with their files.
CHILD = """
import json, sys
from racing_demon.verify.in_page import judge
data = open(sys.argv[1], "rb").read()
judge(data, table_key=None, rules=None, unsafe_unpinned=True)
print(json.dumps(sorted(
    module.__file__ for name, module in sys.modules.items()
    if name.split(".")[0] == "racing_demon" and getattr(module, "__file__", None)
)))
"""


def test_the_bundle_holds_every_module_judging_loads_read_from_the_package() -> None:
    bundle = engine_bundle()
    assert bundle["format"] == BUNDLE_FORMAT
    files = bundle["files"]
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", CHILD, str(ROOT / "sample_games" / "table-3p-signed.jsonl")],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    )
    assert loaded
    package = Path(__import__("racing_demon").__file__).parent
    for file in loaded:
        path = "racing_demon/" + Path(file).relative_to(package).as_posix()
        assert path in files, path
        assert files[path] == Path(file).read_text("utf-8")
    # The data the verifier reads: the built-in profiles and the schemas.
    assert "racing_demon/profiles/table.json" in files
    assert "racing_demon/schemas/log-record.schema.json" in files
    # Not the whole package: the server, the simulator and the tournaments stay out.
    assert not any(path.startswith("racing_demon/serve/") for path in files)
    assert not any(path.startswith("racing_demon/cli/") for path in files)


def test_an_engine_page_inlines_the_runtime_and_widens_only_the_script_policy(
    tmp_path: Path,
) -> None:
    """Design C: "CSP stays strict: only what Pyodide needs is added ('wasm-unsafe-eval',
    blob: for the loader if used), connect-src admits nothing on the network"."""
    for name in FILES:
        (tmp_path / name).write_bytes(name.encode() * 3)
    notices = tmp_path / "notices"
    notices.mkdir()
    for notice in ("THIRD-PARTY.txt", "PYODIDE-MPL-2.0.txt", "CPYTHON-PSF.txt"):
        (notices / notice).write_text(f"{notice} text", "utf-8")
    (notices / "EMSCRIPTEN-MIT-NCSA.txt").write_text("</script> <!-- in a notice", "utf-8")
    runtime = Runtime(tmp_path, "314.0.8", "0" * 64, {name: "1" * 64 for name in FILES})
    limits = Limits(max_records=10, max_line_bytes=4096)
    engine = EnginePage(
        runtime=runtime,
        options=EngineOptions(rules="a" * 64, limits=limits),
        files={name: (tmp_path / name).read_bytes() for name in FILES},
    )
    plain = render_page({"x": 1})
    page = render_page({"x": 1}, engine=engine)
    assert SCRIPT_POLICY in plain and ENGINE_SCRIPT_POLICY not in plain
    assert page.count(ENGINE_SCRIPT_POLICY) == 1
    assert "connect-src" not in page and "default-src 'none'" in page
    assert "const RDEngine" in page and "const RDEngine" not in plain
    # A notice cannot end its element: the JSON escapes < and >.
    assert "</script> <!--" not in page
    for name in FILES:
        element = f'<script type="application/octet-stream" id="rd-runtime-{name}">'
        held = page.split(element, 1)[1].split("</script>", 1)[0]
        assert base64.b64decode(held) == name.encode() * 3
    config = json.loads(
        page.split('<script type="application/json" id="rd-engine-config">', 1)[1].split(
            "</script>", 1
        )[0]
    )
    assert config["rules"] == "a" * 64 and config["runtime"]["version"] == "314.0.8"
    # The engine judges under the limits the page's own verdict was reached under.
    assert Limits(**config["limits"]) == limits
    assert "MPL-2.0" in config["runtime"]["licences"]
