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

from racing_demon.testing.tamper import (
    Duplicate,
    EditError,
    Remove,
    Reseal,
    SetFields,
    SignSubmission,
    Splice,
    Swap,
    Truncate,
    apply_edits,
    reseal,
)

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
        SignSubmission(2, genesis, player),
    ):
        with pytest.raises(EditError, match="line 2 should hold kind='genesis'; it holds kind="):
            apply_edits(data, (edit,), table_key=key, read=on_disk)
    with pytest.raises(EditError, match=r"line 2 of .* should hold kind='move'; it holds kind="):
        apply_edits(data, (Splice(2, {}, BASE, {"kind": "move"}),), table_key=key, read=on_disk)
    with pytest.raises(EditError, match="line 83 does not exist: the log has 82 lines"):
        apply_edits(data, (Reseal(83),), table_key=key)
    with pytest.raises(EditError, match="line 1 holds a genesis record, not a submission"):
        apply_edits(data, (SignSubmission(1, {}, player),), table_key=key)
