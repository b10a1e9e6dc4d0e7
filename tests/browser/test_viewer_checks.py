"""check.js, the viewer's own verification, run in a real headless Chromium.

Issue 17: "The page's own script re-checks, with the browser's Web Crypto API only: each
line's canonical form, the hash chain, the table's Ed25519 signature on every record and
each player's on their submissions, the revealed secret against the commitment, the
binding of each entropy contribution to the commitment, and every pack re-derived from the
spec in docs/deal-spec.md against the digests in the log."

check.js is loaded into a small harness page of this file's own (written to a temporary
folder, opened from file://, under the page's Content-Security-Policy, which forbids every
network load), and fed each log's bytes gzipped and base64-encoded, as the page embeds
them. Every answer is compared with the Python verifier's on the same bytes.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from racing_demon.game.rules import Rules
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import KeyFileError, load_public_key, public_pem, raw_public_bytes
from racing_demon.log.reader import ReadError, read_canonical_line
from racing_demon.log.records import FORMAT_VERSION
from racing_demon.log.signing import (
    SMALL_ORDER_ENCODINGS,
    SignatureCheck,
    check_public_key,
    sign,
    verify,
    verify_raw,
)
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.sim.bots import EASY, HARD, NORMAL
from racing_demon.sim.simulate import simulate
from racing_demon.testing.tamper import reseal
from racing_demon.verify import Report, Settings, Step, Verdict, verify_log
from racing_demon.viewer import render_page, viewer_data

ROOT = Path(__file__).resolve().parents[2]
CHECK_JS = ROOT / "src" / "racing_demon" / "viewer" / "assets" / "check.js"
SAMPLES = ROOT / "sample_games"
MANIFEST = json.loads((SAMPLES / "manifest.json").read_text(encoding="utf-8"))
TABLE_PUB_TEXT = (SAMPLES / "table.pub").read_text(encoding="ascii")
TABLE_PUB = raw_public_bytes(load_public_key(SAMPLES / "table.pub"))
PINNED = Settings(table_key=TABLE_PUB)
# The fixture table key that signed the sample games (scripts/regen_golden_logs.py
# publishes it on purpose): a test re-signs edited copies with it, as a dishonest table would.
FIXTURE_TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
DEAL_KAT = json.loads((ROOT / "tests" / "vectors" / "deal-kat.json").read_text(encoding="utf-8"))
SPECCHECK = json.loads(
    (ROOT / "tests" / "vectors" / "ed25519-speccheck-cases.json").read_text(encoding="utf-8")
)
DEAL_SPEC = (ROOT / "docs" / "deal-spec.md").read_text(encoding="utf-8")

CHECKS = [
    "canonical",
    "chain",
    "table-signatures",
    "player-signatures",
    "commitment",
    "entropy",
    "packs",
]
# The checks that follow docs/log-format.md §7's line-by-line steps 1-5: on one line,
# in this order, as the verifier runs them there.
PER_LINE = ["canonical", "chain", "table-signatures", "player-signatures", "entropy"]
P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493

# The page's own policy (the design's Content-Security-Policy): no network load of any kind.
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
# A browser without Ed25519, as older Chromium and Firefox releases were: importKey refuses
# the algorithm with the error they throw.
NO_ED25519 = """
const realImportKey = SubtleCrypto.prototype.importKey;
SubtleCrypto.prototype.importKey = function (format, data, algorithm, ...rest) {
  const name = typeof algorithm === "string" ? algorithm : algorithm && algorithm.name;
  if (String(name).toLowerCase() === "ed25519") {
    return Promise.reject(new DOMException("Unrecognized name.", "NotSupportedError"));
  }
  return realImportKey.call(this, format, data, algorithm, ...rest);
};
"""


def harness_page(prelude: str = "") -> str:
    source = CHECK_JS.read_text(encoding="utf-8")
    # page.py inlines check.js the same way: it must never close its script element.
    assert "</script" not in source.lower()
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<title>check.js harness</title></head><body>"
        f"<script>{prelude}</script>"
        f'<script type="module">{source}\nwindow.RDCheck = RDCheck;</script>'
        "</body></html>"
    )


class Harness:
    """A harness page in the session's browser, reloaded when another test navigated away."""

    def __init__(self, browser: Any, page: Path) -> None:
        self.browser = browser
        self.url = page.as_uri()

    def call(self, script: str, *args: object) -> Any:
        if self.browser.current_url != self.url:
            self.browser.get(self.url)
        self.browser.set_script_timeout(60)
        # The module script runs after parsing; wait for it, then run the test's script.
        answer = self.browser.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            const args = Array.from(arguments).slice(0, -1);
            const wait = () => window.RDCheck ? go() : setTimeout(wait, 5);
            const go = () => {
              const body = new Function("RDCheck", "args", args.shift());
              Promise.resolve()
                .then(() => body(window.RDCheck, args))
                .then(
                  (value) => done({value}),
                  (error) => done({error: String(error.stack || error)}));
            };
            wait();
            """,
            script,
            *args,
        )
        if "error" in answer:
            raise AssertionError(f"check.js threw: {answer['error']}")
        return answer.get("value")


@pytest.fixture(scope="module")
def harness(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Harness:
    page = tmp_path_factory.mktemp("check-harness") / "harness.html"
    page.write_text(harness_page(), encoding="utf-8")
    return Harness(browser, page)


RUN_LOG = """
const [data, pub] = args;
return RDCheck.gunzip(data).then((bytes) =>
  RDCheck.run(bytes, {tableKey: pub === null ? null : RDCheck.parsePublicKeyFile(pub)}));
"""


def run_answer(harness: Harness, log: bytes, pub: str | None = TABLE_PUB_TEXT) -> Any:
    """What RDCheck.run answers for ``log``, given to it as the page embeds it."""
    packed = base64.b64encode(gzip.compress(log, mtime=0)).decode("ascii")
    answer = harness.call(RUN_LOG, packed, pub)
    assert answer["ed25519"] is True, "Chromium 156 has Ed25519 in Web Crypto"
    assert [result["check"] for result in answer["results"]] == CHECKS
    for result in answer["results"]:
        assert result["words"], result  # every item says in words what it found
    return answer


def run_in_browser(
    harness: Harness, log: bytes, pub: str | None = TABLE_PUB_TEXT
) -> dict[str, dict[str, Any]]:
    return {result["check"]: result for result in run_answer(harness, log, pub)["results"]}


# -- comparing with the Python verifier ------------------------------------------------


ANY_CHECK = "any check"  # the record schema (step 3) is no check of its own in the browser


def browser_check_of(report: Report) -> str | None:
    """The browser check that must fail first where the Python verifier's finding is, or
    None when its finding (steps 7-10, but a pack) is not the browser's to judge. A line
    off the record schema (step 3) is refused by whichever check reads the field."""
    finding = report.finding
    if report.verdict is Verdict.VERIFIED or report.verdict is Verdict.UNFINISHED:
        return None  # an unfinished log fails nothing it holds
    assert finding is not None and report.step is not None
    code = str(finding.code)
    if report.step in (Step.FRAMING, Step.CANONICAL):
        return "canonical"
    if report.step is Step.SCHEMA:
        return ANY_CHECK
    if report.step is Step.CHAIN:
        return "chain"
    if report.step is Step.SIGNATURES:
        if code in ("WRONG_TABLE_KEY", "BAD_TABLE_SIGNATURE"):
            return "table-signatures"
        return "entropy" if code == "ENTROPY_NOT_BOUND" else "player-signatures"
    if report.step is Step.SECRET:
        return "commitment"
    return "packs" if code == "PACK_MISMATCH" else None


def first_failure(results: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The browser's first failing check in the verifier's order: the first line failing
    steps 1-5 (on one line, in step order), then the secret, then the packs."""
    per_line = [results[check] for check in PER_LINE if results[check]["status"] == "fail"]
    if per_line:
        return min(per_line, key=lambda result: (result["line"], PER_LINE.index(result["check"])))
    for check in ("commitment", "packs"):
        if results[check]["status"] == "fail":
            return results[check]
    return None


def assert_agrees(results: dict[str, dict[str, Any]], report: Report) -> None:
    """The browser's first failure is the verifier's: check, line, seq, code and rule."""
    expected = browser_check_of(report)
    found = first_failure(results)
    if expected is None:
        assert found is None, (report.finding, found)
        return
    finding = report.finding
    assert finding is not None and found is not None, (finding, results)
    if expected == ANY_CHECK:
        assert found["line"] == finding.line, (finding, found)
        return
    assert (found["check"], found["line"], found["code"], found["rule"]) == (
        expected,
        finding.line,
        str(finding.code),
        finding.rule,
    ), (finding, found)
    # Where the verifier names no seq (a line it could not read), check.js gives the index.
    assert finding.line is not None
    assert found["seq"] == (finding.line - 1 if finding.seq is None else finding.seq)


# -- every sample game -----------------------------------------------------------------


def keyed_v2(game: dict[str, Any]) -> bool:
    """A keyed game of format v2 or later: its entropy is bound to the commitment."""
    return bool(game["players"]["keyed"]) and game["format"] >= 2


@pytest.mark.parametrize("game", MANIFEST["games"], ids=lambda game: game["file"])
def test_every_sample_game_agrees_with_the_manifest_and_the_verifier(
    harness: Harness, game: dict[str, Any]
) -> None:
    """Issue 17: "For every sample game: the in-browser checklist agrees with the manifest
    (valid games pass every check; a changed byte, a spliced record, a bad signature, a
    wrong secret fail at the right record; an illegal move that the table re-signed passes
    the crypto checks ...)". The right record is the Python verifier's finding on the same
    bytes, with table.pub pinned (docs/log-format.md §7, "Order of the checks")."""
    path = SAMPLES / game["file"]
    report = verify_log(path, PINNED)
    expected = game["expected"]
    assert (str(report.verdict), report.finding and str(report.finding.code)) == (
        expected["verdict"],
        expected["code"],
    )
    answer = run_answer(harness, path.read_bytes())
    results = {result["check"]: result for result in answer["results"]}
    assert_agrees(results, report)
    # docs/log-format.md §6: "a log without it [the final record] is unfinished"
    assert answer["finished"] is (expected["verdict"] != "unfinished")
    status = {check: result["status"] for check, result in results.items()}
    if expected["verdict"] == "verified":
        keyed = game["players"]["keyed"]
        assert status == {
            "canonical": "pass",
            "chain": "pass",
            "table-signatures": "pass",
            "player-signatures": "pass" if keyed else "not-applicable",
            "commitment": "pass",
            "entropy": "pass" if keyed_v2(game) else "not-applicable",
            "packs": "pass",
        }
    elif expected["verdict"] == "unfinished":
        # "a log without it [the final record] is unfinished and never valid"
        assert status["commitment"] == status["packs"] == "not-applicable"
        assert "unfinished" in results["chain"]["words"]
        assert "fail" not in status.values()
    elif expected["step"] in (7, 8, 9, 10) and expected["code"] != "PACK_MISMATCH":
        # The rules, the moves and the scores are the embedded verdict's: every crypto
        # check holds for a log the table re-signed.
        assert set(status.values()) <= {"pass", "not-applicable"}, results


def _short(profile: str) -> Rules:
    """A built-in profile with a low match target, so that a whole match is quick."""
    document = builtin_document(profile)
    if document["match"]["target"] is not None:
        document["match"]["target"] = 15
    return custom_variant(rules_from_document(document))


@pytest.mark.parametrize(
    ("profile", "keyed"),
    [("table", True), ("peer2peer", True), ("nertz", True), ("table", False)],
    ids=["table-keyed", "peer2peer-keyed", "nertz-keyed", "table-unkeyed"],
)
def test_freshly_simulated_games_pass_every_check(
    harness: Harness, tmp_path: Path, profile: str, keyed: bool
) -> None:
    """Issue 17, "Done when": "All of the above works on the sample corpus and on freshly
    simulated games of every profile": a match the table writes today (format v2) passes
    every check the browser makes, as it verifies in Python."""
    path = tmp_path / "game.jsonl"
    player_keys = [
        Ed25519PrivateKey.from_private_bytes(bytes([0x70 + seat]) * 32) for seat in range(3)
    ]
    simulate(
        path,
        _short(profile),
        (EASY, NORMAL, HARD),
        f"check.js {profile}",
        FIXTURE_TABLE_KEY,
        player_keys=player_keys if keyed else None,
        receipts=False,
    )
    report = verify_log(path, PINNED)
    assert report.verdict is Verdict.VERIFIED, report.finding
    results = run_in_browser(harness, path.read_bytes())
    signed = "pass" if keyed else "not-applicable"
    assert {check: result["status"] for check, result in results.items()} == {
        "canonical": "pass",
        "chain": "pass",
        "table-signatures": "pass",
        "player-signatures": signed,
        "commitment": "pass",
        "entropy": signed,
        "packs": "pass",
    }


def test_a_seat_without_an_entropy_contribution_never_passes_the_entropy_check(
    harness: Harness, tmp_path: Path
) -> None:
    """deal-spec "Order of play": in a v2 keyed game each seat's contribution is its
    signature over the commitment. A genesis that lists one contribution fewer than its
    seats (co-signed and re-signed as it now reads) cannot pass "each seat's contribution
    is its Ed25519 signature": the entropy check fails at the genesis, with the verifier's
    code for it (step 7, BAD_SEATS)."""
    values = _values()
    genesis = values[0]
    genesis["body"]["entropy"].pop()
    body = canonical_bytes(genesis["body"])
    genesis["sigs"]["players"] = [
        sign(key, "genesis", body, FORMAT_VERSION) for key in FIXTURE_PLAYER_KEYS
    ]
    data = _joined(reseal(values, 0, key=FIXTURE_TABLE_KEY, player_keys=FIXTURE_PLAYER_KEYS))
    path = tmp_path / "short-entropy.jsonl"
    path.write_bytes(data)
    report = verify_log(path, PINNED)
    assert report.finding is not None and str(report.finding.code) == "BAD_SEATS"
    results = run_in_browser(harness, data)
    entropy = results["entropy"]
    assert (entropy["status"], entropy["line"], entropy["code"]) == ("fail", 1, "BAD_SEATS")


def test_an_illegal_move_the_table_re_signed_passes_every_crypto_check(harness: Harness) -> None:
    """Issue 17: "an illegal move that the table re-signed passes the crypto checks and
    shows the embedded rule failure": the signatures prove who wrote it, not that it was
    legal."""
    path = SAMPLES / "disputed" / "illegal-move-re-signed.jsonl"
    report = verify_log(path, PINNED)
    assert report.finding is not None and str(report.finding.code) == "ILLEGAL_MOVE"
    results = run_in_browser(harness, path.read_bytes())
    assert {check: result["status"] for check, result in results.items()} == {
        "canonical": "pass",
        "chain": "pass",
        "table-signatures": "pass",
        "player-signatures": "not-applicable",
        "commitment": "pass",
        "entropy": "not-applicable",
        "packs": "pass",
    }


def test_the_words_name_the_record_and_the_seat(harness: Harness) -> None:
    """The design's #rd-checks: each item's words name what failed, the record and the
    seat; a bad table signature on seat 0's changed turn (sample_games/README.md: "the turn
    '0 turn 2C KS JD' on line 42 reads '0 turn 2D KS JD'")."""
    results = run_in_browser(harness, (SAMPLES / "disputed" / "changed-byte.jsonl").read_bytes())
    words = results["table-signatures"]["words"]
    assert results["table-signatures"]["seq"] == 41
    assert "record 41" in words and "seat 0 (Ada" in words and "0 turn 2D KS JD" in words
    # The changed line no longer hashes to the next line's prev: the chain breaks after it.
    assert (results["chain"]["seq"], results["chain"]["code"]) == (42, "PREV_MISMATCH")


def test_without_a_key_the_table_signatures_are_unpinned(harness: Harness) -> None:
    """The design: "With no key at all, table-signatures is unpinned (a fifth status) with
    words saying so"; docs/log-format.md §7: "no --table-key: every other check holds, but
    no table signature was checked, so nothing proves who wrote the log"."""
    path = SAMPLES / "valid" / "nertz-3p-demon-empty-signed.jsonl"
    assert verify_log(path, Settings()).verdict is Verdict.UNPINNED
    results = run_in_browser(harness, path.read_bytes(), pub=None)
    assert results["table-signatures"]["status"] == "unpinned"
    assert "no table key" in results["table-signatures"]["words"]
    assert all(
        results[check]["status"] == "pass" for check in CHECKS if check != "table-signatures"
    )


def test_a_key_of_another_table_fails_at_the_genesis(harness: Harness) -> None:
    """The design: "A key whose id is not the genesis table_key fails table-signatures at
    record 0" (WRONG_TABLE_KEY, docs/log-format.md §7 step 5)."""
    other = public_pem(Ed25519PrivateKey.from_private_bytes(bytes(range(32, 64)))).decode()
    path = SAMPLES / "valid" / "peer2peer-2p-abandoned.jsonl"
    results = run_in_browser(harness, path.read_bytes(), pub=other)
    table = results["table-signatures"]
    assert (table["status"], table["seq"], table["code"]) == ("fail", 0, "WRONG_TABLE_KEY")


def test_without_ed25519_the_signature_checks_say_so_and_never_pass(
    browser: Any, tmp_path: Path
) -> None:
    """Issue 17: "Where the browser lacks Ed25519, it says so and does not pretend." The
    design: "unsupported: the browser lacks Ed25519 (say so in words)"."""
    page = tmp_path / "no-ed25519.html"
    page.write_text(harness_page(NO_ED25519), encoding="utf-8")
    path = SAMPLES / "table-3p-signed.jsonl"
    packed = base64.b64encode(gzip.compress(path.read_bytes(), mtime=0)).decode("ascii")
    answer = Harness(browser, page).call(RUN_LOG, packed, TABLE_PUB_TEXT)
    assert answer["ed25519"] is False
    results = {result["check"]: result for result in answer["results"]}
    for check in ("table-signatures", "player-signatures", "entropy"):
        assert results[check]["status"] == "unsupported"
        assert "no Ed25519" in results[check]["words"]
    # What needs only SHA-256, HMAC and HKDF is still checked.
    for check in ("canonical", "chain", "commitment", "packs"):
        assert results[check]["status"] == "pass"


# -- through the page the builder makes ------------------------------------------------

# view.js's place in the page's one module script, taken by a probe that runs check.js on
# the page's own embedded data: the rest of the page (the template, its policy, the data
# element, check.js as page.py inlines it) is the builder's.
PROBE_VIEW_JS = """
const probeData = JSON.parse(document.getElementById("rd-data").textContent);
window.rdProbe = (async () => {
  const bytes = await RDCheck.gunzip(probeData.log.data);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const tableKey = probeData.table_key === null ? null : RDCheck.hex.fromHex(probeData.table_key);
  return {
    sha256: RDCheck.hex.toHex(digest),
    bytes: bytes.length,
    outcome: await RDCheck.run(bytes, {tableKey}),
  };
})();
"""


@pytest.mark.parametrize(
    "name",
    [
        "valid/peer2peer-3p-resigned-signed.jsonl",
        "disputed/changed-byte.jsonl",
        "v1/disputed/wrong-secret.jsonl",
    ],
)
def test_the_built_page_runs_the_checks_on_its_embedded_log(
    harness: Harness, browser: Any, tmp_path: Path, name: str
) -> None:
    """The design: page.py puts "check.js then view.js ... as one module script", the log's
    exact bytes embedded as gzip+base64 for check.js, and the key given with --table-key as
    `table_key`. In the built page, opened from file:// under its own policy, check.js
    reads the embedded copy (its SHA-256 is the log's) and answers as on the log itself."""
    path = SAMPLES / name
    data = viewer_data(path, PINNED)
    page = tmp_path / "game.html"
    page.write_text(render_page(data, {"view.js": PROBE_VIEW_JS}), encoding="utf-8")
    browser.get(page.as_uri())
    browser.set_script_timeout(60)
    answer = browser.execute_async_script(
        """
        const done = arguments[0];
        const wait = () => window.rdProbe
          ? window.rdProbe.then(done, (error) => done({error: String(error)}))
          : setTimeout(wait, 5);
        wait();
        """
    )
    assert "error" not in answer, answer
    assert (answer["sha256"], answer["bytes"]) == (data["log"]["sha256"], data["log"]["bytes"])
    assert answer["outcome"]["results"] == list(run_in_browser(harness, path.read_bytes()).values())


# -- edited copies of a sample game, each against the verifier -------------------------

KEYED = SAMPLES / "valid" / "peer2peer-4p-no-centre-signed.jsonl"
UNKEYED = SAMPLES / "valid" / "peer2peer-3p-hold-off.jsonl"


def _lines(path: Path = KEYED) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def _values(path: Path = KEYED) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _lines(path)]


def _joined(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def _first(values: list[dict[str, Any]], kind: str) -> int:
    return next(i for i, value in enumerate(values) if value["body"]["kind"] == kind)


def _resealed(
    edit: Callable[[list[dict[str, Any]]], int], *, base: Path = KEYED, repoint_seen: bool = True
) -> bytes:
    values = _values(base)
    start = edit(values)
    return _joined(
        reseal(values, start, key=FIXTURE_TABLE_KEY, keep_accepts=True, repoint_seen=repoint_seen)
    )


def _edited(edit: Callable[[list[dict[str, Any]]], int], base: Path = UNKEYED) -> list[Any]:
    values = _values(base)
    edit(values)
    return values


def _replaced(index: int, line: bytes) -> bytes:
    lines = _lines()
    lines[index] = line
    return _joined(lines)


def _with_sigs(index: int, change: Callable[[dict[str, Any]], None]) -> bytes:
    values = _values()
    change(values[index]["sigs"])
    return _replaced(index, canonical_bytes(values[index]))


def _sigs_first(value: dict[str, Any]) -> bytes:
    sigs, body = canonical_bytes(value["sigs"]), canonical_bytes(value["body"])
    return b'{"sigs":' + sigs + b',"body":' + body + b"}"


def _submission(values: list[dict[str, Any]]) -> int:
    return next(i for i, value in enumerate(values) if value["body"]["kind"] == "move" and i > 20)


def _seen_elsewhere(values: list[dict[str, Any]]) -> int:
    index = _submission(values)
    values[index]["body"]["seen"]["hash"] = "0" * 64
    return index


def _time_backwards(values: list[dict[str, Any]]) -> int:
    index = _submission(values)
    values[index]["body"]["t_ms"] = values[index - 1]["body"]["t_ms"] - 1
    return index


def _pack_changed(values: list[dict[str, Any]]) -> int:
    index = _first(values, "hand_start")
    values[index]["body"]["packs"][2] = "ab" * 32
    return index


# The fixture players' keys of the keyed sample games (scripts/regen_golden_logs.py).
FIXTURE_PLAYER_KEYS = [
    Ed25519PrivateKey.from_private_bytes(bytes([0x50 + seat]) * 32) for seat in range(4)
]


def _submission_replayed() -> bytes:
    """A keyed player's signed submission written twice by the table: both copies carry the
    player's own valid signature, only its number ``n`` gives the second one away."""
    values = _values()
    index = _submission(values)
    values.insert(index + 1, json.loads(_lines()[index]))
    values[-1]["body"]["records"] = len(values) - 1
    return _joined(
        reseal(values, index + 1, key=FIXTURE_TABLE_KEY, player_keys=FIXTURE_PLAYER_KEYS)
    )


def _renumbered(values: list[dict[str, Any]]) -> int:
    index = _submission(values)
    values[index]["body"]["n"] += 1
    return index


def _genesis_numbered(values: list[dict[str, Any]]) -> int:
    values[0]["body"]["seq"] = 5
    return 0


def _final_twice() -> bytes:
    lines = _lines()
    return _joined([*lines, lines[-1]])


EDITS: dict[str, Callable[[], bytes]] = {
    "a space in a line (NOT_CANONICAL)": lambda: _replaced(5, _lines()[5].replace(b":", b": ", 1)),
    "keys out of order (NOT_CANONICAL)": lambda: _replaced(3, _sigs_first(_values()[3])),
    "a duplicate key (DUPLICATE_KEY)": lambda: _replaced(
        4, _lines()[4].replace(b'"kind":', b'"kind":"x","kind":', 1)
    ),
    "a float (FLOAT)": lambda: _replaced(6, re.sub(rb'"t_ms":(\d+)', rb'"t_ms":\1.0', _lines()[6])),
    "a carriage return (CR)": lambda: _replaced(7, _lines()[7] + b"\r"),
    "a line beyond 64 KiB (LINE_TOO_LONG)": lambda: _replaced(5, b'{"a":"' + b"x" * 65536 + b'"}'),
    "a byte order mark (BOM)": lambda: b"\xef\xbb\xbf" + KEYED.read_bytes(),
    "an empty line (EMPTY_LINE)": lambda: _replaced(8, b""),
    "not UTF-8 (NOT_UTF8)": lambda: _replaced(9, _lines()[9].replace(b'"kind"', b'"k\xffnd"', 1)),
    "the final record's newline cut (TORN_LINE, unfinished)": lambda: KEYED.read_bytes()[:-1],
    "a torn line after the final record (TORN_LINE)": lambda: KEYED.read_bytes() + b'{"body":',
    "a record after the final record (AFTER_FINAL)": _final_twice,
    "a seen hash of no record, re-signed (SEEN_MISMATCH)": lambda: _resealed(
        _seen_elsewhere, repoint_seen=False
    ),
    "time backwards, re-signed (TIME_BACKWARDS)": lambda: _resealed(_time_backwards),
    "a signed submission written twice, re-signed (SUBMISSION_GAP)": _submission_replayed,
    "an unkeyed submission numbered out of turn, re-signed (SUBMISSION_GAP)": lambda: _resealed(
        _renumbered, base=UNKEYED
    ),
    "the genesis numbered 5, re-signed (SCHEMA)": lambda: _joined(
        reseal(_edited(_genesis_numbered), 0, key=FIXTURE_TABLE_KEY, keep_seq=True)
    ),
    "a pack digest changed, re-signed (PACK_MISMATCH)": lambda: _resealed(
        # unkeyed: in a keyed game the players' signatures over the re-pointed seen fail first
        _pack_changed,
        base=UNKEYED,
    ),
    "a player's signature removed (MISSING_PLAYER_SIGNATURE)": lambda: _with_sigs(
        12, lambda sigs: sigs.pop("player")
    ),
    "a player's signature on a hand start (UNEXPECTED_SIGNATURE)": lambda: _with_sigs(
        _first(_values(), "hand_start"), lambda sigs: sigs.__setitem__("player", "00" * 64)
    ),
    "a co-signature missing (BAD_GENESIS_COSIGNATURE)": lambda: _with_sigs(
        0, lambda sigs: sigs["players"].pop()
    ),
    "two acceptances swapped (BAD_ACCEPTANCE)": lambda: _with_sigs(
        len(_lines()) - 1, lambda sigs: sigs["accepts"].reverse()
    ),
    "an acceptance in upper case (SCHEMA)": lambda: _with_sigs(
        len(_lines()) - 1, lambda sigs: sigs["accepts"].__setitem__(1, sigs["accepts"][1].upper())
    ),
}


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_edited_copies_fail_where_the_verifier_finds_them(
    harness: Harness, tmp_path: Path, edit: str
) -> None:
    """docs/log-format.md §7: "The first failure is the answer, so a verifier that keeps
    this order gives a log with several defects the same code, step and line as ours." The
    browser's first failing check names the verifier's line, code and rule."""
    data = EDITS[edit]()
    path = tmp_path / "edited.jsonl"
    path.write_bytes(data)
    report = verify_log(path, PINNED)
    assert report.finding is not None  # each edit is what its name says it is
    assert re.search(r"\((\w+)", edit)[1] == str(report.finding.code)  # type: ignore[index]
    results = run_in_browser(harness, data)
    assert_agrees(results, report)
    # A check that threw fails closed, but an edit the checks foresee never makes one throw.
    assert [r["check"] for r in results.values() if r["code"] == "CHECK_ERROR"] == []
    if report.verdict is Verdict.UNFINISHED:
        assert results["commitment"]["status"] == "not-applicable"


# -- strict JSON, line by line ---------------------------------------------------------

LINES = [
    # docs/log-format.md §2's own examples
    b'{"a":1,"a":2,"b":1.5}',
    b'{"a":1,"a":2,}',
    b'{"a":{"b":1,"b":2},"c":1.5}',
    b'{"a":1,"a":2} x',
    b'{"a":1,"b":[{"c":1,"c":2}],"d":NaN}',
    # numbers
    b'{"a":1}',
    b'{"a":-1}',
    b'{"a":1.0}',
    b'{"a":1e5}',
    b'{"a":1E5}',
    b'{"a":-0.0}',
    b'{"a":-0}',
    b'{"a":0}',
    b'{"a":00}',
    b'{"a":01}',
    b'{"a":+1}',
    b'{"a":.5}',
    b'{"a":1.}',
    b'{"a":1e}',
    b'{"a":1.5e}',
    b'{"a":-}',
    b'{"a":9007199254740991}',
    b'{"a":-9007199254740991}',
    b'{"a":9007199254740992}',
    b'{"a":-9007199254740992}',
    b'{"a":12345678901234567890}',
    b'{"a":NaN}',
    b'{"a":Infinity}',
    b'{"a":-Infinity}',
    # strings and their escapes
    b'{"a":"x"}',
    b'{"a":"\xc3\xa9"}',
    b'{"a":"\\u00e9"}',
    b'{"a":"\\u001f"}',
    b'{"a":"\\u001F"}',
    b'{"a":"\\n"}',
    b'{"a":"\\u000a"}',
    b'{"a":"\\/"}',
    b'{"a":"/"}',
    b'{"a":"\x7f"}',
    b'{"a":"\\u007f"}',
    b'{"a":"\xe2\x80\xa8"}',
    b'{"a":"\\u2028"}',
    b'{"a":"\t"}',
    b'{"a":"\\t"}',
    b'{"a":"\\x"}',
    b'{"a":"\\u12"}',
    b'{"a":"\\ud800"}',
    b'{"a":"\\udc00\\ud800"}',
    b'{"a":"\\ud83d\\ude00"}',
    b'{"a":"\xf0\x9f\x98\x80"}',
    b'{"a":"unterminated}',
    b'{"a":"\x00"}',
    b'{"a":"\xff"}',
    b'{"a":"\xc0\xaf"}',
    b'{"a":"\xed\xa0\x80"}',
    b'\xef\xbb\xbf{"a":1}',
    # keys and objects
    b"{}",
    b'{"\xc3\xa9":1}',
    b'{"\\u0041":1}',
    b'{"A":1,"_":3,"a":2}',
    b'{"a":2,"A":1,"_":3}',
    b'{"__proto__":1}',
    b'{"__proto__":1,"__proto__":2}',
    b'{"constructor":{"toString":1}}',
    b'{"a":[],"b":{},"c":[true,false,null]}',
    b'{"a":[1,]}',
    b'{"a":tru}',
    b'{"a":1}{"b":2}',
    b'{"a" :1}',
    b' {"a":1}',
    b'{"a":1} ',
    b'{"a":[1, 2]}',
    b"{a:1}",
    b"{'a':1}",
    # the top level
    b"[1]",
    b'"x"',
    b"null",
    b"1",
    # depth: the top-level object is depth 1, the limit 32
    b'{"a":' * 31 + b"[]" + b"}" * 31,
    b'{"a":' * 32 + b"[]" + b"}" * 32,
    b'{"a":' * 40 + b"[" * 40,
    b'{"a":"' + b"[" * 40 + b'"}',
]


def _read_code(line: bytes) -> str | None:
    try:
        read_canonical_line(1, line)
    except ReadError as error:
        return str(error.code)
    return None


def test_each_line_is_read_as_strictly_as_the_verifier_reads_it(harness: Harness) -> None:
    """docs/log-format.md §2-§3: "Each line is one JSON object, read strictly; the first
    problem found is reported with its code", and "A line must be exactly the RFC 8785 (JCS)
    serialization of its value". check.js gives every line the reader's code, or accepts it
    exactly when the reader does."""
    found = harness.call(
        """return args[0].map((hex) =>
          RDCheck.canonical.readLine(RDCheck.hex.fromHex(hex)).code ?? null);""",
        [line.hex() for line in LINES],
    )
    expected = [_read_code(line) for line in LINES]
    assert dict(zip(map(repr, LINES), found, strict=True)) == dict(
        zip(map(repr, LINES), expected, strict=True)
    )


# -- Ed25519, as strict as signing.py --------------------------------------------------


def _code(check: SignatureCheck | None) -> str | None:
    return None if check is None else str(check.code)


def _le(number: int) -> bytes:
    return number.to_bytes(32, "little")


def _signature_cases() -> Iterator[tuple[str, bytes, bytes, bytes]]:
    """(name, key, message, signature): the speccheck vectors, then edge cases of our own."""
    for index, case in enumerate(SPECCHECK):
        yield (
            f"speccheck {index}",
            bytes.fromhex(case["pub_key"]),
            bytes.fromhex(case["message"]),
            bytes.fromhex(case["signature"]),
        )
    key = FIXTURE_TABLE_KEY
    public = raw_public_bytes(key)
    message = b"DSSEv1 a message check.js must verify as signing.py does"
    signature = key.sign(message)
    r, s = signature[:32], signature[32:]
    s_number = int.from_bytes(s, "little")
    off_curve = next(
        _le(y) for y in range(2, 1000) if _code(check_public_key(_le(y))) == "KEY_NOT_ON_CURVE"
    )
    yield "valid", public, message, signature
    yield "another message", public, message + b".", signature
    yield "S + L", public, message, r + _le(s_number + L)
    yield "S = L", public, message, r + _le(L)
    yield "S = L - 1", public, message, r + _le(L - 1)
    yield "S with its top bits set", public, message, r + s[:31] + bytes([s[31] | 0xE0])
    yield "S = 0", public, message, r + bytes(32)
    yield "R with y = p", public, message, _le(P) + s
    yield "R with y = p + 3", public, message, _le(P + 3) + s
    yield "R y = 1 with the sign bit", public, message, _le(1 | 1 << 255) + s
    yield "R y = p - 1 with the sign bit", public, message, _le(P - 1 | 1 << 255) + s
    yield "R off the curve", public, message, off_curve + s
    yield "R with its sign flipped", public, message, r[:31] + bytes([r[31] ^ 0x80]) + s
    yield "key with y = p + 2", _le(P + 2), message, signature
    yield "key y = 1 with the sign bit", _le(1 | 1 << 255), message, signature
    yield "key off the curve", off_curve, message, signature
    yield "key of 31 bytes", public[:31], message, signature
    yield "key with its sign flipped", public[:31] + bytes([public[31] ^ 0x80]), message, signature
    yield "signature of 63 bytes", public, message, signature[:63]
    for point in sorted(SMALL_ORDER_ENCODINGS):
        yield f"small-order key {point.hex()[:8]}", point, message, signature
        yield f"small-order R {point.hex()[:8]}", public, message, point + s


def test_signatures_are_refused_exactly_where_the_verifier_refuses_them(
    harness: Harness,
) -> None:
    """docs/log-format.md §5: "Verification is strict; checks run in this order and the
    first failure is the answer (signing.SignatureCode)", and "Of the ten 'Taming the many
    EdDSAs' speccheck vectors, only case 3 ... is accepted". check.js answers every case
    with signing.verify_raw's code (Chromium's own Ed25519 checks only the equation)."""
    cases = list(_signature_cases())
    found = harness.call(
        """
        const fromHex = RDCheck.hex.fromHex;
        return Promise.all(args[0].map(([key, message, signature]) =>
          RDCheck.ed25519.verifyRaw(fromHex(key), fromHex(message), fromHex(signature))
            .then((problem) => problem === null ? null : problem.code)));
        """,
        [[key.hex(), message.hex(), signature.hex()] for _, key, message, signature in cases],
    )
    expected = [_code(verify_raw(key, message, signature)) for _, key, message, signature in cases]
    names = [name for name, *_ in cases]
    assert dict(zip(names, found, strict=True)) == dict(zip(names, expected, strict=True))
    assert expected[:10].count(None) == 1  # speccheck: case 3 only


def test_signed_statements_are_bound_to_kind_version_and_text_form(harness: Harness) -> None:
    """docs/log-format.md §5: "The type binds both the record kind and the format version,
    so a signature never verifies for another kind or version", and the text form is
    "exactly 128 lowercase hex characters"."""
    key = FIXTURE_TABLE_KEY
    public = raw_public_bytes(key)
    body = b'{"game":"00","kind":"move"}'
    good = sign(key, "move", body, 2)
    cases = [
        ("move", body, good, 2),
        ("move", body, good, 1),
        ("tie", body, good, 2),
        ("move", body + b" ", good, 2),
        ("move", body, good.upper(), 2),
        ("move", body, good[:126], 2),
        ("move", body, good + "00", 2),
        ("Move", body, good, 2),
        ("m" * 33, body, good, 2),
        ("", body, good, 2),
        ("hand_start", body, sign(key, "hand_start", body, 1), 1),
    ]
    found = harness.call(
        """
        const key = RDCheck.hex.fromHex(args[0]);
        return Promise.all(args[1].map(([kind, body, signature, version]) =>
          RDCheck.ed25519.verify(key, kind, RDCheck.hex.fromHex(body), signature, version)
            .then((problem) => problem === null ? null : problem.code)));
        """,
        public.hex(),
        [[kind, body.hex(), signature, version] for kind, body, signature, version in cases],
    )
    expected = [_code(verify(public, *case)) for case in cases]
    assert found == expected
    assert expected[0] is None and expected[-1] is None


def _pem_of(raw: bytes) -> str:
    der = bytes.fromhex("302a300506032b6570032100") + raw
    body = base64.b64encode(der).decode()
    return f"-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n"


def test_a_dropped_key_file_is_read_as_the_verifier_reads_it(
    harness: Harness, tmp_path: Path
) -> None:
    """docs/log-format.md §7: "a --table-key that is not an Ed25519 SPKI PEM public key or
    is a weak key" is refused; the design: parsePublicKeyFile reads "the PEM SPKI .pub file
    (log/keys.py) or 64 hex" and throws an Error with a message."""
    private_pem = FIXTURE_TABLE_KEY.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    texts = {
        "table.pub": TABLE_PUB_TEXT,
        "table.pub without its newline": TABLE_PUB_TEXT.strip(),
        "table.pub with CRLF line ends": TABLE_PUB_TEXT.replace("\n", "\r\n"),
        "table.pub after a comment line": "the table's key\n" + TABLE_PUB_TEXT,
        "table.pub twice": TABLE_PUB_TEXT + TABLE_PUB_TEXT,
        "table.pub with a space in its body": TABLE_PUB_TEXT.replace("MCow", "MC ow"),
        "the base64 cut short": TABLE_PUB_TEXT.replace("MCow", "Mow"),
        "a weak key": _pem_of(bytes(32)),
        "a key off the curve": _pem_of(
            next(
                _le(y)
                for y in range(2, 1000)
                if _code(check_public_key(_le(y))) == "KEY_NOT_ON_CURVE"
            )
        ),
        "the private key": private_pem,
        "not a key": "hello",
        "an X25519 key": X25519PrivateKey.from_private_bytes(bytes(range(32)))
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode(),
    }
    found = harness.call(
        """
        return args[0].map((text) => {
          try { return RDCheck.hex.toHex(RDCheck.parsePublicKeyFile(text)); }
          catch (error) { return {error: error.message}; }
        });
        """,
        list(texts.values()),
    )
    for (name, text), answer in zip(texts.items(), found, strict=True):
        key_file = tmp_path / "key.pub"
        key_file.write_text(text, encoding="utf-8")
        try:
            expected = raw_public_bytes(load_public_key(key_file)).hex()
        except KeyFileError:
            assert isinstance(answer, dict) and answer["error"], name
        else:
            assert answer == expected, name
    # The raw key as 64 hex characters, the other form the design allows.
    assert (
        harness.call(
            "return RDCheck.hex.toHex(RDCheck.parsePublicKeyFile(args[0]));", TABLE_PUB.hex()
        )
        == TABLE_PUB.hex()
    )


# -- the deal, by its known answers ----------------------------------------------------

DEAL = """
const [kat] = args;
const {deal, hex} = RDCheck;
const fromHex = hex.fromHex;
const words = (seed, entry) =>
  deal.firstWords(seed, entry.hand, entry.seat, entry.first_words.length);
const pack = async (seed, entry) => {
  const order = await deal.derivePack(seed, entry.hand, entry.seat);
  const stream = await deal.firstWords(seed, entry.hand, entry.seat, 112);
  return {
    faces: order.map(deal.face),
    digest: await deal.packDigest(entry.hand, entry.seat, order),
    consumed: deal.shuffle(52, stream).consumed,
  };
};
const seedAnswers = async (seed, entry) => ({
  prk: hex.toHex(await deal.prkOf(seed)),
  words: await Promise.all(entry.words.map((w) => words(seed, w))),
  packs: await Promise.all(entry.packs.map((p) => pack(seed, p))),
});
return (async () => ({
  plain: await Promise.all(
    kat.plain_seeds.map((entry) => seedAnswers(deal.plainSeed(entry.seed), entry))),
  match: await Promise.all(kat.match_seeds.map(async (entry) => ({
    commitment: await deal.commitment(fromHex(entry.secret)),
    ...(await seedAnswers(
      deal.matchSeed(fromHex(entry.secret), entry.contributions.map(fromHex)), entry)),
  }))),
  shuffles: kat.shuffles.map((entry) => deal.shuffle(entry.n, entry.words)),
}))();
"""


def _seed_expected(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "prk": entry["prk"],
        "words": [w["first_words"] for w in entry["words"]],
        "packs": [
            {"faces": p["faces"], "digest": p["digest"], "consumed": p["words_consumed"]}
            for p in entry["packs"]
        ],
    }


def test_the_deal_is_re_derived_to_every_known_answer(harness: Harness) -> None:
    """docs/deal-spec.md: "A re-implementation is correct when it reproduces every value in
    that file" (tests/vectors/deal-kat.json), "Re-implementing with Web Crypto": plain and
    committed seeds, words, packs with a rejected word, digests and the crafted shuffles."""
    found = harness.call(DEAL, DEAL_KAT)
    assert found["plain"] == [_seed_expected(entry) for entry in DEAL_KAT["plain_seeds"]]
    assert found["match"] == [
        {"commitment": entry["commitment"], **_seed_expected(entry)}
        for entry in DEAL_KAT["match_seeds"]
    ]
    assert found["shuffles"] == [
        {"order": entry["expected"], "consumed": entry["words_consumed"]}
        for entry in DEAL_KAT["shuffles"]
    ]
    assert any(p["rejected_words"] for e in DEAL_KAT["plain_seeds"] for p in e["packs"])


def _worked_example() -> dict[str, str]:
    block = DEAL_SPEC.split("<!-- worked example: entropy contribution (begin) -->")[1]
    block = block.split("<!-- worked example: entropy contribution (end) -->")[0]
    pairs = (line.split(": ", 1) for line in block.splitlines() if ": " in line)
    example = {name: value for name, value in pairs}
    later = re.search(
        r"seat 0's\s+contribution is\s+`(?P<e0>[0-9a-f]{128})`.*?PRK = `(?P<prk>[0-9a-f]{64})`"
        r".*?digest \(Step 8\)\s+`(?P<digest>[0-9a-f]{64})`",
        DEAL_SPEC,
        re.DOTALL,
    )
    assert later is not None
    return example | later.groupdict()


def test_the_keyed_worked_example_is_re_derived(harness: Harness) -> None:
    """docs/deal-spec.md, "Worked example: a keyed seat's contribution (format v2)": the
    statement, its signature under the v2 entropy type (and not the v1 one), and the
    two-seat match seed and pack digest it gives."""
    example = _worked_example()
    found = harness.call(
        """
        const [ex] = args;
        const {deal, hex, ed25519, canonical} = RDCheck;
        const statement = new TextEncoder().encode(canonical.encode(
          {commitment: ex.commitment, game: ex.game, player: Number(ex.seat)}));
        const key = hex.fromHex(ex["public key hex"]);
        const secret = hex.fromHex(ex["private key hex"]);  // the bytes 0 to 31, also the secret
        return (async () => {
          const contributions = [hex.fromHex(ex.e0), hex.fromHex(ex["signature hex"])];
          const seed = deal.matchSeed(secret, contributions);
          const order = await deal.derivePack(seed, 1, 0);
          return {
            statement: new TextDecoder().decode(statement),
            commitment: await deal.commitment(secret),
            v2: await ed25519.verify(key, "entropy", statement, ex["signature hex"], 2),
            v1: (await ed25519.verify(key, "entropy", statement, ex["signature hex"], 1)).code,
            prk: hex.toHex(await deal.prkOf(seed)),
            digest: await deal.packDigest(1, 0, order),
          };
        })();
        """,
        example,
    )
    assert found == {
        "statement": example["statement bytes"],
        "commitment": example["commitment"],
        "v2": None,
        "v1": "BAD_SIGNATURE",
        "prk": example["prk"],
        "digest": example["digest"],
    }
