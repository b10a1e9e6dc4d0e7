// engine-worker.js: the table page's rules engine, in a Web Worker (issue 34). It boots
// RDEngine (engine.js, the viewer's loader, the only JS that talks to Pyodide) from the
// files `racing-demon serve` has under /engine/, and judges what the page sends: so the
// seconds of compiling the interpreter and the replay itself never hold up a click on the
// page. It answers three messages:
//
//   → {type: "boot"}                         ← {type: "ready", timings} | {type: "failed", message}
//   → {type: "judge", id, bytes, options}    ← {type: "judged", id, report} | {type: "judged", id, error}
//
// The worker's own policy is the table page's (script-src 'self' 'wasm-unsafe-eval'): it
// loads nothing but the server's files.
const RDEngineWorker = (() => {
  "use strict";

  let engine = null;

  const boot = async () => {
    try {
      importScripts("/static/engine.js");
      // Pyodide's loader asks whether this is a classic worker by importing a data: URL,
      // which the policy refuses, and reports to the page's console. The worker needs
      // importScripts no more: without it the question fails quietly, and the loader takes
      // the same path (dynamic import) it takes after the refusal.
      self.importScripts = undefined;
      engine = await RDEngine.boot({ baseURL: "/engine/" });
      postMessage({ type: "ready", timings: engine.timings });
    } catch (error) {
      postMessage({ type: "failed", message: `${error?.name ?? "Error"}: ${error?.message ?? error}` });
    }
  };

  const judge = async ({ id, bytes, options }) => {
    try {
      if (engine === null) throw new Error("the engine has not started");
      const started = performance.now();
      const report = await engine.judge(bytes, options);
      postMessage({ type: "judged", id, report, ms: performance.now() - started });
    } catch (error) {
      postMessage({ type: "judged", id, error: `${error?.name ?? "Error"}: ${error?.message ?? error}` });
    }
  };

  self.onmessage = ({ data }) => {
    if (data?.type === "boot") boot();
    else if (data?.type === "judge") judge(data);
  };

  return Object.freeze({ boot, judge });
})();
