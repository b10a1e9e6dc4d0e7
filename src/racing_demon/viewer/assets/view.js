// view.js: the game viewer's timeline, words, keys, deep links, audit and chart.
// It reads the embedded data (format racing-demon/viewer/v1, made by viewer/model.py),
// draws the table with RDTable (table.js, the renderer the play page shares) and runs
// RDCheck (check.js) for the browser's own checks; page.py puts all three in one module
// script. Plain DOM: no library, no network; every text from the log goes in through
// textContent, never as markup.

const DATA = await unpacked(JSON.parse(document.getElementById("rd-data").textContent));
const RECORDS = DATA.records;
const FRAMES = DATA.frames.list;
// A file with no readable genesis has no game: the page still shows its verdict.
const SEATS = DATA.game?.seats ?? [];
const WORK_PILES = DATA.game?.work_piles ?? 0;

// The words, frames and audit travel gzipped (viewer/page.py): unpacked before anything is
// drawn, with the browser's own DecompressionStream.
async function unpacked(data) {
  if (!data.packed) return data;
  const { packed, ...rest } = data;
  if (packed.encoding !== "gzip+base64") throw new Error(`unknown packing ${packed.encoding}`);
  const bytes = await RDCheck.gunzip(packed.data);
  return { ...rest, ...JSON.parse(new TextDecoder().decode(bytes)) };
}

// Logged pauses longer than this are shortened when playing: an idle table would otherwise
// show nothing for minutes. The speed menu's tooltip says so.
const LONGEST_PAUSE_MS = 3000;
const NEARBY = 12; // records listed on each side of the one shown

const KIND_LABELS = {
  genesis: "genesis", hand_start: "deal", move: "move", bounce: "bounce", tie: "tie",
  call: "call", agree: "agree", stall: "stall", resign: "resign", hand_end: "hand end",
  final: "final", pause: "pause", lag: "round trips", receipt: "receipt",
};
const VERDICT_WORDS = {
  verified: "VERIFIED", does_not_verify: "DOES NOT VERIFY", unfinished: "UNFINISHED",
  unpinned: "UNPINNED", unreadable: "UNREADABLE",
};
const CHECK_TITLES = {
  canonical: "Every line in canonical form",
  chain: "Hash chain unbroken",
  "table-signatures": "Table's signature on every record",
  "player-signatures": "Players' signatures on their submissions",
  commitment: "Revealed secret matches the commitment",
  entropy: "Entropy bound to the commitment",
  packs: "Every pack re-derived from the deal spec",
};
const CHECK_STATUS_WORDS = {
  pass: "passed", fail: "failed", unsupported: "cannot be checked in this browser",
  "not-applicable": "not applicable", unpinned: "no key pinned", running: "checking…",
  error: "could not be run",
};

// -- small helpers ------------------------------------------------------------

const { el, plural, inkOn, cardText, isRed } = RDTable;

const SVG_NS = "http://www.w3.org/2000/svg";
function svg(tag, attributes = {}, text = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

function seqLink(seq, text = `record ${seq}`) {
  return el("a", { href: `#seq=${seq}`, class: "rd-seq-link", text });
}

// A link to the record at `index` itself (seqLink names a seq, which lines may share).
function recordLink(index, text) {
  return el("a", { href: hashOf(index), class: "rd-seq-link", text });
}

function clockText(ms) {
  const total = Math.max(0, Math.floor(ms / 100));
  const tenths = total % 10;
  const seconds = Math.floor(total / 10) % 60;
  const minutes = Math.floor(total / 600);
  return `${minutes}:${String(seconds).padStart(2, "0")}.${tenths}`;
}

// A key's id, and the log's digest: the SHA-256 of the bytes, as lowercase hex.
async function sha256Hex(bytes) {
  return RDCheck.hex.toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

function seatName(seat) {
  return SEATS[seat]?.name ?? `seat ${seat}`;
}

function seatColour(seat) {
  return SEATS[seat]?.colour ?? "#777777";
}

// -- frames: the table after each record, rebuilt from keyframes and deltas -----

class FrameStore {
  constructor(list) {
    this.list = list;
    this.keyframeOf = new Int32Array(list.length);
    let keyframe = 0;
    list.forEach((frame, index) => {
      if (frame.full || index === 0) keyframe = index;
      this.keyframeOf[index] = keyframe;
    });
    this.at = -1;
    this.piles = {};
  }

  // The piles after frame `index`: from the nearest keyframe, or onward from the frame
  // last built when that is on the way (stepping and playing cost one delta each).
  pilesAt(index) {
    if (index === this.at) return this.piles;
    let start = this.keyframeOf[index];
    if (this.at >= start && this.at < index) start = this.at + 1;
    else this.piles = {};
    for (let k = start; k <= index; k++) {
      const frame = this.list[k];
      if (frame.full) this.piles = { ...frame.set };
      else Object.assign(this.piles, frame.set);
    }
    this.at = index;
    return this.piles;
  }
}

// -- the viewer ---------------------------------------------------------------

const $ = (id) => document.getElementById(id);
const frames = new FrameStore(FRAMES);
const indexOfSeq = new Map();
RECORDS.forEach((record, index) => {
  if (!indexOfSeq.has(record.seq)) indexOfSeq.set(record.seq, index);
});
const seqCount = new Map();
RECORDS.forEach((record) => seqCount.set(record.seq, (seqCount.get(record.seq) ?? 0) + 1));
// A record's deep link: #seq=N, or #line=L where several lines carry its seq (a record
// repeated or moved), so that the link leads to this one and not the first of them.
function hashOf(index) {
  const record = RECORDS[index];
  return seqCount.get(record.seq) > 1 ? `#line=${record.line}` : `#seq=${record.seq}`;
}
const handStarts = RECORDS.flatMap((record, index) => (record.kind === "hand_start" ? [index] : []));
const lastFrame = FRAMES.length - 1;
// The first failing record's index; RECORDS.length when no record fails (a finding about
// the whole log, such as a missing final record, names none).
const failIndex = (() => {
  const failure = DATA.failure;
  const known = (value) => value !== null && value !== undefined;
  if (!failure) return RECORDS.length;
  // The line tells a repeated or swapped seq apart; the seq serves where no line is given.
  let found = -1;
  if (known(failure.line)) found = RECORDS.findIndex((record) => record.line >= failure.line);
  else if (known(failure.seq)) {
    found = indexOfSeq.get(failure.seq) ?? RECORDS.findIndex((record) => record.seq >= failure.seq);
  }
  return found < 0 ? RECORDS.length : found;
})();
const failingSeq = failIndex < RECORDS.length ? RECORDS[failIndex].seq : null;

const view = {
  index: -1,
  playing: false,
  timer: null,
  due: 0, // while playing: when the record after the one shown is due (performance.now())
};

function verifiedAt(index) {
  return index < failIndex && RECORDS[index].frame !== null && RECORDS[index].frame !== undefined;
}

// The frame to draw for a record: its own, or, past the end of the replay, the last one.
function frameIndexOf(index) {
  const own = RECORDS[index].frame;
  if (own !== null && own !== undefined) return own;
  return lastFrame;
}

// -- the table: RDTable draws it ------------------------------------------------

// Which record put each centre card there, from the audit of the hands that ended.
const placedAt = new Map();
for (const hand of DATA.audit?.hands ?? []) {
  for (const entry of hand.seats) {
    for (const placed of entry.placed) placedAt.set(`${hand.hand}:${placed.card}@${entry.seat}`, placed.seq);
  }
}

const tableView = new RDTable.TableView({
  seatsElement: $("rd-seats"),
  foundationsElement: $("rd-foundations"),
  tableElement: $("rd-table"),
  seats: SEATS,
  workPiles: WORK_PILES,
  colours: SEATS.map((seat) => seat.colour),
  placedAt,
});
const INITIALS = tableView.initials;

// changed: the piles the record changed; named: the piles a bounced or failing move named,
// which it did not change.
function drawTable(frameIndex, changed, named) {
  const piles = frameIndex < 0 ? {} : frames.pilesAt(frameIndex);
  tableView.draw(piles, frameIndex < 0 ? null : FRAMES[frameIndex].hand, changed, named);
}

// -- words --------------------------------------------------------------------

// The record's words, with "record N" turned into links for the records it names.
function wordsElement(record) {
  const holder = el("p", { class: "rd-words" });
  const links = new Set(record.links ?? []);
  const named = new Set();
  const text = record.text ?? "";
  const pattern = /record (\d+)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const seq = Number(match[1]);
    if (!links.has(seq)) continue;
    holder.append(text.slice(last, match.index), seqLink(seq, match[0]));
    named.add(seq);
    last = match.index + match[0].length;
  }
  holder.append(text.slice(last));
  const others = [...links].filter((seq) => !named.has(seq));
  if (others.length) {
    holder.append(" (see ");
    others.forEach((seq, position) => {
      if (position) holder.append(", ");
      holder.append(seqLink(seq));
    });
    holder.append(")");
  }
  return holder;
}

function kindBadge(record) {
  const badge = el("span", { class: `rd-kind kind-${record.kind}`, text: KIND_LABELS[record.kind] ?? record.kind });
  if (record.seat !== null && record.seat !== undefined) {
    badge.style.setProperty("--seat", seatColour(record.seat));
    badge.classList.add("by-seat");
  }
  return badge;
}

function drawDescription(index) {
  const record = RECORDS[index];
  const box = $("rd-description");
  const heading = el("div", { class: "rd-description-head" }, kindBadge(record),
    el("span", { class: "rd-when", text: `record ${record.seq} · ${clockText(record.t_ms)}${record.hand ? ` · hand ${record.hand}` : ""}` }));
  box.replaceChildren(heading, wordsElement(record));
  if (index === failIndex && failingSeq !== null) {
    box.append(el("p", { class: "rd-finding", text: `The verifier stops here: ${DATA.failure.code}: ${DATA.failure.message}` }));
  }
  box.classList.toggle("failing", index === failIndex && failingSeq !== null);
}

function drawNearby(index) {
  const list = $("rd-nearby");
  const from = Math.max(0, index - NEARBY);
  const to = Math.min(RECORDS.length - 1, index + NEARBY);
  list.replaceChildren();
  for (let k = from; k <= to; k++) {
    const record = RECORDS[k];
    const link = el("a", { href: hashOf(k), "data-index": k, title: record.text ?? "" },
      el("span", { class: "rd-nearby-seq", text: String(record.seq) }), kindBadge(record),
      el("span", { class: "rd-nearby-text", text: record.text ?? "" }));
    const item = el("li", {
      class: `${k === index ? "current" : ""}${verifiedAt(k) ? "" : " unverified"}${k === failIndex ? " failing" : ""}`,
      "aria-current": k === index ? "true" : null,
    }, link);
    list.append(item);
  }
  const current = list.querySelector("li.current");
  if (current) list.scrollTop = current.offsetTop - list.clientHeight / 2 + current.clientHeight / 2;
}

function drawStatus(index, frameIndex) {
  const record = RECORDS[index];
  const frame = frameIndex >= 0 ? FRAMES[frameIndex] : null;
  const parts = [];
  if (frame && frame.hand) parts.push(`Hand ${frame.hand}`);
  if (frame && frame.phase) parts.push(frame.phase);
  if (frame) parts.push(`clock ${clockText(frame.clock_ms)}`);
  if (!frame || !Object.keys(frames.pilesAt(frameIndex)).length) parts.push("before the first deal");
  $("rd-status").textContent = parts.join(" · ");
  const totals = DATA.audit?.totals ?? [];
  const hand = frame?.hand ?? record.hand ?? 0;
  // The totals before the hand in play (after it, once its end is recorded).
  const endedHands = (DATA.audit?.hands ?? []).filter((entry) => entry.end_seq <= record.seq).length;
  const row = totals[Math.min(endedHands, totals.length - 1)] ?? [];
  tableView.setActiveSeat(record.seat);
  const hands = DATA.audit?.hands ?? [];
  const ending = hands.find((entry) => entry.hand === hand && entry.end_seq <= record.seq);
  for (const { seat } of SEATS) {
    tableView.setSeatTotal(seat, row[seat] === undefined ? "" : `total ${row[seat]}`);
    tableView.setSeatFlag(seat, ending && ending.ended_by === seat ? ending.reason.replace("_", " ") : "");
  }
}

// -- moving -------------------------------------------------------------------

function showNoRecord() {
  $("rd-frame").dataset.verified = "false";
  $("rd-seq").textContent = "no record";
  $("rd-slider").disabled = true;
  $("rd-description").replaceChildren(el("p", { class: "rd-words", text: "This file holds no readable record, so there is no table to show." }));
}

function go(index, { writeHash = true } = {}) {
  if (!RECORDS.length) return;
  index = Math.max(0, Math.min(RECORDS.length - 1, index));
  const frameIndex = frameIndexOf(index);
  const ownFrame = RECORDS[index].frame;
  const changed = new Set();
  if (ownFrame !== null && ownFrame !== undefined && !FRAMES[ownFrame].full) {
    for (const id of Object.keys(FRAMES[ownFrame].set)) changed.add(id);
  }
  const refused = RECORDS[index].kind === "bounce" || index === failIndex;
  drawTable(frameIndex, changed, new Set(refused ? RECORDS[index].piles ?? [] : []));
  view.index = index;
  const record = RECORDS[index];
  const frame = $("rd-frame");
  const verified = verifiedAt(index);
  frame.dataset.seq = String(record.seq);
  frame.dataset.verified = String(verified);
  const banner = $("rd-unverified");
  banner.hidden = verified;
  if (!verified) {
    const why = lastFrame < 0
      ? noReplayWords()
      : ownFrame === null || ownFrame === undefined
      ? `The replay stopped before this record: the table shown is the last one replayed (record ${RECORDS.find((record) => record.frame === lastFrame)?.seq ?? lastFrame}).`
      : `This record is at or after the first failing record.`;
    banner.replaceChildren(el("strong", { text: "Not verified. " }), why, " ",
      failingSeq === null ? "" : recordLink(failIndex, `Go to the failing record ${failingSeq}`));
  }
  const slider = $("rd-slider");
  slider.value = String(index);
  // The seq is the record's name, counted from 0 (the genesis); the position counts the
  // log's lines from 1, so the last of 1,297 lines reads "record 1296 (1297 of 1297)".
  const position = `record ${record.seq} (${index + 1} of ${RECORDS.length})`;
  slider.setAttribute("aria-valuetext", position);
  $("rd-seq").textContent = position;
  drawStatus(index, frameIndex);
  drawDescription(index);
  drawNearby(index);
  if (writeHash && location.hash !== hashOf(index)) {
    history.replaceState(null, "", hashOf(index));
  }
}

// Why no record was replayed: without a final record and no --secret, the dealer secret
// that deals every hand is what is missing.
function noReplayWords() {
  if (DATA.replay?.secret === "missing") {
    return "No table to show: the log has no final record, so the dealer's secret is not revealed, and no hand can be dealt without it. Whoever holds the secret can make the page again with it: racing-demon view LOG --secret SOURCE.";
  }
  return "The log could not be replayed at all, so there is no table to show.";
}

// What the audit could not score: the hand_end records the replay never reached.
function notReplayedWords() {
  const replay = DATA.replay ?? {};
  const count = replay.hand_ends_not_replayed ?? 0;
  if (!count) return "";
  const ends = count === 1 ? "The hand_end record" : `${count} hand_end records`;
  const first = `record ${replay.first_hand_end_not_replayed}`;
  const at = count === 1 ? ` (${first})` : ` (the first at ${first})`;
  if (lastFrame < 0) return `${ends}${at} ${count === 1 ? "was" : "were"} not replayed: ${noReplayWords().replace(/^No table to show: /, "")}`;
  const last = RECORDS[lastFrame]?.seq ?? lastFrame;
  return `${ends}${at} ${count === 1 ? "was" : "were"} not replayed: the replay stopped after record ${last}${failingSeq === null ? "" : `, before the first failing record ${failingSeq}`}, so ${count === 1 ? "that hand is" : "those hands are"} not scored here.`;
}

function handStartBefore(index) {
  for (let k = handStarts.length - 1; k >= 0; k--) if (handStarts[k] < index) return handStarts[k];
  return 0;
}

function handStartAfter(index) {
  return handStarts.find((start) => start > index) ?? RECORDS.length - 1;
}

function indexFromHash() {
  const byLine = /^#line=(\d+)$/.exec(location.hash);
  if (byLine) {
    const found = RECORDS.findIndex((record) => record.line >= Number(byLine[1]));
    return found < 0 ? RECORDS.length - 1 : found;
  }
  const match = /^#seq=(\d+)$/.exec(location.hash);
  if (!match) return null;
  const seq = Number(match[1]);
  if (indexOfSeq.has(seq)) return indexOfSeq.get(seq);
  const later = RECORDS.findIndex((record) => record.seq >= seq);
  return later < 0 ? RECORDS.length - 1 : later;
}

// -- playing ------------------------------------------------------------------

function speed() {
  return Number($("rd-speed").value) || 1;
}

function setPlaying(playing) {
  view.playing = playing;
  clearTimeout(view.timer);
  const button = $("rd-play");
  button.textContent = playing ? "Pause" : "Play";
  button.setAttribute("aria-label", playing ? "Pause" : "Play");
  button.setAttribute("aria-pressed", String(playing));
  document.body.classList.toggle("playing", playing);
  // A screen reader would read every record out while playing: it hears the one paused on.
  for (const id of ["rd-description", "rd-status"]) $(id).setAttribute("aria-live", playing ? "off" : "polite");
  if (playing) {
    if (view.index >= RECORDS.length - 1) go(0);
    view.due = performance.now();
    scheduleNext();
  }
}

// The wall-clock time record k waits after record k-1 while playing: its logged gap, a long
// pause shortened, divided by the speed.
function pauseBefore(k) {
  const gap = (RECORDS[k].t_ms ?? 0) - (RECORDS[k - 1].t_ms ?? 0);
  return Math.max(0, Math.min(gap, LONGEST_PAUSE_MS)) / speed();
}

// Each record is due at a time counted from the start of play, not from when the one
// before it was drawn, so drawing never slows the game down: records that fell due while
// a frame was drawn are passed over, and the next one drawn is the latest due.
function scheduleNext() {
  if (!view.playing) return;
  if (view.index >= RECORDS.length - 1) {
    setPlaying(false);
    return;
  }
  const now = performance.now();
  let next = view.index + 1;
  view.due += pauseBefore(next);
  while (next < RECORDS.length - 1 && view.due + pauseBefore(next + 1) <= now) {
    next += 1;
    view.due += pauseBefore(next);
  }
  view.timer = setTimeout(() => {
    go(next);
    scheduleNext();
  }, Math.max(0, view.due - now));
}

// -- controls -----------------------------------------------------------------

function bindControls() {
  const slider = $("rd-slider");
  slider.max = String(Math.max(0, RECORDS.length - 1));
  slider.addEventListener("input", () => {
    setPlaying(false);
    go(Number(slider.value));
  });
  const step = (target) => () => {
    setPlaying(false);
    go(target());
  };
  $("rd-first").addEventListener("click", step(() => 0));
  $("rd-last").addEventListener("click", step(() => RECORDS.length - 1));
  $("rd-prev").addEventListener("click", step(() => view.index - 1));
  $("rd-next").addEventListener("click", step(() => view.index + 1));
  $("rd-prev-hand").addEventListener("click", step(() => handStartBefore(view.index)));
  $("rd-next-hand").addEventListener("click", step(() => handStartAfter(view.index)));
  $("rd-play").addEventListener("click", () => setPlaying(!view.playing));
  $("rd-play").title = `Play or pause (Space) at the logged pace times the speed; pauses longer than ${LONGEST_PAUSE_MS / 1000} s are shortened to ${LONGEST_PAUSE_MS / 1000} s.`;
  const speedMenu = $("rd-speed");
  speedMenu.title = `Plays at ${speedMenu.value}× the time logged between records; a pause longer than ${LONGEST_PAUSE_MS / 1000} s of game time is shortened to ${LONGEST_PAUSE_MS / 1000} s.`;
  speedMenu.addEventListener("change", () => {
    speedMenu.title = speedMenu.title.replace(/^Plays at \d+×/, `Plays at ${speedMenu.value}×`);
    if (view.playing) setPlaying(true);
  });

  const keys = {
    ArrowLeft: () => view.index - 1,
    ArrowRight: () => view.index + 1,
    Home: () => 0,
    End: () => RECORDS.length - 1,
    PageUp: () => handStartBefore(view.index),
    PageDown: () => handStartAfter(view.index),
  };
  const typing = (target) =>
    target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement ||
    (target instanceof HTMLInputElement && target.type !== "range");
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
    if (event.key === " ") {
      event.preventDefault();
      if (!event.repeat) setPlaying(!view.playing);
      return;
    }
    const target = keys[event.key];
    if (!target) return;
    event.preventDefault();
    setPlaying(false);
    go(target());
  });
  // A focused button would also take Space as a click on key-up, toggling play twice.
  document.addEventListener("keyup", (event) => {
    if (event.key === " " && event.target instanceof HTMLButtonElement) event.preventDefault();
  });
  window.addEventListener("hashchange", () => {
    const index = indexFromHash();
    if (index !== null && index !== view.index) {
      setPlaying(false);
      go(index, { writeHash: false });
    }
  });
}

function drawMarks() {
  const marks = $("rd-marks");
  const span = Math.max(1, RECORDS.length - 1);
  const mark = (index, kind, label) => {
    const tick = el("span", { class: `rd-mark mark-${kind}`, title: label });
    tick.style.left = `${(100 * index) / span}%`;
    marks.append(tick);
  };
  handStarts.forEach((index) => mark(index, "hand", `hand ${RECORDS[index].hand ?? ""} starts`));
  if (failingSeq !== null) mark(failIndex, "failure", "first failing record");
}

// -- header, verdict, failure ---------------------------------------------------

// Custom rules are named as such, with what they change in their built-in profile: a
// custom variant keeps its profile's title, which would otherwise pass for the profile.
function rulesWords(rules) {
  const named = rules.title ?? rules.name ?? "";
  if (rules.builtin !== false) return named;
  const changes = rules.changes ?? [];
  if (!changes.length) return `custom rules ${rules.name ?? named}`;
  const shown = changes.slice(0, 3).join("; ");
  const more = changes.length > 3 ? `; and ${changes.length - 3} more (see About this log)` : "";
  return `custom rules ${rules.name ?? ""}: ${shown}${more}`;
}

function drawHeader() {
  const game = DATA.game ?? {};
  const rules = game.rules ?? {};
  const tournament = game.tournament ?? null;
  const where = tournament ? ` · ${tournament.name}, table ${tournament.table} of ${tournament.tables}` : "";
  $("rd-game").textContent = game.id
    ? `${DATA.source}${where} · ${rulesWords(rules)} · ${plural(SEATS.length, "player")} · ${plural(RECORDS.length, "record")}`
    : `${DATA.source} · no game could be read from it`;
  const report = DATA.verdict ?? {};
  const verdict = report.verdict ?? "unreadable";
  const box = $("rd-verdict");
  box.dataset.verdict = verdict;
  $("rd-browser-result").dataset.beside = verdict; // the verdict it stands beside (its colours)
  box.querySelector(".rd-verdict-word").textContent = VERDICT_WORDS[verdict] ?? verdict;
  const detail = [];
  if (report.step) detail.push(`step ${report.step.number} (${report.step.title})`);
  if (report.finding) detail.push(report.finding.code);
  if (report.pinned === false) detail.push("table key not pinned");
  box.querySelector(".rd-verdict-detail").textContent = detail.join(" · ");
  box.title = `As the Python verifier (${DATA.software}) judged the log when this page was made.`;

  const failure = $("rd-failure");
  if (DATA.failure) {
    const finding = report.finding ?? {};
    failure.hidden = false;
    const headline = verdict === "unfinished" ? "This log is unfinished. " : "This log does not verify. ";
    const findingWords = `(step ${DATA.failure.step}): ${DATA.failure.code}: ${DATA.failure.message}`;
    failure.replaceChildren(el("strong", { text: headline }));
    if (failingSeq === null) {
      failure.append(`The verifier's finding ${findingWords}.`);
    } else {
      failure.append(`First failing record: `, recordLink(failIndex, `record ${failingSeq}`), ` ${findingWords}`,
        finding.move ? ` — move “${finding.move}”` : "", ". Every record from there on is marked not verified.");
    }
    if (lastFrame < 0 && DATA.replay?.secret === "missing" && RECORDS.length) failure.append(" ", noReplayWords());
  }

  const about = $("rd-about");
  const row = (term, value) => about.append(el("dt", { text: term }), el("dd", { text: value }));
  if (game.id) {
    row("Game", game.id);
    row("Log format", `v${game.format_version}`);
    if (tournament) {
      row("Tournament", `${tournament.name} · table ${tournament.table} of ${tournament.tables} · ${plural(tournament.hands, "hand")}`);
      row("Plan", `sha256 ${tournament.plan} (the plan's commitment: compare with the published plan)`);
    }
    row("Rules", `${rules.name ?? ""}${rules.builtin ? " (built in)" : ""}${rules.sha256 ? ` · sha256 ${rules.sha256}` : ""}`);
    if (rules.builtin === false && rules.changes?.length) row("Custom rules change", rules.changes.join("; "));
  }
  // In full, to compare with `sha256sum` of one's own copy; runChecks replaces the maker's
  // digest with the one this browser computes from the bytes it checks.
  row("Log bytes", DATA.log ? `${DATA.log.bytes} · sha256 ${DATA.log.sha256} (as the page's maker computed it)` : "not embedded (too large to read)");
  if (DATA.log) about.lastElementChild.id = "rd-log-digest";
  row("Made by", DATA.software);
  for (const seat of SEATS) {
    row(`Seat ${seat.seat}`, `${seat.name} (${seat.back} back)${seat.key ? ` · player key ${seat.key.slice(0, 12)}…` : " · no player key"}`);
  }
}

// -- audit and chart ----------------------------------------------------------

const END_WORDS = {
  call: "a call", demon_empty: "an empty demon pile", blocked: "a blocked table",
  no_centre: "no card to the centre", abandoned: "abandonment", resigned: "a resignation",
};

function drawAudit() {
  const holder = $("rd-audit-hands");
  const hands = DATA.audit?.hands ?? [];
  const unscored = notReplayedWords();
  if (!hands.length && !unscored) {
    holder.append(el("p", { class: "rd-note", text: "No hand ended in this log, so there is nothing to score." }));
  }
  if (unscored) holder.append(el("p", { class: "rd-note rd-not-replayed", text: unscored }));
  for (const hand of hands) {
    const by = hand.ended_by === null || hand.ended_by === undefined ? "" : ` by ${seatName(hand.ended_by)}`;
    const caption = el("caption", {}, `Hand ${hand.hand}: ended with ${END_WORDS[hand.reason] ?? hand.reason}${by} at `,
      seqLink(hand.end_seq));
    if (hand.replayed === false) {
      caption.append(el("span", { class: "rd-refused", text: " — the replay refused this hand_end: scored as the table stood at it" }));
    }
    const head = el("thead", {}, el("tr", {},
      ...["Seat", "Cards placed", "Demon left", "Penalty", "Score", "Claimed", ""].map((text) => el("th", { scope: "col", text }))));
    const body = el("tbody");
    for (const entry of hand.seats) {
      const cards = el("td", { class: "rd-placed" });
      for (const placed of entry.placed) {
        const link = el("a", { href: `#seq=${placed.seq}`, class: `rd-chip ${isRed(placed.card) ? "red" : "black"}`,
          title: `record ${placed.seq}`, "aria-label": `${tableView.cardLabel(placed.card, entry.seat)}, placed at record ${placed.seq}`,
          text: cardText(placed.card) });
        cards.append(link, " ");
      }
      cards.prepend(el("span", { class: "rd-placed-count", text: `${entry.placed.length}: ` }));
      const differs = entry.claimed !== null && entry.claimed !== undefined && entry.claimed !== entry.score;
      const swatch = el("span", { class: "rd-swatch", "aria-hidden": "true", text: INITIALS[entry.seat] });
      swatch.style.background = seatColour(entry.seat);
      swatch.style.color = inkOn(seatColour(entry.seat));
      const row = el("tr", { "data-seat": entry.seat, class: differs ? "mismatch" : null },
        el("th", { scope: "row" }, swatch, ` ${seatName(entry.seat)}`),
        cards,
        el("td", { class: "num", "data-field": "demon_left", text: String(entry.demon_left) }),
        el("td", { class: "num", "data-field": "penalty", text: String(entry.penalty) }),
        el("td", { class: "num", "data-field": "score", text: String(entry.score) }),
        el("td", { class: "num", "data-field": "claimed", text: entry.claimed === null || entry.claimed === undefined ? "—" : String(entry.claimed) }),
        el("td", { class: "rd-mark-cell", text: differs ? "≠ claimed" : entry.claimed === null || entry.claimed === undefined ? "no claim" : "✓" }),
      );
      body.append(row);
    }
    const table = el("table", { class: "rd-audit-table", "data-hand": hand.hand }, caption, head, body);
    holder.append(el("div", { class: "rd-audit-scroll" }, table));
  }
  const totals = DATA.audit?.totals ?? [];
  const claimed = DATA.audit?.claimed_totals;
  if (totals.length > 1) {
    const final = totals[totals.length - 1];
    const line = el("p", { class: "rd-totals", "data-totals": final.join(" ") }, "Totals recomputed: ");
    SEATS.forEach((seat, position) => {
      if (position) line.append(", ");
      line.append(`${seat.name} ${final[seat.seat]}`);
    });
    if (claimed) {
      const same = claimed.every((value, seat) => value === final[seat]);
      line.append(same ? "; the final record claims the same." : `; the final record claims ${claimed.join(", ")}: they differ.`);
      line.classList.toggle("mismatch", !same);
    }
    holder.append(line);
  }
  drawContests(holder);
}

// The contested plays (docs/log-format.md §10): each bounce that lost a race (a card too
// late for its foundation level, a move after another seat ended the hand), the record that
// won it, the arrival gap and the seats' logged round trips.
function drawContests(holder) {
  const contests = DATA.audit?.contests ?? [];
  if (!contests.length) return;
  const measured = contests.filter((contest) => contest.spread_ms !== null).length;
  const close = contests.filter((contest) => contest.within_spread).length;
  const caption = el("caption", {},
    `Contested plays: ${contests.length}; of the ${measured} whose seats' round trips are both logged, ${close} decided by less than their spread`);
  const head = el("thead", {}, el("tr", {},
    ...["Hand", "Won by", "Lost by", "Gap", "Round trips (won / lost)", ""].map((text) => el("th", { scope: "col", text }))));
  const body = el("tbody");
  const what = (side, otherwise) => (side.card === null
    ? otherwise
    : el("span", { class: `rd-chip ${isRed(side.card) ? "red" : "black"}`, text: cardText(side.card) }));
  const racer = (side, otherwise) => el("td", {}, `${seatName(side.seat)} `, what(side, otherwise), " at ", seqLink(side.seq));
  const trip = (ms) => (ms === null ? "—" : `${ms} ms`);
  for (const contest of contests) {
    body.append(el("tr", { "data-loser-seq": contest.loser.seq, class: contest.within_spread ? "rd-close" : null },
      el("td", { class: "num", text: String(contest.hand) }),
      racer(contest.winner, "ended the hand"),
      racer(contest.loser, "a move"),
      el("td", { class: "num", text: `${contest.gap_ms} ms` }),
      el("td", { class: "num", text: `${trip(contest.winner.rtt_ms)} / ${trip(contest.loser.rtt_ms)}` }),
      el("td", { class: "rd-mark-cell", text: contest.within_spread ? "within the spread" : "" })));
  }
  const table = el("table", { class: "rd-audit-table rd-contests", "data-contests": contests.length }, caption, head, body);
  holder.append(el("div", { class: "rd-audit-scroll" }, table));
}

const MARKERS = ["circle", "square", "triangle", "diamond", "circle", "square", "triangle", "diamond"];
const DASHES = ["", "6 3", "2 3", "8 3 2 3", "", "6 3", "2 3", "8 3 2 3"];

function marker(shape, x, y, colour) {
  const size = 4;
  if (shape === "square") return svg("rect", { x: x - size, y: y - size, width: 2 * size, height: 2 * size, fill: colour });
  if (shape === "triangle") return svg("path", { d: `M${x} ${y - size - 1}L${x + size + 1} ${y + size}L${x - size - 1} ${y + size}Z`, fill: colour });
  if (shape === "diamond") return svg("path", { d: `M${x} ${y - size - 1}L${x + size + 1} ${y}L${x} ${y + size + 1}L${x - size - 1} ${y}Z`, fill: colour });
  return svg("circle", { cx: x, cy: y, r: size, fill: colour });
}

function niceStep(range) {
  const raw = range / 5;
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  return [1, 2, 5, 10].map((factor) => factor * power).find((step) => step >= raw) ?? power * 10;
}

function drawChart() {
  const totals = DATA.audit?.totals ?? [];
  const wrap = $("rd-chart-wrap");
  const width = 640, height = 280;
  const pad = { left: 48, right: 160, top: 16, bottom: 40 };
  const chart = svg("svg", { id: "rd-chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-labelledby": "rd-chart-title rd-chart-desc", class: "rd-chart" });
  const hands = totals.length - 1;
  const description = hands < 1
    ? (notReplayedWords() ? "No hand was replayed to its end, so there are no totals to draw." : "No hand ended, so there are no totals to draw.")
    : SEATS.map((seat) => `${seat.name}: ${totals.map((row) => row[seat.seat]).join(", ")}`).join("; ") + ".";
  chart.append(svg("title", { id: "rd-chart-title" }, "Each seat's running total after each hand"),
    svg("desc", { id: "rd-chart-desc" }, `Totals from 0 before hand 1, after each hand in turn. ${description}`));
  const values = totals.flat();
  let low = Math.min(0, ...values), high = Math.max(0, ...values);
  if (high === low) high = low + 10;
  const step = niceStep(high - low);
  low = Math.floor(low / step) * step;
  high = Math.ceil(high / step) * step;
  const x = (hand) => pad.left + (hands < 1 ? 0 : ((width - pad.left - pad.right) * hand) / hands);
  const y = (value) => pad.top + ((height - pad.top - pad.bottom) * (high - value)) / (high - low);
  const axes = svg("g", { class: "axes" });
  for (let value = low; value <= high; value += step) {
    axes.append(svg("line", { x1: pad.left, x2: width - pad.right, y1: y(value), y2: y(value), class: value === 0 ? "zero" : "grid" }),
      svg("text", { x: pad.left - 6, y: y(value) + 4, "text-anchor": "end" }, String(value)));
  }
  const labelEvery = Math.max(1, Math.ceil(hands / 12));
  for (let hand = 0; hand <= hands; hand += labelEvery) {
    axes.append(svg("text", { x: x(hand), y: height - pad.bottom + 16, "text-anchor": "middle" }, String(hand)));
  }
  axes.append(svg("text", { x: (pad.left + width - pad.right) / 2, y: height - 6, "text-anchor": "middle", class: "axis-title" }, "after hand"),
    svg("text", { x: 12, y: (pad.top + height - pad.bottom) / 2, "text-anchor": "middle", class: "axis-title", transform: `rotate(-90 12 ${(pad.top + height - pad.bottom) / 2})` }, "total"),
    svg("line", { x1: pad.left, x2: pad.left, y1: pad.top, y2: height - pad.bottom, class: "axis" }),
    svg("line", { x1: pad.left, x2: width - pad.right, y1: height - pad.bottom, y2: height - pad.bottom, class: "axis" }));
  chart.append(axes);
  SEATS.forEach((seat, position) => {
    const colour = seatColour(seat.seat);
    const points = totals.map((row, hand) => `${x(hand)},${y(row[seat.seat])}`).join(" ");
    const series = svg("g", { class: "series", "data-seat": seat.seat });
    // A faint halo under each line keeps the palette's black visible on a dark page.
    series.append(svg("polyline", { points, fill: "none", class: "halo", "stroke-width": 5 }),
      svg("polyline", { points, fill: "none", stroke: colour, "stroke-width": 2.5, "stroke-dasharray": DASHES[position] }));
    totals.forEach((row, hand) => {
      const dot = marker(MARKERS[position], x(hand), y(row[seat.seat]), colour);
      dot.append(svg("title", {}, `${seat.name}: ${row[seat.seat]} after hand ${hand}`));
      series.append(dot);
    });
    const legendY = pad.top + 8 + position * 20;
    const legendX = width - pad.right + 14;
    series.append(svg("line", { x1: legendX, x2: legendX + 22, y1: legendY, y2: legendY, stroke: colour, "stroke-width": 2.5, "stroke-dasharray": DASHES[position] }),
      marker(MARKERS[position], legendX + 11, legendY, colour),
      svg("text", { x: legendX + 28, y: legendY + 4, class: "legend" }, `${seat.name.slice(0, 18)} ${totals.length ? totals[totals.length - 1][seat.seat] : ""}`));
    chart.append(series);
  });
  wrap.replaceChildren(chart);
}

// -- the browser's own checks -------------------------------------------------

const CHECK_NAMES = RDCheck.CHECKS;
const checks = { run: 0, bytes: null, pinned: null, pinnedFrom: "" };

function drawChecks(results, done) {
  const list = $("rd-checks");
  list.replaceChildren();
  const byName = new Map(results.map((result) => [result.check, result]));
  for (const name of CHECK_NAMES) {
    const result = byName.get(name) ?? { check: name, status: "running", seq: null, words: "" };
    const item = el("li", { "data-check": name, "data-status": result.status, "data-seq": result.seq ?? "" },
      el("span", { class: "rd-check-mark", "aria-hidden": "true", text: { pass: "✓", fail: "✗", running: "…", unsupported: "?", unpinned: "?", "not-applicable": "–", error: "!" }[result.status] ?? "?" }),
      el("span", { class: "rd-check-title", text: CHECK_TITLES[name] }),
      el("span", { class: "rd-check-status", text: ` — ${CHECK_STATUS_WORDS[result.status] ?? result.status}` }));
    if (result.seq !== null && result.seq !== undefined) item.append(", at ", seqLink(result.seq));
    if (result.words) item.append(el("span", { class: "rd-check-words", text: result.words }));
    list.append(item);
  }
  list.dataset.done = String(done);
  list.dataset.pinned = String(checks.pinned !== null);
}

// An unfinished log (no final record) fails nothing it holds, but with no secret revealed
// its commitment and packs were never checked: incomplete, never a pass.
function checksResult(results, finished) {
  if (results.some((result) => result.status === "fail")) return "fail";
  if (!finished) return "incomplete";
  if (results.some((result) => result.status === "unsupported" || result.status === "unpinned")) return "incomplete";
  return "pass";
}

function drawBrowserResult(result, word) {
  const badge = $("rd-browser-result");
  badge.dataset.result = result;
  badge.querySelector(".rd-verdict-word").textContent = word;
}

// The table key the checks use: the reader's pinned one, else the one the maker embedded.
function tableKey() {
  return checks.pinned ?? (DATA.table_key ? RDCheck.hex.fromHex(DATA.table_key) : null);
}

async function drawKeyState() {
  const state = $("rd-key-state");
  const key = tableKey();
  if (!key) {
    state.textContent = "No table key: the page's maker gave none, so the table's signatures cannot be checked until you pin its public key.";
    return;
  }
  const id = await sha256Hex(key);
  state.textContent = checks.pinned
    ? `Table key pinned by you (${checks.pinnedFrom}), key id ${id.slice(0, 16)}…`
    : `Table key: the key given to the page's maker, key id ${id.slice(0, 16)}…. Pin your own copy to check against a key you trust.`;
}

async function runChecks() {
  const run = ++checks.run;
  drawChecks([], false);
  const summary = $("rd-checks-summary");
  summary.textContent = "Checking…";
  drawBrowserResult("", "checking…");
  $("rd-checks").dataset.result = "";
  await drawKeyState();
  try {
    if (!DATA.log) throw new Error("the page holds no copy of the log (it was too large to read)");
    if (!checks.bytes) {
      checks.bytes = await RDCheck.gunzip(DATA.log.data);
      const digest = await sha256Hex(checks.bytes);
      $("rd-log-digest").textContent = `${checks.bytes.length} · sha256 ${digest} (computed by this browser from the bytes it checks)`;
    }
    const outcome = await RDCheck.run(checks.bytes, { tableKey: tableKey() });
    if (run !== checks.run) return;
    drawChecks(outcome.results, true);
    const result = checksResult(outcome.results, outcome.finished);
    $("rd-checks").dataset.result = result;
    const words = {
      pass: "Every check above passed in this browser: the lines, chain, signatures and deal are as the table signed them. The moves and the scores are not checked here; the Python verifier's verdict above is the word on them.",
      fail: "This browser found a failure.",
      incomplete: outcome.finished
        ? "Some checks could not be made (see above): the result is incomplete."
        : "The log has no final record, so the dealer's secret is not revealed: the commitment and the packs could not be checked, and the result is incomplete.",
    };
    summary.textContent = words[result];
    // Words for these checks alone, never for the game: they do not replay the moves.
    drawBrowserResult(result, { pass: "no fault found", fail: "FAULT FOUND", incomplete: "INCOMPLETE" }[result]);
    if (!outcome.ed25519) {
      summary.append(el("strong", { class: "rd-no-ed25519", text: " This browser lacks Ed25519 in Web Crypto, so no signature could be checked here; the Python verifier's verdict above still stands." }));
    }
    summary.className = `rd-checks-summary result-${result}`;
    summary.dataset.beside = DATA.verdict?.verdict ?? ""; // green only beside a verified log
    await runEngine(outcome);
  } catch (error) {
    if (run !== checks.run) return;
    const words = `not run: ${error?.message ?? error}`;
    drawChecks(CHECK_NAMES.map((check) => ({ check, status: "error", seq: null, words })), true);
    const list = $("rd-checks");
    list.dataset.result = "incomplete";
    summary.textContent = `The checks could not run in this browser: ${error?.message ?? error}`;
    drawBrowserResult("incomplete", "COULD NOT RUN");
    summary.className = "rd-checks-summary result-incomplete";
    if (checks.bytes) await runEngine(null);
  }
}

// -- the engine: the moves and the scores, checked here -----------------------
// A page made with `view --engine` holds the runtime and this package's own verifier
// (engine.js); it judges the log with the Ed25519 equations left to the checks above, and
// the page's verdict is the first failure, in docs/log-format.md §7's order, of the
// engine's and of those checks' equation failures. Then it is set beside the Python
// verifier's, loudly where they differ. Without the runtime the box says how to get it.

const engineRun = { booting: null, run: 0 };

const VERDICT_FIELDS = ["verdict", "step", "code", "line", "rule"];

function verdictText(verdict) {
  const where = [
    verdict.step !== null ? `step ${verdict.step}` : null,
    verdict.code,
    verdict.line !== null ? `line ${verdict.line}` : null,
    verdict.rule !== null ? `rule ${verdict.rule}` : null,
  ].filter((part) => part !== null);
  return `${VERDICT_WORDS[verdict.verdict] ?? verdict.verdict}${where.length ? ` (${where.join(", ")})` : ""}`;
}

function drawEngine(state, word, detail, verdict = null) {
  const box = $("rd-engine");
  box.dataset.state = state;
  for (const field of VERDICT_FIELDS) box.dataset[field] = verdict?.[field] ?? "";
  box.dataset.verdict = verdict?.verdict ?? "";
  box.querySelector(".rd-verdict-word").textContent = word;
  box.querySelector(".rd-verdict-detail").replaceChildren(...[detail].flat());
}

async function runEngine(outcome) {
  // engine.js is inlined only in a page made with the engine.
  if (typeof RDEngine === "undefined" || !RDEngine.available(document)) return;
  const run = ++engineRun.run;
  const config = JSON.parse($("rd-engine-config").textContent);
  const box = $("rd-engine");
  $("rd-checks-scope").textContent = "This page re-checks the embedded log with the browser's Web Crypto, independently of the Python verifier: its lines, chain, signatures, secret, entropy and packs. The moves and the scores are replayed by this package's own verifier running in this browser (the box at the top).";
  drawEngine("booting", "starting…", `Starting Pyodide ${config.runtime.version} (CPython in WebAssembly) in this browser: a few seconds.`);
  try {
    engineRun.booting ??= RDEngine.boot({ inline: document });
    const engine = await engineRun.booting;
    performance.mark("rd-engine-booted");
    const key = tableKey();
    const started = performance.now();
    const report = await engine.judge(checks.bytes, {
      tableKey: key ? RDCheck.hex.toHex(key) : null,
      rules: config.rules,
      limits: config.limits,
      failedEquations: outcome?.failedEquations ?? [],
    });
    const judged = performance.now() - started;
    performance.mark("rd-engine-judged");
    if (run !== engineRun.run) return;
    const verdict = RDEngine.pageVerdict(report, outcome);
    const cli = RDEngine.verdictOf(DATA.verdict);
    const differs = VERDICT_FIELDS.filter((field) => (verdict[field] ?? null) !== (cli[field] ?? null));
    const disagreement = verdict.disagreement;
    Object.assign(box.dataset, {
      agrees: String(differs.length === 0 && disagreement === null),
      differs: differs.join(" "),
      bootMs: Math.round(engine.timings.bootMs + engine.timings.bundleMs + engine.timings.importMs),
      pyodideMs: Math.round(engine.timings.bootMs),
      importMs: Math.round(engine.timings.importMs),
      judgeMs: Math.round(judged),
      records: report.records ?? "",
    });
    const equations = outcome === null || !outcome.ed25519
      ? " The signatures' equations could NOT be checked in this browser, so this verdict does not cover them."
      : " The signatures' equations were checked by this browser's Web Crypto (above).";
    const detail = [
      `Replayed with this package's own verifier (racing-demon, on Pyodide ${config.runtime.version}: ${config.runtime.licences}) in this browser: every move, bounce and score recomputed.${equations}`,
    ];
    if (differs.length) {
      detail.push(el("strong", { class: "rd-engine-differs", text: ` THIS PAGE'S VERDICT DIFFERS FROM THE PYTHON VERIFIER'S (${differs.join(", ")}): the verifier said ${verdictText(cli)}.` }));
    } else {
      detail.push(" It agrees with the Python verifier's verdict in verdict, step, code, line and rule.");
    }
    if (disagreement !== null) {
      const check = CHECK_TITLES[disagreement.check] ?? disagreement.check;
      detail.push(el("strong", { class: "rd-engine-differs", text: ` THE BROWSER'S CHECKS AND THE ENGINE DISAGREE: "${check}" failed here (${disagreement.code}, line ${disagreement.line}) where the engine found nothing.` }));
    }
    drawEngine("done", verdictText(verdict), detail, verdict);
  } catch (error) {
    if (run !== engineRun.run) return;
    drawEngine("error", "COULD NOT RUN", `The engine could not run in this browser (${error?.message ?? error}): the moves and scores were not checked here.`);
  }
}

async function pinKeyFile(file) {
  const problem = $("rd-key-error");
  problem.textContent = "";
  try {
    const key = RDCheck.parsePublicKeyFile(await file.text());
    checks.pinned = key;
    checks.pinnedFrom = file.name;
    $("rd-checks").dataset.pinned = "true";
    await runChecks();
  } catch (error) {
    problem.textContent = `Not pinned: ${file.name}: ${error?.message ?? error}`;
  }
}

function bindKeyDrop() {
  const input = $("rd-key-input");
  input.addEventListener("change", () => {
    if (input.files?.length) pinKeyFile(input.files[0]);
  });
  const zone = $("rd-key-drop");
  for (const name of ["dragenter", "dragover"]) {
    zone.addEventListener(name, (event) => {
      event.preventDefault();
      zone.classList.add("dragging");
    });
  }
  zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("dragging");
    const file = event.dataTransfer?.files?.[0];
    if (file) pinKeyFile(file);
  });
  // A file dropped elsewhere must not replace the page with the key's text.
  window.addEventListener("dragover", (event) => event.preventDefault());
  window.addEventListener("drop", (event) => event.preventDefault());
  $("rd-rerun").addEventListener("click", () => runChecks());
}

// -- start ----------------------------------------------------------------------

function start() {
  bindControls();
  drawHeader();
  const fromHash = indexFromHash();
  const opening = fromHash ?? (failingSeq !== null ? failIndex : (handStarts[0] ?? 0));
  if (RECORDS.length) go(opening, { writeHash: fromHash !== null });
  else showNoRecord();
  document.body.dataset.ready = "true";
  performance.mark("rd-first-frame"); // for bench/viewer.py: time to the first frame
  // The first frame is on screen; the rest can wait for the next turn of the event loop.
  setTimeout(() => {
    drawMarks();
    drawAudit();
    drawChart();
    bindKeyDrop();
    runChecks();
  }, 0);
}

start();
