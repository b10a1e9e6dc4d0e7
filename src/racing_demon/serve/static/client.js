// client.js: the player's side of `racing-demon serve` in the browser (docs/protocol.md).
//
// RDClient holds what a player must hold for a game to be disputable: an Ed25519 key made
// by Web Crypto that never leaves the browser (non-extractable, kept in IndexedDB), its own
// copy of the log and every receipt, each checked as it arrives with the viewer's checks
// (RDCheck, check.js, loaded first), and the signatures it makes only after checking what
// it signs (docs/protocol.md §6). It draws nothing: the pages (lobby.js, play.js) listen
// to its events. Everything it holds is written to IndexedDB before it is acted on, so a
// reload or a dropped connection goes on from the last record held (§10).
//
// When the server sends something that does not verify, the client stops: it closes the
// connection, signs nothing more, keeps what it holds as evidence and says so with a
// `problem` event. It never judges a move itself: the server's `moves` list is advice, the
// table judges every submission, and at the end, when the final record's body reveals the
// dealer's secret, the page's rules engine (this package's own verifier in Pyodide, given
// as `engine`: play-engine.js) replays the whole copy before the player may accept.
const RDClient = (() => {
  "use strict";

  const subtle = globalThis.crypto.subtle;
  const encoder = new TextEncoder();
  const { toHex, fromHex } = RDCheck.hex;
  const { sha256Hex, pae } = RDCheck.bytes;
  const LOG_VERSION = 4; // the log format a new table writes, and its genesis is co-signed in
  const ENTROPY_VERSION = 2; // but an entropy contribution's, the same in every format since v2
  // The archive's receipts file of this seat, read after the end: within 10 s, at most
  // 16 MiB (a receipt is about 600 bytes; a seat makes a few thousand submissions a game).
  const ARCHIVE_MS = 10000;
  const ARCHIVE_BYTES = 16 * 1024 * 1024;
  const PROTOCOL = 1;
  const SUBMISSION_KINDS = new Set(["move", "tie", "call", "agree", "resign", "bounce"]);
  // Between attempts to reconnect: never more than 750 ms, so that a player is playing
  // again within about a second of the network's return (issue 35); an attempt while it is
  // away costs the server nothing (no connection reaches it). The browser's `online`
  // event, where it fires, tries at once.
  const BACKOFF_MS = [250, 500, 750];
  // A submission unanswered this long is sent again, unchanged, and again each time this
  // long passes (docs/protocol.md §10, "Sending again": the table answers a copy of one it
  // logged with the same receipt, and never logs it twice).
  const RESEND_MS = 1000;
  // New submissions at most about 8 a second: the server refuses a connection's messages
  // past 10 a second (docs/protocol.md §9), and a submission sent again needs room too.
  const SEND_INTERVAL_MS = 120;
  // A submission unanswered this long: the connection is dropped and the next catch-up
  // says what became of it (docs/protocol.md §10), as for any lost connection.
  const RECEIPT_TIMEOUT_MS = 10000;
  const MAX_HANDS = 500; // rules.MAX_HANDS: every match ends after 500 hands
  // How long the final's check waits for an engine still loading: the table's acceptance
  // window is 15 s, and the player needs some of it to read and answer.
  const ENGINE_WAIT_MS = 8000;
  const NDJSON = "application/x-ndjson";

  const utf8 = (text) => encoder.encode(text);
  const canonicalText = (value) => RDCheck.canonical.encode(value);
  // A string the server sent as canonical bytes: its value, or null when it is not
  // canonical JSON of an object (docs/protocol.md §2, "Bytes inside strings").
  const readCanonical = (text) => {
    if (typeof text !== "string") return null;
    const read = RDCheck.line.read(utf8(text));
    return read.code === undefined ? read.value : null;
  };

  // -- IndexedDB ("racing-demon") ------------------------------------------------------

  const DB_NAME = "racing-demon";
  const DB_VERSION = 1;
  // keys: "current" -> the key pair; seats: game -> seat record; games: game -> what the
  // client knows of it (table key, problem, end); records: [game, seq] -> line;
  // receipts: [game, i] -> line; pending: [game, ref] -> submission; signed: [game, what]
  // -> what it signed; packs: [game, hand] -> faces; evidence: [game, i] -> a line refused.
  const STORES = [
    "keys",
    "seats",
    "games",
    "records",
    "receipts",
    "pending",
    "signed",
    "packs",
    "evidence",
  ];
  let dbPromise = null;
  const openDb = () => {
    dbPromise ??= new Promise((resolve, reject) => {
      const request = indexedDB.open(DB_NAME, DB_VERSION);
      request.onupgradeneeded = () => {
        for (const name of STORES)
          if (!request.result.objectStoreNames.contains(name))
            request.result.createObjectStore(name);
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    return dbPromise;
  };
  // One transaction; resolves with the last request's result once it has committed.
  const transact = async (store, mode, work) => {
    const db = await openDb();
    return new Promise((resolve, reject) => {
      const transaction = db.transaction(store, mode, { durability: "strict" });
      let request = null;
      try {
        request = work(transaction.objectStore(store));
      } catch (error) {
        transaction.abort();
        reject(error);
        return;
      }
      transaction.oncomplete = () => resolve(request?.result);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error ?? new Error("transaction aborted"));
    });
  };
  const dbGet = (store, key) => transact(store, "readonly", (s) => s.get(key));
  const dbPut = (store, key, value) => transact(store, "readwrite", (s) => s.put(value, key));
  const dbDelete = (store, key) => transact(store, "readwrite", (s) => s.delete(key));
  // Every value whose key is [game, ...], in key order.
  const dbGameValues = (store, game) =>
    transact(store, "readonly", (s) => s.getAll(IDBKeyRange.bound([game], [game, []])));

  // -- the player's key ------------------------------------------------------------------

  const ED25519 = { name: "Ed25519" };
  const keyShape = (stored) => ({
    id: stored.id,
    publicHex: stored.publicHex,
    created: stored.created,
  });
  const makeKey = async () => {
    // false: the private key can never be exported, by this page or any other script.
    const pair = await subtle.generateKey(ED25519, false, ["sign", "verify"]);
    const raw = new Uint8Array(await subtle.exportKey("raw", pair.publicKey));
    const stored = {
      pair,
      publicHex: toHex(raw),
      id: await sha256Hex(raw),
      created: new Date().toISOString(),
    };
    await dbPut("keys", "current", stored);
    return stored;
  };
  let keyPromise = null;
  const currentKey = () => {
    keyPromise ??= dbGet("keys", "current").then((stored) => stored ?? makeKey());
    keyPromise.catch(() => (keyPromise = null));
    return keyPromise;
  };
  // The key's signature of kind over bytes (docs/log-format.md §5): PAE of the log's format,
  // logVersion (a table resumed after an upgrade goes on in its log's own), but an entropy
  // contribution's, which is of format v2 in every log that has one.
  const signBytes = async (stored, kind, bytes, logVersion = LOG_VERSION) => {
    const version = kind === "entropy" ? ENTROPY_VERSION : logVersion;
    const signature = await subtle.sign(ED25519, stored.pair.privateKey, pae(kind, bytes, version));
    return toHex(new Uint8Array(signature));
  };
  const pem = (der) => {
    const base64 = btoa(String.fromCharCode(...der));
    const lines = base64.match(/.{1,64}/g).join("\n");
    return `-----BEGIN PUBLIC KEY-----\n${lines}\n-----END PUBLIC KEY-----\n`;
  };

  const keys = Object.freeze({
    async load() {
      return keyShape(await currentKey());
    },
    // The public key as racing-demon keygen writes one: SubjectPublicKeyInfo PEM.
    async exportPub() {
      const stored = await currentKey();
      const der = new Uint8Array(await subtle.exportKey("spki", stored.pair.publicKey));
      return { name: `racing-demon-player-${stored.id.slice(0, 12)}.pub`, text: pem(der) };
    },
    // A new pair; the old private key is gone for good (games joined with it cannot be
    // played from this browser any more).
    async startOver() {
      await dbDelete("keys", "current");
      keyPromise = makeKey();
      return keyShape(await keyPromise);
    },
  });

  // -- the lobby -------------------------------------------------------------------------

  class LobbyError extends Error {
    constructor(code, message, status = null) {
      super(`${code}: ${message}`);
      this.name = "LobbyError";
      this.code = code;
      this.status = status;
      this.detail = message;
    }
  }
  const call = async (method, path, body = undefined) => {
    let response;
    try {
      response = await fetch(path, {
        method,
        headers: body === undefined ? {} : { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store",
      });
    } catch (error) {
      throw new LobbyError("OFFLINE", `the server did not answer (${error.message})`);
    }
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      answer = null;
    }
    if (!response.ok) {
      const error = answer?.error;
      throw new LobbyError(
        error?.code ?? `HTTP_${response.status}`,
        error?.message ?? `the server answered ${response.status}`,
        response.status,
      );
    }
    return answer;
  };
  const lobby = Object.freeze({
    createTable: (body) => call("POST", "/api/tables", body),
    tables: async () => (await call("GET", "/api/tables")).tables,
    games: async () => (await call("GET", "/api/games")).games,
    async join(game, seat, name) {
      const key = await currentKey();
      const answer = await call("POST", `/api/tables/${game}/seats/${seat}`, {
        name,
        key: key.publicHex,
      });
      const record = { game, seat, token: answer.token, name, keyId: key.id };
      await dbPut("seats", game, record);
      return record;
    },
  });
  // A link the server names (a game's log, view page, receipts) is followed only when it
  // is a path of this server's under /games/<id>: never a scheme, a host or a script.
  const GAME_PATH = /^\/games\/[0-9a-f]{32}(?!.*\.\.)(?:[./][A-Za-z0-9._-]+)*$/;
  const gameHref = (text) => (typeof text === "string" && GAME_PATH.test(text) ? text : null);

  const seats = Object.freeze({
    forGame: async (game) => (await dbGet("seats", game)) ?? null,
  });

  // -- what the client recomputes ----------------------------------------------------------

  const CARD_MOVE = /^[0-9]+ ([a-z0-9]+)>([a-z0-9+]+) (.+)$/;
  // Rules.digest(): SHA-256 of the document as json.dumps(sort_keys=True, separators=(",",
  // ":")) writes it, every character beyond ASCII escaped (docs/profiles.md).
  const asciiJson = (value) =>
    canonicalText(value).replace(
      /[\u007f-\uffff]/g,
      (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
  const rulesDigest = (rules) => sha256Hex(utf8(asciiJson(rules)));

  // Each hand's scores from the copy alone (docs/rules.md §7): a seat scores
  // per_foundation_card for each of its logged move/tie records to a foundation (a card
  // to the centre is always one card, always the mover's own) and per_demon_card for each
  // demon card it did not play out; then the match's end as docs/rules.md §8 decides it.
  const recomputeMatch = (bodies, rules, seatCount) => {
    const problems = [];
    const scoring = rules.scoring;
    const demonCards = rules.layout.demon_cards;
    const hands = [];
    let current = null;
    let ended = null;
    for (const body of bodies) {
      if (body.kind === "hand_start") {
        if (current !== null) problems.push(`hand ${current.hand} has no hand_end record`);
        current = {
          hand: body.hand,
          placed: Array(seatCount).fill(0),
          fromDemon: Array(seatCount).fill(0),
          resigned: null,
        };
      } else if (current === null) {
        if (body.kind !== "genesis") problems.push(`record ${body.seq} lies outside a hand`);
      } else if (body.kind === "move" || body.kind === "tie") {
        const parts = CARD_MOVE.exec(body.move);
        if (parts !== null) {
          if (parts[2].startsWith("f")) current.placed[body.player] += 1;
          if (parts[1] === "demon") current.fromDemon[body.player] += 1;
        }
      } else if (body.kind === "resign") {
        current.resigned = body.player;
      } else if (body.kind === "hand_end") {
        const scores = current.placed.map(
          (placed, seat) =>
            scoring.per_foundation_card * placed +
            scoring.per_demon_card * (demonCards - current.fromDemon[seat]),
        );
        if (canonicalText(scores) !== canonicalText(body.scores))
          problems.push(
            `hand ${body.hand}: the copy scores ${scores.join(", ")}, ` +
              `its hand_end says ${body.scores}`,
          );
        hands.push({ scores, reason: body.reason, resigned: current.resigned });
        ended = body.reason;
        current = null;
      }
    }
    if (current !== null) problems.push(`hand ${current.hand} has no hand_end record`);
    const totals = Array(seatCount).fill(0);
    for (const hand of hands) hand.scores.forEach((score, seat) => (totals[seat] += score));
    const last = hands.at(-1);
    const abandoned = ended === "abandoned";
    const resigned = ended === "resigned" ? last.resigned : null;
    const match = rules.match;
    const best = hands.length ? Math.max(...totals) : 0;
    const reached = match.target !== null && best >= match.target;
    const exhausted = match.max_hands !== null && hands.length >= match.max_hands;
    const leadTied = totals.filter((total) => total === best).length > 1;
    const over =
      hands.length > 0 &&
      (abandoned ||
        resigned !== null ||
        hands.length >= MAX_HANDS ||
        ((reached || exhausted) && !(leadTied && match.lead_tie === "play_on")));
    if (!over) problems.push("by the rules the match is not over after these hands");
    let winners = [];
    if (over && !abandoned) {
      const contenders = totals.map((_, seat) => seat).filter((seat) => seat !== resigned);
      const top = Math.max(...contenders.map((seat) => totals[seat]));
      winners = contenders.filter((seat) => totals[seat] === top);
    }
    const reason = abandoned ? "abandoned" : resigned !== null ? "resigned" : "complete";
    return { hands: hands.map((hand) => hand.scores), totals, winners, reason, problems };
  };

  // -- the game --------------------------------------------------------------------------

  const CODE_WORDS = Object.freeze({
    RECORD_NOT_CANONICAL: "a record that is not the canonical line of a record",
    CHAIN_BROKEN: "a record that does not follow the last one held (seq or prev)",
    BAD_TABLE_SIGNATURE: "a record without a valid signature of the table's key",
    SEEN_NOT_OURS: "a record of this seat that is not a submission this client sent",
    GENESIS_MISMATCH: "a genesis that is not the one this client checked and co-signed",
    PACK_MISMATCH: "a pack that is not the one the hand's digest names",
    BAD_RECEIPT: "a receipt that does not verify or names another submission",
    FORK: "a second record at a seq this client holds",
    SCORES_MISMATCH: "a final result other than the scores recomputed from the copy",
    COMMITMENT_MISMATCH: "a second commitment, or a secret that does not open the commitment",
    PROTOCOL: "a message off the protocol",
    // Not the server's doing: this browser's storage, Web Crypto or this page's code failed.
    CLIENT_ERROR: "this browser failed to keep or check what it was sent (storage, crypto or code)",
  });

  class Problem extends Error {
    constructor(code, message, seq = null) {
      super(message);
      this.code = code;
      this.seq = seq;
    }
  }
  const refuse = (code, message, seq = null) => {
    throw new Problem(code, message, seq);
  };
  // The final's check when the engine did not judge the copy ("absent": none on this server).
  const notJudged = (why, state = "unchecked") => ({
    state,
    why,
    records: null,
    ms: null,
    finding: null,
  });

  // The record a bounce lost its race to, as the table names it in the bounce (log format
  // v4, `lost_to`: docs/log-format.md §6), which the engine in the page checks as it
  // replays; null for a bounce that lost no race, and in an older log, which names none.
  const wonBy = (bounce) => bounce?.lost_to?.seq ?? null;

  class Game {
    constructor(gameId, { onEvent = () => {}, engine = null } = {}) {
      if (!/^[0-9a-f]{32}$/.test(gameId)) throw new Error("a game id is 32 lowercase hex");
      this.gameId = gameId;
      this.onEvent = onEvent;
      this.engine = engine; // RDPlayEngine's, or null: a page without one
      this.copyName = `${gameId}.jsonl`;
      this.seatRecord = null;
      this.key = null; // the seat's key pair, from start()
      this.lines = []; // the copy: each record's line, without its newline
      this.bodies = []; // each record's parsed body
      this.lastHash = null; // SHA-256 of the last line: the next prev, and `seen`
      this.receipts = [];
      this.receiptTexts = new Set(); // a receipt sent again is kept once
      this.receipted = new Set(); // statement hashes whose logged receipt this client holds
      this.evidence = []; // each line refused, as received (a FORK's other record, say)
      this.tableKey = null; // raw bytes, from the first welcome
      this.welcome = null;
      this.hand = null;
      this.nextN = 0;
      this.packs = new Map(); // hand -> faces
      this.signed = new Map(); // "commitment" | "entropy" | "genesis" | "final" -> value
      this.queue = []; // submissions not yet answered: {ref, move, signing, promise, ...}
      // statement hash -> {ref, n, move, seen, statement, signature, hash, sentAt}
      this.signings = new Map();
      this.byN = new Map(); // n -> every signing made with that n
      this.inFlight = null;
      this.refCount = 0;
      this.moves = null; // the last `moves` list
      this.movesSeen = false; // this server sends `moves` (a catch-up ends with them)
      this.catchingUp = false;
      this.pendingFinal = null; // a final body whose records are still coming
      this.finalAsked = null; // {body, check} while the player decides
      this.finalAnswer = undefined; // the signature (or null) once answered
      this.connection = "connecting";
      this.socket = null;
      this.attempt = 0;
      this.retryTimer = null;
      this.lastSentAt = -Infinity; // when a new submission was last sent
      this.pumpTimer = null;
      this.work = Promise.resolve(); // messages are handled one at a time, in order
      this.stopped = false;
      this.ended = null;
      this.problem = null;
      this.closed = false;
      globalThis.addEventListener?.("online", () => {
        if (this.connection !== "offline" || this.socket !== null || this.closed) return;
        clearTimeout(this.retryTimer);
        this.connect();
      });
    }

    get receiptsName() {
      const seat = this.seatRecord?.seat ?? "spectator";
      return `${this.gameId}.seat${seat}.receipts.jsonl`;
    }

    get evidenceName() {
      const seat = this.seatRecord?.seat ?? "spectator";
      return `${this.gameId}.seat${seat}.evidence.jsonl`;
    }

    get state() {
      return {
        seat: this.seatRecord?.seat ?? null,
        welcome: this.welcome,
        lastSeq: this.lines.length - 1,
        lastHash: this.lastHash,
        hand: this.hand,
        nextN: this.nextN,
        connection: this.connection,
        pending: this.queue.map(({ ref, move, signing }) => ({
          ref,
          move,
          n: signing?.n ?? null,
          sent: signing !== null,
        })),
        ended: this.ended !== null,
        problem: this.problem,
      };
    }

    emit(type, fields = {}) {
      try {
        this.onEvent({ type, ...fields });
      } catch (error) {
        console.error("RDClient: an onEvent handler threw", error);
      }
    }

    // -- starting: what IndexedDB holds ----------------------------------------------------

    async start() {
      const game = this.gameId;
      this.seatRecord = await seats.forGame(game);
      if (this.seatRecord !== null) {
        // The key the seat was joined with, for the whole game: starting over in another
        // tab does not change whose signatures this game gets.
        const key = await currentKey();
        this.key = key;
        if (key.id !== this.seatRecord.keyId)
          throw new Error(
            "this seat was joined with another key: it cannot be played from this browser any more",
          );
      }
      const meta = (await dbGet("games", game)) ?? {};
      if (meta.tableKey) this.tableKey = fromHex(meta.tableKey);
      this.movesSeen = meta.movesSeen === true;
      this.lines = await dbGameValues("records", game);
      this.bodies = this.lines.map((line) => JSON.parse(line).body);
      this.lastHash = this.lines.length ? await sha256Hex(utf8(this.lines.at(-1))) : null;
      for (const body of this.bodies) this.follow(body);
      this.receipts = await dbGameValues("receipts", game);
      for (const text of this.receipts) this.holdReceipt(text, readCanonical(text)?.body);
      this.evidence = (await dbGameValues("evidence", game)).map(({ text }) => text);
      for (const [what, value] of await this.storedSigned()) {
        if (what.startsWith("submission:")) value.forEach((signing) => this.register(signing));
        else this.signed.set(what, value);
      }
      for (const { hand, cards } of await dbGameValues("packs", game))
        this.packs.set(hand, cards);
      const pending = await dbGameValues("pending", game);
      // Refs stay unique across loads: a new submission never shares one with a signing
      // kept from an earlier page, whose record or receipt could be taken for its own.
      for (const { ref } of [...this.signings.values(), ...pending])
        if (/^m[0-9]+$/.test(ref))
          this.refCount = Math.max(this.refCount, Number(ref.slice(1)) + 1);
      for (const { ref, move, hash } of pending) {
        const signing = hash === undefined ? null : (this.signings.get(hash) ?? null);
        const hashes = new Set(signing === null ? [] : [signing.hash]);
        this.queue.push({ ref, move, signing, hashes, ...this.settlers() });
      }
      if (meta.problem) {
        this.stopped = true;
        this.problem = meta.problem;
        this.connection = "stopped";
        this.emit("problem", meta.problem);
        this.emit("connection", { state: "stopped", attempt: 0, code: meta.problem.code });
        return;
      }
      if (meta.ended) {
        this.ended = meta.ended;
        this.connection = "stopped";
        await this.announceEnd(meta.ended);
        return;
      }
      this.connect();
    }

    async storedSigned() {
      const entries = await transact("signed", "readonly", (s) =>
        s.getAll(IDBKeyRange.bound([this.gameId], [this.gameId, []])),
      );
      return entries.map((entry) => [entry.what, entry.value]);
    }

    saveSigned(what, value) {
      this.signed.set(what, value);
      return dbPut("signed", [this.gameId, what], { what, value });
    }

    settlers() {
      const settle = {};
      settle.promise = new Promise((resolve, reject) => {
        settle.resolve = resolve;
        settle.reject = reject;
      });
      settle.promise.catch(() => {}); // a caller that does not wait is not an error
      return settle;
    }

    // What a record changes in what the client knows (hand, next submission number).
    follow(body) {
      if (body.kind === "hand_start") this.hand = body.hand;
      if (SUBMISSION_KINDS.has(body.kind) && body.player === this.seatRecord?.seat)
        this.nextN = Math.max(this.nextN, body.n + 1);
    }

    // -- the connection ------------------------------------------------------------------

    url() {
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      const seat = this.seatRecord;
      const query = seat ? `?seat=${seat.seat}&token=${encodeURIComponent(seat.token)}` : "";
      const path = `/ws/${this.gameId}${query}`;
      return `${scheme}://${location.host}${path}`;
    }

    setConnection(state, code = undefined) {
      this.connection = state;
      this.emit("connection", { state, attempt: this.attempt, ...(code ? { code } : {}) });
    }

    connect() {
      if (this.stopped || this.closed || this.ended !== null) return;
      // One socket at a time: a retry timer and the `online` event may both come.
      if (this.socket !== null && this.socket.readyState <= WebSocket.OPEN) return;
      this.setConnection("connecting");
      let socket;
      try {
        socket = new WebSocket(this.url());
      } catch (error) {
        this.retry();
        return;
      }
      this.socket = socket;
      socket.onmessage = (event) => this.enqueue(() => this.handle(socket, event.data));
      // The frames that came before the close are handled first (a receipt among them is
      // never sent again); frames of a socket the client left are ignored.
      socket.onclose = (event) =>
        this.enqueue(() => {
          if (this.socket !== socket) return undefined;
          this.socket = null;
          return this.dropped(socket.closedFor ?? event.reason ?? "");
        });
    }

    // Messages, drops and submissions are handled one at a time, in arrival order.
    enqueue(task) {
      this.work = this.work.then(task).catch((error) => console.error("RDClient:", error));
      return this.work;
    }

    // reason: the close frame's (the server's code), or why this client closed it.
    async dropped(reason) {
      if (this.stopped || this.closed || this.ended !== null) return;
      if (reason === "TABLE_CLOSED" || reason === "REPLACED") {
        this.stopped = true;
        this.setConnection("stopped", reason);
        return;
      }
      this.catchingUp = false;
      if (this.inFlight !== null) this.inFlight = null; // its fate is in the records to come
      this.setConnection("offline", reason || undefined);
      if (this.attempt >= 2 && (await this.archived().catch(() => false))) return;
      this.retry();
    }

    retry() {
      const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
      this.attempt += 1;
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => this.connect(), delay);
    }

    // A table the server no longer plays, which no play connection reaches: cancelled or
    // unknown (the client stops), or finished (the records this copy lacks come from the
    // archive, checked as any, and the end is the archive's). True when it stopped here.
    async archived() {
      let finished;
      try {
        const answer = await fetch(`/api/tables/${this.gameId}`, { cache: "no-store" });
        const state = answer.ok ? (await answer.json()).state : null;
        if (answer.status === 404 || state === "cancelled") {
          this.stopped = true;
          this.setConnection("stopped", answer.status === 404 ? "NO_SUCH_TABLE" : "TABLE_CLOSED");
          return true;
        }
        if (state !== "finished") return false;
        finished = (await lobby.games()).find((entry) => entry.game === this.gameId);
      } catch {
        return false; // the server is down: keep trying
      }
      if (finished === undefined) return false; // finished, not archived yet
      if (this.tableKey === null) {
        // Never welcomed: the table key is the server's published one, as the welcome's is.
        const pub = await fetch("/table.pub", { cache: "no-store" });
        if (!pub.ok) return false;
        this.tableKey = RDCheck.parsePublicKeyFile(await pub.text());
      }
      const response = await fetch(`/games/${this.gameId}.jsonl`, { cache: "no-store" });
      if (!response.ok) return false;
      const text = await response.text();
      const lines = text.split("\n").slice(0, -1);
      for (const line of lines.slice(this.lines.length)) {
        if (!(await this.guarded(() => this.onRecord(line)))) return true;
      }
      await this.onEnded({
        verdict: finished.verdict,
        log: `/games/${this.gameId}.jsonl`,
        receipts: this.seatRecord
          ? `/games/${this.gameId}/seat${this.seatRecord.seat}.receipts.jsonl`
          : undefined,
      });
      return true;
    }

    send(message) {
      if (this.socket === null || this.socket.readyState !== WebSocket.OPEN || this.stopped)
        return false;
      this.socket.send(JSON.stringify(message));
      return true;
    }

    close() {
      this.closed = true;
      clearTimeout(this.retryTimer);
      const socket = this.socket;
      this.socket = null;
      if (socket !== null) socket.close(1000, "closed");
      if (this.connection !== "stopped") this.setConnection("stopped", "CLOSED");
    }

    async stop(problem) {
      if (this.stopped) return;
      this.stopped = true;
      this.problem = { code: problem.code, message: problem.message, seq: problem.seq };
      clearTimeout(this.retryTimer);
      const socket = this.socket;
      this.socket = null;
      if (socket !== null)
        socket.close(
          1000,
          problem.code === "CLIENT_ERROR"
            ? "this browser failed"
            : "the server sent something that does not verify",
        );
      for (const entry of this.queue.splice(0))
        entry.reject(new Error(`stopped: ${problem.code}: ${problem.message}`));
      this.inFlight = null;
      if (problem.code !== "CLIENT_ERROR") {
        // The server's doing stays evidence: a reload shows it and does not go on. A
        // failure of this browser's own may pass: a reload tries again.
        const meta = (await dbGet("games", this.gameId)) ?? {};
        await dbPut("games", this.gameId, { ...meta, problem: this.problem });
      }
      this.emit("problem", this.problem);
      this.setConnection("stopped", problem.code);
    }

    // Runs a check; a Problem stops the client. False when it stopped.
    async guarded(run) {
      try {
        await run();
        return true;
      } catch (error) {
        // Only a Problem (a check of what the server sent that failed) is the server's
        // doing. Anything else is this client failing: IndexedDB or Web Crypto (a full
        // disk, say) or its own code; not kept, so a reload tries again.
        const problem =
          error instanceof Problem
            ? error
            : new Problem("CLIENT_ERROR", `${error?.name}: ${error?.message ?? error}`);
        await this.stop(problem);
        return false;
      }
    }

    async keepEvidence(what, text, code) {
      const kept = await dbGameValues("evidence", this.gameId);
      await dbPut("evidence", [this.gameId, kept.length], { what, text, code });
      this.evidence.push(text);
    }

    // -- messages --------------------------------------------------------------------------

    async handle(socket, data) {
      if (this.stopped || this.socket !== socket) return;
      let message;
      try {
        message = JSON.parse(data);
      } catch {
        await this.stop(new Problem("PROTOCOL", "a frame that is not JSON"));
        return;
      }
      const handler = {
        welcome: this.onWelcome,
        record: (m) => this.onRecord(m.line),
        commitment: this.onCommitment,
        genesis: this.onGenesis,
        pack: this.onPack,
        receipt: this.onReceipt,
        final: (m) => this.onFinal(m.body),
        ended: this.onEnded,
        seat: (m) => this.emit("seat", { seat: m.seat, connected: m.connected }),
        // A planned stop: play goes on until then; the reconnection after it is as any.
        stopping: (m) => this.emit("stopping", { inMs: m.in_ms }),
        // The server times its own round trip to this seat: answered at once, as sent.
        ping: (m) => this.send({ type: "pong", nonce: m.nonce }),
        error: this.onError,
        piles: (m) => this.emit("piles", { frame: m }),
        moves: this.onMoves,
      }[message?.type];
      if (handler === undefined) return; // a message type this client does not know: §1
      await this.guarded(() => handler.call(this, message));
    }

    async onWelcome(message) {
      if (message.protocol !== PROTOCOL)
        refuse("PROTOCOL", `the server speaks protocol ${message.protocol}, this client 1`);
      if (message.game !== this.gameId) refuse("PROTOCOL", `a welcome to game ${message.game}`);
      const seat = this.seatRecord?.seat ?? null;
      if (message.seat !== seat) refuse("PROTOCOL", `welcomed at seat ${message.seat}`);
      const key = fromHex(message.table_key);
      if (this.tableKey === null) {
        if (RDCheck.line.checkPublicKey(key) !== null)
          refuse("BAD_TABLE_SIGNATURE", "the welcome's table key is not a usable Ed25519 key");
        this.tableKey = key;
        const meta = (await dbGet("games", this.gameId)) ?? {};
        await dbPut("games", this.gameId, { ...meta, tableKey: message.table_key });
      } else if (toHex(this.tableKey) !== message.table_key) {
        refuse("BAD_TABLE_SIGNATURE", "the welcome names another table key than before");
      }
      this.welcome = message;
      this.attempt = 0;
      this.catchingUp = true;
      this.setConnection("open");
      this.emit("welcome", { welcome: message });
      // The last record held, by its chain hash: a table whose log holds another there
      // says FORK rather than stream a history that does not follow this copy.
      const sync = { type: "sync", from: this.lines.length };
      if (this.lines.length > 0) sync.hash = this.lastHash;
      this.send(sync);
    }

    // docs/protocol.md §6, §7: canonical, seq, prev, table signature, genesis, own seat.
    async onRecord(line) {
      const raw = utf8(line);
      const seq = this.lines.length;
      const read = RDCheck.line.read(raw);
      const why = read.code === undefined ? RDCheck.line.envelopeProblem(read.value) : null;
      if (read.code !== undefined || why !== null) {
        await this.keepEvidence("record", line, "RECORD_NOT_CANONICAL");
        refuse("RECORD_NOT_CANONICAL", `record ${seq}: ${read.message ?? why}`, seq);
      }
      const { body, sigs } = read.value;
      if (body.seq < seq) {
        if (this.lines[body.seq] === line) return; // the same record again
        await this.keepEvidence("record", line, "FORK");
        refuse("FORK", `record ${body.seq} differs from the one this client holds`, body.seq);
      }
      const broken = (what) => refuse("CHAIN_BROKEN", `record ${body.seq}: ${what}`, body.seq);
      if (body.seq !== seq) broken(`expected record ${seq} next`);
      if (this.bodies.at(-1)?.kind === "final") broken("a record after the final record");
      if (body.game !== this.gameId) broken(`it names game ${body.game}`);
      if (seq === 0 ? body.kind !== "genesis" : body.prev !== this.lastHash)
        broken(seq === 0 ? "the first record is not a genesis" : "its prev is not the last hash");
      const bodyBytes = RDCheck.line.bodyBytes(raw);
      const { verify } = RDCheck.ed25519;
      const bad = await verify(this.tableKey, body.kind, bodyBytes, sigs.table, body.v);
      if (bad !== null) {
        await this.keepEvidence("record", line, "BAD_TABLE_SIGNATURE");
        refuse("BAD_TABLE_SIGNATURE", `record ${seq}: ${bad.code}: ${bad.message}`, seq);
      }
      if (seq === 0) await this.checkGenesisRecord(body, bodyBytes, sigs);
      const seat = this.seatRecord?.seat;
      if (SUBMISSION_KINDS.has(body.kind) && seat !== undefined && body.player === seat)
        this.checkOwnRecord(body, sigs);
      await dbPut("records", [this.gameId, seq], line);
      this.lines.push(line);
      this.bodies.push(body);
      this.lastHash = await sha256Hex(raw);
      this.follow(body);
      this.emit("record", { seq, body, line });
      if (this.pendingFinal !== null) {
        const waiting = this.pendingFinal;
        if (readCanonical(waiting)?.seq === this.lines.length) {
          this.pendingFinal = null;
          await this.onFinal(waiting);
        }
      }
    }

    async checkGenesisRecord(body, bodyBytes, sigs) {
      const seat = this.seatRecord?.seat;
      const mismatch = (what) => refuse("GENESIS_MISMATCH", `the genesis record: ${what}`, 0);
      if ((await sha256Hex(this.tableKey)) !== body.table_key)
        mismatch("it names another table key than the welcome's");
      if (seat === undefined) return;
      const cosigned = this.signed.get("genesis");
      const text = new TextDecoder().decode(bodyBytes);
      if (cosigned !== undefined) {
        if (cosigned.body !== text) mismatch("its body is not the one this client co-signed");
      } else {
        // Co-signed before this browser's storage was cleared: its own key must have signed it.
        const key = this.key;
        if (body.players?.[seat]?.key !== key.publicHex)
          mismatch("it does not list this client's key at its seat");
        const signature = sigs.players?.[seat];
        const own = fromHex(key.publicHex);
        const bad = await RDCheck.ed25519.verify(own, "genesis", bodyBytes, signature, body.v);
        if (bad !== null) mismatch("this client's co-signature on it does not verify");
      }
    }

    register(signing) {
      this.signings.set(signing.hash, signing);
      const list = this.byN.get(signing.n) ?? [];
      if (!list.includes(signing)) list.push(signing);
      this.byN.set(signing.n, list);
      return list;
    }

    // Every signature made is kept before it is sent: a record of this seat is checked
    // against all of them, whatever became of the submission since (a reload, a retry).
    async remember(signing) {
      const list = this.register(signing);
      const what = `submission:${signing.n}`;
      const value = list.map(({ sentAt, ...kept }) => kept);
      await dbPut("signed", [this.gameId, what], { what, value });
    }

    holdReceipt(text, body) {
      this.receiptTexts.add(text);
      if (body !== undefined && body.outcome !== "refused") this.receipted.add(body.submission);
    }

    // A signing's submit frame: the first time, and each time it is sent again
    // (docs/protocol.md §10, "Sending again").
    sendSigned(signing) {
      return this.send({
        type: "submit",
        ref: signing.ref,
        n: signing.n,
        move: signing.move,
        seen: signing.seen,
        signature: signing.signature,
      });
    }

    // The signing of this client that a logged record of its seat is.
    signingOf(body) {
      return (this.byN.get(body.n) ?? []).find(
        (signing) =>
          signing.move === body.move &&
          body.seen !== undefined &&
          signing.seen.seq === body.seen.seq &&
          signing.seen.hash === body.seen.hash,
      );
    }

    // A record of this seat must be a submission this client signed and sent.
    checkOwnRecord(body, sigs) {
      const signed = this.signingOf(body);
      const ours = signed !== undefined && sigs.player === signed.signature;
      if (!ours)
        refuse(
          "SEEN_NOT_OURS",
          `record ${body.seq}: this seat's ${body.kind} '${body.move}' (n ${body.n}) ` +
            "is not a submission this client sent",
          body.seq,
        );
    }

    async onCommitment(message) {
      const seat = this.seatRecord?.seat;
      if (seat === undefined) refuse("PROTOCOL", "a commitment request sent to a spectator");
      if (message.game !== this.gameId)
        refuse("COMMITMENT_MISMATCH", `a commitment for game ${message.game}`);
      const statement = canonicalText({
        commitment: message.commitment,
        game: this.gameId,
        player: seat,
      });
      if (statement !== message.statement)
        refuse("COMMITMENT_MISMATCH", "the statement is not this seat's over that commitment");
      const earlier = this.signed.get("commitment");
      if (earlier !== undefined && earlier !== message.commitment)
        refuse(
          "COMMITMENT_MISMATCH",
          `asked again with commitment ${message.commitment} after ${earlier}: ` +
            "the dealer trying for another deal",
        );
      this.emit("asked", { what: "entropy", commitment: message.commitment });
      if (earlier === undefined) await this.saveSigned("commitment", message.commitment);
      const signature = await signBytes(this.key, "entropy", utf8(statement));
      await this.saveSigned("entropy", signature);
      this.send({ type: "entropy", signature, ref: "entropy" });
      this.emit("signed", { what: "entropy" });
    }

    // docs/protocol.md §6, "Before cosign".
    async onGenesis(message) {
      const seat = this.seatRecord?.seat;
      if (seat === undefined) refuse("PROTOCOL", "a genesis request sent to a spectator");
      const body = readCanonical(message.body);
      const mismatch = (what) => refuse("GENESIS_MISMATCH", `the genesis to co-sign: ${what}`);
      if (body === null) mismatch("not canonical JSON");
      this.emit("asked", { what: "cosign", body: message.body });
      if (body.kind !== "genesis" || body.v !== LOG_VERSION || body.seq !== 0)
        mismatch(`not a version ${LOG_VERSION} genesis record at seq 0`);
      if (body.game !== this.gameId) mismatch(`it names game ${body.game}`);
      if (body.commitment !== this.signed.get("commitment"))
        mismatch("it names another commitment than the one this seat answered");
      const key = this.key;
      const players = Array.isArray(body.players) ? body.players : [];
      const welcomed = this.welcome.seats;
      if (players.length !== welcomed.length)
        mismatch(`${players.length} players for ${welcomed.length} seats`);
      const mine = players[seat];
      if (mine?.seat !== seat || mine?.key !== key.publicHex || mine?.name !== this.seatRecord.name)
        mismatch(`seat ${seat} is not this client's key and name`);
      // A seat free when the welcome came has no key this client knew: only its entropy
      // signature under the key the genesis names is checked (below), and the event says so.
      const keysUnknown = [];
      players.forEach((player, index) => {
        if (welcomed[index].key === null) keysUnknown.push(index);
        else if (player?.key !== welcomed[index].key)
          mismatch(`seat ${index}'s key is not the welcome's`);
      });
      const entropy = Array.isArray(body.entropy) ? body.entropy : [];
      if (entropy[seat] !== this.signed.get("entropy"))
        mismatch("its entropy at this seat is not this client's");
      for (const [index, player] of players.entries()) {
        if (index === seat) continue;
        const statement = utf8(
          canonicalText({ commitment: body.commitment, game: this.gameId, player: index }),
        );
        const key = fromHex(player.key);
        const bad = await RDCheck.ed25519.verify(key, "entropy", statement, entropy[index], ENTROPY_VERSION);
        if (bad !== null)
          mismatch(`seat ${index}'s entropy is not its signature over the commitment`);
      }
      if (canonicalText(body.rules) !== canonicalText(this.welcome.rules))
        mismatch("its rules are not the table's rules");
      if ((await rulesDigest(body.rules)) !== body.rules_sha256)
        mismatch("its rules_sha256 is not the rules' digest");
      if (body.table_key !== (await sha256Hex(this.tableKey)))
        mismatch("its table_key is not the welcome's table key's id");
      const bytes = utf8(message.body);
      const signature = await signBytes(this.key, "genesis", bytes);
      await this.saveSigned("genesis", { body: message.body, signature });
      this.send({ type: "cosign", signature, ref: "cosign" });
      this.emit("signed", { what: "cosign", keysUnknown });
    }

    // docs/protocol.md §6, "When its pack arrives".
    async onPack(message) {
      const seat = this.seatRecord?.seat;
      if (seat === undefined) refuse("PROTOCOL", "a pack sent to a spectator");
      const { hand, cards } = message;
      const started = this.bodies.findLast(
        (body) => body.kind === "hand_start" && body.hand === hand,
      );
      if (started === undefined)
        refuse("PACK_MISMATCH", `a pack for hand ${hand} before its hand_start`);
      const faces = Array.from({ length: 52 }, (_, index) => RDCheck.deal.face(index));
      const indices = Array.isArray(cards) ? cards.map((face) => faces.indexOf(face)) : [];
      if (indices.length !== 52 || new Set(indices).size !== 52 || indices.includes(-1))
        refuse("PACK_MISMATCH", `hand ${hand}: the pack is not 52 distinct cards`);
      if ((await RDCheck.deal.packDigest(hand, seat, indices)) !== started.packs[seat])
        refuse("PACK_MISMATCH", `hand ${hand}: not the pack hand_start names`, started.seq);
      const earlier = this.packs.get(hand);
      if (earlier !== undefined && earlier.join(" ") !== cards.join(" "))
        refuse("PACK_MISMATCH", `hand ${hand}: another pack than before`);
      if (earlier === undefined) {
        await dbPut("packs", [this.gameId, hand], { hand, cards });
        this.packs.set(hand, cards);
      }
      this.emit("pack", { hand, cards });
      if (this.catchingUp && !this.movesSeen) await this.caughtUp(null);
    }

    async onMoves(message) {
      if (!this.movesSeen) {
        // A server that sends `moves` sends them after every catch-up: wait for them there.
        this.movesSeen = true;
        const meta = (await dbGet("games", this.gameId)) ?? {};
        await dbPut("games", this.gameId, { ...meta, movesSeen: true });
      }
      this.moves = message.moves;
      this.emit("moves", { seq: message.seq, moves: message.moves });
      if (this.catchingUp) await this.caughtUp(message.moves);
    }

    // After a sync's catch-up: each submission still pending is landed (a record of this
    // seat is one of the statements signed for it, by hash, never by ref), sent (still playable: signed again with the new
    // seen and n), or unsent (no longer in the seat's moves).
    async caughtUp(moves) {
      this.catchingUp = false;
      this.inFlight = null;
      const seat = this.seatRecord?.seat;
      for (const entry of [...this.queue]) {
        if (entry.signing === null) continue;
        const landed = this.bodies.find(
          (body) =>
            SUBMISSION_KINDS.has(body.kind) &&
            body.player === seat &&
            entry.hashes.has(this.signingOf(body)?.hash),
        );
        if (landed !== undefined) {
          const event = this.outcomeEvent(entry, landed.kind, landed.reason, landed.seq, null);
          await this.settle(entry, event, true);
        } else {
          entry.signing = null;
          await dbPut("pending", [this.gameId, entry.ref], { ref: entry.ref, move: entry.move });
        }
      }
      // Every logged submission of this seat whose receipt this client lacks (its answer
      // lost with a connection, or never sent before a crash) is sent again, unchanged:
      // the table answers with the receipt it gave, the same bytes.
      // Spaced as new submissions are (the rate of docs/protocol.md §9 counts them too).
      let lacking = 0;
      for (const body of this.bodies) {
        if (!SUBMISSION_KINDS.has(body.kind) || body.player !== seat) continue;
        const signing = this.signingOf(body);
        if (signing === undefined || this.receipted.has(signing.hash)) continue;
        const socket = this.socket;
        setTimeout(() => {
          if (this.socket === socket) this.sendSigned(signing);
        }, lacking * SEND_INTERVAL_MS);
        lacking += 1;
      }
      if (moves !== null)
        for (const entry of this.queue.filter((candidate) => !moves.includes(candidate.move)))
          await this.unsend(entry, "no longer playable after reconnecting");
      await this.pump();
    }

    outcomeEvent(entry, outcome, reason, seq, latencyMs) {
      const logged = outcome !== "refused" ? this.bodies[seq] : null;
      return {
        ref: entry.ref,
        move: entry.move,
        n: entry.signing.n,
        outcome,
        reason: reason ?? null,
        seq,
        latencyMs,
        wonBy: outcome === "bounce" ? wonBy(logged) : null,
      };
    }

    async unsend(entry, why) {
      this.queue.splice(this.queue.indexOf(entry), 1);
      await dbDelete("pending", [this.gameId, entry.ref]);
      this.emit("unsent", { move: entry.move, why });
      entry.reject(Object.assign(new Error(`not sent: ${why}`), { unsent: true }));
    }

    // The submission's answer: a receipt, or (landed) its record found after a reconnect.
    async settle(entry, event, landed = false) {
      this.queue.splice(this.queue.indexOf(entry), 1);
      if (this.inFlight === entry) this.inFlight = null;
      await dbDelete("pending", [this.gameId, entry.ref]);
      if (event.outcome !== "refused") this.nextN = Math.max(this.nextN, event.n + 1);
      const answer = landed ? { ...event, landed: true } : event;
      this.emit("receipt", answer);
      entry.resolve(answer);
    }

    // docs/protocol.md §6, "When a receipt arrives": the table's signature, this game and
    // seat, a statement this client signed (a refusal may name it in the hand now in
    // play), and for a logged outcome the record this copy holds at its seq.
    async onReceipt(message) {
      const seat = this.seatRecord?.seat;
      const text = message.receipt;
      if (this.receiptTexts.has(text)) return; // an answer to a submission sent again
      const raw = utf8(text);
      const bad = async (what) => {
        await this.keepEvidence("receipt", text, "BAD_RECEIPT");
        const which = message.ref === null ? "a receipt from the archive" : `the receipt for ${message.ref}`;
        refuse("BAD_RECEIPT", `${which}: ${what}`);
      };
      const read = RDCheck.line.read(raw);
      if (read.code !== undefined) return bad(`${read.code}: ${read.message}`);
      const { body, sigs } = read.value;
      if (body?.kind !== "receipt" || typeof sigs?.table !== "string") return bad("not a receipt");
      const wrong = await RDCheck.ed25519.verify(
        this.tableKey,
        "receipt",
        RDCheck.line.bodyBytes(raw),
        sigs.table,
        2,
      );
      if (wrong !== null) return bad(`${wrong.code}: ${wrong.message}`);
      if (body.game !== this.gameId || body.player !== seat)
        return bad("it names another game or seat");
      let signing = this.signings.get(body.submission);
      if (signing === undefined && body.outcome === "refused" && this.hand !== null) {
        for (const candidate of this.byN.get(body.n) ?? []) {
          const asRead = { ...JSON.parse(candidate.statement), hand: this.hand };
          if ((await sha256Hex(utf8(canonicalText(asRead)))) === body.submission)
            signing = candidate;
        }
      }
      const entry = this.queue.find((candidate) => candidate.ref === message.ref);
      if (signing === undefined && entry !== undefined)
        return bad("it names another statement than the one this client signed");
      if (signing !== undefined && body.n !== signing.n)
        return bad(`it names n ${body.n}, the submission was ${signing.n}`);
      if (body.outcome !== "refused") {
        const held = this.lines[body.seq];
        if (held === undefined) return bad(`it names record ${body.seq}, which this copy lacks`);
        const heldRaw = utf8(held);
        const hash =
          body.v === 3
            ? await sha256Hex(RDCheck.line.bodyBytes(heldRaw))
            : await sha256Hex(heldRaw);
        if (hash !== body.record)
          return bad(`it names another record ${body.seq} than this copy's`);
        const record = this.bodies[body.seq];
        if (record.player !== seat || record.n !== body.n)
          return bad(`record ${body.seq} is not this seat's submission ${body.n}`);
        // The statement the record holds is the one the receipt names: what the player signed.
        const { game, hand, move, n, player, seen } = record;
        if ((await sha256Hex(utf8(canonicalText({ game, hand, move, n, player, seen })))) !== body.submission)
          return bad(`it names another statement than record ${body.seq}'s`);
      }
      await dbPut("receipts", [this.gameId, this.receipts.length], text);
      this.receipts.push(text);
      this.holdReceipt(text, body);
      // A receipt of a submission already answered (landed on a reconnect, or signed
      // again since) is kept as evidence and changes nothing more.
      // Matched by the statement's hash the receipt names, not by ref.
      const owner =
        signing === undefined
          ? undefined
          : this.queue.find((candidate) => candidate.hashes.has(signing.hash));
      if (owner === undefined) return;
      if (body.outcome === "refused" && owner.signing !== signing) return;
      const latency =
        typeof signing.sentAt === "number" ? performance.now() - signing.sentAt : null;
      owner.signing = signing;
      const event = this.outcomeEvent(owner, body.outcome, body.reason, body.seq, latency);
      await this.settle(owner, event);
      await this.pump();
    }

    async onError(message) {
      this.emit("error", {
        code: message.code,
        message: message.message,
        ref: message.ref ?? null,
      });
      if (message.code === "FORK")
        // docs/protocol.md §10: the table's log does not hold this copy's last record as
        // this copy holds it. Both histories stay: this copy, and the log the archive
        // serves; `audit --against` makes them evidence.
        refuse("FORK", `the table's log: ${message.message}`, this.lines.length - 1);
      const entry = this.queue.find((candidate) => candidate.ref === message.ref);
      if (entry !== undefined && entry.signing !== null) {
        this.queue.splice(this.queue.indexOf(entry), 1);
        if (this.inFlight === entry) this.inFlight = null;
        await dbDelete("pending", [this.gameId, entry.ref]);
        entry.reject(
          Object.assign(new Error(`${message.code}: ${message.message}`), { code: message.code }),
        );
        await this.pump();
      }
    }

    // -- submitting --------------------------------------------------------------------

    // Queues moveText; resolves with its `receipt` event. One submission is in flight at a
    // time, so each is signed with the next n and the freshest seen.
    submit(moveText) {
      if (this.stopped) return Promise.reject(new Error(`stopped: ${this.problem?.code}`));
      if (this.seatRecord === null) return Promise.reject(new Error("a spectator does not play"));
      if (this.ended !== null) return Promise.reject(new Error("the game has ended"));
      const entry = {
        ref: `m${this.refCount}`,
        move: String(moveText),
        signing: null,
        hashes: new Set(), // every statement signed for it
      };
      Object.assign(entry, this.settlers());
      this.refCount += 1;
      this.queue.push(entry);
      this.enqueue(async () => {
        if (!this.queue.includes(entry)) return;
        await dbPut("pending", [this.gameId, entry.ref], { ref: entry.ref, move: entry.move });
        await this.pump();
      });
      return entry.promise;
    }

    async pump() {
      if (this.inFlight !== null || this.stopped || this.catchingUp) return;
      if (this.socket === null || this.socket.readyState !== WebSocket.OPEN) return;
      const entry = this.queue.find((candidate) => candidate.signing === null);
      if (entry === undefined || this.hand === null) return;
      const early = this.lastSentAt + SEND_INTERVAL_MS - performance.now();
      if (early > 0) {
        clearTimeout(this.pumpTimer);
        this.pumpTimer = setTimeout(() => this.enqueue(() => this.pump()), early);
        return;
      }
      const seen = { hash: this.lastHash, seq: this.lines.length - 1 };
      const statement = canonicalText({
        game: this.gameId,
        hand: this.hand,
        move: entry.move,
        n: this.nextN,
        player: this.seatRecord.seat,
        seen,
      });
      const signing = {
        ref: entry.ref,
        n: this.nextN,
        move: entry.move,
        seen,
        statement,
        signature: await signBytes(this.key, "submission", utf8(statement), this.bodies[0].v),
        hash: await sha256Hex(utf8(statement)),
        sentAt: null,
      };
      await this.remember(signing);
      await dbPut("pending", [this.gameId, entry.ref], {
        ref: entry.ref,
        move: entry.move,
        hash: signing.hash,
      });
      entry.signing = signing;
      entry.hashes.add(signing.hash);
      this.inFlight = entry;
      signing.sentAt = this.lastSentAt = performance.now();
      const sent = this.sendSigned(signing);
      if (!sent) {
        this.inFlight = null; // sent or found landed after the next catch-up
        return;
      }
      const socket = this.socket;
      const unanswered = () =>
        this.inFlight === entry && entry.signing === signing && this.socket === socket;
      const resend = () => {
        if (!unanswered()) return;
        this.sendSigned(signing);
        setTimeout(resend, RESEND_MS);
      };
      setTimeout(resend, RESEND_MS);
      setTimeout(() => {
        if (unanswered()) {
          socket.closedFor = "NO_RECEIPT";
          socket.close(4000, "NO_RECEIPT");
        }
      }, RECEIPT_TIMEOUT_MS);
    }

    // -- the end -----------------------------------------------------------------------

    // docs/protocol.md §6, "Before accept": {ok, code, seq, hands, totals, winners, reason,
    // problems, engine}; code is the first problem's (COMMITMENT_MISMATCH, PACK_MISMATCH,
    // the engine's finding, SCORES_MISMATCH), null when it checks; seq the record it names.
    // `judging` false: an answer already given stands, so the engine is not waited for.
    async checkFinal(body, judging = true) {
      const found = []; // [code, words]
      const genesis = this.bodies[0];
      const seq = this.lines.length;
      if (body.kind !== "final" || body.game !== this.gameId)
        found.push(["SCORES_MISMATCH", "it is not this game's final record"]);
      if (body.seq !== seq || body.records !== seq || body.prev !== this.lastHash)
        found.push(["SCORES_MISMATCH", `it does not follow this copy's last record (${seq - 1})`]);
      const secret = typeof body.secret === "string" && /^[0-9a-f]{64}$/.test(body.secret);
      const opens =
        secret && (await RDCheck.deal.commitment(fromHex(body.secret))) === genesis.commitment;
      if (!opens)
        found.push(["COMMITMENT_MISMATCH", "its secret does not open the genesis commitment"]);
      else found.push(...(await this.packProblems(fromHex(body.secret), genesis)));
      let engine = notJudged("its secret opens nothing");
      if (!judging) engine = notJudged("answered before this page loaded");
      else if (opens) engine = await this.judgeCopy(body.secret);
      if (engine.state === "rejected") {
        const { code, seq, message } = engine.finding;
        found.push([code, `the rules engine rejects record ${seq}: ${message}`, seq]);
      }
      const match = recomputeMatch(this.bodies, genesis.rules, genesis.players.length);
      found.push(...match.problems.map((words) => ["SCORES_MISMATCH", words]));
      const differs = (what, ours, theirs) => {
        if (canonicalText(ours) !== canonicalText(theirs))
          found.push([
            "SCORES_MISMATCH",
            `${what}: ${JSON.stringify(ours)} by this copy, ${JSON.stringify(theirs)} in the final`,
          ]);
      };
      differs("the hands' scores", match.hands, body.hands);
      differs("the totals", match.totals, body.totals);
      differs("the winners", match.winners, body.winners);
      differs("how the match ended", match.reason, body.reason);
      return {
        ok: found.length === 0,
        code: found[0]?.[0] ?? null,
        seq: found[0]?.[2] ?? body.seq,
        engine,
        hands: match.hands,
        totals: match.totals,
        winners: match.winners,
        reason: match.reason,
        problems: found.map(([, words]) => words),
      };
    }

    // The engine's judgement of the whole copy, every record before the final, replayed with
    // the secret the final's body reveals (as `racing-demon verify --secret` replays an
    // unfinished log): {state: "checked" | "rejected" | "unchecked", why, finding, records,
    // ms}. Only "rejected" declines; "unchecked" says why the moves were not checked here.
    async judgeCopy(secret) {
      const engine = this.engine;
      if (engine === null) return notJudged("this page has no rules engine");
      const state = await engine.settled(ENGINE_WAIT_MS);
      if (state === "absent") return notJudged(engine.detail, "absent");
      if (state !== "ready")
        return notJudged(
          state === "failed" ? `the engine failed: ${engine.detail}` : "the engine was still loading",
        );
      const records = this.lines.length;
      let judged;
      try {
        const bytes = new Uint8Array(await this.copyBlob().arrayBuffer());
        // Pinned: the table's key this client checked every record under, and the rules
        // this seat agreed to when it co-signed the genesis.
        const options = {
          tableKey: toHex(this.tableKey),
          rules: this.bodies[0].rules_sha256,
          unsafeUnpinned: false,
          secret,
        };
        judged = await engine.judge(bytes, options);
      } catch (error) {
        return notJudged(`the engine failed: ${error.message}`);
      }
      const { report, ms } = judged;
      const finding = report?.finding ?? {};
      if (report?.verdict === "does_not_verify")
        return {
          state: "rejected",
          why: null,
          records,
          ms,
          finding: {
            code: finding.code,
            seq: finding.seq ?? (Number.isInteger(finding.line) ? finding.line - 1 : null),
            line: finding.line ?? null,
            step: report.step ?? null,
            rule: finding.rule ?? null,
            move: finding.move ?? null,
            message: finding.message ?? "",
          },
        };
      // A copy without its final record is unfinished at best; it holds when the engine
      // replayed every record of it (not one left unreplayed: the secret was used).
      if (
        report?.verdict === "unfinished" &&
        finding.code === "UNFINISHED" &&
        report.records === records &&
        report.not_replayed === 0
      )
        return { state: "checked", why: null, records, ms, finding: null };
      const verdict = `${report?.verdict} ${finding.code ?? ""}`.trim();
      return notJudged(`the engine did not replay the copy (its report: ${verdict})`);
    }

    // With the revealed secret, every hand_start digest and every pack this seat was sent
    // re-derive (docs/deal-spec.md steps 3-8).
    async packProblems(secret, genesis) {
      const found = [];
      let seed;
      try {
        seed = RDCheck.deal.matchSeed(secret, genesis.entropy.map(fromHex));
      } catch (error) {
        return [["PACK_MISMATCH", `the genesis's entropy deals nothing: ${error.message}`]];
      }
      for (const start of this.bodies.filter((body) => body.kind === "hand_start")) {
        for (const [seat, digest] of start.packs.entries()) {
          const pack = await RDCheck.deal.derivePack(seed, start.hand, seat);
          const where = `hand ${start.hand}: seat ${seat}'s pack`;
          if ((await RDCheck.deal.packDigest(start.hand, seat, pack)) !== digest)
            found.push(["PACK_MISMATCH", `${where} is not the one the secret deals`]);
          const sent = seat === this.seatRecord?.seat ? this.packs.get(start.hand) : undefined;
          if (sent !== undefined && sent.join(" ") !== pack.map(RDCheck.deal.face).join(" "))
            found.push(["PACK_MISMATCH", `${where}, as this seat was sent it, is not that one`]);
        }
      }
      return found;
    }

    async onFinal(text) {
      if (this.seatRecord === null) return;
      const body = readCanonical(text);
      if (body === null) {
        await this.keepEvidence("final", text, "SCORES_MISMATCH");
        refuse("SCORES_MISMATCH", "the final body is not canonical JSON");
      }
      if (Number.isInteger(body.seq) && body.seq > this.lines.length) {
        this.pendingFinal = text; // its records are on their way: answered once they came
        return;
      }
      const signedBefore = this.signed.get("final"); // answered before a reload (null: declined)
      if (this.finalAsked === null && signedBefore?.body === text) {
        const check = await this.checkFinal(body, false);
        this.finalAsked = { text, body, check };
        this.finalAnswer = signedBefore.signature;
      }
      if (this.finalAnswer !== undefined && this.finalAsked?.text === text) {
        this.send({ type: "accept", signature: this.finalAnswer }); // asked again: same answer
        return;
      }
      if (this.finalAsked?.text === text) return; // the player is deciding
      // Said before the check, which may wait seconds for the rules engine.
      this.emit("asked", { what: "final", body: text });
      const check = await this.checkFinal(body);
      this.finalAsked = { text, body, check };
      this.emit("final", { body, check });
      if (!check.ok) {
        // Declining signs nothing; it is the only answer left (the log shows this seat did
        // not accept), and the client stops as for any record that does not verify.
        this.finalAnswer = null;
        this.send({ type: "accept", signature: null });
        await this.keepEvidence("final", text, check.code);
        refuse(check.code, check.problems.join("; "), check.seq);
      }
    }

    async accept() {
      const asked = this.finalAsked;
      if (asked === null) throw new Error("no final record is asked for");
      if (!asked.check.ok)
        throw new Error("the final's scores do not check: decline is the only answer");
      if (this.stopped) throw new Error(`stopped: ${this.problem?.code}`);
      if (this.finalAnswer === undefined) {
        this.finalAnswer = await signBytes(this.key, "accept", utf8(asked.text), this.bodies[0].v);
        await this.saveSigned("final", { body: asked.text, signature: this.finalAnswer });
      }
      this.send({ type: "accept", signature: this.finalAnswer });
      this.emit("signed", { what: "final" });
    }

    async decline() {
      const asked = this.finalAsked;
      if (asked === null) throw new Error("no final record is asked for");
      if (this.finalAnswer === undefined) {
        this.finalAnswer = null;
        // Kept like an acceptance: after a reload this final stays declined, not asked again.
        await this.saveSigned("final", { body: asked.text, signature: null });
      }
      this.send({ type: "accept", signature: this.finalAnswer });
    }

    async onEnded(message) {
      const ended = {
        verdict: message.verdict,
        log: message.log,
        receipts: message.receipts ?? null,
      };
      this.ended = ended;
      const meta = (await dbGet("games", this.gameId)) ?? {};
      await dbPut("games", this.gameId, { ...meta, ended });
      clearTimeout(this.retryTimer);
      const socket = this.socket;
      this.socket = null;
      if (socket !== null) socket.close(1000, "ended");
      // A receipt there that does not check stops the client, once the end is shown.
      let refused = null;
      if (ended.receipts !== null)
        await this.receiptsFromArchive(ended.receipts).catch((error) => { refused = error; });
      for (const entry of this.queue.splice(0)) {
        this.emit("unsent", { move: entry.move, why: "the game ended" });
        entry.reject(Object.assign(new Error("not sent: the game ended"), { unsent: true }));
      }
      await this.announceEnd(ended);
      if (refused !== null) throw refused;
    }

    // docs/protocol.md §10, "Sending again": a receipt the game's end left unanswered (its
    // answer lost, then the table closed) is in the archive's receipts file of this seat.
    // Each line naming a record of this seat that this copy holds, and not held yet, is
    // checked and kept as any receipt, and answers the submission still waiting for it.
    // Refusals are left: no record proves them. A file that cannot be fetched within
    // ARCHIVE_MS, or is larger than ARCHIVE_BYTES, leaves things as they are (the page
    // links it for download).
    async receiptsFromArchive(path) {
      let text;
      try {
        const response = await fetch(path, { cache: "no-store", signal: AbortSignal.timeout(ARCHIVE_MS) });
        if (!response.ok || Number(response.headers.get("Content-Length") ?? 0) > ARCHIVE_BYTES) return;
        text = await response.text();
      } catch {
        return;
      }
      if (text.length > ARCHIVE_BYTES) return;
      for (const line of text.split("\n")) {
        if (line === "" || this.receiptTexts.has(line)) continue;
        let body;
        try {
          body = JSON.parse(line).body;
        } catch {
          continue; // not a line this client could hold; the download keeps it
        }
        if (body?.outcome === "refused" || this.lines[body?.seq] === undefined) continue;
        await this.onReceipt({ ref: null, receipt: line });
      }
    }

    async announceEnd(ended) {
      const copyBytes = new Uint8Array(await this.copyBlob().arrayBuffer());
      const copyCheck = await RDCheck.run(copyBytes, { tableKey: this.tableKey });
      this.emit("ended", { ...ended, copyCheck });
      this.setConnection("stopped", "ENDED");
    }

    // -- downloads ---------------------------------------------------------------------

    copyBlob() {
      return new Blob(this.lines.map((line) => `${line}\n`), { type: NDJSON });
    }

    receiptsBlob() {
      return new Blob(this.receipts.map((line) => `${line}\n`), { type: NDJSON });
    }

    // Each line refused as the server sent it, one a line (docs/playing.md §3); a line
    // that itself holds a line break (never a canonical one) is written as a JSON string.
    evidenceBlob() {
      const lines = this.evidence.map((text) =>
        /[\r\n]/.test(text) ? JSON.stringify(text) : text,
      );
      return new Blob(lines.map((line) => `${line}\n`), { type: NDJSON });
    }
  }

  return Object.freeze({
    keys,
    lobby,
    seats,
    Game,
    LobbyError,
    CODE_WORDS,
    gameHref,
    // The parts, for tests and for readers who want to see the workings.
    recomputeMatch,
    wonBy,
    rulesDigest,
  });
})();
