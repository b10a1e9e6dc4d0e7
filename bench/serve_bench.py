"""`racing-demon serve` under load: N concurrent 4-seat tables of client bots over loopback
WebSockets, against a server this bench starts on a fresh temporary data folder.

    python bench/serve_bench.py [--tables 10 50 200] [--seconds 20] [--pace-ms 250]
                                [--light] [--sigkill] [--lossy] [--flood FRAMES_PER_S]
                                [--repeat R] [--outages K] [--outage-s D]
                                [--planned-restart] [--drain-s D]
                                [--data-parent DIR]
                                [--show-problems] [--json-out FILE]

Every seat is this project's test client (tests/serve/player.py), joined through the lobby
with its own key, playing as the hard bot (``sim.bots.choose_move``) on the position its
pack and its copy of the log give (``SeatView``: the protocol sends each seat its own
pack) and looking again every ``--pace-ms``
(about 250 ms: a human's pace; each look that finds a move sends one). Once every table
has dealt, the bench measures for ``--seconds``:

* submissions answered per second (every receipt or error);
* p50 and p99 from sending a submission to its receipt, at the client;
* the server's CPU per submission (user + system from /proc/PID/stat);
* records per fsync, from ``GET /api/stats`` (the journal's ``records`` and ``batches``,
  docs/protocol.md §3);
* the client process's own CPU, to tell a loaded client from a slow server;
* the problems the clients found in what the server sent (``ClientRefusal``: a line, pack,
  receipt or final that does not check; a client that finds one leaves its game), by
  code; ``--show-problems`` prints each one.

Each client checks every line of its copy (chain and table signature) unless ``--light``:
at 200 tables that is 800 clients in this one process. ``--sigkill`` ends each run with a
SIGKILL of the server, a restart on the same folder and the clients' catch-up, then counts
receipts the clients got that name a record the logs no longer hold (target: none).
``--lossy`` puts tests/serve/lossy_proxy.py between the clients and the server (a fifth of
the submit and receipt frames dropped, every connection cut within 1-8 s) and has the
clients send each unanswered submission again every second and after each reconnect
(docs/protocol.md §10, "Sending again", issue 35): the figures then count what a lossy
network costs (p95 and p99 include the resends; ``resent`` per submission; ``timeouts``
are submissions lost, target none).
``--outages K`` cuts the network K times in the measured window (a proxy between clients
and server drops every connection and refuses new ones for ``--outage-s``, then lets them
through), and gives, from each return of the network, the time until each seat has synced
again and until its next receipt (issue 35's target: playing again within 1 s, p95; the
test client retries every 0.2 s, client.js every 0.75 s at most; its next receipt waits
for its next look, ``--pace-ms``, too).
``--planned-restart`` starts the server with ``--drain D`` (``--drain-s``, default 2) and,
halfway through the window, sends it SIGTERM, waits for it to exit, and starts it again on
its folder (issue 35, point 3: "a planned restart loses 0 moves and pauses a table <= 5 s
plus the restart time"): how many seats were told (``stopping``), the drain and the
restart (exit to listening), each seat's pause from its last receipt before the exit to
its first after the restart and the part of it after the restart (p50, p95, max), seats
not back, and the receipts that name a record the logs no longer hold (target: none).
After a restart or a ``--sigkill`` the JSON says what the logs hold of it (``notes``): how
many tables logged a ``pause``, its causes and down times, and the ``lag`` records.
``--flood F`` measures each table count ``--repeat`` times without and with one more seat,
at a table of its own beside a server bot, sending ``F`` well-formed submit frames a second
(wrong numbers: each is refused, by the table or, past 10 a second, by the rate limit,
docs/protocol.md §9), the runs interleaved; the window opens once that seat's table has
dealt too (a flooding seat that stops before ends the run). The summary gives what each
flooded run added to the other seats' p99 over the quiet run before it (issue 35's target:
at most 5 ms, the median against it) and how many frames the flooder sent and had answered.

Issue 31's target: 200 tables with p99 <= 50 ms and no acknowledged submission lost under
SIGKILL. Nothing is written into the repository (the data folder is a temporary one); the
table goes to standard error, the JSON to standard output (and ``--json-out``).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from results import publish  # noqa: E402
from serve.lossy_proxy import LossyProxy  # noqa: E402
from serve.player import (  # noqa: E402
    Answer,
    Player,
    bot_strategy,
    create_table,
    http,
    join,
    steady_pause,
)
from serve.server import Server  # noqa: E402

from racing_demon.log.receipts import check_receipt_line, record_reference  # noqa: E402
from racing_demon.sim.bots import HARD  # noqa: E402

SEATS = 4
TARGET_P99_MS = 50.0
START_SECONDS = 180.0  # for every table to deal, at most
CATCH_UP_SECONDS = 60.0
TARGET_FLOOD_P99_MS = 5.0  # issue 35: what one flooding seat may add to the others' p99
RESEND_S = 1.0  # --lossy: docs/protocol.md §10, what client.js does
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far (fields 14 and 15 of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def journal_stats(server: Server) -> dict[str, Any] | None:
    status, data = http(server.base, "GET", "/api/stats")
    if status != 200:
        return None
    value = json.loads(data)
    journal = value.get("journal", value) if isinstance(value, dict) else None
    return journal if isinstance(journal, dict) else None


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def seat_tables(
    server: Server, tables: int, options: argparse.Namespace, play_base: str
) -> list[Player]:
    """Create ``tables`` tables of four people and join every seat with a client, which
    plays through ``play_base``."""
    players: list[Player] = []

    for table in range(tables):
        game = await asyncio.to_thread(
            create_table,
            server.base,
            [{"kind": "person"}] * SEATS,
            name=f"bench {table}",
            profile="nertz",
        )
        for seat in range(SEATS):
            joined = await asyncio.to_thread(join, server.base, game, seat, f"t{table}s{seat}")
            players.append(
                Player.for_seat(
                    play_base,
                    joined,
                    strategy=bot_strategy(HARD),
                    pause=steady_pause(options.pace_ms),
                    check_copy=not options.light,
                    timeout=60.0 if options.lossy else 30.0,
                    resend_s=RESEND_S if options.lossy else None,
                )
            )
    return players


async def until(check: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.1)


def dealt(player: Player) -> bool:
    return player.copy is not None and player.copy.hand is not None


def lost_receipts(server: Server, players: list[Player]) -> tuple[list[str], int]:
    """Receipts the clients got whose record the server's logs do not hold, each named;
    and how many receipts of a logged submission were checked."""
    logs: dict[str, list[bytes]] = {}
    lost = []
    checked_count = 0
    for player in players:
        if player.game not in logs:
            status, data = http(server.base, "GET", f"/games/{player.game}.jsonl")
            logs[player.game] = data.splitlines() if status == 200 else []
        lines = logs[player.game]
        assert player.copy is not None
        for number, line in enumerate(player.receipts, 1):
            checked = check_receipt_line(number, line, player.copy.table_key)
            receipt = getattr(checked, "receipt", None)
            if receipt is None or not receipt.logged:
                continue
            checked_count += 1
            held = receipt.seq < len(lines)
            if not held or record_reference(lines[receipt.seq], receipt.v) != receipt.record:
                lost.append(
                    f"game {player.game} seat {player.seat} receipt {number}: record "
                    f"{receipt.seq} of a log of {len(lines)} lines "
                    f"({'another record there' if held else 'missing'})"
                )
    return lost, checked_count


def notes_logged(server: Server, players: list[Player]) -> dict[str, Any]:
    """What the tables' logs hold of their notes (format v3, docs/log-format.md §6): how
    many logged a pause, its causes and down times, and their lag records."""
    pauses: list[dict[str, Any]] = []
    lags = 0
    games = sorted({player.game for player in players})
    for game in games:
        status, data = http(server.base, "GET", f"/games/{game}.jsonl")
        bodies = [json.loads(line)["body"] for line in data.splitlines()] if status == 200 else []
        pauses += [body for body in bodies if body["kind"] == "pause"]
        lags += sum(body["kind"] == "lag" for body in bodies)
    down = [float(pause["down_ms"]) for pause in pauses]
    return {
        "tables": len(games),
        "pauses": len(pauses),
        "causes": dict(Counter(pause["cause"] for pause in pauses)),
        "down_ms": {q: round(percentile(down, f)) for q, f in QUANTILES} if down else None,
        "lag_records": lags,
    }


def problem_tally(players: list[Player]) -> dict[str, int]:
    """How many problems the clients found, by their code."""
    return dict(Counter(problem.code for player in players for problem in player.problems))


def show_problems(players: list[Player]) -> None:
    """Each client's problems, a line each (``--show-problems``), to standard error."""
    for player in players:
        for problem in player.problems:
            print(f"game {player.game} seat {player.seat}: {problem}", file=sys.stderr)


async def outages(proxy: LossyProxy, options: argparse.Namespace, returns: list[float]) -> None:
    """``--outages`` outages of ``--outage-s`` spread over the measured window; the time
    the network came back after each, in ``returns``."""
    gap = options.seconds / options.outages - options.outage_s
    for _ in range(options.outages):
        await asyncio.sleep(max(gap / 2, 0.5))
        await proxy.outage()
        await asyncio.sleep(options.outage_s)
        proxy.restore()
        returns.append(time.monotonic())
        await asyncio.sleep(max(gap / 2, 0.5))


async def planned_restart(
    server: Server, players: list[Player], options: argparse.Namespace
) -> dict[str, Any]:
    """SIGTERM halfway through the window, the drain, the exit, a start on the same folder
    (``--planned-restart``); what the seats saw of it."""
    await asyncio.sleep(options.seconds / 2)
    asked = time.monotonic()
    server.terminate()
    code = await asyncio.to_thread(server.wait, options.drain_s + 60)
    exited = time.monotonic()
    await asyncio.to_thread(server.restart)
    back = time.monotonic()
    for player in players:
        player.base = server.base
    await asyncio.sleep(max(options.seconds / 2 - (back - asked), 3.0))
    pauses, after_back, missing = [], [], 0
    for player in players:
        before = [a.at for a in player.answers if a.at < exited]
        after = [a.at for a in player.answers if a.at > back]
        if not before or not after:
            missing += 1
            continue
        pauses.append((after[0] - before[-1]) * 1000)
        after_back.append((after[0] - back) * 1000)
    return {
        "exit_code": code,
        "told": sum(bool(p.stopping) for p in players),
        "drain_ms": round((exited - asked) * 1000),
        "restart_ms": round((back - exited) * 1000),
        "pause_ms": {q: round(percentile(pauses, f), 1) for q, f in QUANTILES},
        "after_restart_ms": {q: round(percentile(after_back, f), 1) for q, f in QUANTILES},
        "not_back": missing,
    }


def back_after_outages(players: list[Player], returns: list[float]) -> dict[str, Any]:
    """From each return of the network, each seat's time to its next sync and to its next
    receipt (p50, p95, max, in ms), and how many seats were not back before the next."""
    synced, answered, missing = [], [], 0
    ends = [*returns[1:], float("inf")]
    for back, end in zip(returns, ends, strict=True):
        for player in players:
            sync = next((at for at in player.synced_at if back <= at < end), None)
            answer = next((a.at for a in player.answers if back <= a.at < end), None)
            if sync is None or answer is None:
                missing += 1
                continue
            synced.append((sync - back) * 1000)
            answered.append((answer - back) * 1000)
    return {
        "outages": len(returns),
        "synced_ms": {q: round(percentile(synced, f), 1) for q, f in QUANTILES},
        "receipt_ms": {q: round(percentile(answered, f), 1) for q, f in QUANTILES},
        "not_back": missing,
    }


QUANTILES = (("p50", 0.50), ("p95", 0.95), ("max", 1.0))


async def measure(
    tables: int, options: argparse.Namespace, flood: float | None = None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(
        prefix="racing-demon-serve-bench-", dir=options.data_parent
    ) as directory:
        folder = Path(directory)
        drain = ("--drain", str(options.drain_s)) if options.planned_restart else ()
        server = Server(folder / "data", folder / "output", extra=drain)
        await asyncio.to_thread(server.start, 0)
        proxy = None
        if options.lossy or options.outages:
            proxy = LossyProxy(
                server.base,
                drop_share=0.2 if options.lossy else 0.0,
                lifetime_s=(1.0, 8.0) if options.lossy else None,
            )
        flooder: asyncio.subprocess.Process | None = None
        try:
            if proxy is not None:
                await proxy.__aenter__()
            players = await seat_tables(
                server, tables, options, server.base if proxy is None else proxy.base
            )
            deadline = time.monotonic() + START_SECONDS + options.seconds + CATCH_UP_SECONDS
            tasks = [asyncio.create_task(player.run(deadline)) for player in players]
            flooder_dealt = None
            if flood is not None:
                flooder = await flood_seat(server.base, flood)
                flooder_dealt = asyncio.create_task(lines_of(flooder).readline())

            def ready() -> bool:
                if flooder_dealt is None:
                    return all(map(dealt, players))
                if flooder_dealt.done() and flooder_dealt.result() != b"dealt\n":
                    raise RuntimeError("the flooding seat ended before its table dealt")
                return all(map(dealt, players)) and flooder_dealt.done()

            await until(ready, START_SECONDS, "tables to deal")
            if flooder is not None:
                await tell(flooder, "mark")
            before = [len(player.answers) for player in players]
            stats_before = journal_stats(server)
            server_cpu, client_cpu = cpu_seconds(server.pid), time.process_time()
            started = time.monotonic()
            returns: list[float] = []
            restart = None
            if options.outages:
                assert proxy is not None
                await outages(proxy, options, returns)
            elif options.planned_restart:
                restart = await planned_restart(server, players, options)
            await asyncio.sleep(max(0.0, started + options.seconds - time.monotonic()))
            elapsed = time.monotonic() - started
            if flooder is not None:
                await tell(flooder, "stop")
            server_cpu = cpu_seconds(server.pid) - server_cpu
            client_cpu = time.process_time() - client_cpu
            stats_after = journal_stats(server)
            window: list[Answer] = [
                answer
                for player, start in zip(players, before, strict=True)
                for answer in player.answers[start:]
            ]
            # Read once the window's figures are taken: the seat may take a while to go.
            flooded = None if flooder is None else await flood_window(flooder)
            answered = len(window)
            latencies = [answer.seconds * 1000 for answer in window if answer.receipt]
            result: dict[str, Any] = {
                "tables": tables,
                "seats": tables * SEATS,
                "seconds": round(elapsed, 1),
                "submissions_per_s": round(answered / elapsed, 1),
                "p50_ms": round(percentile(latencies, 0.50), 2),
                "p95_ms": round(percentile(latencies, 0.95), 2),
                "p99_ms": round(percentile(latencies, 0.99), 2),
                "server_cpu_us_per_submission": round(server_cpu / max(answered, 1) * 1e6, 1),
                "server_cpu_share": round(server_cpu / elapsed, 2),
                "client_cpu_share": round(client_cpu / elapsed, 2),
                "timeouts": sum(p.timeouts for p in players),
                "client_problems": sum(len(p.problems) for p in players),
                "client_problems_by_code": problem_tally(players),
                "p99_vs_target": round(percentile(latencies, 0.99) / TARGET_P99_MS, 2),
            }
            if returns:
                result.update(back_after_outages(players, returns))
            if restart is not None:
                result["planned_restart"] = restart
            if flooded is not None:
                result["flood_frames_per_s"] = round(flooded["sent"] / elapsed, 1)
                result["flood_receipts"] = flooded["receipts"]
                result["flood_errors"] = flooded["errors"]
                result["flood_reasons"] = flooded["reasons"]
                result["flood_closed_early"] = flooded["closed_early"]
            result["flood"] = flood is not None
            if proxy is not None:
                result["resent_per_submission"] = round(
                    sum(p.resent for p in players) / max(sum(len(p.answers) for p in players), 1),
                    3,
                )
                result["frames_dropped"] = dict(proxy.dropped)
                result["frames_passed"] = dict(proxy.passed)
                result["connections_cut"] = proxy.cuts
            if stats_before is None or stats_after is None:
                result["records_per_fsync"] = "missing (no GET /api/stats)"
            else:
                records = stats_after.get("records", 0) - stats_before.get("records", 0)
                batches = stats_after.get("batches", 0) - stats_before.get("batches", 0)
                result["records_per_fsync"] = round(records / max(batches, 1), 1)
            if options.sigkill:
                await asyncio.to_thread(server.kill)
                await asyncio.to_thread(server.restart)
                if proxy is None:
                    for player in players:
                        player.base = server.base
                else:
                    proxy.upstream = server.base
                await asyncio.sleep(5)  # the clients reconnect and catch up
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if options.show_problems:
                show_problems(players)
            if options.sigkill or options.planned_restart:  # every receipt against the logs
                lost, checked = await asyncio.to_thread(lost_receipts, server, players)
                result["receipts_checked"] = checked
                result["lost_after_sigkill" if options.sigkill else "lost_after_restart"] = len(
                    lost
                )
                result["lost_examples"] = lost[:5]
                result["notes"] = await asyncio.to_thread(notes_logged, server, players)
            return result
        finally:
            if flooder is not None and flooder.returncode is None:
                flooder.kill()
                await flooder.wait()
            if proxy is not None:
                await proxy.__aexit__()
            server.stop()


async def flood_seat(base: str, rate: float) -> asyncio.subprocess.Process:
    """bench/flood_seat.py flooding a table of its own at ``base``, in its own process."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(Path(__file__).with_name("flood_seat.py")),
        base,
        str(rate),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


def lines_of(process: asyncio.subprocess.Process) -> asyncio.StreamReader:
    assert process.stdout is not None
    return process.stdout


async def tell(process: asyncio.subprocess.Process, line: str) -> None:
    assert process.stdin is not None
    process.stdin.write(line.encode() + b"\n")
    await process.stdin.drain()


async def flood_window(flooder: asyncio.subprocess.Process) -> dict[str, Any]:
    """What the flooding seat, told to ``stop``, sent and had answered since ``mark``."""
    said = await asyncio.wait_for(lines_of(flooder).readline(), CATCH_UP_SECONDS)
    await flooder.wait()
    if flooder.returncode != 0 or not said:
        raise RuntimeError(f"the flooding seat failed (exit {flooder.returncode})")
    flooded: dict[str, Any] = json.loads(said)
    return flooded


COLUMNS = (
    ("tables", "tables"),
    ("submissions_per_s", "subm/s"),
    ("p50_ms", "p50 ms"),
    ("p95_ms", "p95 ms"),
    ("p99_ms", "p99 ms"),
    ("flood_frames_per_s", "flood/s"),
    ("server_cpu_us_per_submission", "srv us/subm"),
    ("server_cpu_share", "srv cpu"),
    ("client_cpu_share", "cli cpu"),
    ("records_per_fsync", "rec/fsync"),
    ("timeouts", "timeouts"),
    ("client_problems", "problems"),
    ("lost_after_sigkill", "lost"),
)


def flood_summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per table count: what the flood added to the other seats' p99, each flooded run
    against the quiet run just before it (interleaved: the machine's drift cancels), the
    median of those against issue 35's 5 ms, and what the flooder got through."""
    summary = []
    for tables in sorted({row["tables"] for row in rows}):
        runs = [row for row in rows if row["tables"] == tables]
        pairs = [(quiet, loud) for quiet, loud in itertools.pairwise(runs) if loud["flood"]]
        added = sorted(loud["p99_ms"] - quiet["p99_ms"] for quiet, loud in pairs)
        median = added[len(added) // 2]
        summary.append(
            {
                "tables": tables,
                "pairs": len(pairs),
                "p99_ms_quiet": [quiet["p99_ms"] for quiet, _ in pairs],
                "p99_ms_flooded": [loud["p99_ms"] for _, loud in pairs],
                "p99_added_ms": [round(value, 2) for value in added],
                "median_added_vs_target": round(median / TARGET_FLOOD_P99_MS, 2),
                "flood_frames_per_s": [loud.get("flood_frames_per_s") for _, loud in pairs],
                "flood_receipts": [loud.get("flood_receipts") for _, loud in pairs],
            }
        )
    return summary


def table_text(rows: list[dict[str, Any]]) -> str:
    cells = [[title for _, title in COLUMNS]]
    cells += [[str(row.get(key, "-")) for key, _ in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) for line in cells
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument("--seconds", type=float, default=20.0, help="measured per run")
    parser.add_argument("--pace-ms", type=int, default=250, help="a seat's look interval")
    parser.add_argument("--light", action="store_true", help="clients do not check lines")
    parser.add_argument("--sigkill", action="store_true", help="end each run with SIGKILL")
    parser.add_argument(
        "--lossy", action="store_true", help="play through a proxy that drops frames (issue 35)"
    )
    parser.add_argument(
        "--data-parent",
        type=Path,
        help="where the server's data folder goes (default: the system's temporary folder); "
        "/dev/shm takes the disk's fsync out of the figures (not durable: a measurement only)",
    )
    parser.add_argument(
        "--show-problems", action="store_true", help="print each client's problems to stderr"
    )
    parser.add_argument(
        "--flood", type=float, metavar="F", help="also measure with a seat sending F frames/s"
    )
    parser.add_argument("--repeat", type=int, default=1, help="--flood: pairs of runs")
    parser.add_argument("--outages", type=int, default=0, help="network outages in the window")
    parser.add_argument("--outage-s", type=float, default=2.0, help="how long each lasts")
    parser.add_argument(
        "--planned-restart", action="store_true", help="SIGTERM halfway, then start again"
    )
    parser.add_argument("--drain-s", type=int, default=2, help="the server's --drain")
    parser.add_argument("--json-out", type=Path)
    options = parser.parse_args()
    rows = []
    for tables in options.tables:
        for _ in range(options.repeat if options.flood else 1):
            for flood in (None, options.flood) if options.flood else (None,):
                rows.append(asyncio.run(measure(tables, options, flood)))
                print(table_text(rows), file=sys.stderr, flush=True)
    summary = flood_summary(rows) if options.flood else None
    if summary is not None:
        print(json.dumps(summary), file=sys.stderr)
    publish(
        {
            "flood_frames_per_s": options.flood,
            "flood_summary": summary,
            "bench": "serve",
            "pace_ms": options.pace_ms,
            "light_clients": options.light,
            "lossy": options.lossy,
            "data_parent": str(options.data_parent or tempfile.gettempdir()),
            "target_p99_ms": TARGET_P99_MS,
            "runs": rows,
        },
        options.json_out,
    )


if __name__ == "__main__":
    main()
