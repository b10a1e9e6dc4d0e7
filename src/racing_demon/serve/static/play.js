// play.js: the table page (`/play/GAME`). It draws the table with RDTable (table.js, the
// renderer the `view` page uses too) and plays through RDClient (client.js), which holds the
// key, checks every record and keeps the evidence. This file judges no move: the server's
// `moves` list says what the seat can play, and a click, a key or a drag only picks one
// entry of it (docs/playing.md, docs/protocol.md); at the end the rules engine
// (play-engine.js) judges the copy, and this file shows what it found. Every text from the server goes in through
// textContent, never as markup.
const RDPlay = (() => {
  "use strict";

  const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
  const RANK_NAMES = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
  const CONNECTION_WORDS = {
    connecting: ["…", "Connecting"], open: ["●", "Connected"], offline: ["○", "Offline: reconnecting"],
    stopped: ["■", "Stopped"],
  };
  const PHASE_WORDS = { playing: "being played", called: "called: the hand is ending", ended: "over" };
  const HAND_END_WORDS = {
    call: "a player called", demon_empty: "a demon pile was emptied",
    blocked: "the table was blocked: nobody could play, even after a stall shift",
    no_centre: "three minutes passed with no card to the centre", abandoned: "five minutes passed with nothing played: abandoned",
    resigned: "a player resigned",
  };
  const FINAL_WORDS = { complete: "the match reached its end", resigned: "a player resigned", abandoned: "the table was abandoned" };
  // Reasons a submission did not land, in words; the code is shown beside them.
  const REASON_WORDS = {
    FOUNDATION_TAKEN: "another card got to that foundation first", TOO_EARLY: "play had not started yet",
    HAND_OVER: "the hand was already over", CARD_MISMATCH: "that card was no longer there",
    WRONG_NUMBER: "its number was out of step (sent again after a reconnect?)", SEEN_UNKNOWN: "the table did not know the last record this page had seen",
    BAD_SIGNATURE: "its signature did not check", NOT_ALLOWED: "the rules do not allow it",
  };
  const LATENCIES_KEPT = 20;
  const REVOKE_AFTER_MS = 60_000;
  const ACCEPT_WINDOW_MS = 15_000;

  const $ = (id) => document.getElementById(id);

  // The renderer's helpers: one way to build an element and to write a card.
  const { el, cardText } = RDTable;

  // -- words ---------------------------------------------------------------------------

  function cardName(face) {
    return `${RANK_NAMES[face[0]] ?? face[0]} of ${SUIT_NAMES[face[1]] ?? face[1]}`;
  }

  // A move's text (docs/rules.md §3) as its parts; `to` and `from` as the text names them.
  function parseMove(text) {
    const parts = text.split(" ");
    const seat = Number(parts[0]);
    const verb = parts[1] ?? "";
    if (["turn", "recycle", "call", "agree", "resign"].includes(verb)) {
      return { text, seat, kind: verb, from: null, to: null, faces: parts.slice(2) };
    }
    const [from, to] = verb.split(">");
    return { text, seat, kind: "card", from, to, faces: parts.slice(2) };
  }

  function fromWords(from) {
    if (from === "demon") return "Demon";
    if (from === "waste") return "Waste";
    return `Work ${from.slice(1)}`;
  }

  function toWords(to) {
    if (to === "f+") return "to a new foundation";
    if (to[0] === "f") return `to foundation ${to.slice(1)}`;
    if (to[0] === "u") return `under work ${to.slice(1)}`;
    return `onto work ${to.slice(1)}`;
  }

  // "Demon 3♥ to foundation 2"; `named`: card names instead of symbols (for aria-label).
  function moveWords(text, named = false) {
    const move = parseMove(text);
    const faces = move.faces.map(named ? cardName : cardText).join(" ");
    switch (move.kind) {
      case "turn": return `Turn the stock: ${faces}`;
      case "recycle": return "Turn the waste over as the new stock";
      case "call": return "Call: my demon is empty, end the hand";
      case "agree": return "Agree to shuffle (a stall shift)";
      case "resign": return "Resign (ends the match against me)";
      default: return `${fromWords(move.from)} ${faces} ${toWords(move.to)}`;
    }
  }

  function clockText(ms) {
    const seconds = Math.max(0, Math.ceil(ms / 1000));
    return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
  }

  // -- what the page holds ---------------------------------------------------------------

  const page = {
    gameId: null,
    game: null,
    seat: null, // this browser's seat, or null: a spectator
    welcome: null,
    backs: null, // from the genesis record
    names: null, // from the genesis record (a reload of an ended game has no welcome)
    lastSeq: -1, // the last record shown
    replayed: false, // the copy held before this page loaded has been read
    events: Promise.resolve(), // events are handled one after another, in order
    rules: null,
    view: null,
    viewShape: "",
    piles: {},
    hand: null,
    phase: null,
    moves: [], // parsed entries of the last `moves`
    selected: null, // {from, pile, index, face}
    underNext: false, // `U` pressed: the next digit is a slide-under target
    stopped: false, // a `problem`: nothing more is played or signed
    ended: false,
    latencies: [],
    totals: [],
    lastHandScores: [],
    clock: { t: 0, at: 0 }, // the table's clock at the last frame, and when it came
    handStartT: null,
    lastCentreT: null,
    lastActionT: null,
    stall: null,
    handEnd: null,
    matchEnd: null,
    final: null,
    finalTimer: null,
    finalAskedAt: null, // when the table asked for the answer (its window starts then)
    downloadsTimer: null,
  };

  function seatName(seat) {
    // The genesis's names are the game's; a welcome before every seat was taken has gaps.
    return page.names?.[seat] ?? page.welcome?.seats?.[seat]?.name ?? `seat ${seat}`;
  }

  function say(text) {
    $("rd-status").textContent = text;
  }

  // -- the table -------------------------------------------------------------------------

  function buildView() {
    const welcome = page.welcome;
    if (!welcome) return;
    const seats = welcome.seats.map((seat) => ({
      seat: seat.seat,
      name: page.names?.[seat.seat] ?? seat.name ?? `seat ${seat.seat} (free)`,
      back: page.backs?.[seat.seat] ?? "",
    }));
    const shape = JSON.stringify([seats, page.seat, page.stopped || page.ended]);
    if (shape === page.viewShape) return;
    page.viewShape = shape;
    // A TableView listens on its containers: a new view gets new ones, so that the old
    // view's listeners go with them.
    for (const id of ["rd-seats", "rd-foundations"]) $(id).replaceWith($(id).cloneNode(false));
    const playing = page.seat !== null && !page.stopped && !page.ended;
    page.view = new RDTable.TableView({
      seatsElement: $("rd-seats"),
      foundationsElement: $("rd-foundations"),
      tableElement: $("rd-table"),
      seats,
      workPiles: welcome.rules?.layout?.work_piles ?? 4,
      colours: RDTable.seatColours(seats.map((seat) => seat.back)),
      placedAt: new Map(),
      interactive: playing ? { seat: page.seat, onActivate: activate } : null,
    });
    if (page.seat !== null) {
      $("rd-table").classList.add("rd-has-own-seat");
      $("rd-seats").querySelector(`[data-seat="${page.seat}"]`)?.classList.add("rd-own-seat");
    }
    drawPiles(new Set());
    drawTotals();
  }

  function drawPiles(changed) {
    if (!page.view) return;
    page.view.draw(page.piles, page.hand, changed);
    // A drawn pile is a new element: mark the chosen card again, or forget it if it moved.
    const chosen = page.selected;
    if (chosen !== null && faceAt(chosen) !== chosen.face) clearSelection();
    else if (chosen !== null) markSelection();
  }

  function ownPile(kind) {
    return `s${page.seat}.${kind}`;
  }

  function faceAt(source) {
    const cards = page.piles[source.pile]?.cards ?? [];
    if (!cards.length) return null;
    return source.index === null || source.index === undefined ? cards[cards.length - 1] : cards[source.index] ?? null;
  }

  // -- choosing a move ---------------------------------------------------------------------

  function sourceOf(pile, index) {
    const found = /^s(\d+)\.(demon|waste|w\d+)$/.exec(pile);
    if (!found || Number(found[1]) !== page.seat) return null;
    const work = found[2][0] === "w";
    return { from: found[2], pile, index: work ? index ?? null : null, face: null };
  }

  function targetsOf(pile) {
    if (pile === "f+" || /^f\d+$/.test(pile)) return [pile];
    const found = /^s(\d+)\.w(\d+)$/.exec(pile);
    if (found && Number(found[1]) === page.seat) return [`w${found[2]}`, `u${found[2]}`];
    return [];
  }

  function targetPile(to) {
    return to[0] === "f" ? to : ownPile(`w${to.slice(1)}`);
  }

  // The listed card moves of `source`: from a work pile with a chosen card, exactly that
  // card and those under it.
  function movesFrom(source) {
    return page.moves.filter((move) => {
      if (move.kind !== "card" || move.from !== source.from) return false;
      if (source.from[0] !== "w" || source.index === null) return true;
      const cards = page.piles[source.pile]?.cards ?? [];
      return move.faces.length === cards.length - source.index && move.faces[0] === cards[source.index];
    });
  }

  // Without a chosen card in a work pile (a key, or the pile itself clicked), the longest
  // tail that can go there: the whole run into an empty pile.
  function best(candidates) {
    return [...candidates].sort((a, b) => b.faces.length - a.faces.length)[0];
  }

  function markSelection() {
    const chosen = page.selected;
    page.view.setSelected(chosen.pile, chosen.index);
    page.view.setTargets([...new Set(movesFrom(chosen).map((move) => targetPile(move.to)))]);
  }

  function clearSelection() {
    page.selected = null;
    page.underNext = false;
    if (!page.view) return;
    page.view.setSelected(null, null);
    page.view.setTargets([]);
  }

  function sourceWords(source) {
    const face = source.face ? ` ${cardText(source.face)}` : "";
    return `${fromWords(source.from)}${face}`;
  }

  function choose(source) {
    source.face = faceAt(source);
    if (source.face === null) {
      clearSelection();
      say(`${fromWords(source.from)} is empty.`);
      return;
    }
    page.selected = source;
    page.underNext = false;
    markSelection();
    say(movesFrom(source).length
      ? `Chosen: ${sourceWords(source)}. Now choose where it goes (highlighted), or press Esc.`
      : `Chosen: ${sourceWords(source)}, but it has nowhere to go now.`);
  }

  function canPlay() {
    return page.seat !== null && !page.stopped && !page.ended && page.game !== null;
  }

  // RDTable's interactive callback: a pile or card was clicked, dropped on or activated.
  function activate({ pile, index = null }) {
    if (!canPlay()) return;
    if (pile === ownPile("stock")) {
      clearSelection();
      playKind(["turn", "recycle"], "Nothing to turn: your stock and waste are both empty.");
      return;
    }
    const chosen = page.selected;
    const source = sourceOf(pile, index);
    if (chosen !== null) {
      if (source !== null && source.pile === chosen.pile && source.index === chosen.index) {
        clearSelection();
        say("Nothing chosen.");
        return;
      }
      if (toTarget(targetsOf(pile), source === null)) return;
    }
    if (source !== null) choose(source);
    else if (chosen !== null) say(`Not played: ${sourceWords(chosen)} cannot go there.`);
    else say("Choose one of your cards first: your demon, your waste or a card of a work pile.");
  }

  // Play the chosen card to one of `targets` (move-text targets); whether it was played.
  // `final`: no other reading of the activation remains, so say why nothing was played.
  function toTarget(targets, final) {
    const chosen = page.selected;
    if (!targets.length) return false;
    const candidates = movesFrom(chosen).filter((move) => targets.includes(move.to));
    if (candidates.length) {
      clearSelection();
      submit(best(candidates));
      return true;
    }
    if (final) say(`Not played: ${sourceWords(chosen)} cannot go ${toWords(targets[0])} now.`);
    return final;
  }

  function playKind(kinds, otherwise) {
    const move = page.moves.find((entry) => kinds.includes(entry.kind));
    if (move) submit(move);
    else say(otherwise);
  }

  async function submit(move) {
    if (!canPlay()) return;
    const online = $("rd-connection").dataset.state === "open";
    say(online ? `Sent: ${moveWords(move.text)}. Waiting for the table's receipt…`
      : `Offline: ${moveWords(move.text)} is kept, and sent once the connection is back if it can still be played; if not, it is listed under Moves not sent.`);
    try {
      await page.game.submit(move.text);
    } catch (error) {
      say(`Not sent: ${moveWords(move.text)} (${error.code ?? "ERROR"}: ${error.message ?? error}).`);
    }
  }

  // -- keys -----------------------------------------------------------------------------

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if ($("rd-final").open) return;
    const target = event.target instanceof Element ? event.target : document.body;
    if (target.closest("input, select, textarea")) return;
    if (!canPlay()) return;
    const key = event.key;
    if (key === " " && target.closest("button, a, [role=button]")) return; // Space presses it
    const digit = /^[1-9]$/.test(key) ? Number(key) : null;
    let handled = true;
    if (digit !== null) {
      const work = `w${digit}`;
      if (page.selected !== null && page.underNext) {
        page.underNext = false;
        toTarget([`u${digit}`], true);
      } else if (page.selected !== null && toTarget([work, `u${digit}`], false)) {
        // played onto (or under) that pile
      } else if (page.selected !== null && page.selected.from === work) {
        clearSelection();
        say("Nothing chosen.");
      } else if (page.piles[ownPile(work)] !== undefined) {
        choose({ from: work, pile: ownPile(work), index: null, face: null });
      } else {
        say(`You have no work pile ${digit}.`);
      }
    } else {
      switch (key.toLowerCase()) {
        case "d": choose({ from: "demon", pile: ownPile("demon"), index: null, face: null }); break;
        case "w": choose({ from: "waste", pile: ownPile("waste"), index: null, face: null }); break;
        case "f":
          if (page.selected === null) say("Choose a card first (D, W or a digit), then press F.");
          else {
            const fits = movesFrom(page.selected).filter((move) => move.to[0] === "f");
            if (fits.length) {
              clearSelection();
              submit(fits[0]);
            } else say(`Not played: ${sourceWords(page.selected)} fits no foundation now.`);
          }
          break;
        case "u":
          if (page.selected === null) say("Choose a card first, then U and the work pile's digit.");
          else {
            page.underNext = true;
            say(`Slide ${sourceWords(page.selected)} under which work pile? Press its digit.`);
          }
          break;
        case "t": case " ":
          clearSelection();
          playKind(["turn", "recycle"], "Nothing to turn: your stock and waste are both empty.");
          break;
        case "c": playKind(["call"], "You cannot call now: your demon must be empty, and the rules must allow calling."); break;
        case "a": playKind(["agree"], "There is nothing to agree to now (a shuffle is agreed only when the rules ask for it)."); break;
        case "escape": clearSelection(); say("Nothing chosen."); break;
        default: handled = false;
      }
    }
    if (handled) event.preventDefault();
  }

  // -- the moves list and the action buttons ------------------------------------------------

  const ACTIONS = [["rd-turn", ["turn", "recycle"]], ["rd-call", ["call"]], ["rd-agree", ["agree"]], ["rd-resign", ["resign"]]];

  function drawMoves() {
    const list = $("rd-moves");
    const shown = canPlay() ? page.moves : [];
    // An entry still listed keeps its element, in place: the button a person is tabbing
    // to or pressing is not swept away by the next record.
    const kept = new Map([...list.children].map((item) => [item.dataset.move, item]));
    const wanted = new Set(shown.map((move) => move.text));
    for (const [text, item] of kept) if (!wanted.has(text)) item.remove();
    shown.forEach((move, position) => {
      let item = kept.get(move.text);
      if (item === undefined) {
        const button = el("button", { type: "button", "data-move": move.text, "aria-label": moveWords(move.text, true), text: moveWords(move.text) });
        button.addEventListener("click", () => submit(page.moves.find((entry) => entry.text === move.text) ?? move));
        item = el("li", { "data-move": move.text }, button);
      }
      if (list.children[position] !== item) list.insertBefore(item, list.children[position] ?? null);
    });
    for (const [id, kinds] of ACTIONS) {
      const button = $(id);
      const move = shown.find((entry) => kinds.includes(entry.kind));
      button.hidden = move === undefined;
      button.dataset.move = move ? move.text : "";
      if (id === "rd-turn" && move) button.textContent = move.kind === "recycle" ? "Turn the waste over" : "Turn the stock";
    }
    $("rd-moves-note").textContent = page.seat === null
      ? "You are watching: only the players of this table have moves."
      : shown.length
        ? "The moves you can make now. The table still judges each one: another player may get there first."
        : "No move to make now.";
  }

  // -- indicators --------------------------------------------------------------------------

  function showConnection({ state, attempt = 0, code = null }) {
    const box = $("rd-connection");
    box.dataset.state = state;
    const [mark, words] = CONNECTION_WORDS[state] ?? ["?", state];
    box.querySelector(".rd-state-mark").textContent = mark;
    let text = words;
    if (state === "offline" && attempt) text += ` (attempt ${attempt})`;
    if (code === "ENDED") text = "The game is over";
    else if (code) text += ` (${code})`;
    box.querySelector(".rd-words").textContent = text;
  }

  function onStopping({ inMs }) {
    $("rd-connection").dataset.stoppingInMs = String(inMs); // what the notice said, for tests
    say(`The server stops in ${Math.ceil(inMs / 1000)} s, most likely to restart. Play on until then: every move it answers is kept, and once the server is back this page reconnects by itself, the table where it was.`);
  }

  function showLatency(ms) {
    page.latencies.push(ms);
    if (page.latencies.length > LATENCIES_KEPT) page.latencies.shift();
    const sorted = [...page.latencies].sort((a, b) => a - b);
    const median = sorted[Math.floor((sorted.length - 1) / 2)];
    const box = $("rd-latency");
    box.dataset.ms = String(Math.round(ms));
    box.dataset.median = String(Math.round(median));
    box.querySelector(".rd-words").textContent =
      `last ${Math.round(ms)} ms, median ${Math.round(median)} ms over the last ${sorted.length}`;
  }

  function showCopy(seq) {
    const box = $("rd-copy");
    box.dataset.seq = String(seq);
    box.querySelector(".rd-words").textContent = `${seq + 1} ${seq === 0 ? "record" : "records"} checked`;
  }

  // -- downloads ------------------------------------------------------------------------------

  function setBlobLink(link, blob, name) {
    const old = link.getAttribute("href");
    link.href = URL.createObjectURL(blob);
    link.download = name;
    link.removeAttribute("aria-disabled");
    if (old && old.startsWith("blob:")) window.setTimeout(() => URL.revokeObjectURL(old), REVOKE_AFTER_MS);
  }

  function refreshDownloads() {
    window.clearTimeout(page.downloadsTimer);
    page.downloadsTimer = null;
    if (!page.game || !(page.game.state.lastSeq >= 0)) return;
    setBlobLink($("rd-download-log"), page.game.copyBlob(), page.game.copyName);
    if (page.seat !== null) setBlobLink($("rd-download-receipts"), page.game.receiptsBlob(), page.game.receiptsName);
    const refused = $("rd-download-evidence");
    refused.hidden = !(page.stopped && page.game.evidence.length > 0);
    if (!refused.hidden) setBlobLink(refused, page.game.evidenceBlob(), page.game.evidenceName);
  }

  // Blobs are remade at most every 300 ms, and at once when a link is pressed.
  function downloadsChanged() {
    if (page.downloadsTimer === null) page.downloadsTimer = window.setTimeout(refreshDownloads, 300);
  }

  // -- the hand --------------------------------------------------------------------------------

  // The table's clock now: the last frame's, run on locally while connected.
  function tableNow() {
    const live = $("rd-connection").dataset.state === "open" && page.phase === "playing";
    return page.clock.t + (live ? performance.now() - page.clock.at : 0);
  }

  function line(className, text) {
    return text ? el("p", { class: className, text }) : null;
  }

  function drawHand() {
    const box = $("rd-hand");
    box.dataset.hand = page.hand === null ? "" : String(page.hand);
    box.dataset.phase = page.phase ?? "";
    const lines = [];
    if (page.hand === null) lines.push(line("rd-hand-line", page.welcome?.state === "waiting" ? "Waiting for every seat to be taken." : "Waiting for the deal."));
    else lines.push(line("rd-hand-line", `Hand ${page.hand}: ${PHASE_WORDS[page.phase] ?? page.phase ?? ""}`));
    const time = page.rules?.time ?? {};
    const now = tableNow();
    if (page.phase === "playing" && time.countdown_ms && page.handStartT !== null) {
      const left = page.handStartT + time.countdown_ms - now;
      if (left > 0) lines.push(line("rd-countdown", `Play starts in ${Math.ceil(left / 1000)} s`));
    }
    if (page.phase === "playing" && time.no_centre_ms && page.lastCentreT !== null) {
      // docs/rules.md §4: armed once something happened after the last card to the centre.
      const armed = page.lastActionT !== null && page.lastActionT > page.lastCentreT;
      const deadline = armed ? Math.max(page.lastCentreT + time.no_centre_ms, page.lastActionT + 1) : null;
      lines.push(line("rd-no-centre", armed
        ? `Three-minute rule: about ${clockText(deadline - now)} left to send a card to the centre`
        : "Three-minute rule: not running (nothing has happened since the last card to the centre)"));
    }
    if (page.stall && page.stall.hand === page.hand) lines.push(line("rd-stall", page.stall.text));
    if (page.handEnd) lines.push(line("rd-hand-end", page.handEnd));
    if (page.matchEnd) lines.push(line("rd-match-end", page.matchEnd));
    box.replaceChildren(...lines.filter(Boolean));
  }

  function drawTotals() {
    const body = $("rd-scores").tBodies[0];
    const seats = page.welcome?.seats ?? [];
    body.replaceChildren(...seats.map((seat) => {
      const total = page.totals[seat.seat] ?? 0;
      const last = page.lastHandScores[seat.seat];
      const you = seat.seat === page.seat ? " (you)" : "";
      return el("tr", { "data-seat": seat.seat },
        el("th", { scope: "row", text: `${seatName(seat.seat)}${you}` }),
        el("td", { class: "rd-total", text: String(total) }),
        el("td", { class: "rd-last", text: last === undefined ? "" : `last hand ${last > 0 ? "+" : ""}${last}` }));
    }));
    if (page.view) for (const seat of seats) page.view.setSeatTotal(seat.seat, `${page.totals[seat.seat] ?? 0} points`);
  }

  function scoresWords(scores) {
    return scores.map((score, seat) => `${seatName(seat)} ${score}`).join(", ");
  }

  // -- records ------------------------------------------------------------------------------------

  function onRecord({ seq, body }) {
    if (seq <= page.lastSeq) return; // read already from the copy held before the page loaded
    page.lastSeq = seq;
    showCopy(seq);
    downloadsChanged();
    const t = body.t_ms ?? 0;
    switch (body.kind) {
      case "genesis":
        page.backs = body.players.map((player) => player.back);
        page.names = body.players.map((player) => player.name);
        page.rules = page.rules ?? body.rules;
        buildView();
        say(`The game has begun: every seat's share of the shuffle and signature is in (record ${seq}).`);
        break;
      case "hand_start":
        page.hand = body.hand;
        page.phase = "playing"; // until the frame after it says otherwise
        page.handStartT = t;
        page.lastCentreT = t + (page.rules?.time?.countdown_ms ?? 0);
        page.lastActionT = null;
        page.handEnd = null;
        page.stall = null;
        clearSelection();
        say(`Hand ${body.hand} is dealt (record ${seq}).`);
        break;
      case "move": case "tie": case "call": case "agree": case "resign": {
        page.lastActionT = t;
        const move = parseMove(body.move);
        if (move.kind === "card" && move.to[0] === "f") page.lastCentreT = t;
        if (body.kind === "call" && body.player !== page.seat) say(`${seatName(body.player)} called (record ${seq}).`);
        if (body.kind === "resign") say(`${seatName(body.player)} resigned (record ${seq}).`);
        break;
      }
      case "stall":
        page.lastActionT = t;
        page.stall = { hand: body.hand, text: `Stall shift at record ${seq}: nobody could play, so every seat's stock moved on.` };
        say(page.stall.text);
        break;
      case "hand_end":
        body.scores.forEach((score, seat) => { page.totals[seat] = (page.totals[seat] ?? 0) + score; });
        page.lastHandScores = body.scores;
        page.phase = "ended";
        page.handEnd = `Hand ${body.hand} ended: ${HAND_END_WORDS[body.reason] ?? body.reason}. Scores: ${scoresWords(body.scores)}.`;
        say(page.handEnd);
        clearSelection();
        drawTotals();
        break;
      case "final": {
        page.totals = [...body.totals];
        const winners = body.winners.map(seatName).join(" and ") || "nobody";
        page.matchEnd = `The match is over (${FINAL_WORDS[body.reason] ?? body.reason}): won by ${winners}. Totals: ${scoresWords(body.totals)}.`;
        say(page.matchEnd);
        closeFinal();
        drawTotals();
        break;
      }
      case "pause": {
        const why = body.cause === "planned" ? "a planned restart" : "a server failure";
        say(`The table is back after ${why}, down ${(body.down_ms / 1000).toFixed(1)} s by the server's word; no clock ran meanwhile (record ${seq}).`);
        break;
      }
      default:
        break;
    }
    drawHand();
  }

  function onPiles(frame) {
    page.piles = frame.full ? { ...frame.set } : { ...page.piles, ...frame.set };
    page.hand = frame.hand;
    page.phase = frame.phase;
    page.clock = { t: frame.clock_ms ?? page.clock.t, at: performance.now() };
    drawPiles(new Set(Object.keys(frame.set)));
    drawHand();
  }

  function onMoves({ moves }) {
    page.moves = moves.map(parseMove);
    drawMoves();
    if (page.selected !== null && page.view) markSelection();
  }

  function onReceipt(receipt) {
    if (typeof receipt.latencyMs === "number") showLatency(receipt.latencyMs);
    downloadsChanged();
    const box = $("rd-last-receipt");
    box.dataset.outcome = receipt.outcome ?? "";
    box.dataset.reason = receipt.reason ?? "";
    box.dataset.wonBy = receipt.wonBy === null || receipt.wonBy === undefined ? "" : String(receipt.wonBy);
    const words = receipt.move ? moveWords(receipt.move) : "your move";
    let text;
    if (receipt.outcome === "bounce") {
      const why = receipt.wonBy !== null && receipt.wonBy !== undefined
        ? `record ${receipt.wonBy} ${receipt.reason === "HAND_OVER" ? "ended the hand" : "got there"} first`
        : `${REASON_WORDS[receipt.reason] ?? "the table refused it"} (${receipt.reason})`;
      text = `Bounced: ${why}. Your ${words} is logged as a bounce at record ${receipt.seq}.`;
    } else if (receipt.outcome === "refused") {
      text = `Refused, not logged: ${words}: ${REASON_WORDS[receipt.reason] ?? receipt.reason} (${receipt.reason}).`;
    } else {
      const tie = receipt.outcome === "tie" ? " as a tie" : "";
      text = `Landed${tie}: ${words} (record ${receipt.seq}).`;
    }
    box.textContent = text;
    say(text);
  }

  // -- the rules engine -------------------------------------------------------------------------

  const ENGINE_ENABLE = "Its operator enables it with `racing-demon runtime install`, then restarts `racing-demon serve`.";

  function engineWords(engine) {
    const version = engine.version ? ` (Pyodide ${engine.version})` : "";
    switch (engine.state) {
      case "asking": return "Asking the server for its rules engine…";
      case "loading": return `Loading the rules engine, this project's own verifier${version}, in the background…`;
      case "ready": return `Ready (loaded in ${(engine.readyMs / 1000).toFixed(1)} s): when the match ends, this browser replays every record of its copy with it before you may accept the result.`;
      case "absent": return `Not available on this server: the moves and scores will not be checked in this browser, only the signatures, the chain and the deal. ${ENGINE_ENABLE}`;
      default: return `The rules engine could not start here (${engine.detail}): the moves and scores will not be checked in this browser.`;
    }
  }

  function showEngine(engine) {
    const line = $("rd-engine");
    if (line.dataset.judged === "true") return; // the final's judgement stays shown
    line.dataset.state = engine.state;
    line.textContent = engineWords(engine);
  }

  // What the engine made of the copy when the final came: words, and the flagged record.
  function judgementWords(judged) {
    switch (judged?.state) {
      case "checked": return `Checked: the rules engine replayed all ${judged.records} records of your copy with the dealer's secret (${Math.round(judged.ms)} ms): every move, bounce, stall and hand score is as the rules say.`;
      case "rejected": return `The rules engine rejects record ${judged.finding.seq} of your copy (${judged.finding.code}): this browser declined the result for you.`;
      case "absent": return `The moves and scores were not checked in this browser: the server has no rules engine. Accepting checks the scores' sums, the deal and the signatures only. ${ENGINE_ENABLE}`;
      default: return `The moves and scores were not checked in this browser (${judged?.why ?? "no engine"}). Accepting checks the scores' sums, the deal and the signatures only.`;
    }
  }

  function showJudgement(judged) {
    const line = $("rd-engine");
    line.dataset.judged = "true";
    line.dataset.state = judged?.state ?? "unchecked";
    line.textContent = judgementWords(judged);
    const flag = $("rd-engine-flag");
    if (judged?.state !== "rejected") {
      flag.hidden = true;
      return;
    }
    const { seq, line: number, code, rule, step, message, move } = judged.finding;
    const held = page.game?.lines?.[seq];
    const body = held === undefined ? null : JSON.parse(held).body;
    const whose = Number.isInteger(body?.player) ? `${seatName(body.player)}'s ` : "";
    const what = body === null ? "" : `: ${whose}${body.kind}${body.move ? ` '${body.move}'` : ""}`;
    flag.dataset.seq = String(seq);
    flag.dataset.code = code ?? "";
    flag.dataset.rule = rule ?? "";
    flag.querySelector(".rd-flag-record").textContent = `record ${seq} (line ${number ?? seq + 1} of your copy)${what}`;
    const stepWords = step ? `step ${step.number}, ${step.title}` : "";
    flag.querySelector(".rd-flag-words").textContent =
      `${code}${stepWords ? ` (${stepWords})` : ""}; rule: ${rule ?? "none named"}; the engine says: ${message}${move ? ` (move '${move}')` : ""}. `
      + "This browser declined the result and signs nothing more for this game: keep your copy and receipts, and check them with racing-demon verify.";
    flag.querySelector(".rd-flag-line").textContent = held ?? "";
    flag.hidden = false;
  }

  // -- the final --------------------------------------------------------------------------------

  function openFinal({ body, check }) {
    const final = typeof body === "string" ? JSON.parse(body) : body;
    const dialog = $("rd-final");
    const ok = Boolean(check?.ok);
    const verdict = $("rd-final-check");
    verdict.dataset.ok = String(ok);
    const rejected = check?.engine?.state === "rejected";
    verdict.textContent = ok
      ? "✓ This browser recomputed every hand's scores from its own copy of the log: they match."
      : rejected
        ? "✗ The rules engine rejects a record of this browser's copy: this browser declined the result for you (the log will show that this seat did not accept it), and signs nothing more for this game."
        : "✗ The scores this browser recomputed from its own copy do not match the table's: this browser declined the result for you (the log will show that this seat did not accept it), and signs nothing more for this game.";
    const engine = $("rd-final-engine");
    engine.dataset.state = check?.engine?.state ?? "unchecked";
    engine.textContent = judgementWords(check?.engine);
    showJudgement(check?.engine);
    const rows = (final.totals ?? []).map((total, seat) => {
      const mine = check?.totals?.[seat];
      const same = mine === total;
      return el("tr", { "data-seat": seat, "data-same": String(same) },
        el("th", { scope: "row", text: seatName(seat) }),
        el("td", { text: String(total) }),
        el("td", { text: mine === undefined ? "not recomputed" : String(mine) }),
        el("td", { text: same ? "✓ same" : "✗ differs" }));
    });
    dialog.querySelector("tbody").replaceChildren(...rows);
    $("rd-final-problems").replaceChildren(...(check?.problems ?? []).map((text) => el("li", { text })));
    $("rd-accept").disabled = !ok || page.stopped;
    $("rd-accept").hidden = !ok;
    // RDClient has declined already when the scores do not check: the button only closes.
    $("rd-decline").textContent = ok ? "Decline" : "Close";
    page.final = { until: (page.finalAskedAt ?? performance.now()) + ACCEPT_WINDOW_MS };
    tickFinal();
    window.clearInterval(page.finalTimer);
    page.finalTimer = window.setInterval(tickFinal, 500);
    if (!dialog.open) dialog.showModal();
    (ok ? $("rd-accept") : $("rd-decline")).focus();
    say("The match is over: the table asks you to accept the result.");
  }

  function tickFinal() {
    if (page.final === null) return;
    const left = Math.max(0, Math.ceil((page.final.until - performance.now()) / 1000));
    $("rd-final-left").textContent = `${left} s left.`;
  }

  function closeFinal() {
    window.clearInterval(page.finalTimer);
    page.final = null;
    if ($("rd-final").open) $("rd-final").close();
  }

  async function answerFinal(accept) {
    $("rd-accept").disabled = true;
    $("rd-decline").disabled = true;
    try {
      await (accept ? page.game.accept() : page.game.decline());
      say(accept ? "You accepted the result: your signature goes into the final record."
        : "Declined: the final record will show that this seat did not accept the result.");
    } catch (error) {
      say(`Your answer was not sent: ${error.code ?? "ERROR"}: ${error.message ?? error}.`);
    } finally {
      $("rd-decline").disabled = false;
      closeFinal();
    }
  }

  // -- the end, faults ----------------------------------------------------------------------------

  // Names the checks that passed, failed, or did not apply, each as RDCheck says: never
  // "nothing failed" for a check that was not made, and an unfinished copy says so.
  function checkWords(copyCheck) {
    if (!copyCheck || !Array.isArray(copyCheck.results)) return "This browser could not check its whole copy again.";
    const { results } = copyCheck;
    const isFailed = (result) => result.status === "fail" || result.status === "error";
    const failed = results.filter(isFailed).map((result) => `${result.check}${result.code ? ` (${result.code})` : ""}`);
    const passed = results.filter((result) => result.status === "pass").map((result) => result.check);
    const other = results.filter((result) => result.status !== "pass" && !isFailed(result))
      .map((result) => `${result.check} (${String(result.status).replaceAll("-", " ")})`);
    const parts = [];
    if (failed.length) parts.push(`failed: ${failed.join(", ")}`);
    if (passed.length) parts.push(`passed: ${passed.join(", ")}`);
    if (other.length) parts.push(`not checked: ${other.join(", ")}`);
    const unfinished = copyCheck.finished === false ? " The copy is unfinished (it has no final record): it proves no result." : "";
    return `This browser checked its whole copy again; ${parts.join("; ") || "no check ran"}.${unfinished}`;
  }

  function onEnded({ verdict, log, receipts, copyCheck }) {
    page.ended = true;
    closeFinal();
    clearSelection();
    drawMoves();
    buildView(); // the piles are no longer operable
    refreshDownloads();
    const box = $("rd-ended");
    box.dataset.verdict = verdict ?? "";
    box.querySelector(".rd-ended-words").textContent =
      `The server's verifier says: ${String(verdict ?? "unknown").replaceAll("_", " ")}. ${checkWords(copyCheck)}`;
    const links = [];
    const logHref = RDClient.gameHref(log);
    const receiptsHref = RDClient.gameHref(receipts);
    if (logHref) links.push(el("a", { href: logHref, download: "", class: "rd-server-log", text: "The server's log" }));
    if (receiptsHref) links.push(el("a", { href: receiptsHref, download: "", class: "rd-server-receipts", text: "The receipts the server kept for you" }));
    links.push(el("a", { href: `/games/${page.gameId}/view`, class: "rd-view-link", text: "The game's view page" }));
    links.push(el("a", { href: "/table.pub", download: "", class: "rd-table-key", text: "The table's public key (table.pub)" }));
    box.querySelector(".rd-ended-links").replaceChildren(...links.map((link) => el("li", {}, link)));
    box.hidden = false;
    say("The game is over.");
  }

  function onProblem({ code, message, seq }) {
    page.stopped = true;
    refreshDownloads();
    const warning = $("rd-warning");
    warning.dataset.code = code;
    const where = seq === null || seq === undefined ? "" : ` at record ${seq}`;
    const words = RDClient.CODE_WORDS?.[code];
    $("rd-warning-detail").textContent = `${code}${where}${words ? ` (${words})` : ""}: ${message}.`;
    const own = code === "CLIENT_ERROR"; // this browser failed, not the server
    $("rd-warning-headline").textContent = own
      ? "Stopped: this browser failed to keep or check what the server sent; nothing says the server is at fault."
      : "Stopped: the server sent something that does not verify.";
    $("rd-warning-advice").textContent = own
      ? "This page signs nothing more until it is reloaded. Reload it once the browser works again (free some disk space, say): it goes on from the copy it holds."
      : "This page will sign nothing more for this game. Download your copy of the log, your receipts and the refused lines below and keep them: they are your evidence (racing-demon audit reads them).";
    warning.hidden = false;
    // A final whose check failed stays open, saying why; any other stop closes it.
    if ($("rd-final").open && $("rd-final-check").dataset.ok === "false") $("rd-accept").disabled = true;
    else closeFinal();
    clearSelection();
    drawMoves();
    buildView();
    say(own ? `Stopped (${code}): this browser failed; reload the page to go on.`
      : `Stopped (${code}): the server sent something that does not verify.`);
  }

  function onUnsent({ move, why }) {
    const box = $("rd-offline-note");
    box.querySelector("ul").append(el("li", { "data-move": move, text: `${moveWords(move)}: not sent, ${why}` }));
    box.hidden = false;
  }

  function onSeat({ seat, connected }) {
    if (page.view) page.view.setSeatFlag(seat, connected ? "" : "away");
    say(connected ? `${seatName(seat)} is back.` : `${seatName(seat)} went away.`);
  }

  // The server has no live table with this id: a finished game is in its archive.
  async function explainMissing() {
    const games = await RDClient.lobby.games().catch(() => []);
    const game = games.find((entry) => entry.game === page.gameId);
    if (game === undefined) {
      say("This server has no table with this id, live or finished.");
      return;
    }
    say("This game is finished: the server no longer plays it, and keeps its log.");
    const box = $("rd-ended");
    box.dataset.verdict = game.verdict ?? "";
    box.querySelector(".rd-ended-words").textContent = `The server's verifier says: ${String(game.verdict).replaceAll("_", " ")}.`;
    const logHref = RDClient.gameHref(game.log);
    const viewHref = RDClient.gameHref(game.view);
    box.querySelector(".rd-ended-links").replaceChildren(...[
      logHref && el("a", { href: logHref, download: "", class: "rd-server-log", text: "The server's log" }),
      viewHref && el("a", { href: viewHref, class: "rd-view-link", text: "The game's view page" }),
      el("a", { href: "/table.pub", download: "", class: "rd-table-key", text: "The table's public key (table.pub)" }),
    ].filter(Boolean).map((link) => el("li", {}, link)));
    box.hidden = false;
  }

  const ASKED_WORDS = {
    entropy: "Checking the dealer's commitment before signing your share of the shuffle…",
    cosign: "Checking the game's first record (seats, rules, keys) before co-signing it…",
    final: "The match is over: checking the result, and replaying the whole game with the rules engine, before you are asked to accept it…",
  };
  const SIGNED_WORDS = {
    entropy: "Signed your share of the shuffle.",
    cosign: "Checked the seats, rules and keys and co-signed the game's first record.",
  };

  // Says only what was checked: a seat free when this page was welcomed had no key it knew.
  function signedWords({ what, keysUnknown }) {
    if (what !== "cosign" || !keysUnknown?.length) return SIGNED_WORDS[what];
    const seats = keysUnknown.map((seat) => `seat ${seat}'s`).join(" and ");
    const one = keysUnknown.length === 1;
    return "Checked the seats, the rules and every key this page knew, and co-signed the game's first record; "
      + `${seats} key${one ? " was" : "s were"} not known to this page when it co-signed: `
      + `only ${one ? "its" : "their"} entropy signature under the key the genesis names was checked.`;
  }

  // The records this browser held before the page loaded (RDClient sends only new ones):
  // read once, so that the hand, the scores and the copy's count are shown after a reload.
  async function replayCopy() {
    const text = await page.game.copyBlob().text();
    const lines = text.split("\n").filter(Boolean);
    lines.forEach((line, seq) => onRecord({ seq, body: JSON.parse(line).body, line }));
    if (lines.length) say(`Your copy holds ${lines.length} checked records; catching up with the table…`);
  }

  function onEvent(event) {
    page.events = page.events.then(async () => {
      if (!page.replayed) {
        page.replayed = true;
        await replayCopy().catch((error) => console.error(error));
      }
      handle(event);
    });
  }

  function handle(event) {
    try {
      switch (event.type) {
        case "connection":
          showConnection(event);
          drawHand();
          if (event.state === "stopped" && event.code === "NO_SUCH_TABLE") explainMissing();
          if (event.state === "stopped" && event.code === "TABLE_CLOSED") say("This table was cancelled: its seats were not all taken in time, or a seat did not answer while it started. Nothing was written.");
          break;
        case "welcome":
          page.welcome = event.welcome;
          page.rules = event.welcome.rules;
          buildView();
          drawHand();
          break;
        case "record": onRecord(event); break;
        case "piles": onPiles(event.frame); break;
        case "moves": onMoves(event); break;
        case "pack": say(`Your cards for hand ${event.hand} arrived and match the deal's digest.`); break;
        case "receipt": onReceipt(event); break;
        case "asked":
          // The table's 15 s run from its asking, not from when the check is done.
          if (event.what === "final") page.finalAskedAt = performance.now();
          if (ASKED_WORDS[event.what]) say(ASKED_WORDS[event.what]);
          break;
        case "signed": if (SIGNED_WORDS[event.what]) say(signedWords(event)); break;
        case "final": openFinal(event); break;
        case "ended": onEnded(event); break;
        case "seat": onSeat(event); break;
        case "stopping": onStopping(event); break;
        case "error": say(`The server refused a message: ${event.code}: ${event.message}`); break;
        case "unsent": onUnsent(event); break;
        case "problem": onProblem(event); break;
        default: break;
      }
    } catch (error) {
      // A fault of this page must not stop the client holding the evidence.
      console.error(error);
      say(`This page could not show an event (${event.type}): ${error.message}`);
    }
  }

  async function start() {
    const found = /^\/play\/([0-9a-f]{32})$/.exec(window.location.pathname);
    if (!found) {
      say("This is no table's address.");
      return;
    }
    page.gameId = found[1];
    $("rd-table-title").textContent = `table ${page.gameId.slice(0, 8)}`;
    document.title = `Racing Demon: table ${page.gameId.slice(0, 8)}`;
    document.addEventListener("keydown", onKey);
    for (const [id, kinds] of ACTIONS) {
      $(id).addEventListener("click", () => playKind(kinds, "That move is not available now."));
    }
    $("rd-accept").addEventListener("click", () => answerFinal(true));
    $("rd-decline").addEventListener("click", () => answerFinal(false));
    // Escape would close the dialog without an answer: declining is a choice to make.
    $("rd-final").addEventListener("cancel", (event) => event.preventDefault());
    for (const id of ["rd-download-log", "rd-download-receipts", "rd-download-evidence"]) {
      $(id).addEventListener("click", (event) => {
        if ($(id).getAttribute("aria-disabled") === "true") event.preventDefault();
        else refreshDownloads(); // the bytes as they are now, not 300 ms ago
      });
    }
    window.setInterval(drawHand, 500);
    try {
      const mine = await RDClient.seats.forGame(page.gameId);
      page.seat = mine ? mine.seat : null;
      const key = await RDClient.keys.load().catch(() => null);
      $("rd-game").replaceChildren(el("a", { href: "/", text: "Back to the lobby" }), document.createTextNode(
        mine ? ` · You are ${mine.name}, seat ${mine.seat}, key ${(key?.id ?? "").slice(0, 16)}` : " · You are watching"));
      if (mine && key && mine.keyId && mine.keyId !== key.id) {
        say("This seat was joined with a key this browser no longer has: it cannot be played from here.");
      }
      $("rd-download-receipts").hidden = page.seat === null;
      drawMoves();
      // Only a seat is asked to accept: a spectator's page loads no engine.
      const engine = page.seat === null ? null : RDPlayEngine.start({ onChange: showEngine });
      if (engine === null) {
        $("rd-engine").dataset.state = "absent";
        $("rd-engine").textContent = "Not loaded: you are watching, and a spectator accepts nothing. Each player's page replays the game with it before accepting the result.";
      }
      page.game = new RDClient.Game(page.gameId, { onEvent, engine });
      await page.game.start();
    } catch (error) {
      say(`This table could not be opened: ${error.code ?? "ERROR"}: ${error.message ?? error}`);
    }
  }

  if (document.body.classList.contains("rd-play-page")) start();

  return Object.freeze({ moveWords, parseMove, signedWords, checkWords });
})();
