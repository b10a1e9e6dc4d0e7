"""The disputed games are declared edits of the checked-in valid games (scripts/
regen_sample_games.py's ``DISPUTED``, racing_demon.testing.tamper's edit kinds): each entry's
edits give its file from its base with no bots, and an edit whose line no longer holds what it
expects stops the regeneration with a message that says which line and what it found.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from racing_demon.game.flow import RecordKind
from racing_demon.game.rules import Rules
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.records import ACCEPT, FORMAT_VERSION
from racing_demon.log.signing import verify
from racing_demon.testing.tamper import (
    CoSign,
    Duplicate,
    EditError,
    Remove,
    Reseal,
    SetFields,
    SetRules,
    SignSubmission,
    Splice,
    Swap,
    Truncate,
    apply_edits,
    reseal,
)
from racing_demon.verify import Settings, Verdict, VerifyCode, verify_log

from conftest import load_script

SAMPLES = Path(__file__).resolve().parents[1] / "sample_games"


@cache
def regen() -> ModuleType:
    return load_script("regen_sample_games")


def on_disk(file: str) -> bytes:
    return (SAMPLES / file).read_bytes()


def entry(file: str) -> Any:
    return next(e for e in regen().DISPUTED if e.file == f"disputed/{file}.jsonl")


@pytest.mark.parametrize("file", [disputed.file for disputed in regen().DISPUTED])
def test_each_disputed_game_is_its_edits_of_the_checked_in_base(file: str) -> None:
    script = regen()
    (disputed,) = (e for e in script.DISPUTED if e.file == file)
    assert script.disputed_log(disputed, on_disk) == on_disk(file)


def test_an_edit_whose_line_holds_another_record_stops_the_regeneration() -> None:
    script = regen()
    illegal = entry("illegal-move-re-signed")
    moved = script.replace(
        illegal, edits=(script.replace(illegal.edits[0], line=44), *illegal.edits[1:])
    )
    message = (
        "disputed/illegal-move-re-signed.jsonl (from valid/peer2peer-3p-hold-off.jsonl): "
        "edit 1 (line 44: move set to '2 waste>f+ 3S'): line 44 should hold kind='move', "
        "move='2 waste>w2 3S'; it holds kind='move', move='1 turn 8S 7D 4C'; find lines that "
        "show the scenario again and update DISPUTED"
    )
    with pytest.raises(script.CorpusError, match=re.escape(message)):
        script.disputed_log(moved, on_disk)


def test_an_edit_of_a_base_that_changed_stops_at_the_edit() -> None:
    """The same edits on another game: the first edit finds another kind of record."""
    script = regen()
    inflated = entry("inflated-score")
    other = script.replace(inflated, base="valid/peer2peer-2p-blocked-shared-victory.jsonl")
    with pytest.raises(
        script.CorpusError, match=r"edit 1 \(.*\): line 81 should hold kind='hand_end', "
    ):
        script.disputed_log(other, on_disk)


def test_re_signing_the_base_with_another_key_is_playing_it_at_another_table() -> None:
    """Why wrong-table-key.jsonl needs no bots: the table's key takes no part in play."""
    script = regen()
    played = script.render_game(script.GAME_BY_FILE[script.P2P_3P], script.OTHER_TABLE_KEY)
    assert played == on_disk("disputed/wrong-table-key.jsonl")


@pytest.mark.parametrize("file", [declined.file for declined in regen().DECLINED])
def test_a_result_not_accepted_is_its_base_resumed_with_a_seat_declining(file: str) -> None:
    script = regen()
    (declined,) = (e for e in script.DECLINED if e.file == file)
    assert script.declined_log(declined, on_disk) == on_disk(file)


def test_the_receipts_are_the_tables_own() -> None:
    """The receipts simulate kept are the ones its log's records give (receipts_of), and a
    dispute's receipts made from its log are those of its checked-in files."""
    script = regen()
    for game in script.GAMES:
        if game.receipts:
            kept = tuple(on_disk(file) for file in game.receipt_files)
            script.check_receipts(game, on_disk(game.file), kept)
    made = 0
    for entry in script.DISPUTED:
        for receipts, file in zip(entry.receipts, entry.receipt_files, strict=True):
            if receipts.of == "log":
                data, base = on_disk(entry.file), on_disk(entry.base)
                theirs = script.receipts_of(
                    data, receipts.seat, answered=receipts.answered, base=base
                )
                assert theirs == on_disk(file)
                made += 1
    assert made
    with pytest.raises(script.CorpusError, match="seat 0's receipts are not the table's"):
        game = script.GAME_BY_FILE[script.P2P_3P]
        script.check_receipts(game, on_disk(game.file), (on_disk(game.receipt_files[1]),))


def test_the_claim_file_is_checked_against_the_claim_game() -> None:
    script = load_script("regen_sample_games")  # fresh: this test changes its CLAIMS
    data = on_disk(script.CLAIM_GAME.file)
    assert script.claim_file(data)[0] == on_disk("disputed/wrong-claim.claim.json")
    script.CLAIMS = (*script.CLAIMS[:1], {"seat": 0, "hand": 1, "placed": 12}, *script.CLAIMS[2:])
    with pytest.raises(script.CorpusError, match=r"found \{1: 13, 2: 8\}"):
        script.claim_file(data)


# -- the edit kinds ---------------------------------------------------------------------------

BASE = "valid/peer2peer-3p-hold-off.jsonl"


def lines(data: bytes) -> list[bytes]:
    return data.splitlines()


def test_resealing_a_valid_log_with_its_own_key_changes_nothing() -> None:
    data = on_disk(BASE)
    values = [json.loads(line) for line in lines(data)]
    assert reseal(values, key=regen().TABLE_KEY) == lines(data)


def test_the_line_edits_move_lines_and_nothing_else() -> None:
    base = lines(on_disk(BASE))
    key = regen().TABLE_KEY

    def edited(*edits: object) -> list[bytes]:
        return lines(apply_edits(on_disk(BASE), edits, table_key=key, read=on_disk))

    assert edited(Remove(3, {})) == base[:2] + base[3:]
    assert edited(Duplicate(3, {})) == [*base[:3], base[2], *base[3:]]
    assert edited(Swap(3, {})) == [*base[:2], base[3], base[2], *base[4:]]
    assert edited(Truncate(3, {})) == base[:3]
    assert edited(Splice(1, {}, BASE, {})) == base
    assert edited(Reseal(5)) == base


def test_every_edit_checks_its_line() -> None:
    data, key = on_disk(BASE), regen().TABLE_KEY
    genesis = {"kind": "genesis"}
    player = regen().PLAYER_KEYS[0]
    for edit in (
        Remove(2, genesis),
        Duplicate(2, genesis),
        Swap(2, genesis),
        Truncate(2, genesis),
        Splice(2, genesis, BASE, {}),
        SetFields(2, genesis, {"t_ms": 1}),
        SetRules(2, genesis, {"scoring.per_demon_card": 0}),
        SignSubmission(2, genesis, player),
        CoSign(2, genesis, (player,)),
    ):
        with pytest.raises(EditError, match="line 2 should hold kind='genesis'; it holds kind="):
            apply_edits(data, (edit,), table_key=key, read=on_disk)
    with pytest.raises(EditError, match=r"line 2 of .* should hold kind='move'; it holds kind="):
        apply_edits(data, (Splice(2, {}, BASE, {"kind": "move"}),), table_key=key, read=on_disk)
    with pytest.raises(EditError, match="line 83 does not exist: the log has 82 lines"):
        apply_edits(data, (Reseal(83),), table_key=key)
    with pytest.raises(EditError, match="line 1 holds a genesis record, not a submission"):
        apply_edits(data, (SignSubmission(1, {}, player),), table_key=key)
    for edit in (SetRules(2, {}, {"scoring.per_demon_card": 0}), CoSign(2, {}, (player,))):
        with pytest.raises(EditError, match="line 2 holds a hand_start record, not a genesis"):
            apply_edits(data, (edit,), table_key=key)
    with pytest.raises(EditError, match=r"line 1: the rules document has no scoring\.per_joker"):
        apply_edits(data, (SetRules(1, {}, {"scoring.per_joker": 5}),), table_key=key)


def verified(data: bytes, tmp_path: Path) -> Any:
    path = tmp_path / "game.jsonl"
    path.write_bytes(data)
    return verify_log(path, Settings(raw_public_bytes(regen().TABLE_KEY)))


def test_set_rules_changes_the_document_and_its_digest_but_not_its_name(tmp_path: Path) -> None:
    data, key = on_disk(BASE), regen().TABLE_KEY
    changes = {"scoring.per_foundation_card": 10, "scoring.per_demon_card": 0}
    ours = lines(apply_edits(data, (SetRules(1, {}, changes),), table_key=key))
    before, after = (json.loads(line)["body"] for line in (lines(data)[0], ours[0]))
    assert after["rules"]["scoring"] == {"per_foundation_card": 10, "per_demon_card": 0}
    assert after["rules"]["name"] == before["rules"]["name"] == "peer2peer"
    assert {k: v for k, v in after["rules"].items() if k != "scoring"} == {
        k: v for k, v in before["rules"].items() if k != "scoring"
    }
    assert after["rules_sha256"] == Rules.from_document(after["rules"]).digest()
    assert after["rules_sha256"] != before["rules_sha256"]
    assert ours[1:] == lines(data)[1:]
    report = verified(b"".join(line + b"\n" for line in ours), tmp_path)
    assert report.finding is not None  # no signature renewed
    assert report.finding.code is VerifyCode.BAD_TABLE_SIGNATURE


def test_co_signing_signs_the_genesis_as_it_now_reads(tmp_path: Path) -> None:
    """A keyed genesis changed and co-signed again: every co-signature verifies, so the
    verifier's next check of the genesis (the entropy) is the one that refuses it."""
    script = regen()
    data, keys = on_disk(script.P2P_4P), script.P2P_4P_KEYS
    edits = (SetFields(1, {}, {"commitment": "ab" * 32}), CoSign(1, {}, keys), Reseal(1))
    ours = apply_edits(data, edits, table_key=script.TABLE_KEY)
    genesis = json.loads(ours.splitlines()[0])
    message = canonical_bytes(genesis["body"])
    for key, signature in zip(keys, genesis["sigs"]["players"], strict=True):
        public = raw_public_bytes(key)
        assert verify(public, RecordKind.GENESIS, message, signature, FORMAT_VERSION) is None
    report = verified(ours, tmp_path)
    assert report.finding is not None
    assert (report.finding.code, report.finding.line) == (VerifyCode.ENTROPY_NOT_BOUND, 1)


def test_a_live_reseal_has_the_players_sign_the_history_they_are_shown(tmp_path: Path) -> None:
    """A keyed submission held back: rewritten after the fact, the submissions after it
    name records their players never saw and their signatures fail; made up live, the
    players sign what they are shown and accept the result, and the log verifies."""
    script = regen()
    data, keys = on_disk(script.N4P), script.N4P_KEYS
    held = (
        *(Swap(script.HELD + step, script.HELD_BODY) for step in range(script.HELD_BY)),
        SetFields(script.HELD + script.HELD_BY, {}, {"t_ms": script.HELD_TO_MS}),
    )
    after = verified(
        apply_edits(data, (*held, Reseal(script.HELD)), table_key=script.TABLE_KEY), tmp_path
    )
    assert after.finding is not None
    assert after.finding.code is VerifyCode.BAD_PLAYER_SIGNATURE
    live = apply_edits(data, (*held, Reseal(script.HELD, players=keys)), table_key=script.TABLE_KEY)
    report = verified(live, tmp_path)
    assert report.verdict is Verdict.VERIFIED and report.accepted_by == (0, 1, 2, 3)
    final = json.loads(live.splitlines()[-1])
    for key, signature in zip(keys, final["sigs"]["accepts"], strict=True):
        message = canonical_bytes(final["body"])
        assert verify(raw_public_bytes(key), ACCEPT, message, signature, FORMAT_VERSION) is None
    # What did not change keeps its signatures: the lines before, and a statement whose
    # seen still names the same record.
    assert live.splitlines()[: script.HELD - 1] == data.splitlines()[: script.HELD - 1]
