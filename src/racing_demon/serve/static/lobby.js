// lobby.js: the lobby page (`/`): this browser's key, the player's name, creating a table,
// the open tables with a button per free person's seat, and the finished games. It talks to
// the server only through RDClient (client.js) and draws with plain DOM, every text from the
// server set through textContent, never as markup (docs/playing.md).
const RDLobby = (() => {
  "use strict";

  const NAME_KEY = "racing-demon.player-name";
  const REFRESH_MS = 3000;
  const BOTS = [["easy", "bot (easy)"], ["normal", "bot (normal)"], ["hard", "bot (hard)"]];
  // The built-in profiles' seat counts (docs/profiles.md): the form offers no other.
  const SEATS_OF = { table: [2, 8], peer2peer: [2, 4], nertz: [2, 4] };
  const VERDICT_WORDS = {
    verified: "verified", does_not_verify: "DOES NOT VERIFY", unfinished: "unfinished",
    unreadable: "unreadable", unpinned: "unpinned",
  };

  const $ = (id) => document.getElementById(id);

  // The renderer's way to build an element (table.js), as the table page does.
  const { el } = RDTable;

  function showError(error) {
    const box = $("rd-lobby-error");
    if (error === null) {
      box.hidden = true;
      box.textContent = "";
      return;
    }
    const code = error && error.code ? error.code : "ERROR";
    // A LobbyError's message already starts with its code: its detail is the rest.
    const message = error?.detail ?? error?.message ?? String(error);
    box.dataset.code = code;
    box.textContent = `${code}: ${message}`;
    box.hidden = false;
  }

  // -- the key --------------------------------------------------------------------

  let exportUrl = null;

  async function showKey(key) {
    const id = $("rd-key-id");
    id.textContent = key.id.slice(0, 16);
    id.dataset.id = key.id;
    id.title = `the whole key id (SHA-256 of your public key): ${key.id}`;
    const made = new Date(key.created ?? NaN);
    $("rd-key-state").textContent = Number.isNaN(made.getTime()) ? "" : `(made ${made.toLocaleString()})`;
    const pub = await RDClient.keys.exportPub();
    const link = $("rd-export-key");
    if (exportUrl !== null) URL.revokeObjectURL(exportUrl);
    exportUrl = URL.createObjectURL(new Blob([pub.text], { type: "application/x-pem-file" }));
    link.href = exportUrl;
    link.download = pub.name;
    link.removeAttribute("aria-disabled");
  }

  async function startOver() {
    const sure = window.confirm(
      "Make a new key and throw this one away?\n\nGames in progress with the old key can no " +
      "longer be played from this browser: the seats you joined with it stay signed by it.");
    if (!sure) return;
    try {
      await showKey(await RDClient.keys.startOver());
    } catch (error) {
      showError(error);
    }
  }

  // -- the name ------------------------------------------------------------------

  function playerName() {
    return $("rd-player-name").value.trim();
  }

  function needName() {
    if (playerName()) return true;
    showError({ code: "NO_NAME", message: "type your name first (under Your key): the other players see it" });
    $("rd-player-name").focus();
    return false;
  }

  // -- creating a table ------------------------------------------------------------

  function seatKindSelect(seat, value) {
    const select = el("select", { class: "rd-seat-kind", "data-seat": seat, id: `rd-seat-kind-${seat}` });
    select.append(el("option", { value: "person", text: "a person (joins with a name)" }));
    for (const [bot, words] of BOTS) select.append(el("option", { value: `bot:${bot}`, text: words }));
    select.value = value;
    return el("p", { class: "rd-field" }, el("label", { for: select.id, text: `Seat ${seat}` }), select);
  }

  function drawSeatKinds() {
    const [low, high] = SEATS_OF[$("rd-profile").value] ?? [2, 8];
    const count = $("rd-seat-count");
    for (const option of count.options) option.disabled = Number(option.value) < low || Number(option.value) > high;
    if (Number(count.value) > high) count.value = String(high);
    const box = $("rd-seat-kinds");
    const kept = [...box.querySelectorAll("select.rd-seat-kind")].map((select) => select.value);
    box.replaceChildren();
    for (let seat = 0; seat < Number(count.value); seat++) {
      // By default: you in seat 0, a second person in seat 1, bots after.
      box.append(seatKindSelect(seat, kept[seat] ?? (seat < 2 ? "person" : "bot:normal")));
    }
  }

  async function create(event) {
    event.preventDefault();
    showError(null);
    const seats = [...document.querySelectorAll("select.rd-seat-kind")].map((select) =>
      select.value === "person" ? { kind: "person" } : { kind: "bot", bot: select.value.slice(4) });
    const joinFirst = seats[0].kind === "person";
    if (joinFirst && !needName()) return;
    const button = $("rd-create-submit");
    button.disabled = true;
    try {
      const answer = await RDClient.lobby.createTable({
        name: $("rd-table-name").value.trim() || `${playerName() || "A"}'s table`,
        profile: $("rd-profile").value,
        seats,
        max_rtt_ms: Number($("rd-max-rtt").value),
      });
      if (joinFirst) {
        await RDClient.lobby.join(answer.game, 0, playerName());
        window.location.assign(`/play/${answer.game}`);
        return;
      }
      await refresh();
    } catch (error) {
      showError(error);
    } finally {
      button.disabled = false;
    }
  }

  // -- the lists --------------------------------------------------------------------

  async function join(game, seat) {
    showError(null);
    if (!needName()) return;
    try {
      await RDClient.lobby.join(game, seat, playerName());
      window.location.assign(`/play/${game}`);
    } catch (error) {
      showError(error);
    }
  }

  // docs/protocol.md §9, "Round trips": measured by the server, shown before the deal.
  function slowSeats(table) {
    return table.seats.filter((seat) => seat.rtt_ms !== null && seat.rtt_ms > table.max_rtt_ms);
  }

  function seatWords(seat, table) {
    if (seat.kind === "bot") return `seat ${seat.seat}: ${seat.name}`;
    if (!seat.taken) return `seat ${seat.seat}: free`;
    if (seat.rtt_ms === null) return `seat ${seat.seat}: ${seat.name}`;
    const slow = seat.rtt_ms > table.max_rtt_ms ? `, above this table's ${table.max_rtt_ms} ms` : "";
    return `seat ${seat.seat}: ${seat.name} (round trip ${seat.rtt_ms} ms${slow})`;
  }

  async function tableRow(table) {
    const mine = await RDClient.seats.forGame(table.game);
    const row = el("li", { "data-game": table.game, "data-state": table.state },
      el("strong", { text: table.name }),
      el("span", { class: "rd-meta", text: ` · ${table.profile} · ${table.state}` }));
    row.append(el("p", { class: "rd-seat-list", text: table.seats.map((seat) => seatWords(seat, table)).join(" · ") }));
    const slow = slowSeats(table);
    if (slow.length) {
      row.append(el("p", { class: "rd-warning rd-slow", role: "note", "data-seats": slow.map((seat) => seat.seat).join(","),
        text: `Warning: ${slow.map((seat) => `seat ${seat.seat}`).join(", ")} ${slow.length === 1 ? "has" : "have"} a round trip above this table's limit of ${table.max_rtt_ms} ms: where two players race for one card, the server takes whichever arrives first, so a slow connection loses more races.` }));
    }
    const buttons = el("div", { class: "rd-buttons" });
    if (mine) {
      buttons.append(el("a", { class: "rd-button rd-return", href: `/play/${table.game}`, text: `Back to my seat (${mine.seat})` }));
    } else if (table.state === "waiting") {
      for (const seat of table.seats) {
        if (seat.kind !== "person" || seat.taken) continue;
        const button = el("button", { type: "button", class: "rd-join", "data-game": table.game, "data-seat": seat.seat, text: `Join seat ${seat.seat}` });
        button.addEventListener("click", () => join(table.game, seat.seat));
        buttons.append(button);
      }
    }
    buttons.append(el("a", { class: "rd-watch", href: `/play/${table.game}`, text: "Watch" }));
    row.append(buttons);
    return row;
  }

  function resultWords(game) {
    if (!game.result) return "no result";
    const totals = game.result.totals.map((total, seat) => `${game.players[seat] ?? `seat ${seat}`} ${total}`).join(", ");
    const winners = game.result.winners.map((seat) => game.players[seat] ?? `seat ${seat}`).join(" and ");
    return `${totals}; won by ${winners || "nobody"}`;
  }

  async function gameRow(game) {
    const verdict = VERDICT_WORDS[game.verdict] ?? game.verdict;
    const mine = await RDClient.seats.forGame(game.game);
    const links = el("div", { class: "rd-buttons" });
    const log = RDClient.gameHref(game.log);
    const view = RDClient.gameHref(game.view);
    if (log) links.append(el("a", { href: log, download: `${game.game}.jsonl`, class: "rd-log", text: "Log" }));
    if (view) links.append(el("a", { href: view, class: "rd-view", text: "View page" }));
    // A game this browser played: its own copy and receipts are on the table page.
    if (mine) links.append(el("a", { href: `/play/${game.game}`, class: "rd-mine", text: "My copy and receipts" }));
    return el("li", { "data-game": game.game, "data-verdict": game.verdict },
      el("strong", { text: game.table }),
      el("span", { class: "rd-meta", text: ` · ${game.profile} · ${game.time}` }),
      el("p", { text: `${game.players.join(", ")}: ${resultWords(game)}` }),
      el("p", { class: "rd-verdict-line", text: `Server's verifier: ${verdict}${game.code ? ` (${game.code})` : ""}` }),
      links);
  }

  let shownTables = "";
  let shownGames = "";

  // Redrawn only when the answer changed, so that a focused button is not swept away.
  async function refresh() {
    const [tables, games] = await Promise.all([RDClient.lobby.tables(), RDClient.lobby.games()]);
    const tablesText = JSON.stringify(tables);
    if (tablesText !== shownTables) {
      const rows = await Promise.all(tables.map(tableRow));
      const list = $("rd-open-tables");
      list.replaceChildren(...rows);
      if (!rows.length) list.append(el("li", { class: "rd-empty", text: "No open table: create one." }));
      shownTables = tablesText;
    }
    const gamesText = JSON.stringify(games);
    if (gamesText !== shownGames) {
      const list = $("rd-finished");
      list.replaceChildren(...await Promise.all(games.map(gameRow)));
      if (!games.length) list.append(el("li", { class: "rd-empty", text: "No finished game yet." }));
      shownGames = gamesText;
    }
  }

  async function keepRefreshing() {
    try {
      await refresh();
    } catch (error) {
      showError({ code: error.code ?? "OFFLINE", message: `the lobby could not be read: ${error.message ?? error}` });
    }
    window.setTimeout(keepRefreshing, REFRESH_MS);
  }

  async function start() {
    const name = $("rd-player-name");
    name.value = window.localStorage.getItem(NAME_KEY) ?? "";
    name.addEventListener("input", () => window.localStorage.setItem(NAME_KEY, name.value));
    $("rd-profile").addEventListener("change", drawSeatKinds);
    $("rd-seat-count").addEventListener("change", drawSeatKinds);
    $("rd-create").addEventListener("submit", create);
    $("rd-new-key").addEventListener("click", startOver);
    drawSeatKinds();
    keepRefreshing();
    try {
      await showKey(await RDClient.keys.load());
    } catch (error) {
      // Web Crypto's Ed25519 exists only in a secure context (https, or a loopback address).
      $("rd-key-state").textContent = "no key: this browser cannot make one here";
      showError({ code: error.code ?? "NO_KEY", message: `${error.message ?? error}. A browser makes keys only on https or on this machine's own address (docs/serving.md).` });
    }
  }

  if (document.body.classList.contains("rd-lobby-page")) start();

  return Object.freeze({ refresh });
})();
