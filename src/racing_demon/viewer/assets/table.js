// table.js: the one renderer of a Racing Demon table, shared by the `view` page (view.js,
// a log replayed) and the play page (play.js, a table played live). It draws the seats'
// piles and the centre's foundations from pile values (docs/viewer.md, "Frames"; the play
// page's redacted forms, docs/protocol.md `piles`), marks what a record changed, and, in
// interactive mode, reports which pile or card a player activated: by click, by keyboard
// (Enter or Space on a focused pile) or by a pointer drag. It holds no rules: the page
// decides what an activation means.
//
// A classic script defining one global, RDTable; page.py inlines it between check.js and
// view.js in the view page's one module script, and the play page loads it from /static.
// Plain DOM: every text from a log goes in through textContent, never as markup, and no
// element gets a style attribute from markup (the play page runs under style-src 'self';
// styles set through element.style are allowed).
const RDTable = (() => {
  "use strict";

  const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
  const SUIT_SYMBOLS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const RANK_NAMES = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
  const NEW_FOUNDATION = "f+";
  // How far a pointer moves, in CSS pixels, before a press on a card is a drag.
  const DRAG_THRESHOLD_PX = 6;

  // The Okabe-Ito palette, which people with any common colour blindness tell apart, and
  // the words of a back that name one of its colours: as viewer/model.py's SEAT_COLOURS and
  // seat_colours, which give the view page its colours (tests/browser/test_table_view.py
  // compares the two).
  const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
  const BACK_COLOURS = {
    blue: "#0072B2", orange: "#E69F00", green: "#009E73", pink: "#CC79A7", purple: "#CC79A7",
    sky: "#56B4E9", red: "#D55E00", yellow: "#F0E442", black: "#000000",
  };
  // What Python's str.split() splits on, so that a back's words are the same words here.
  const WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

  // Each seat's colour from its back: the palette's colour the back names ("red", "light
  // blue"), unless an earlier seat has it; else the first palette colour no seat has yet,
  // and the palette in seat order again past eight seats.
  function seatColours(backs) {
    const colours = [];
    for (const back of backs) {
      const words = back.toLowerCase().split(WHITESPACE);
      const named = Object.entries(BACK_COLOURS).find(([word]) => words.includes(word))?.[1];
      const free = PALETTE.filter((colour) => !colours.includes(colour));
      if (named !== undefined && !colours.includes(named)) colours.push(named);
      else colours.push(free.length ? free[0] : PALETTE[colours.length % PALETTE.length]);
    }
    return colours;
  }

  // -- helpers (view.js uses them too) -------------------------------------------------

  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  // A count and its noun agreeing ("1 hand", "2 hands"), as wording.plural writes them.
  function plural(count, noun) {
    return `${count} ${count === 1 ? noun : `${noun}s`}`;
  }

  // Black or white text, whichever reads better on a seat's colour (the palette has both
  // black and yellow in it).
  function inkOn(colour) {
    const value = parseInt(colour.slice(1), 16);
    const [r, g, b] = [value >> 16, (value >> 8) & 255, value & 255];
    return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? "#000" : "#fff";
  }

  // Initials that tell the seats apart: the first letter, or more where two seats share it.
  function seatInitials(seats) {
    const names = seats.map((seat) => Array.from((seat.name ?? "").trim() || `Seat ${seat.seat}`));
    for (let length = 1; length <= 3; length++) {
      const marks = names.map((letters) => letters.slice(0, length).join("").toUpperCase());
      if (new Set(marks).size === marks.length) return marks;
    }
    return seats.map((seat) => String(seat.seat + 1));
  }

  function cardText(face) {
    return (face[0] === "T" ? "10" : face[0]) + (SUIT_SYMBOLS[face[1]] ?? face[1]);
  }

  function isRed(face) {
    return face[1] === "H" || face[1] === "D";
  }

  // A foundation card's text, "7H@2": its face and its owner's seat.
  function splitCard(text) {
    const [face, owner] = text.split("@");
    return [face, Number(owner)];
  }

  // A pile's count: `n` where the value carries it (a redacted demon, waste or stock, which
  // show fewer cards than they hold), else its cards.
  function countOf(value) {
    return value.n ?? value.cards.length;
  }

  // -- the table -----------------------------------------------------------------------

  class TableView {
    constructor({ seatsElement, foundationsElement, tableElement, seats, workPiles, colours,
      placedAt = new Map(), interactive = null }) {
      this.seatsElement = seatsElement;
      this.foundationsElement = foundationsElement;
      this.tableElement = tableElement;
      this.seats = seats;
      this.workPiles = workPiles;
      this.colours = colours;
      this.placedAt = placedAt ?? new Map();
      this.interactive = interactive;
      this.initials = seatInitials(seats);
      this.position = new Map(seats.map((seat, position) => [seat.seat, position]));
      this.pileElements = new Map(); // pile id -> its element
      this.rendered = new Map(); // pile id -> the value object last drawn
      this.seatParts = new Map(); // seat -> {block, total, flag}
      this.selected = null; // {id, index}
      this.targets = new Set();
      this.hasMarks = false; // whether any pile or card carries a mark
      this.drag = null;
      this.swallowClick = false;
      this.buildSeats();
      if (interactive) {
        this.buildNewFoundation();
        this.bindInteraction();
      }
    }

    seatName(seat) {
      return this.seats[this.position.get(seat)]?.name ?? `seat ${seat}`;
    }

    seatColour(seat) {
      return this.colours[this.position.get(seat)] ?? "#777777";
    }

    cardLabel(face, owner) {
      const rank = RANK_NAMES[face[0]] ?? face[0];
      return `${rank} of ${SUIT_NAMES[face[1]] ?? face[1]}, ${this.seatName(owner)}'s pack`;
    }

    // A card face up. `marked` cards show their owner (foundations, where packs mix).
    cardElement(face, owner, marked = false) {
      const colour = this.seatColour(owner);
      const card = el("span", {
        class: `card ${isRed(face) ? "red" : "black"}${marked ? " owned" : ""}`,
        "data-face": face,
        "data-owner": owner,
        role: "img",
        "aria-label": this.cardLabel(face, owner),
      });
      card.style.setProperty("--owner", colour);
      card.style.setProperty("--owner-ink", inkOn(colour));
      const rank = face[0] === "T" ? "10" : face[0];
      const symbol = SUIT_SYMBOLS[face[1]] ?? face[1];
      card.append(
        el("span", { class: "rank", "aria-hidden": "true", text: rank }),
        el("span", { class: "suit", "aria-hidden": "true", text: symbol }),
        el("span", { class: "pip", "aria-hidden": "true", text: symbol }),
      );
      if (marked) card.append(el("span", { class: "initial", "aria-hidden": "true", text: this.initials[this.position.get(owner)] ?? "?" }));
      return card;
    }

    // Operable piles: the interactive seat's own and every foundation (and the new one).
    isOperable(id) {
      if (!this.interactive) return false;
      return id[0] === "f" || id.startsWith(`s${this.interactive.seat}.`);
    }

    // A pile the player can operate: a button with the pile's name, its contents as a
    // description (a button's children are not read out).
    makeOperable(pile) {
      pile.classList.add("operable");
      pile.setAttribute("role", "button");
      pile.setAttribute("tabindex", "0");
      pile.setAttribute("aria-pressed", "false");
    }

    // -- skeleton (built once; piles are redrawn when their value changes) -------------

    buildSeats() {
      this.seatsElement.replaceChildren();
      for (const seat of this.seats) {
        const n = seat.seat;
        const colour = this.seatColour(n);
        const piles = el("div", { class: "rd-piles" });
        const pileSlot = (id, label, kind) => {
          const pile = el("div", {
            class: `pile pile-${kind}`,
            "data-pile": id,
            "data-count": "0",
            "data-top": "",
            role: "group",
            "aria-label": `${seat.name}'s ${label}`,
          });
          if (this.isOperable(id)) this.makeOperable(pile);
          const wrap = el("div", { class: `slot slot-${kind}` }, el("div", { class: "slot-label", text: label }), pile);
          this.pileElements.set(id, pile);
          return wrap;
        };
        piles.append(
          pileSlot(`s${n}.demon`, "demon", "demon"),
          pileSlot(`s${n}.stock`, "stock", "stock"),
          pileSlot(`s${n}.waste`, "waste", "waste"));
        for (let k = 1; k <= this.workPiles; k++) piles.append(pileSlot(`s${n}.w${k}`, `work ${k}`, "work"));
        const swatch = el("span", { class: "rd-swatch", "aria-hidden": "true", text: this.initials[this.position.get(n)] });
        swatch.style.background = colour;
        swatch.style.color = inkOn(colour);
        const total = el("span", { class: "rd-seat-total" });
        const flag = el("span", { class: "rd-seat-flag" });
        // The log names a back ("red"); the page draws each seat in its palette colour,
        // which need not match that name, so the name is in the tooltip only.
        const header = el("h3", { class: "rd-seat-name", title: seat.back ? `${seat.name}: ${seat.back} back in the log` : null }, swatch,
          el("span", { class: "rd-name", text: seat.name }), flag, total);
        const own = this.interactive?.seat === n;
        const block = el("section", { class: own ? "rd-seat own" : "rd-seat", "data-seat": n, "aria-label": `Seat ${n}: ${seat.name}` }, header, piles);
        block.style.setProperty("--seat", colour);
        this.seatsElement.append(block);
        this.seatParts.set(n, { block, total, flag });
      }
    }

    // The drop zone for an ace that starts a foundation, after the foundations.
    buildNewFoundation() {
      const pile = el("div", {
        class: "pile pile-new-foundation",
        "data-pile": NEW_FOUNDATION,
        "data-count": "0",
        "data-top": "",
        "aria-label": "new foundation",
      });
      this.makeOperable(pile);
      pile.append(el("span", { class: "card empty", "aria-hidden": "true" }, el("span", { class: "plus", text: "+" })));
      const slot = el("div", { class: "slot slot-foundation slot-new-foundation" }, el("div", { class: "slot-label", text: "new" }), pile);
      this.pileElements.set(NEW_FOUNDATION, pile);
      this.foundationsElement.append(slot);
    }

    // -- piles ----------------------------------------------------------------------------

    drawSeatPile(id, value) {
      const pile = this.pileElements.get(id);
      const owner = Number(id.slice(1, id.indexOf(".")));
      const kind = id.slice(id.indexOf(".") + 1);
      const work = /^w\d+$/.test(kind);
      pile.replaceChildren();
      if (value === undefined) {
        pile.dataset.count = "0";
        pile.dataset.top = "";
        if (work) pile.dataset.cards = "";
        this.describe(pile, "empty");
        return;
      }
      if (kind === "stock") {
        const count = value.n;
        pile.dataset.count = String(count);
        pile.dataset.top = "";
        if (count > 0) {
          const back = el("span", { class: "card back", role: "img", "aria-label": `${plural(count, "card")} face down` });
          back.style.setProperty("--owner", this.seatColour(owner));
          pile.append(back);
        } else {
          pile.append(el("span", { class: "card empty", role: "img", "aria-label": "empty" }));
        }
        pile.append(el("span", { class: "count", text: String(count) }));
        this.describe(pile, count ? `${plural(count, "card")} face down` : "empty");
        return;
      }
      const cards = value.cards;
      const count = countOf(value);
      const top = cards.length ? cards[cards.length - 1] : "";
      pile.dataset.count = String(count);
      pile.dataset.top = top;
      this.describe(pile, top ? `${this.cardLabel(top, owner)} on top, ${plural(count, "card")}` : "empty");
      if (work) {
        pile.dataset.cards = cards.join(" ");
        if (!cards.length) pile.append(el("span", { class: "card empty", role: "img", "aria-label": "empty" }));
        cards.forEach((face, index) => {
          const card = this.cardElement(face, owner);
          card.dataset.index = String(index);
          pile.append(card);
        });
        return;
      }
      // Demon and waste: the top card shows (the waste's last three fanned, as they were
      // turned); the count says how many are under them.
      const shown = kind === "waste" ? cards.slice(-3) : cards.slice(-1);
      if (!shown.length) pile.append(el("span", { class: "card empty", role: "img", "aria-label": "empty" }));
      const fan = el("span", { class: "fan" });
      for (const face of shown) fan.append(this.cardElement(face, owner));
      pile.append(fan, el("span", { class: "count", text: String(count) }));
    }

    // What an operable pile holds, in words: its button's description.
    describe(pile, words) {
      if (pile.classList.contains("operable")) pile.setAttribute("aria-description", words);
    }

    foundationTitle(value) {
      return value.levels.map((level) => level.map((text) => {
        const [face, owner] = splitCard(text);
        return `${cardText(face)} (${this.seatName(owner)})`;
      }).join(" = ")).join(", ");
    }

    drawFoundation(pile, value, hand) {
      pile.replaceChildren();
      const count = value.levels.reduce((sum, level) => sum + level.length, 0);
      const topLevel = value.levels[value.levels.length - 1] ?? [];
      pile.dataset.count = String(count);
      pile.dataset.top = topLevel[0] ?? "";
      pile.dataset.suit = value.suit;
      pile.classList.toggle("complete", Boolean(value.complete));
      pile.classList.toggle("tied", topLevel.length > 1);
      pile.title = this.foundationTitle(value);
      const fan = el("span", { class: "fan" });
      for (const text of topLevel) {
        const [face, owner] = splitCard(text);
        const card = this.cardElement(face, owner, true);
        // A link inside a button would be a control inside a control: links only when the
        // table is not played on.
        const seq = this.interactive ? undefined : this.placedAt.get(`${hand}:${text}`);
        if (seq === undefined) {
          fan.append(card);
        } else {
          card.setAttribute("aria-label", `${card.getAttribute("aria-label")}, placed at record ${seq}`);
          fan.append(el("a", { href: `#seq=${seq}`, class: "rd-card-link", title: `placed at record ${seq}` }, card));
        }
      }
      // The owners of the cards below, bottom first: who built this pile, at a glance.
      const strip = el("span", { class: "owners", "aria-hidden": "true" });
      for (const level of value.levels.slice(0, -1)) {
        for (const text of level) {
          const tick = el("span", { class: "tick" });
          tick.style.background = this.seatColour(splitCard(text)[1]);
          strip.append(tick);
        }
      }
      pile.append(fan, strip, el("span", { class: "count", text: `${count}${value.complete ? " ✓" : ""}` }));
      const [topFace, topOwner] = topLevel.length ? splitCard(topLevel[0]) : [null, null];
      this.describe(pile, `${topFace ? `${this.cardLabel(topFace, topOwner)} on top, ` : ""}${plural(count, "card")}${value.complete ? ", complete" : ""}`);
    }

    drawFoundations(piles, hand) {
      const container = this.foundationsElement;
      const ids = Object.keys(piles).filter((id) => id[0] === "f")
        .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
      const present = new Set(ids);
      for (const id of [...this.pileElements.keys()]) {
        if (id[0] === "f" && id !== NEW_FOUNDATION && !present.has(id)) {
          this.pileElements.get(id).closest(".slot").remove();
          this.pileElements.delete(id);
          this.rendered.delete(id);
        }
      }
      // The foundations come first, in order; the new foundation's zone stays after them.
      ids.forEach((id, position) => {
        let pile = this.pileElements.get(id);
        if (!pile) {
          pile = el("div", { class: "pile pile-foundation", "data-pile": id, role: "group", "aria-label": `foundation ${id.slice(1)}` });
          if (this.isOperable(id)) this.makeOperable(pile);
          const slot = el("div", { class: "slot slot-foundation" }, el("div", { class: "slot-label", text: id.slice(1) }), pile);
          this.pileElements.set(id, pile);
          container.insertBefore(slot, container.children[position] ?? null);
        } else if (container.children[position] !== pile.closest(".slot")) {
          container.insertBefore(pile.closest(".slot"), container.children[position] ?? null);
        }
        if (this.rendered.get(id) !== piles[id]) {
          this.drawFoundation(pile, piles[id], hand);
          this.rendered.set(id, piles[id]);
        }
      });
      if (!ids.length && !container.querySelector(".rd-empty-centre")) {
        container.append(el("p", { class: "rd-empty-centre", text: "No foundation yet." }));
      } else if (ids.length) {
        container.querySelector(".rd-empty-centre")?.remove();
      }
    }

    // The whole table: `piles` maps every pile id to its value (a pile missing is empty);
    // `changed` the piles the last record changed, `named` the piles a bounced or failing
    // move named, which it did not change. A pile is redrawn only when its value is
    // another object than the one drawn last.
    draw(piles, hand, changed = new Set(), named = new Set()) {
      for (const id of this.pileElements.keys()) {
        if (id[0] !== "s") continue;
        if (this.rendered.get(id) !== piles[id] || !this.rendered.has(id)) {
          this.drawSeatPile(id, piles[id]);
          this.rendered.set(id, piles[id]);
        }
      }
      this.drawFoundations(piles, hand);
      for (const [id, pile] of this.pileElements) {
        pile.classList.toggle("changed", changed.has(id));
        pile.classList.toggle("named", named.has(id));
        pile.dataset.named = String(named.has(id));
      }
      this.tableElement.classList.toggle("before-deal", Object.keys(piles).length === 0);
      this.applyMarks();
    }

    pileElement(id) {
      return this.pileElements.get(id);
    }

    // -- marks: the selected pile or card, the legal targets, the seat headers -----------

    // `index`: the card chosen in a work pile (it and the cards on it move together), or null.
    setSelected(id, index = null) {
      this.selected = id === null || id === undefined ? null : { id, index: index ?? null };
      this.applyMarks();
    }

    setTargets(ids) {
      this.targets = new Set(ids ?? []);
      this.applyMarks();
    }

    // Kept across redraws: a pile redrawn or a foundation created gets its marks again.
    // A work pile's chosen card and those on it are marked; elsewhere the top card.
    applyMarks() {
      const marking = this.selected !== null || this.targets.size > 0;
      if (!marking && !this.hasMarks) return; // the view page never marks: no cost to it
      this.hasMarks = marking;
      for (const [id, pile] of this.pileElements) {
        const selected = this.selected?.id === id;
        pile.classList.toggle("selected", selected);
        pile.classList.toggle("target", this.targets.has(id));
        if (pile.classList.contains("operable")) pile.setAttribute("aria-pressed", String(selected));
        const cards = [...pile.querySelectorAll(".card[data-face]")];
        cards.forEach((card, position) => {
          const chosen = selected && (this.selected.index === null
            ? position === cards.length - 1
            : Number(card.dataset.index) >= this.selected.index);
          card.classList.toggle("selected", chosen);
        });
      }
    }

    setSeatFlag(seat, text) {
      const parts = this.seatParts.get(seat);
      if (parts) parts.flag.textContent = text;
    }

    setSeatTotal(seat, text) {
      const parts = this.seatParts.get(seat);
      if (parts) parts.total.textContent = text;
    }

    // The seat that acted (outlined), or null.
    setActiveSeat(seat) {
      for (const [n, { block }] of this.seatParts) block.classList.toggle("active", n === seat);
    }

    // -- interaction --------------------------------------------------------------------

    operablePile(node) {
      const pile = node instanceof Element ? node.closest("[data-pile]") : null;
      return pile && pile.classList.contains("operable") && this.pileElements.get(pile.dataset.pile) === pile ? pile : null;
    }

    activate(pile, index) {
      this.interactive.onActivate({ pile, index });
    }

    bindInteraction() {
      for (const container of [this.seatsElement, this.foundationsElement]) {
        container.addEventListener("click", (event) => this.onClick(event));
        container.addEventListener("keydown", (event) => this.onKey(event));
        container.addEventListener("pointerdown", (event) => this.onPointerDown(event));
      }
    }

    onClick(event) {
      if (this.swallowClick) return; // the click that ends a drag
      const pile = this.operablePile(event.target);
      if (!pile) return;
      event.preventDefault();
      const card = event.target.closest(".card[data-index]");
      this.activate(pile.dataset.pile, card && pile.contains(card) ? Number(card.dataset.index) : null);
    }

    onKey(event) {
      if (event.key !== "Enter" && event.key !== " ") return;
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const pile = event.target instanceof Element && event.target.matches(".operable[data-pile]") ? event.target : null;
      if (!pile) return;
      // The pile took the key: a page's own Space (turn the stock, say) must not as well.
      event.preventDefault();
      event.stopPropagation();
      if (!event.repeat) this.activate(pile.dataset.pile, null);
    }

    // A drag starts on a card of one of the player's own piles and ends over any operable
    // pile: it activates the source, then the target. Pointer Events (not HTML drag and
    // drop), so that a mouse, a finger and a WebDriver's actions all drive it alike.
    onPointerDown(event) {
      if (event.button !== 0 || this.drag) return;
      const pile = this.operablePile(event.target);
      const card = event.target instanceof Element ? event.target.closest(".card[data-face]") : null;
      if (!pile || !card || !pile.contains(card) || pile.dataset.pile[0] !== "s") return;
      this.drag = {
        pointerId: event.pointerId,
        pile,
        index: card.dataset.index === undefined ? null : Number(card.dataset.index),
        face: card.dataset.face,
        owner: Number(card.dataset.owner),
        x: event.clientX,
        y: event.clientY,
        ghost: null,
        over: null,
      };
      const move = (moved) => this.onPointerMove(moved);
      const up = (ended) => this.onPointerUp(ended);
      const cancel = (cancelled) => {
        if (cancelled.pointerId === this.drag?.pointerId) this.endDrag();
      };
      this.drag.unbind = () => {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", up);
        window.removeEventListener("pointercancel", cancel);
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", up);
      window.addEventListener("pointercancel", cancel);
    }

    onPointerMove(event) {
      const drag = this.drag;
      if (!drag || event.pointerId !== drag.pointerId) return;
      if (!drag.ghost) {
        if (Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < DRAG_THRESHOLD_PX) return;
        drag.ghost = this.cardElement(drag.face, drag.owner);
        drag.ghost.classList.add("rd-drag-ghost");
        drag.ghost.setAttribute("aria-hidden", "true");
        document.body.append(drag.ghost);
        drag.pile.classList.add("drag-source");
      }
      drag.ghost.style.transform = `translate(${event.clientX}px, ${event.clientY}px)`;
      const over = this.operablePile(document.elementFromPoint(event.clientX, event.clientY));
      if (over !== drag.over) {
        drag.over?.classList.remove("drop-over");
        if (over && over !== drag.pile) over.classList.add("drop-over");
        drag.over = over;
      }
    }

    onPointerUp(event) {
      const drag = this.drag;
      if (!drag || event.pointerId !== drag.pointerId) return;
      this.endDrag();
      // A press that never moved is a click, and the click event says so.
      if (!drag.ghost && Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < DRAG_THRESHOLD_PX) return;
      // The click that follows a drag's release is no activation of its own.
      this.swallowClick = true;
      setTimeout(() => { this.swallowClick = false; }, 0);
      const target = this.operablePile(document.elementFromPoint(event.clientX, event.clientY));
      if (!target || target === drag.pile) return;
      this.activate(drag.pile.dataset.pile, drag.index);
      this.activate(target.dataset.pile, null);
    }

    endDrag() {
      const drag = this.drag;
      if (!drag) return;
      drag.unbind();
      drag.ghost?.remove();
      drag.over?.classList.remove("drop-over");
      drag.pile.classList.remove("drag-source");
      this.drag = null;
    }
  }

  return Object.freeze({
    TableView,
    NEW_FOUNDATION,
    PALETTE: Object.freeze([...PALETTE]),
    seatColours,
    el,
    plural,
    inkOn,
    seatInitials,
    cardText,
    isRed,
    splitCard,
  });
})();
