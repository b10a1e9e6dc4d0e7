"""``racing-demon runtime install`` and ``show``, without network: a tarball crafted here,
given through ``--from`` or a fake download, with the pin monkeypatched to its size and
SHA-256.

Issue 34, point 2: "A pinned Pyodide release (version and SHA-256 of the npm tarball
checked) ... one documented command that installs the pinned, checksummed runtime into a
cache"; the design (section C): "checks size and SHA-256 before unpacking anything ...
written to a temporary directory and renamed, so a half install is never used ...
Re-running install is a no-op when the files check."
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import BinaryIO

import pytest

from racing_demon import runtime
from racing_demon.runtime import FILES, NOTICES, Pin, RuntimeRefused, install, installed
from tests.conftest import invoke

CONTENTS = {
    name: f"contents of {name}\n".encode() * (index + 1) for index, name in enumerate(FILES)
}


def tarball(files: dict[str, bytes], extra: dict[str, bytes] | None = None) -> bytes:
    """An npm-style tarball (everything under package/)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in {**files, **(extra or {})}.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def pin_of(data: bytes) -> Pin:
    return Pin("314.0.8", "https://registry.invalid/pyodide.tgz", len(data), _sha(data))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The runtime's folder, through $RACING_DEMON_RUNTIME_DIR, in a parent of its own."""
    target = tmp_path / "cache" / "runtime"
    monkeypatch.setenv("RACING_DEMON_RUNTIME_DIR", str(target))
    return target


def pinned_to(monkeypatch: pytest.MonkeyPatch, data: bytes) -> Pin:
    pin = pin_of(data)
    monkeypatch.setattr(runtime, "PINNED", pin)
    return pin


def test_install_from_a_tarball_keeps_the_four_files_and_the_notices(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Design C: "keeps only what the page needs (pyodide.mjs, pyodide.asm.mjs,
    pyodide.asm.wasm, python_stdlib.zip)"; "Licence notices ... copied into the cache"."""
    data = tarball(CONTENTS, {"README.md": b"not kept", "pyodide-lock.json": b"{}"})
    pinned_to(monkeypatch, data)
    source = tmp_path / "pyodide.tgz"
    source.write_bytes(data)
    code, output = invoke("runtime", "install", "--from", str(source))
    assert code == 0, output
    assert output.startswith("installed:")
    assert sorted(path.name for path in cache.iterdir()) == sorted(
        [*FILES, "notices", "runtime.json"]
    )
    for name, contents in CONTENTS.items():
        assert (cache / name).read_bytes() == contents
        assert _sha(contents) in output
    assert sorted(path.name for path in (cache / "notices").iterdir()) == sorted(NOTICES)
    mpl = (cache / "notices" / "PYODIDE-MPL-2.0.txt").read_text("utf-8")
    assert "Mozilla Public License Version 2.0" in mpl
    assert "PYTHON SOFTWARE FOUNDATION LICENSE" in (
        cache / "notices" / "CPYTHON-PSF.txt"
    ).read_text("utf-8")
    third_party = (cache / "notices" / "THIRD-PARTY.txt").read_text("utf-8")
    assert "https://github.com/pyodide/pyodide/tree/314.0.8" in third_party
    # Only the runtime's folder is left in its parent: no staging folder, no tarball.
    assert [path.name for path in cache.parent.iterdir()] == ["runtime"]

    code, output = invoke("runtime", "show")
    assert code == 0 and str(cache) in output and _sha(CONTENTS["pyodide.asm.wasm"]) in output
    # Design C: "Re-running install is a no-op when the files check."
    stamp = (cache / "runtime.json").stat().st_mtime_ns
    code, output = invoke("runtime", "install", "--from", str(tmp_path / "no-such.tgz"))
    assert code == 0 and output.startswith("already installed")
    assert (cache / "runtime.json").stat().st_mtime_ns == stamp


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda data: data + b"\0", id="one-byte-more"),
        pytest.param(lambda data: data[:-1], id="one-byte-less"),
        pytest.param(lambda data: bytes([data[0] ^ 1]) + data[1:], id="same-size-other-bytes"),
    ],
)
def test_a_tarball_that_is_not_the_pinned_one_is_refused_before_anything_is_unpacked(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spoil: object
) -> None:
    """Design C: "checks size and SHA-256 before unpacking anything"; exit 2, nothing
    left behind (the refusal codes of outcomes.py: 2 for an input it cannot use)."""
    data = tarball(CONTENTS)
    pinned_to(monkeypatch, data)
    unpacked: list[str] = []
    monkeypatch.setattr(runtime, "_unpack", lambda *args: unpacked.append("called"))
    source = tmp_path / "other.tgz"
    assert callable(spoil)
    source.write_bytes(spoil(data))
    code, output = invoke("runtime", "install", "--from", str(source))
    assert code == 2
    assert "is not the pinned Pyodide 314.0.8 tarball" in output
    assert ("SHA-256" in output) == (len(spoil(data)) == len(data))
    assert unpacked == []
    assert not cache.exists()
    assert list(cache.parent.iterdir()) == []


def test_a_pinned_tarball_without_a_file_the_page_needs_leaves_nothing(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tarball({name: CONTENTS[name] for name in FILES[:-1]})
    pinned_to(monkeypatch, data)
    source = tmp_path / "short.tgz"
    source.write_bytes(data)
    code, output = invoke("runtime", "install", "--from", str(source))
    assert code == 2 and "lacks what a page needs" in output
    assert not cache.exists() and list(cache.parent.iterdir()) == []


def test_the_download_is_checked_like_a_given_tarball(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Design C: "downloads it (stdlib urllib, proxies from the environment)": the opener
    is urllib's; here a fake one serves the bytes, and a longer answer is cut at the pinned
    size plus one byte and refused."""
    data = tarball(CONTENTS)
    pin = pin_of(data)
    asked: list[tuple[str, float]] = []

    def opener(answer: bytes) -> runtime.Opener:
        def open_url(url: str, timeout: float) -> BinaryIO:
            asked.append((url, timeout))
            return io.BytesIO(answer)

        return open_url

    target = tmp_path / "runtime"
    with pytest.raises(RuntimeRefused, match=f"more than {len(data):,} bytes"):
        install(directory=target, pin=pin, opener=opener(data + b"x" * 100_000))
    assert not target.exists() and list(tmp_path.iterdir()) == []
    done = install(directory=target, pin=pin, opener=opener(data))
    assert not done.already and installed(target, pin) == done.runtime
    assert asked == [(pin.url, 120), (pin.url, 120)]


def test_a_download_that_fails_says_how_to_install_from_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable(url: str, timeout: float) -> BinaryIO:
        raise OSError(101, "Network is unreachable")

    pin = pin_of(b"x")
    with pytest.raises(RuntimeRefused, match=r"npm pack pyodide@314\.0\.8.*--from FILE"):
        install(directory=tmp_path / "runtime", pin=pin, opener=unreachable)
    assert list(tmp_path.iterdir()) == []


def test_a_runtime_whose_file_changed_no_longer_checks_and_is_replaced_whole(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Design C: "a half install is never used": a file changed after the install fails
    the check (`show` says not installed, exit 1), and install replaces the folder."""
    data = tarball(CONTENTS)
    pin = pinned_to(monkeypatch, data)
    source = tmp_path / "pyodide.tgz"
    source.write_bytes(data)
    assert invoke("runtime", "install", "--from", str(source))[0] == 0
    (cache / "python_stdlib.zip").write_bytes(b"changed")
    assert installed(cache, pin) is None
    code, output = invoke("runtime", "show")
    assert code == 1 and output.startswith("not installed")
    code, output = invoke("runtime", "install", "--from", str(source))
    assert code == 0 and output.startswith("installed:")
    assert (cache / "python_stdlib.zip").read_bytes() == CONTENTS["python_stdlib.zip"]
    assert [path.name for path in cache.parent.iterdir()] == ["runtime"]


@pytest.mark.parametrize("occupant", ["a folder of files", "a file"])
def test_a_folder_that_holds_no_runtime_is_never_replaced(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, occupant: str
) -> None:
    """The install replaces its folder whole, so a folder (or file) that
    $RACING_DEMON_RUNTIME_DIR names by mistake is refused, with every byte left in place."""
    data = tarball(CONTENTS)
    pinned_to(monkeypatch, data)
    source = tmp_path / "pyodide.tgz"
    source.write_bytes(data)
    cache.parent.mkdir()
    if occupant == "a file":
        cache.write_bytes(b"someone's file")
    else:
        cache.mkdir()
        (cache / "important.txt").write_bytes(b"someone's file")
    code, output = invoke("runtime", "install", "--from", str(source))
    assert code == 2
    assert f"{cache} exists and holds no runtime (runtime.json is missing)" in output
    kept = cache if occupant == "a file" else cache / "important.txt"
    assert kept.read_bytes() == b"someone's file"
    assert [path.name for path in cache.parent.iterdir()] == ["runtime"]


def test_an_empty_folder_is_installed_into(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tarball(CONTENTS)
    pin = pinned_to(monkeypatch, data)
    source = tmp_path / "pyodide.tgz"
    source.write_bytes(data)
    cache.mkdir(parents=True)
    assert invoke("runtime", "install", "--from", str(source))[0] == 0
    assert installed(cache, pin) is not None


def test_the_cache_folder_follows_the_environment(tmp_path: Path) -> None:
    """Design C: "$RACING_DEMON_RUNTIME_DIR, else $XDG_CACHE_HOME/racing-demon/
    pyodide-314.0.8, else ~/.cache/..."."""
    assert runtime.runtime_dir({"RACING_DEMON_RUNTIME_DIR": "/x/y"}) == Path("/x/y")
    assert runtime.runtime_dir({"XDG_CACHE_HOME": "/c"}) == Path("/c/racing-demon/pyodide-314.0.8")
    assert runtime.runtime_dir({}) == Path.home() / ".cache" / "racing-demon" / "pyodide-314.0.8"


def test_view_engine_without_the_runtime_writes_nothing_and_says_the_command(
    cache: Path, tmp_path: Path
) -> None:
    """Design C: "`view --engine` without the runtime installed: exit 2, one line saying
    the install command"."""
    out = tmp_path / "page.html"
    log = Path(__file__).resolve().parents[1] / "sample_games" / "table-3p-signed.jsonl"
    code, output = invoke("view", str(log), "--engine", "-o", str(out))
    assert code == 2
    assert output.strip().count("\n") == 0
    assert "run `racing-demon runtime install` first" in output
    assert not out.exists()


def test_a_file_changed_after_the_check_is_never_inlined(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a page inlines is read and checked at once (``Runtime.read``): a file changed
    between `view`'s check of the install and its writing of the page stops the page, and
    nothing is written."""
    data = tarball(CONTENTS)
    pin = pinned_to(monkeypatch, data)
    source = tmp_path / "pyodide.tgz"
    source.write_bytes(data)
    assert invoke("runtime", "install", "--from", str(source))[0] == 0
    checked = installed(cache, pin)
    assert checked is not None
    assert checked.read("pyodide.mjs") == CONTENTS["pyodide.mjs"]
    (cache / "pyodide.mjs").write_bytes(b"another loader")
    with pytest.raises(RuntimeRefused, match=r"pyodide\.mjs changed since it was installed"):
        checked.read("pyodide.mjs")
    monkeypatch.setattr("racing_demon.viewer.write.required", lambda: checked)
    out = tmp_path / "page.html"
    log = Path(__file__).resolve().parents[1] / "sample_games" / "table-3p-signed.jsonl"
    code, output = invoke("view", str(log), "--engine", "-o", str(out))
    assert code == 2
    assert "changed since it was installed: run `racing-demon runtime install` again" in output
    assert not out.exists()
