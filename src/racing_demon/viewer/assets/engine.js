// engine.js: RDEngine, the only JS that talks to Pyodide. It runs this package's own
// verifier (racing_demon.verify.in_page.judge, Python, unchanged) in the browser: one
// engine, two hosts, never a second copy of the rules in JS (docs/viewer.md, "The engine page").
//
// API (the viewer page and the play page use nothing else):
//
//   const engine = await RDEngine.boot(source);
//     source = { inline: document }   the viewer: the runtime's files and the Python bundle
//                                     are <script type="application/octet-stream"> and
//                                     <script type="application/json"> elements of the page
//                                     (ids below), written by `racing-demon view --engine`;
//     source = { baseURL: "/engine/" } the play page: the four runtime files and bundle.json
//                                     served under that URL by `racing-demon serve`.
//   const report = await engine.judge(logBytes, { tableKey, rules, unsafeUnpinned, secret, limits,
//                                                 failedEquations });
//     logBytes: Uint8Array of the whole log; tableKey: 64 hex or null; rules: the pinned
//     rules' digest (64 hex) or null; secret: the dealer secret (64 hex), as `verify
//     --secret` takes it, or null; limits: {max_file_bytes, max_line_bytes, max_records,
//     max_depth} as `verify --max-...` set them, or null; failedEquations: RDCheck.run's
//     outcome.failedEquations ([] if none). Resolves to the one-log report, as
//     `racing-demon verify --json` prints it in its "reports" list, with "equations":
//     "by_host": the Ed25519 equations are not checked by it but by the host (RDCheck, Web
//     Crypto), each one named in failedEquations failing where verify checks it.
//   engine.timings: { bootMs, bundleMs, importMs } measured on boot (bench/viewer_bench.py).
//   Booting again with the same document or baseURL gives the same engine.
//   RDEngine.available(document): the page holds an inlined runtime.
//   RDEngine.pageVerdict(report, checks): the page's verdict {verdict, step, code, line,
//     rule, disagreement} from the engine's report and RDCheck.run's outcome (or null);
//   RDEngine.verdictOf(report): those five fields of a verify report.
//
// No network: inlined, the files are served from memory to Pyodide's loader (the modules
// from blob: URLs, the wasm and the standard library through a fetch that answers only
// their two URLs, under an origin that does not exist); the lock file is an empty one
// given inline, so no package is ever looked up.
const RDEngine = (() => {
  "use strict";

  const RUNTIME_FILES = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"];
  const ELEMENT_PREFIX = "rd-runtime-"; // + a runtime file's name
  const BUNDLE_ID = "rd-engine-bundle";
  const BUNDLE_FORMAT = "racing-demon/engine-bundle/v1";
  const PACKAGE_ROOT = "/home/pyodide/rd";
  // Never resolvable: a request that escaped the in-memory fetch could reach no server.
  const MEMORY_ORIGIN = "https://rd-engine.invalid/";
  // The pinned release's own lock file's "info" (pyodide-lock.json of 314.0.8), no package.
  const EMPTY_LOCK = {
    info: { abi_version: "2026_0", arch: "wasm32", platform: "emscripten_5_0_3", python: "3.14.2" },
    packages: {},
  };

  const base64Bytes = (text) => {
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  };

  const inlineFile = (doc, name) => {
    const element = doc.getElementById(ELEMENT_PREFIX + name);
    if (element === null) throw new Error(`the page holds no ${name}`);
    return base64Bytes(element.textContent.trim());
  };

  const checkedBundle = (bundle) => {
    if (bundle?.format !== BUNDLE_FORMAT || typeof bundle.files !== "object")
      throw new Error(`not an engine bundle (format ${JSON.stringify(bundle?.format)})`);
    return bundle;
  };

  // Pyodide's loader fetches the wasm and the standard library by URL; while it boots,
  // those two URLs are answered from memory and every other fetch is refused.
  const withMemoryFetch = async (files, run) => {
    const original = globalThis.fetch;
    const answers = new Map([
      [MEMORY_ORIGIN + "pyodide.asm.wasm", () => new Response(files["pyodide.asm.wasm"], { headers: { "Content-Type": "application/wasm" } })],
      [MEMORY_ORIGIN + "python_stdlib.zip", () => new Response(files["python_stdlib.zip"])],
    ]);
    globalThis.fetch = async (resource) => {
      const url = String(resource instanceof Request ? resource.url : resource);
      const answer = answers.get(url);
      if (answer === undefined) throw new TypeError(`RDEngine: no network from this page (${url})`);
      return answer();
    };
    try {
      return await run();
    } finally {
      globalThis.fetch = original;
    }
  };

  const moduleFromBytes = async (bytes) => {
    const url = URL.createObjectURL(new Blob([bytes], { type: "text/javascript" }));
    try {
      return await import(url);
    } finally {
      URL.revokeObjectURL(url);
    }
  };

  const quiet = () => {};

  const bootInline = async (doc) => {
    const files = Object.fromEntries(RUNTIME_FILES.map((name) => [name, inlineFile(doc, name)]));
    const bundleElement = doc.getElementById(BUNDLE_ID);
    if (bundleElement === null) throw new Error("the page holds no engine bundle");
    const bundle = checkedBundle(JSON.parse(bundleElement.textContent));
    const loader = await moduleFromBytes(files["pyodide.mjs"]);
    const glue = await moduleFromBytes(files["pyodide.asm.mjs"]);
    const pyodide = await withMemoryFetch(files, () =>
      loader.loadPyodide({
        indexURL: MEMORY_ORIGIN,
        stdLibURL: MEMORY_ORIGIN + "python_stdlib.zip",
        lockFileContents: EMPTY_LOCK,
        createPyodideModule: glue.default,
        stdout: quiet,
        stderr: quiet,
      }),
    );
    return { pyodide, bundle };
  };

  const bootFromURLs = async (baseURL) => {
    const base = new URL(baseURL, location.href).href;
    const loader = await import(base + "pyodide.mjs");
    const [pyodide, bundle] = await Promise.all([
      loader.loadPyodide({ indexURL: base, lockFileContents: EMPTY_LOCK, stdout: quiet, stderr: quiet }),
      fetch(base + "bundle.json").then((response) => {
        if (!response.ok) throw new Error(`bundle.json: HTTP ${response.status}`);
        return response.json();
      }),
    ]);
    return { pyodide, bundle: checkedBundle(bundle) };
  };

  // The package's files into the interpreter's file system, then its entry imported once.
  const loadBundle = (pyodide, bundle) => {
    const FS = pyodide.FS;
    for (const [path, text] of Object.entries(bundle.files)) {
      const full = `${PACKAGE_ROOT}/${path}`;
      FS.mkdirTree(full.slice(0, full.lastIndexOf("/")));
      FS.writeFile(full, text);
    }
  };

  const IMPORT = `
import sys
if ${JSON.stringify(PACKAGE_ROOT)} not in sys.path:
    sys.path.insert(0, ${JSON.stringify(PACKAGE_ROOT)})
from racing_demon.verify.in_page import judge as _rd_judge
`;
  const JUDGE = `_rd_judge(_rd_log.to_bytes(), table_key=_rd_key, rules=_rd_rules, unsafe_unpinned=_rd_unsafe, secret=_rd_secret, limits=_rd_limits, failed_equations=_rd_failed)`;

  // -- the page's verdict (docs/viewer.md, "The engine page") ------------------------

  // RDCheck's equation failures (rule BAD_SIGNATURE, the signature's own code, on the line
  // it is on): the table's and the players' signatures, and the entropy contributions
  // (each a seat's signature).
  const EQUATION_CHECKS = new Set(["table-signatures", "player-signatures", "entropy"]);
  const isEquation = (result) => EQUATION_CHECKS.has(result.check) && result.rule === "BAD_SIGNATURE";

  const verdictOf = (report) => ({
    verdict: report?.verdict ?? null,
    step: report?.step?.number ?? null,
    code: report?.finding?.code ?? null,
    line: report?.finding?.line ?? null,
    rule: report?.finding?.rule ?? null,
  });

  // The engine judged with the equations RDCheck found failing (checks.failedEquations),
  // so its report's first failure is verify's, in verify's order, equations included: it
  // is the page's verdict. disagreement: a failure RDCheck found that the engine did not
  // account for, an equation on line L with no engine failure at steps 1-5 on line L or
  // before, or any other fault where the engine found nothing at all. A missed equation
  // still fails the page (fail closed), at its line.
  const pageVerdict = (report, checks) => {
    const engine = verdictOf(report);
    const found = report?.finding != null;
    const failures = (checks?.results ?? []).filter((result) => result.status === "fail");
    const equations = failures.filter(isEquation).sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
    const covers = (equation) =>
      equation.line === null
        ? found
        : engine.step !== null && engine.step <= 5 && engine.line !== null && engine.line <= equation.line;
    const missedEquation = equations.find((equation) => !covers(equation)) ?? null;
    const missed = missedEquation ?? (found ? null : (failures.find((result) => !isEquation(result)) ?? null));
    const disagreement = missed === null ? null : { check: missed.check, code: missed.code, line: missed.line };
    if (missedEquation === null) return { ...engine, disagreement };
    const { code, line, rule } = missedEquation;
    return { verdict: "does_not_verify", step: 5, code, line, rule, disagreement };
  };

  const booted = new Map();

  const bootOnce = async (source) => {
    const started = performance.now();
    const { pyodide, bundle } =
      source?.inline !== undefined ? await bootInline(source.inline) : await bootFromURLs(source.baseURL);
    const booted = performance.now();
    loadBundle(pyodide, bundle);
    const written = performance.now();
    await pyodide.runPythonAsync(IMPORT);
    const imported = performance.now();
    const timings = { bootMs: booted - started, bundleMs: written - booted, importMs: imported - written };
    let queue = Promise.resolve();
    const judgeNow = async (logBytes, { tableKey = null, rules = null, unsafeUnpinned = false, secret = null, limits = null, failedEquations = [] } = {}) => {
      const globals = pyodide.globals;
      // A dict and a list of dicts, not JsProxies: judge reads Mappings of int and of str.
      const limitsDict = limits === null ? undefined : pyodide.toPy(limits);
      const failedList = pyodide.toPy(failedEquations);
      try {
        globals.set("_rd_log", logBytes);
        // undefined, not null: Pyodide reads JS null as its jsnull, undefined as None.
        globals.set("_rd_key", tableKey ?? undefined);
        globals.set("_rd_rules", rules ?? undefined);
        globals.set("_rd_unsafe", Boolean(unsafeUnpinned));
        globals.set("_rd_secret", secret ?? undefined);
        globals.set("_rd_limits", limitsDict);
        globals.set("_rd_failed", failedList);
        const text = pyodide.runPython(JUDGE);
        const report = JSON.parse(text);
        return Array.isArray(report.reports) ? report.reports[0] : report;
      } finally {
        for (const name of ["_rd_log", "_rd_key", "_rd_rules", "_rd_unsafe", "_rd_secret", "_rd_limits", "_rd_failed"])
          globals.delete(name);
        limitsDict?.destroy();
        failedList.destroy();
      }
    };
    return Object.freeze({
      timings,
      // One judgement at a time: they share the interpreter's globals.
      judge(logBytes, options) {
        const next = queue.then(() => judgeNow(logBytes, options));
        queue = next.catch(() => {});
        return next;
      },
    });
  };

  // One engine per page or URL: a second boot is the first one.
  const boot = (source) => {
    const key = source?.inline !== undefined ? source.inline : new URL(source.baseURL, location.href).href;
    if (!booted.has(key)) {
      const started = bootOnce(source);
      booted.set(key, started);
      started.catch(() => booted.delete(key));
    }
    return booted.get(key);
  };

  return Object.freeze({
    boot,
    pageVerdict,
    verdictOf,
    available: (doc) => RUNTIME_FILES.every((name) => doc.getElementById(ELEMENT_PREFIX + name) !== null),
    RUNTIME_FILES,
    BUNDLE_FORMAT,
  });
})();
