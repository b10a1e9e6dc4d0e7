// play-engine.js: the table page's side of its rules engine (issue 34). RDPlayEngine.start()
// asks the server whether it has the engine (GET /engine/engine.json: 404 when the runtime
// is not installed), and if so starts engine-worker.js, which boots this package's own
// verifier in Pyodide in the background. RDClient asks it, once the final record's body
// reveals the dealer's secret, to judge the whole copy of the log before the player may
// accept (client.js, checkFinal). Nothing here judges a move: the engine is the verifier's
// Python, unchanged.
//
//   const engine = RDPlayEngine.start({ onChange });
//   engine.state      "asking" | "loading" | "ready" | "absent" | "failed"
//   engine.detail     the words for absent and failed; engine.timings once ready
//   await engine.settled(ms)   the state once it is no longer asking or loading, or after ms
//   await engine.judge(bytes, options)   {report, ms}: engine.js's judge, in the worker
const RDPlayEngine = (() => {
  "use strict";

  const MANIFEST = "/engine/engine.json";
  const WORKER = "/static/engine-worker.js";
  const WAITING = new Set(["asking", "loading"]);

  const start = ({ onChange = () => {} } = {}) => {
    const waiters = new Set();
    const judging = new Map(); // id -> {resolve, reject}
    let worker = null;
    let nextId = 0;
    const engine = {
      state: "asking",
      detail: "",
      timings: null,
      version: null,
      startedAt: performance.now(),
      readyMs: null,
      settled(ms) {
        if (!WAITING.has(engine.state)) return Promise.resolve(engine.state);
        return new Promise((resolve) => {
          const done = () => {
            clearTimeout(timer);
            waiters.delete(done);
            resolve(engine.state);
          };
          const timer = setTimeout(done, ms);
          waiters.add(done);
        });
      },
      judge(bytes, options) {
        if (engine.state !== "ready") return Promise.reject(new Error(`the engine is ${engine.state}`));
        const id = nextId++;
        return new Promise((resolve, reject) => {
          judging.set(id, { resolve, reject });
          worker.postMessage({ type: "judge", id, bytes, options });
        });
      },
    };
    const become = (state, detail = "") => {
      engine.state = state;
      engine.detail = detail;
      if (state === "ready") engine.readyMs = performance.now() - engine.startedAt;
      for (const done of [...waiters]) if (!WAITING.has(state)) done();
      if (state === "failed")
        for (const [id, waiting] of judging) {
          judging.delete(id);
          waiting.reject(new Error(detail));
        }
      try {
        onChange(engine);
      } catch (error) {
        console.error("RDPlayEngine: an onChange handler threw", error);
      }
    };
    const listen = () => {
      worker = new Worker(WORKER);
      worker.onmessage = ({ data }) => {
        if (data.type === "ready") {
          engine.timings = data.timings;
          become("ready");
        } else if (data.type === "failed") {
          become("failed", data.message);
        } else if (data.type === "judged") {
          const waiting = judging.get(data.id);
          judging.delete(data.id);
          if (waiting === undefined) return;
          if (data.error !== undefined) waiting.reject(new Error(data.error));
          else waiting.resolve({ report: data.report, ms: data.ms });
        }
      };
      worker.onerror = (event) => become("failed", `the engine's worker failed: ${event.message ?? "no reason given"}`);
      worker.postMessage({ type: "boot" });
    };
    (async () => {
      let answer;
      try {
        answer = await fetch(MANIFEST, { cache: "no-cache" });
      } catch (error) {
        become("failed", `the server did not answer (${error.message})`);
        return;
      }
      if (answer.status === 404) {
        become("absent", "this server has no rules engine for the page (its browser runtime is not installed)");
        return;
      }
      if (!answer.ok) {
        become("failed", `the server answered ${answer.status} for the engine`);
        return;
      }
      engine.version = (await answer.json().catch(() => ({}))).pyodide ?? null;
      become("loading");
      try {
        listen();
      } catch (error) {
        become("failed", `the engine's worker could not start (${error.message})`);
      }
    })();
    return engine;
  };

  return Object.freeze({ start });
})();
