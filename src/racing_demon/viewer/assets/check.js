// check.js: the viewer's own verification of a log, with the browser's Web Crypto only.
//
// It re-checks what needs no rules engine: each line's strict JSON and canonical form
// (docs/log-format.md §1-§3), the hash chain (§6, step 4 of §7), the table's and the
// players' Ed25519 signatures (§5, §6), the revealed secret against the commitment, the
// entropy bound to the commitment, and every pack re-derived (docs/deal-spec.md; for a
// duplicate tournament's table, the plan's packs, docs/tournament.md). The moves
// themselves (steps 7-10 but the packs) are the embedded Python verdict's to judge.
//
// page.py puts this file and view.js into one module script, so everything but RDCheck
// lives inside the function below: no other name can clash with view.js's.
//
// Ed25519 strictness mirrors racing_demon.log.signing. Web Crypto's verify (BoringSSL in
// Chromium) checks the cofactorless equation, S < L and R's bytes, as bare OpenSSL does
// under the Python verifier; like it, it accepts the small-order keys and R of speccheck
// cases 0-2 (measured in Chromium 156). So every refusal of signing.py that comes before
// the equation is made here in JS first, in the same order and with the same codes: the
// 128-hex text form, the kind, a key that is not 32 bytes, not canonical (y >= p, or x = 0
// with the sign bit), not on the curve, or one of the eight small-order points; an R not
// canonical or of small order; S >= L. tests/browser/test_viewer_checks.py compares every
// answer with signing.py's on the ed25519-speccheck vectors and crafted edge cases.
const RDCheck = (() => {
  "use strict";

  const subtle = globalThis.crypto.subtle;
  const encoder = new TextEncoder();
  const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

  // -- bytes ---------------------------------------------------------------------------

  const HEX_DIGITS = "0123456789abcdef";
  const toHex = (bytes) => {
    let text = "";
    for (const byte of bytes) text += HEX_DIGITS[byte >> 4] + HEX_DIGITS[byte & 15];
    return text;
  };
  const HEX_RE = /^(?:[0-9a-f]{2})*$/;
  const fromHex = (text) => {
    if (typeof text !== "string" || !HEX_RE.test(text)) throw new Error("not lowercase hex");
    const bytes = new Uint8Array(text.length / 2);
    for (let i = 0; i < bytes.length; i += 1) bytes[i] = parseInt(text.substr(2 * i, 2), 16);
    return bytes;
  };
  const concat = (...parts) => {
    const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  };
  const u32 = (value) => {
    const out = new Uint8Array(4);
    new DataView(out.buffer).setUint32(0, value, false);
    return out;
  };
  const lp = (bytes) => concat(u32(bytes.length), bytes);
  const ascii = (text) => encoder.encode(text);
  const sha256 = async (bytes) => new Uint8Array(await subtle.digest("SHA-256", bytes));
  const sha256Hex = async (bytes) => toHex(await sha256(bytes));
  const equalBytes = (a, b) => a.length === b.length && a.every((byte, i) => byte === b[i]);
  const lastIndexOf = (haystack, needle) => {
    outer: for (let i = haystack.length - needle.length; i >= 0; i -= 1) {
      for (let j = 0; j < needle.length; j += 1) if (haystack[i + j] !== needle[j]) continue outer;
      return i;
    }
    return -1;
  };

  // -- strict JSON and the canonical form (log/reader.py, log/canonical.py) -----------

  const LIMITS = Object.freeze({
    maxFileBytes: 64 * 1024 * 1024,
    maxLineBytes: 64 * 1024,
    maxRecords: 1000000,
    maxDepth: 32,
  });
  const MAX_SAFE = Number.MAX_SAFE_INTEGER;
  const MAX_INT_CHARS = String(-MAX_SAFE).length;

  class Refusal extends Error {
    constructor(code, message) {
      super(message);
      this.code = code;
    }
  }

  // The reader's depth scan runs before parsing (so 100,000-deep input costs nothing), with
  // its exact tokenising: string literals removed, an unterminated one running to the end.
  const STRING_LITERAL = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"?/g;
  const checkDepth = (text) => {
    let brackets = 0;
    for (const ch of text) if (ch === "[" || ch === "{") brackets += 1;
    if (brackets <= LIMITS.maxDepth) return;
    let depth = 0;
    for (const ch of text.replace(STRING_LITERAL, "")) {
      if (ch === "[" || ch === "{") {
        depth += 1;
        if (depth > LIMITS.maxDepth) {
          throw new Refusal("TOO_DEEP", `containers nested deeper than ${LIMITS.maxDepth}`);
        }
      } else if (ch === "]" || ch === "}") depth -= 1;
    }
  };

  // A recursive-descent reading of Python's json module (its C scanner) with the reader's
  // hooks: numbers are judged as they are read, a duplicate key when its object closes.
  // Objects have no prototype, so a key such as "__proto__" is a key like any other.
  const parseStrict = (text) => {
    let at = 0;
    const bad = (what) => new Refusal("BAD_JSON", `${what} at character ${at}`);
    const skipSpace = () => {
      while (at < text.length) {
        const ch = text[at];
        if (ch !== " " && ch !== "\t" && ch !== "\n" && ch !== "\r") break;
        at += 1;
      }
    };
    const isDigit = (ch) => ch >= "0" && ch <= "9";
    const ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
    const readString = () => {
      at += 1; // the opening quote
      let out = "";
      for (;;) {
        if (at >= text.length) throw bad("Unterminated string");
        const ch = text[at];
        const code = ch.charCodeAt(0);
        if (ch === '"') {
          at += 1;
          return out;
        }
        if (code < 0x20) throw bad("Invalid control character");
        if (ch !== "\\") {
          out += ch;
          at += 1;
          continue;
        }
        const escape = text[at + 1];
        if (escape === "u") {
          const digits = text.substr(at + 2, 4);
          if (!/^[0-9a-fA-F]{4}$/.test(digits)) throw bad("Invalid \\uXXXX escape");
          out += String.fromCharCode(parseInt(digits, 16));
          at += 6;
        } else if (escape !== undefined && Object.hasOwn(ESCAPES, escape)) {
          out += ESCAPES[escape];
          at += 2;
        } else {
          throw bad("Invalid \\escape");
        }
      }
    };
    const readNumber = () => {
      const start = at;
      if (text[at] === "-") at += 1;
      if (at < text.length && text[at] >= "1" && text[at] <= "9") {
        while (at < text.length && isDigit(text[at])) at += 1;
      } else if (text[at] === "0") {
        at += 1;
      } else {
        at = start;
        throw bad("Expecting value");
      }
      let isFloat = false;
      if (text[at] === "." && isDigit(text[at + 1] ?? "")) {
        at += 1;
        while (at < text.length && isDigit(text[at])) at += 1;
        isFloat = true;
      }
      if (text[at] === "e" || text[at] === "E") {
        const mark = at;
        at += 1;
        if (text[at] === "+" || text[at] === "-") at += 1;
        const digitsStart = at;
        while (at < text.length && isDigit(text[at])) at += 1;
        if (at === digitsStart) at = mark;
        else isFloat = true;
      }
      const literal = text.slice(start, at);
      if (isFloat) throw new Refusal("FLOAT", `number with a fraction or exponent: ${literal}`);
      if (literal === "-0") throw new Refusal("NEGATIVE_ZERO", "integer -0 (only 0 is allowed)");
      if (literal.length > MAX_INT_CHARS) {
        throw new Refusal(
          "INT_RANGE",
          `integer of ${literal.length} characters beyond +/-(2**53 - 1)`,
        );
      }
      const value = Number(literal);
      if (!Number.isSafeInteger(value)) {
        throw new Refusal("INT_RANGE", `integer beyond +/-(2**53 - 1): ${literal}`);
      }
      return value;
    };
    const readValue = () => {
      const ch = text[at];
      if (ch === '"') return readString();
      if (ch === "{") return readObject();
      if (ch === "[") return readArray();
      if (text.startsWith("null", at)) return ((at += 4), null);
      if (text.startsWith("true", at)) return ((at += 4), true);
      if (text.startsWith("false", at)) return ((at += 5), false);
      for (const constant of ["NaN", "Infinity", "-Infinity"]) {
        if (text.startsWith(constant, at))
          throw new Refusal("NAN_OR_INFINITY", `${constant} is not JSON`);
      }
      if (ch === "-" || isDigit(ch ?? "")) return readNumber();
      throw bad("Expecting value");
    };
    const readObject = () => {
      at += 1;
      const pairs = [];
      skipSpace();
      if (text[at] === "}") {
        at += 1;
        return Object.create(null);
      }
      for (;;) {
        if (text[at] !== '"') throw bad("Expecting property name enclosed in double quotes");
        const key = readString();
        skipSpace();
        if (text[at] !== ":") throw bad("Expecting ':' delimiter");
        at += 1;
        skipSpace();
        pairs.push([key, readValue()]);
        skipSpace();
        if (text[at] === "}") {
          at += 1;
          break;
        }
        if (text[at] !== ",") throw bad("Expecting ',' delimiter");
        at += 1;
        skipSpace();
      }
      const object = Object.create(null);
      for (const [key, value] of pairs) {
        if (Object.hasOwn(object, key)) {
          throw new Refusal("DUPLICATE_KEY", `duplicate key ${JSON.stringify(key)}`);
        }
        object[key] = value;
      }
      return object;
    };
    const readArray = () => {
      at += 1;
      const items = [];
      skipSpace();
      if (text[at] === "]") {
        at += 1;
        return items;
      }
      for (;;) {
        skipSpace();
        items.push(readValue());
        skipSpace();
        if (text[at] === "]") {
          at += 1;
          return items;
        }
        if (text[at] !== ",") throw bad("Expecting ',' delimiter");
        at += 1;
      }
    };
    skipSpace();
    const value = readValue();
    skipSpace();
    if (at !== text.length) throw bad("Extra data");
    return value;
  };

  const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
  const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

  // RFC 8785 inside the log's data model: JSON.stringify escapes strings exactly as JCS
  // asks (it also escapes lone surrogates, which the model refuses first); keys are
  // printable ASCII, so their UTF-16 order is code-point order.
  const encodeCanonical = (value) => {
    if (value === null) return "null";
    if (value === true) return "true";
    if (value === false) return "false";
    if (typeof value === "number") {
      if (!Number.isSafeInteger(value))
        throw new Refusal("INT_RANGE", `not a safe integer: ${value}`);
      return String(value);
    }
    if (typeof value === "string") {
      if (LONE_SURROGATE.test(value)) {
        throw new Refusal("LONE_SURROGATE", "string contains a surrogate code point");
      }
      return JSON.stringify(value);
    }
    if (Array.isArray(value)) return `[${value.map(encodeCanonical).join(",")}]`;
    if (isObject(value)) {
      const members = Object.keys(value)
        .sort()
        .map((key) => {
          if (!PRINTABLE_ASCII.test(key)) {
            throw new Refusal(
              "KEY_NOT_PRINTABLE_ASCII",
              `object key must be printable ASCII, got ${JSON.stringify(key)}`,
            );
          }
          return `${JSON.stringify(key)}:${encodeCanonical(value[key])}`;
        });
      return `{${members.join(",")}}`;
    }
    throw new Refusal("UNSUPPORTED_TYPE", `unsupported type ${typeof value}`);
  };
  const canonicalBytes = (value) => encoder.encode(encodeCanonical(value));

  // One line (without its \n) read as the verifier's reader does: {value, text} or
  // {code, message} with the reader's code (log/reader.py ReadCode).
  const readLine = (raw) => {
    const nul = raw.indexOf(0);
    if (nul >= 0) return { code: "NUL", message: `NUL byte at byte ${nul}` };
    let text;
    try {
      text = strictUtf8.decode(raw);
    } catch {
      return { code: "NOT_UTF8", message: "invalid UTF-8" };
    }
    let value;
    try {
      checkDepth(text);
      value = parseStrict(text);
    } catch (error) {
      if (error instanceof Refusal) return { code: error.code, message: error.message };
      return { code: "BAD_JSON", message: `JSON parser failed: ${error.name}` };
    }
    if (!isObject(value)) {
      const type = Array.isArray(value)
        ? "an array"
        : value === null
          ? "null"
          : `a ${typeof value}`;
      return { code: "NOT_OBJECT", message: `top level is ${type}` };
    }
    let canonical;
    try {
      canonical = encodeCanonical(value);
    } catch (error) {
      return {
        code: "NOT_CANONICAL",
        message: `outside the data model: ${error.code}: ${error.message}`,
      };
    }
    if (canonical !== text) {
      let i = 0;
      while (i < text.length && text[i] === canonical[i]) i += 1;
      return {
        code: "NOT_CANONICAL",
        message: `not in canonical form from character ${i}: expected ${JSON.stringify(canonical.slice(i, i + 20))}, found ${JSON.stringify(text.slice(i, i + 20))}`,
      };
    }
    return { value, text };
  };

  // -- Ed25519 strictness (log/signing.py) ---------------------------------------------

  const P = (1n << 255n) - 19n;
  const L = (1n << 252n) + 27742317777372353535851937790883648493n;
  const modPow = (base, exponent, modulus) => {
    let result = 1n;
    let b = ((base % modulus) + modulus) % modulus;
    let e = exponent;
    while (e > 0n) {
      if (e & 1n) result = (result * b) % modulus;
      b = (b * b) % modulus;
      e >>= 1n;
    }
    return result;
  };
  const D = (((-121665n * modPow(121666n, P - 2n, P)) % P) + P) % P;
  const littleEndian = (bytes) => {
    let value = 0n;
    for (let i = bytes.length - 1; i >= 0; i -= 1) value = (value << 8n) | BigInt(bytes[i]);
    return value;
  };
  const Y_MASK = (1n << 255n) - 1n;
  // The eight points of order dividing 8, canonically encoded (signing.SMALL_ORDER_ENCODINGS).
  const SMALL_ORDER = new Set([
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
  ]);
  const WHY_NOT_CANONICAL = "y >= p, or x = 0 with the sign bit set";
  const isCanonicalPoint = (encoding) => {
    const value = littleEndian(encoding);
    const y = value & Y_MASK;
    const signed = value >> 255n === 1n;
    return y < P && !(signed && (y === 1n || y === P - 1n));
  };
  // Euler's criterion on u * v: some x has x^2 = u / v (docs/log-format.md §5, KEY_NOT_ON_CURVE).
  const hasX = (y) => {
    const u = (((y * y - 1n) % P) + P) % P;
    const v = (D * y * y + 1n) % P;
    const power = modPow(u * v, (P - 1n) / 2n, P);
    return power === 0n || power === 1n;
  };
  const problem = (code, message) => ({ code, message });
  const keyVerdicts = new Map();
  // null if raw is a usable public key, else {code, message}; kept per key, as Python does.
  const checkPublicKey = (raw) => {
    if (raw.length !== 32)
      return problem("NON_CANONICAL_KEY", `a public key is 32 bytes, found ${raw.length}`);
    const hex = toHex(raw);
    if (keyVerdicts.has(hex)) return keyVerdicts.get(hex);
    let verdict = null;
    if (!isCanonicalPoint(raw)) {
      verdict = problem(
        "NON_CANONICAL_KEY",
        `public key ${hex} is not a canonical point encoding (${WHY_NOT_CANONICAL})`,
      );
    } else if (!hasX(littleEndian(raw) & Y_MASK)) {
      verdict = problem("KEY_NOT_ON_CURVE", `public key ${hex} is not a point of the curve`);
    } else if (SMALL_ORDER.has(hex)) {
      verdict = problem(
        "WEAK_KEY",
        `public key ${hex} is a point of small order: signatures under it can be forged`,
      );
    }
    keyVerdicts.set(hex, verdict);
    return verdict;
  };
  const L_BYTES = (() => {
    const out = new Uint8Array(32);
    let value = L;
    for (let i = 0; i < 32; i += 1, value >>= 8n) out[i] = Number(value & 255n);
    return out;
  })();
  const belowL = (s) => {
    for (let i = 31; i >= 0; i -= 1) if (s[i] !== L_BYTES[i]) return s[i] < L_BYTES[i];
    return false;
  };

  // RFC 8032 test 1: a good signature that a working Ed25519 must accept.
  const PROBE_KEY = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
  const PROBE_SIGNATURE =
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";
  let ed25519Probe = null;
  // Whether this browser's Web Crypto verifies Ed25519: tried, never assumed.
  const ed25519Available = () => {
    ed25519Probe ??= (async () => {
      try {
        const key = await subtle.importKey("raw", fromHex(PROBE_KEY), { name: "Ed25519" }, false, [
          "verify",
        ]);
        return await subtle.verify(
          { name: "Ed25519" },
          key,
          fromHex(PROBE_SIGNATURE),
          new Uint8Array(0),
        );
      } catch {
        return false;
      }
    })();
    return ed25519Probe;
  };
  const cryptoKeys = new Map();
  const cryptoKey = (raw) => {
    const hex = toHex(raw);
    if (!cryptoKeys.has(hex)) {
      cryptoKeys.set(hex, subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]));
    }
    return cryptoKeys.get(hex);
  };

  // Every signature whose group equation this page found not to hold, as the engine takes
  // them (verify.in_page.judge's failed_equations), by key, signature and message digest:
  // a failed equation is a fact of those three bytes, whichever log or run met it.
  const failedEquations = new Map();
  const equationFailed = async (keyRaw, message, signature) => {
    const failed = {
      key: toHex(keyRaw),
      signature: toHex(signature),
      message_sha256: await sha256Hex(message),
    };
    failedEquations.set(`${failed.key}:${failed.signature}:${failed.message_sha256}`, failed);
  };

  // signing.verify_raw: null if signature (64 bytes, R || S) is valid for message, else why not.
  const verifyRaw = async (keyRaw, message, signature) => {
    if (signature.length !== 64) {
      return problem(
        "BAD_SIGNATURE_ENCODING",
        `a signature is exactly 64 bytes, found ${signature.length}`,
      );
    }
    const keyProblem = checkPublicKey(keyRaw);
    if (keyProblem !== null) return keyProblem;
    const r = signature.subarray(0, 32);
    const s = signature.subarray(32);
    if (!isCanonicalPoint(r)) {
      return problem(
        "NON_CANONICAL_R",
        `R ${toHex(r)} is not a canonical point encoding (${WHY_NOT_CANONICAL})`,
      );
    }
    if (SMALL_ORDER.has(toHex(r)))
      return problem("SMALL_ORDER_R", `R ${toHex(r)} is a point of small order`);
    if (!belowL(s))
      return problem(
        "NON_CANONICAL_S",
        "S is not below the group order L (another signature's S + L?)",
      );
    let valid;
    try {
      valid = await subtle.verify({ name: "Ed25519" }, await cryptoKey(keyRaw), signature, message);
    } catch (error) {
      // Not expected for a key that passed the checks above; refused, never passed.
      await equationFailed(keyRaw, message, signature);
      return problem("BAD_SIGNATURE", `the browser refused to check it (${error.name})`);
    }
    if (valid) return null;
    await equationFailed(keyRaw, message, signature);
    return problem("BAD_SIGNATURE", "the signature does not verify for this key and message");
  };

  const KIND_RE = /^[a-z_]{1,32}$/;
  const SIGNATURE_RE = /^[0-9a-f]{128}$/;
  const pae = (kind, body, version) => {
    const type = ascii(`application/vnd.racing-demon.log.v${version}.${kind}`);
    return concat(ascii(`DSSEv1 ${type.length} `), type, ascii(` ${body.length} `), body);
  };
  // signing.verify: a kind statement of log format version, signature as 128 lowercase hex.
  const verify = async (keyRaw, kind, body, signatureHex, version) => {
    if (typeof signatureHex !== "string" || !SIGNATURE_RE.test(signatureHex)) {
      return problem(
        "BAD_SIGNATURE_ENCODING",
        "a signature is exactly 128 lowercase hex characters",
      );
    }
    if (!KIND_RE.test(kind))
      return problem(
        "BAD_KIND",
        `record kind ${JSON.stringify(kind)} is not 1-32 lowercase ASCII letters or '_'`,
      );
    return verifyRaw(keyRaw, pae(kind, body, version), fromHex(signatureHex));
  };

  // -- the deal (docs/deal-spec.md) ----------------------------------------------------

  const COMMIT_LABEL = ascii("racing-demon/commit/v1");
  const MATCH_SALT = ascii("racing-demon/match-seed/v1");
  const PLAIN_SALT = ascii("racing-demon/plain-seed/v1");
  const DEAL_INFO = lp(ascii("racing-demon/deal/v1"));
  const PACK_LABEL = lp(ascii("racing-demon/pack/v1"));
  const BLOCK_BYTES = 224;
  const PACK_SIZE = 52;

  // Step 1.
  const commitment = (secret) => sha256Hex(concat(lp(COMMIT_LABEL), lp(secret)));
  // Step 3: a seed is HKDF's extract inputs; Web Crypto's HKDF extracts, then expands.
  const matchSeed = (secret, contributions) => {
    if (secret.length !== 32)
      throw new Error(`a dealer secret is 32 bytes, found ${secret.length}`);
    if (contributions.length === 0)
      throw new Error("need one entropy contribution per seat, got none");
    contributions.forEach((part, seat) => {
      if (part.length < 16 || part.length > 64) {
        throw new Error(`seat ${seat}'s contribution is ${part.length} bytes: expected 16 to 64`);
      }
    });
    return {
      salt: MATCH_SALT,
      ikm: concat(lp(secret), u32(contributions.length), ...contributions.map(lp)),
    };
  };
  // A duplicate tournament's table (docs/tournament.md, steps 3 and 5): the tournament's
  // PRK is HMAC-SHA256 keyed with its label, which is HKDF's extract with that salt, over
  // the secret, the tournament's name and shape and its entropy digest E; seat s of table t
  // plays pack (s + t - 1) mod S of each hand, its cards owned by s.
  const TOURNAMENT_SALT = ascii("racing-demon/tournament-seed/v1");
  const tournamentSeed = (secret, tag, seats) => {
    if (secret.length !== 32)
      throw new Error(`the organiser's secret is 32 bytes, found ${secret.length}`);
    if (!isObject(tag)) throw new Error("the tournament member is not an object");
    const name = typeof tag.name === "string" ? encoder.encode(tag.name) : null;
    if (name === null || name.length < 1 || name.length > 256)
      throw new Error("a tournament name is 1 to 256 bytes of UTF-8");
    const counts = { tables: [1, 4096], hands: [1, 500] };
    for (const [member, [low, high]] of Object.entries(counts)) {
      const value = tag[member];
      if (!Number.isInteger(value) || value < low || value > high)
        throw new Error(`the tournament's ${member} is not a count from ${low} to ${high}`);
    }
    if (!Number.isInteger(tag.table) || tag.table < 1 || tag.table > tag.tables)
      throw new Error(`table ${tag.table} is not a table of tournament ${JSON.stringify(tag.name)}`);
    if (typeof tag.entropy !== "string" || !HEX64.test(tag.entropy))
      throw new Error("the tournament's entropy digest is not 64 hex");
    return {
      salt: TOURNAMENT_SALT,
      ikm: concat(
        lp(secret),
        lp(name),
        u32(tag.tables),
        u32(seats),
        u32(tag.hands),
        fromHex(tag.entropy),
      ),
    };
  };
  const packIndex = (table, seats, seat) => (seat + table - 1) % seats;
  const plainSeed = (text) => {
    if (text.length === 0) throw new Error("a plain seed is a non-empty string");
    return { salt: PLAIN_SALT, ikm: encoder.encode(text) };
  };
  const prkOf = async (seed) => {
    const key = await subtle.importKey("raw", seed.salt, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    return new Uint8Array(await subtle.sign("HMAC", key, seed.ikm));
  };
  const ikmKeys = new WeakMap();
  // Step 4: B(k) for (hand, seat), as 56 big-endian words.
  const blockWords = async (seed, hand, seat, block) => {
    if (!ikmKeys.has(seed))
      ikmKeys.set(seed, subtle.importKey("raw", seed.ikm, "HKDF", false, ["deriveBits"]));
    const info = concat(DEAL_INFO, u32(hand), u32(seat), u32(block));
    const bits = await subtle.deriveBits(
      { name: "HKDF", hash: "SHA-256", salt: seed.salt, info },
      await ikmKeys.get(seed),
      BLOCK_BYTES * 8,
    );
    const view = new DataView(bits);
    return Array.from({ length: BLOCK_BYTES / 4 }, (_, i) => view.getUint32(4 * i, false));
  };
  const checkHandSeat = (hand, seat) => {
    if (!Number.isInteger(hand) || hand < 1 || hand >= 2 ** 32)
      throw new Error(`hand ${hand} is outside 1..2**32-1`);
    if (!Number.isInteger(seat) || seat < 0 || seat >= 2 ** 32)
      throw new Error(`seat ${seat} is outside 0..2**32-1`);
  };
  const firstWords = async (seed, hand, seat, count) => {
    checkHandSeat(hand, seat);
    const words = [];
    for (let block = 0; words.length < count; block += 1)
      words.push(...(await blockWords(seed, hand, seat, block)));
    return words.slice(0, count);
  };
  // Steps 5 and 6 on a finite word list: {order, consumed}, or null when the words run out.
  // Plain numbers, never 32-bit bitwise operators, which are signed.
  const shuffle = (n, words) => {
    const order = Array.from({ length: n }, (_, i) => i);
    let next = 0;
    for (let i = n - 1; i >= 1; i -= 1) {
      const size = i + 1;
      const limit = 2 ** 32 - (2 ** 32 % size);
      let word;
      do {
        if (next >= words.length) return null;
        word = words[next];
        next += 1;
      } while (word >= limit);
      const j = word % size;
      [order[i], order[j]] = [order[j], order[i]];
    }
    return { order, consumed: next };
  };
  // The pack p[0..51] of seat in hand, as card indices; B(1) and later only when needed.
  const derivePack = async (seed, hand, seat) => {
    checkHandSeat(hand, seat);
    const words = [];
    for (let block = 0; ; block += 1) {
      words.push(...(await blockWords(seed, hand, seat, block)));
      const dealt = shuffle(PACK_SIZE, words);
      if (dealt !== null) return dealt.order;
    }
  };
  // Step 8.
  const packDigest = (hand, seat, pack) =>
    sha256Hex(concat(PACK_LABEL, u32(hand), u32(seat), Uint8Array.from(pack)));
  const face = (index) => "A23456789TJQK"[index % 13] + "CDHS"[Math.floor(index / 13)];

  // -- reading the log -----------------------------------------------------------------

  const SUBMISSION_KINDS = new Set(["move", "tie", "call", "agree", "resign", "bounce"]);
  const KINDS = new Set([
    "genesis",
    "hand_start",
    "stall",
    "hand_end",
    "final",
    "pause", // (v3) notes: what the log tells beside the match
    "lag",
    ...SUBMISSION_KINDS,
  ]);
  const HEX32 = /^[0-9a-f]{32}$/;
  const HEX64 = /^[0-9a-f]{64}$/;
  const SEEN_WINDOW = 4096;
  const SIGNATURE_SLOTS = new Set(["table", "player", "players", "accepts"]);
  const BODY_START = ascii('{"body":');
  const SIGS_START = ascii(',"sigs":');
  const isCount = (value) => Number.isSafeInteger(value) && value >= 0;

  // What every record has (the schema's common part); null when the envelope holds.
  const envelopeProblem = (value) => {
    const keys = Object.keys(value).sort().join(",");
    if (keys !== "body,sigs" || !isObject(value.body) || !isObject(value.sigs)) {
      return "a record is an object of exactly a body and its sigs";
    }
    const sigs = Object.keys(value.sigs);
    if (!sigs.includes("table") || !sigs.every((name) => SIGNATURE_SLOTS.has(name))) {
      return "its sigs are the table's signature and, where they belong, the players'";
    }
    const body = value.body;
    if (![1, 2, 3, 4].includes(body.v)) return "its format version v is not 1, 2, 3 or 4";
    if (!KINDS.has(body.kind)) return `its kind ${JSON.stringify(body.kind)} is not a record kind`;
    if (!isCount(body.seq)) return "its seq is not a count";
    if (typeof body.game !== "string" || !HEX32.test(body.game))
      return "its game id is not 32 hex characters";
    if (!isCount(body.t_ms)) return "its t_ms is not a count";
    if (
      body.kind === "genesis"
        ? "prev" in body
        : typeof body.prev !== "string" || !HEX64.test(body.prev)
    ) {
      return body.kind === "genesis"
        ? "the genesis has a prev"
        : "its prev is not 64 hex characters";
    }
    return null;
  };

  // Every line framed, read and hashed. A torn last line with no final record before it is
  // what a crash leaves: the log is the complete lines before it (unfinished), as in §1.
  const readLog = async (bytes) => {
    const lines = [];
    let framing = null;
    let torn = false;
    let total = 0;
    let start = 0;
    let finalSeen = false;
    while (start < bytes.length) {
      const number = lines.length + 1;
      const end = bytes.indexOf(0x0a, start);
      const terminated = end >= 0;
      const raw = bytes.subarray(start, terminated ? end : bytes.length);
      total += raw.length + (terminated ? 1 : 0);
      start = terminated ? end + 1 : bytes.length;
      const refuse = (code, message) => (framing = { number, code, message });
      if (total > LIMITS.maxFileBytes)
        refuse("FILE_TOO_LARGE", `file larger than ${LIMITS.maxFileBytes} bytes`);
      else if (number > LIMITS.maxRecords)
        refuse("TOO_MANY_RECORDS", `more than ${LIMITS.maxRecords} records`);
      else if (raw.length > LIMITS.maxLineBytes)
        refuse("LINE_TOO_LONG", `line longer than ${LIMITS.maxLineBytes} bytes`);
      else if (number === 1 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf)
        refuse("BOM", "file starts with a UTF-8 byte order mark");
      else if (raw.includes(0x0d))
        refuse("CR", `carriage return at byte ${raw.indexOf(0x0d)}; lines end in LF`);
      else if (!terminated) {
        if (!finalSeen) {
          torn = true;
          break;
        }
        refuse("TORN_LINE", "last line has no terminating newline");
      } else if (raw.every((byte) => byte === 0x20 || byte === 0x09))
        refuse("EMPTY_LINE", "empty or whitespace-only line");
      if (framing !== null) break;
      const read = readLine(raw);
      const line = { number, index: number - 1, raw, problem: null, body: null, sigs: null };
      if (read.code !== undefined) {
        line.problem = { code: read.code, words: read.message };
      } else {
        const why = envelopeProblem(read.value);
        if (why !== null) line.problem = { code: "SCHEMA", words: why };
        else {
          line.body = read.value.body;
          line.sigs = read.value.sigs;
          finalSeen ||= line.body.kind === "final";
        }
      }
      lines.push(line);
    }
    await Promise.all(
      lines.map(async (line) => {
        line.hash = await sha256Hex(line.raw);
        if (line.body !== null) {
          // signing covers the body's bytes cut from the line (records.body_bytes).
          const cut = lastIndexOf(line.raw, SIGS_START);
          line.bodyBytes = line.raw.subarray(BODY_START.length, cut);
        }
      }),
    );
    const genesis = lines[0]?.body?.kind === "genesis" ? lines[0] : null;
    const final = lines.find((line) => line.body?.kind === "final") ?? null;
    return { lines, framing, torn, genesis, final };
  };

  // -- the words -----------------------------------------------------------------------

  const seatName = (log, seat) => {
    const entry = log.genesis?.body.players?.[seat];
    return isObject(entry) && typeof entry.name === "string" ? entry.name : null;
  };
  const seatWords = (log, seat) => {
    const name = seatName(log, seat);
    return name === null ? `seat ${seat}` : `seat ${seat} (${name})`;
  };
  const seqOf = (line) => (line.body !== null ? line.body.seq : line.index);
  const recordWords = (log, line) => {
    const seq = seqOf(line);
    const at = seq === line.index ? `record ${seq}` : `record ${seq} (line ${line.number})`;
    if (line.body === null) return `line ${line.number}`;
    const body = line.body;
    if (SUBMISSION_KINDS.has(body.kind) && Number.isInteger(body.player)) {
      const move = typeof body.move === "string" ? ` '${body.move}'` : "";
      return `${at}, ${seatWords(log, body.player)}'s ${body.kind}${move}`;
    }
    if (body.kind === "hand_start" && Number.isInteger(body.hand))
      return `${at}, the start of hand ${body.hand}`;
    return `${at}, the ${body.kind.replace("_", " ")}`;
  };
  const shortId = (hex) => `${hex.slice(0, 12)}…`;
  const plural = (count, one, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

  // -- the checks ----------------------------------------------------------------------

  const result = (check, status, words, found = null, line = null) => ({
    check,
    status,
    seq: found === null ? null : seqOf(line),
    line: found === null ? null : line.number,
    code: found === null ? null : found.code,
    rule: found?.rule ?? null,
    words,
  });
  const failed = (log, check, line, found) =>
    result(check, "fail", `${recordWords(log, line)}: ${found.words}`, found, line);
  const failedAtFraming = (check, log) => {
    const { number, code, message } = log.framing;
    return {
      check,
      status: "fail",
      seq: number - 1,
      line: number,
      code,
      rule: null,
      words: `line ${number}: ${code}: ${message}`,
    };
  };
  const unreadable = (line) =>
    line.problem.code === "SCHEMA"
      ? { code: "SCHEMA", words: `not a record: ${line.problem.words}` }
      : {
          code: line.problem.code,
          words: `cannot be checked: the line is not a readable record (${line.problem.code}; see the canonical check)`,
        };

  // Runs perLine over the lines in order; each returns null, a problem {code, words, rule},
  // or a promise of one. The first line with a problem, in file order, is the answer.
  // Lines after index `until` are not looked at.
  const firstProblem = async (log, perLine, until = Infinity) => {
    const pending = [];
    for (const line of log.lines) {
      if (line.index > until) return firstSettled(pending, null);
      if (line.body === null) {
        pending.push([line, unreadable(line)]);
        break;
      }
      const found = perLine(line);
      if (found === null) continue;
      pending.push([line, found]);
      if (!(found instanceof Promise)) break;
    }
    // A framing problem past `until` (a torn line after the final record) is not this one's.
    const framed = log.framing !== null && log.framing.number - 1 <= until;
    return firstSettled(pending, framed ? [null, null] : null);
  };
  const firstSettled = async (pending, otherwise) => {
    for (const [line, found] of pending) {
      const settled = await found;
      if (settled !== null) return [line, settled];
    }
    return otherwise;
  };
  // The first of several checks of one line, in order, run at once.
  const firstOf = async (checks) => {
    for (const found of await Promise.all(checks)) if (found !== null) return found;
    return null;
  };
  const signatureProblem = (code, what, found) =>
    found === null
      ? null
      : { code, rule: found.code, words: `${what}: ${found.code}: ${found.message}` };

  const checkCanonical = (log) => {
    const bad = log.lines.find((line) => line.problem !== null && line.problem.code !== "SCHEMA");
    if (bad !== undefined) {
      return {
        check: "canonical",
        status: "fail",
        seq: bad.index,
        line: bad.number,
        code: bad.problem.code,
        rule: null,
        words: `line ${bad.number}: ${bad.problem.code}: ${bad.problem.words}`,
      };
    }
    if (log.framing !== null) return failedAtFraming("canonical", log);
    if (log.lines.length === 0 && !log.torn)
      return result("canonical", "pass", "the file is empty: there is no line to read");
    const tail = log.torn
      ? "; the last line is torn (no newline at the end), as a crash mid-write leaves it, and is not part of the log"
      : "";
    return result(
      "canonical",
      "pass",
      `all ${plural(log.lines.length, "line")} are strict JSON in their canonical form (RFC 8785)${tail}`,
    );
  };

  const checkChain = async (log) => {
    let finalLine = null;
    const found = await firstProblem(log, (line) => {
      const body = line.body;
      if (finalLine !== null)
        return {
          code: "AFTER_FINAL",
          words: `a record after the final record on line ${finalLine}`,
        };
      if (line.index === 0) {
        if (body.kind !== "genesis")
          return {
            code: "GENESIS_MISSING",
            words: `the first record is a ${body.kind}, not the genesis`,
          };
        // The record schema's (step 3) "seq": 0 on the genesis: the count starts there.
        return body.seq === 0
          ? null
          : { code: "SCHEMA", words: `the genesis's seq is ${body.seq}: the count starts at 0` };
      }
      const genesis = log.genesis.body;
      const previous = log.lines[line.index - 1];
      if (body.kind === "genesis")
        return { code: "GENESIS_REPEATED", words: "a second genesis record" };
      if (body.seq !== line.index) {
        return {
          code: "SEQ_MISMATCH",
          words: `its seq is ${body.seq} on line ${line.number}, where ${line.index} belongs: a record removed, repeated or moved`,
        };
      }
      if (body.prev !== previous.hash)
        return {
          code: "PREV_MISMATCH",
          words: "its prev is not the SHA-256 of the line before it: a line changed or spliced in",
        };
      if (body.game !== genesis.game)
        return {
          code: "GAME_ID_MISMATCH",
          words: `a record of another game (${body.game}, not ${genesis.game})`,
        };
      if (body.v !== genesis.v)
        return { code: "VERSION_MISMATCH", words: `format v${body.v} in a v${genesis.v} log` };
      if (body.t_ms < previous.body.t_ms)
        return {
          code: "TIME_BACKWARDS",
          words: `time runs backwards: ${body.t_ms} ms after ${previous.body.t_ms} ms`,
        };
      if (SUBMISSION_KINDS.has(body.kind) && body.v >= 2) {
        const seen = body.seen;
        if (!isObject(seen) || !isCount(seen.seq) || typeof seen.hash !== "string")
          return {
            code: "SCHEMA",
            words: `a v${body.v} submission without the record its player had seen`,
          };
        const oldest = Math.max(0, line.index - SEEN_WINDOW);
        if (!(oldest <= seen.seq && seen.seq < line.index)) {
          return {
            code: "SEEN_OUT_OF_RANGE",
            words: `the record its player had seen, ${seen.seq}, is not one of the ${SEEN_WINDOW} records before it`,
          };
        }
        if (log.lines[seen.seq].hash !== seen.hash) {
          return {
            code: "SEEN_MISMATCH",
            words: `the record its player had seen is not line ${seen.seq + 1} of this log: the table showed this player another history`,
          };
        }
      }
      if (body.kind === "final") {
        if (body.records !== body.seq)
          return {
            code: "RECORD_COUNT",
            words: `the final record counts ${body.records} records before it, not ${body.seq}`,
          };
        finalLine = line.number;
      }
      return null;
    });
    if (found !== null)
      return found[0] === null ? failedAtFraming("chain", log) : failed(log, "chain", ...found);
    if (log.lines.length === 0)
      return result(
        "chain",
        "pass",
        "the file is empty: no genesis, no final record; the log is unfinished",
      );
    const count = plural(log.lines.length, "record");
    if (log.final === null)
      return result(
        "chain",
        "pass",
        `${count} chained by SHA-256 from the genesis, but no final record: the log is unfinished`,
      );
    const seen =
      log.genesis.body.v >= 2 ? ", each submission naming a record its player had seen" : "";
    return result(
      "chain",
      "pass",
      `${count} chained by SHA-256 from the genesis to the final record${seen}`,
    );
  };

  const genesisProblem = (log) => {
    const line = log.lines[0];
    if (line === undefined || line.body === null) return null;
    const body = line.body;
    if (body.kind !== "genesis")
      return {
        code: "GENESIS_MISSING",
        words: "the first record is not the genesis: there is nothing to check against",
      };
    const playersOk =
      Array.isArray(body.players) &&
      body.players.every(
        (p) => isObject(p) && (p.key === null || (typeof p.key === "string" && HEX64.test(p.key))),
      );
    if (!playersOk)
      return {
        code: "SCHEMA",
        words: "the genesis players are not a list of seats with a key (64 hex) or null",
      };
    if (typeof body.table_key !== "string" || !HEX64.test(body.table_key))
      return { code: "SCHEMA", words: "the genesis table_key is not a key id (64 hex)" };
    if (typeof body.commitment !== "string" || !HEX64.test(body.commitment))
      return { code: "SCHEMA", words: "the genesis commitment is not 64 hex" };
    if (
      !Array.isArray(body.entropy) ||
      !body.entropy.every((e) => typeof e === "string" && HEX_RE.test(e))
    )
      return { code: "SCHEMA", words: "the genesis entropy is not a list of hex strings" };
    return null;
  };
  const noGenesis = (log, check) => {
    if (log.lines.length === 0)
      return result(check, "not-applicable", "the file is empty: there is nothing to check");
    const line = log.lines[0];
    if (line.body === null) return failed(log, check, line, unreadable(line));
    const found = genesisProblem(log);
    return found === null ? null : failed(log, check, line, found);
  };

  const checkTableSignatures = async (log, tableKey, ed25519) => {
    const check = "table-signatures";
    const missing = noGenesis(log, check);
    if (missing !== null) return missing;
    const named = log.genesis.body.table_key;
    if (tableKey === null || tableKey === undefined) {
      return result(
        check,
        "unpinned",
        `no table key is pinned: the genesis names the key id ${shortId(named)}, but without the table's public key nothing here proves who signed this log; drop the table's .pub file on the page to check it`,
      );
    }
    const keyProblem =
      tableKey instanceof Uint8Array
        ? checkPublicKey(tableKey)
        : problem("NON_CANONICAL_KEY", "the table key is not bytes");
    if (keyProblem !== null) {
      return {
        check,
        status: "fail",
        seq: null,
        line: null,
        code: "BAD_TABLE_KEY",
        rule: keyProblem.code,
        words: `the pinned table key is not a usable Ed25519 key: ${keyProblem.code}: ${keyProblem.message}`,
      };
    }
    const id = await sha256Hex(tableKey);
    if (id !== named) {
      return failed(log, check, log.genesis, {
        code: "WRONG_TABLE_KEY",
        words: `the log names the table key ${shortId(named)}, not the pinned key ${shortId(id)}: another table signed it`,
      });
    }
    if (!ed25519) {
      return result(
        check,
        "unsupported",
        `the genesis names the pinned key (${shortId(id)}), but this browser's Web Crypto has no Ed25519, so no signature was checked: open the page in a browser that has it, or run racing-demon verify`,
      );
    }
    const found = await firstProblem(log, (line) =>
      verify(tableKey, line.body.kind, line.bodyBytes, line.sigs.table, line.body.v).then((why) =>
        signatureProblem("BAD_TABLE_SIGNATURE", "the table's signature", why),
      ),
    );
    if (found !== null)
      return found[0] === null ? failedAtFraming(check, log) : failed(log, check, ...found);
    return result(
      check,
      "pass",
      `all ${plural(log.lines.length, "record")} carry a valid Ed25519 signature by the pinned table key ${shortId(id)}`,
    );
  };

  // The genesis's player keys: {keys: [Uint8Array|null]} or a problem, in step 5's order.
  const playerKeys = (log) => {
    const genesis = log.genesis.body;
    const keys = genesis.players.map((entry) => (entry.key === null ? null : fromHex(entry.key)));
    const listed = keys.filter((key) => key !== null);
    if (listed.length > 0 && listed.length !== keys.length) {
      return {
        problem: {
          code: "MIXED_PLAYER_KEYS",
          words: `${listed.length} of ${keys.length} seats list a key: either every player lists one or none does`,
        },
      };
    }
    for (const [seat, key] of keys.entries()) {
      const why = key === null ? null : checkPublicKey(key);
      if (why !== null)
        return {
          problem: {
            code: "WEAK_PLAYER_KEY",
            rule: why.code,
            words: `${seatWords(log, seat)}'s key: ${why.code}: ${why.message}`,
          },
        };
    }
    return { keys };
  };

  const checkPlayerSignatures = async (log, ed25519) => {
    const check = "player-signatures";
    const missing = noGenesis(log, check);
    if (missing !== null) return missing;
    const { keys, problem: keyProblem } = playerKeys(log);
    if (keyProblem !== undefined) return failed(log, check, log.genesis, keyProblem);
    const keyed = keys.some((key) => key !== null);
    const ids = keyed ? await Promise.all(keys.map(sha256Hex)) : [];
    const duplicate = ids.findIndex(
      (id, seat) => id === log.genesis.body.table_key || ids.indexOf(id) < seat,
    );
    if (duplicate >= 0) {
      return failed(log, check, log.genesis, {
        code: "DUPLICATE_PLAYER_KEY",
        words: `${seatWords(log, duplicate)}'s key is also the table's or another seat's`,
      });
    }
    if (keyed && !ed25519) {
      return result(
        check,
        "unsupported",
        "the seats list Ed25519 keys, but this browser's Web Crypto has no Ed25519, so no player signature was checked: open the page in a browser that has it, or run racing-demon verify",
      );
    }
    const counts = { submission: 0, genesis: 0, accept: 0 };
    // Each seat numbers its submissions 0, 1, 2… without gaps (step 5, SUBMISSION_GAP): a
    // signed submission the table wrote twice has a valid signature, but not the next n.
    const nextN = new Map();
    const signed = (seat, kind, message, signature, version, code, what) => {
      counts[kind] += 1;
      return verify(keys[seat], kind, message, signature, version).then((why) =>
        signatureProblem(code, `${seatWords(log, seat)}'s ${what}`, why),
      );
    };
    const found = await firstProblem(log, (line) => {
      const { body, sigs } = line;
      const checks = [];
      if (body.kind === "genesis") {
        const cosigned = sigs.players;
        if (!keyed) {
          if (cosigned !== undefined)
            return {
              code: "UNEXPECTED_SIGNATURE",
              words: "genesis co-signatures, but no player lists a key",
            };
        } else {
          if (!Array.isArray(cosigned) || cosigned.length !== keys.length) {
            return {
              code: "BAD_GENESIS_COSIGNATURE",
              words: `every keyed player co-signs the genesis: ${keys.length} signatures expected, ${Array.isArray(cosigned) ? cosigned.length : 0} found`,
            };
          }
          cosigned.forEach((signature, seat) =>
            checks.push(
              signed(
                seat,
                "genesis",
                line.bodyBytes,
                signature,
                body.v,
                "BAD_GENESIS_COSIGNATURE",
                "co-signature of the genesis",
              ),
            ),
          );
        }
      } else if (sigs.players !== undefined) {
        return { code: "UNEXPECTED_SIGNATURE", words: "players co-sign the genesis only" };
      }
      if (SUBMISSION_KINDS.has(body.kind)) {
        if (
          !isCount(body.player) ||
          !isCount(body.hand) ||
          !isCount(body.n) ||
          typeof body.move !== "string"
        ) {
          return { code: "SCHEMA", words: "a submission needs its hand, player, n and move" };
        }
        const seat = body.player;
        const key = seat < keys.length ? keys[seat] : null;
        const signature = sigs.player;
        const expectedN = nextN.get(seat) ?? 0;
        nextN.set(seat, expectedN + 1);
        // After the signature, as the verifier orders them.
        const numbered = () =>
          body.n === expectedN
            ? null
            : {
                code: "SUBMISSION_GAP",
                words: `${seatWords(log, seat)}'s submissions are numbered without gaps: ${expectedN} expected, ${body.n} found (a submission dropped, or one written twice)`,
              };
        if (key === null) {
          if (signature !== undefined)
            return firstOf([
              ...checks,
              {
                code: "UNEXPECTED_SIGNATURE",
                words: `${seatWords(log, seat)} lists no key, so its moves carry no signature`,
              },
            ]);
        } else if (signature === undefined) {
          return firstOf([
            ...checks,
            {
              code: "MISSING_PLAYER_SIGNATURE",
              words: `${seatWords(log, seat)} lists a key: its submission must carry its signature`,
            },
          ]);
        } else {
          const statement = {
            game: body.game,
            hand: body.hand,
            move: body.move,
            n: body.n,
            player: seat,
          };
          if (isObject(body.seen)) statement.seen = { hash: body.seen.hash, seq: body.seen.seq };
          checks.push(
            signed(
              seat,
              "submission",
              canonicalBytes(statement),
              signature,
              body.v,
              "BAD_PLAYER_SIGNATURE",
              `signature of its submission`,
            ),
          );
        }
        const gap = numbered();
        if (gap !== null) return firstOf([...checks, gap]);
      } else if (sigs.player !== undefined) {
        return firstOf([
          ...checks,
          {
            code: "UNEXPECTED_SIGNATURE",
            words: `a player's signature on a ${body.kind} record, which no player submits`,
          },
        ]);
      }
      if (sigs.accepts !== undefined) {
        const accepts = sigs.accepts;
        if (body.kind !== "final" || body.v < 2 || !keyed) {
          return firstOf([
            ...checks,
            {
              code: "UNEXPECTED_SIGNATURE",
              words: "acceptances belong on the final record of a keyed game of format v2",
            },
          ]);
        }
        if (!Array.isArray(accepts) || accepts.length !== keys.length) {
          return firstOf([
            ...checks,
            {
              code: "BAD_ACCEPTANCE",
              words: `one acceptance entry per seat, a signature or null: ${keys.length} expected`,
            },
          ]);
        }
        accepts.forEach((signature, seat) => {
          if (signature !== null)
            checks.push(
              signed(
                seat,
                "accept",
                line.bodyBytes,
                signature,
                body.v,
                "BAD_ACCEPTANCE",
                "acceptance of the final record",
              ),
            );
        });
      }
      return checks.length === 0 ? null : firstOf(checks);
    });
    if (found !== null)
      return found[0] === null ? failedAtFraming(check, log) : failed(log, check, ...found);
    if (!keyed)
      return result(
        check,
        "not-applicable",
        "no seat lists a key: nobody signed their own moves, so who moved rests on the table's word",
      );
    const accepted =
      counts.accept === 0 ? "" : `, ${plural(counts.accept, "acceptance")} of the final record`;
    return result(
      check,
      "pass",
      `every seat's Ed25519 signatures verify: ${plural(counts.genesis, "co-signature")} of the genesis, ${plural(counts.submission, "signed submission")} numbered without gaps${accepted}`,
    );
  };

  // The final record and its secret, read up to the first final record: {secret, opens,
  // finalLine}, or {result} (null when there is no final record) to report instead.
  const revealedSecret = async (log, check) => {
    const missing = noGenesis(log, check);
    if (missing !== null) return { result: missing };
    for (const line of log.lines) {
      if (line.body === null) return { result: failed(log, check, line, unreadable(line)) };
      if (line.body.kind !== "final") continue;
      if (typeof line.body.secret !== "string" || !HEX_RE.test(line.body.secret)) {
        return {
          result: failed(log, check, line, {
            code: "SCHEMA",
            words: "the final record's secret is not hex",
          }),
        };
      }
      const secret = fromHex(line.body.secret);
      const opens =
        secret.length === 32 && (await commitment(secret)) === log.genesis.body.commitment;
      return { secret, opens, finalLine: line };
    }
    return { result: log.framing === null ? null : failedAtFraming(check, log) };
  };

  const checkCommitment = async (log) => {
    const check = "commitment";
    const revealed = await revealedSecret(log, check);
    if (revealed.result !== undefined) {
      return (
        revealed.result ??
        result(
          check,
          "not-applicable",
          "no final record: the dealer's secret is not revealed, so the commitment cannot be opened yet",
        )
      );
    }
    if (!revealed.opens) {
      return failed(log, check, revealed.finalLine, {
        code: "SECRET_MISMATCH",
        words: "the revealed secret does not open the genesis commitment",
      });
    }
    return result(
      check,
      "pass",
      `the secret revealed in record ${revealed.finalLine.body.seq} opens the genesis commitment (SHA-256)`,
    );
  };

  const checkEntropy = async (log, ed25519) => {
    const check = "entropy";
    const missing = noGenesis(log, check);
    if (missing !== null) return missing;
    const genesis = log.genesis.body;
    if (genesis.v < 2)
      return result(
        check,
        "not-applicable",
        "format v1: the contributions are bytes that nothing ties to the commitment, so the log cannot show they came after it",
      );
    const { keys, problem: keyProblem } = playerKeys(log);
    if (keyProblem !== undefined) return failed(log, check, log.genesis, keyProblem);
    if (keys.every((key) => key === null))
      return result(
        check,
        "not-applicable",
        "no seat lists a key: the table wrote every seat's entropy, so the deal rests on its word",
      );
    if (!ed25519)
      return result(
        check,
        "unsupported",
        "each contribution should be its seat's Ed25519 signature over the commitment, but this browser's Web Crypto has no Ed25519, so none was checked",
      );
    const checks = keys.map((key, seat) => {
      if (seat >= genesis.entropy.length) return null;
      const statement = canonicalBytes({
        commitment: genesis.commitment,
        game: genesis.game,
        player: seat,
      });
      return verify(key, "entropy", statement, genesis.entropy[seat], 2).then((why) =>
        signatureProblem(
          "ENTROPY_NOT_BOUND",
          `${seatWords(log, seat)}'s entropy as a signature over this game's commitment`,
          why,
        ),
      );
    });
    const found = await firstOf(checks);
    if (found !== null) return failed(log, check, log.genesis, found);
    // The pairs there are first (step 5), then one contribution per seat (step 7's
    // BAD_SEATS), as the verifier orders them: a seat with none has nothing bound.
    if (genesis.entropy.length !== keys.length)
      return failed(log, check, log.genesis, {
        code: "BAD_SEATS",
        words: `${plural(keys.length, "seat")} but ${plural(genesis.entropy.length, "entropy contribution")}: each seat's must be its signature over the commitment`,
      });
    return result(
      check,
      "pass",
      `each seat's contribution is its Ed25519 signature over this game's commitment, so every one was made after the dealer committed to its secret`,
    );
  };

  const checkPacks = async (log) => {
    const check = "packs";
    const revealed = await revealedSecret(log, check);
    if (revealed.result !== undefined) {
      return (
        revealed.result ??
        result(
          check,
          "not-applicable",
          "no final record: without the revealed secret the packs cannot be re-derived",
        )
      );
    }
    if (!revealed.opens)
      return result(
        check,
        "not-applicable",
        "the revealed secret does not open the commitment (see the commitment check), so the packs it deals prove nothing",
      );
    const genesis = log.genesis.body;
    const seats = genesis.players.length;
    let seed;
    try {
      if (genesis.entropy.length !== seats)
        throw new Error(
          `${plural(seats, "seat")} but ${plural(genesis.entropy.length, "entropy contribution")}`,
        );
      seed = matchSeed(revealed.secret, genesis.entropy.map(fromHex));
    } catch (error) {
      return failed(log, check, log.genesis, {
        code: "BAD_SEATS",
        words: `one entropy contribution of 16 to 64 bytes per seat: ${error.message}`,
      });
    }
    // A tournament's table deals the plan's packs, not packs of the seats' entropy (which
    // the entropy check still checks).
    const tag = genesis.tournament;
    let streamOf = (seat) => seat;
    let dealt = "the revealed secret and the entropy deal";
    if (tag !== undefined) {
      try {
        seed = tournamentSeed(revealed.secret, tag, seats);
      } catch (error) {
        return failed(log, check, log.genesis, { code: "BAD_TOURNAMENT", words: error.message });
      }
      streamOf = (seat) => packIndex(tag.table, seats, seat);
      dealt = `the plan of tournament ${JSON.stringify(tag.name)} deals table ${tag.table}`;
    }
    let hands = 0;
    const found = await firstProblem(
      log,
      (line) => {
        const body = line.body;
        if (body.kind !== "hand_start") return null;
        if (!isCount(body.hand) || body.hand < 1 || !Array.isArray(body.packs))
          return {
            code: "SCHEMA",
            words: "a hand_start needs its hand number and its pack digests",
          };
        if (body.packs.length !== seats)
          return {
            code: "PACK_MISMATCH",
            words: `${plural(body.packs.length, "pack digest")} for ${plural(seats, "seat")}`,
          };
        if (tag !== undefined && body.hand > tag.hands)
          return {
            code: "PACK_MISMATCH",
            words: `hand ${body.hand}: the tournament plans ${plural(tag.hands, "hand")}`,
          };
        hands += 1;
        return firstOf(
          body.packs.map(async (digest, seat) => {
            const pack = await derivePack(seed, body.hand, streamOf(seat));
            if ((await packDigest(body.hand, seat, pack)) === digest) return null;
            return {
              code: "PACK_MISMATCH",
              words: `hand ${body.hand}: ${seatWords(log, seat)}'s pack is not the one ${dealt} (its digest differs)`,
            };
          }),
        );
      },
      revealed.finalLine.index,
    );
    if (found !== null) return failed(log, check, ...found);
    return result(
      check,
      "pass",
      tag === undefined
        ? `${plural(hands, "hand")} × ${plural(seats, "seat")}: every pack digest is the pack re-derived from the revealed secret and the entropy (docs/deal-spec.md)`
        : `${plural(hands, "hand")} × ${plural(seats, "seat")}: every pack digest is the pack the plan of tournament ${JSON.stringify(tag.name)} deals table ${tag.table} of ${tag.tables}, re-derived from the revealed secret and the tournament's entropy (docs/tournament.md)`,
    );
  };

  // A check that throws (input no check foresaw) fails: it never passes by accident.
  const failClosed = async (check, run) => {
    try {
      return await run();
    } catch (error) {
      return {
        check,
        status: "fail",
        seq: null,
        line: null,
        code: "CHECK_ERROR",
        rule: null,
        words: `could not be completed (${error.name}: ${error.message}): nothing is proved by it`,
      };
    }
  };

  // -- the API -------------------------------------------------------------------------

  // The checklist, in the order the design's #rd-checks lists it.
  const CHECKS = Object.freeze([
    "canonical",
    "chain",
    "table-signatures",
    "player-signatures",
    "commitment",
    "entropy",
    "packs",
  ]);
  const base64Bytes = (text) => Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
  const SPKI_PREFIX = fromHex("302a300506032b6570032100");

  return Object.freeze({
    // logBytes: the log's bytes; tableKey: the pinned raw 32-byte key, or null.
    // Resolves to {results: [{check, status, seq, line, code, rule, words}], ed25519,
    // finished}: one result per check, in the order of CHECKS; seq (the record's own, or
    // the line's index when it is no record), line (1-based), code (the verifier's reason
    // code) and rule (the signature's code) name the first failing record when status is
    // "fail", else they are null. ed25519: this browser verifies Ed25519; finished: the log
    // has its final record (an unfinished log fails nothing it holds, yet proves no result);
    // failedEquations: [{key, signature, message_sha256}] (hex), every signature whose
    // equation this page has found not to hold, for the engine (RDEngine's judge).
    async run(logBytes, { tableKey = null } = {}) {
      const ed25519 = await ed25519Available();
      const log = await readLog(logBytes);
      const checks = {
        canonical: () => checkCanonical(log),
        chain: () => checkChain(log),
        "table-signatures": () => checkTableSignatures(log, tableKey, ed25519),
        "player-signatures": () => checkPlayerSignatures(log, ed25519),
        commitment: () => checkCommitment(log),
        entropy: () => checkEntropy(log, ed25519),
        packs: () => checkPacks(log),
      };
      const results = await Promise.all(CHECKS.map((check) => failClosed(check, checks[check])));
      return { results, ed25519, finished: log.final !== null, failedEquations: [...failedEquations.values()] };
    },
    CHECKS,
    // The page's embedded log: gzip, then base64.
    async gunzip(base64) {
      const stream = new Blob([base64Bytes(base64)])
        .stream()
        .pipeThrough(new DecompressionStream("gzip"));
      return new Uint8Array(await new Response(stream).arrayBuffer());
    },
    // A table public key as racing-demon writes it (NAME.pub, SubjectPublicKeyInfo PEM),
    // or 64 hex characters: the raw 32 bytes, refused as the verifier refuses it.
    parsePublicKeyFile(text) {
      const trimmed = String(text).trim();
      let raw;
      if (/^[0-9a-fA-F]{64}$/.test(trimmed)) {
        raw = fromHex(trimmed.toLowerCase());
      } else {
        // As the verifier's PEM reader does: the first PUBLIC KEY block, whatever text is
        // around it (a comment line, a second block).
        const pem = /-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]*)-----END PUBLIC KEY-----/.exec(
          trimmed,
        );
        if (pem === null && /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(trimmed)) {
          throw new Error(
            "this is a private key: give the table's public key (the .pub file), and keep the .key file secret",
          );
        }
        if (pem === null)
          throw new Error(
            "not a public key: expected a PEM file (-----BEGIN PUBLIC KEY-----) or 64 hex characters",
          );
        let der;
        try {
          der = base64Bytes(pem[1].replace(/\s+/g, ""));
        } catch {
          throw new Error("not a public key: its PEM body is not base64");
        }
        if (der.length !== 44 || !equalBytes(der.subarray(0, 12), SPKI_PREFIX)) {
          throw new Error(
            "not an Ed25519 public key (SubjectPublicKeyInfo of id-Ed25519 expected)",
          );
        }
        raw = der.slice(12);
      }
      const why = checkPublicKey(raw);
      if (why !== null) throw new Error(`not a usable table key: ${why.code}: ${why.message}`);
      return raw;
    },
    // The parts, for tests and for readers who want to see the workings.
    canonical: Object.freeze({ readLine, encode: encodeCanonical }),
    ed25519: Object.freeze({ verifyRaw, verify }),
    deal: Object.freeze({
      commitment,
      matchSeed,
      tournamentSeed,
      packIndex,
      plainSeed,
      prkOf,
      firstWords,
      shuffle,
      derivePack,
      packDigest,
      face,
    }),
    hex: Object.freeze({ toHex, fromHex }),
    // One record or receipt line at a time, for a client that checks as lines arrive
    // (serve/static/client.js): the reader's verdict, the envelope's, the signed bytes.
    line: Object.freeze({
      read: readLine,
      envelopeProblem,
      bodyBytes: (raw) => raw.subarray(BODY_START.length, lastIndexOf(raw, SIGS_START)),
      checkPublicKey,
    }),
    bytes: Object.freeze({ sha256Hex, concat, equal: equalBytes, pae }),
  });
})();
