import path from "node:path";
import os from "node:os";
import { mkdtempSync, writeFileSync } from "node:fs";
import WebSocket from "ws";
const { startWorker, handlerConnected, TOKEN, median, pushDrain } = await import("/work/main/bench/lib.mjs");
const state = mkdtempSync(path.join(os.tmpdir(), "profp-"));
const queue = await startWorker({ config: ["wrangler.toml", "examples/handler/wrangler.toml"], persistTo: path.join(state, "q"), vars: { QUEUE_TOKEN: TOKEN } });
try {
  await handlerConnected(queue.url);
  await pushDrain(queue.url, { type: "demo.noop", n: 3000 });
  const a = [];
  for (let r = 0; r < 3; r++) a.push(await pushDrain(queue.url, { type: "demo.noop", n: 5000 }));
  console.log("push", a.map(Math.round));
  if (process.env.PROFILE) {
    const list = await (await fetch(`http://127.0.0.1:${queue.inspectorPort}/json`)).json();
    const target = list[0];
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((r) => ws.once("open", r));
    let id = 0; const pending = new Map();
    ws.on("message", (m) => { const d = JSON.parse(m); if (d.id && pending.has(d.id)) { pending.get(d.id)(d.result); pending.delete(d.id); } });
    const send = (method, params = {}) => new Promise((r) => { const i = ++id; pending.set(i, r); ws.send(JSON.stringify({ id: i, method, params })); });
    await send("Profiler.enable"); await send("Profiler.setSamplingInterval", { interval: 100 }); await send("Profiler.start");
    console.log("profiled", Math.round(await pushDrain(queue.url, { type: "demo.noop", n: 5000 })));
    const { profile } = await send("Profiler.stop");
    writeFileSync(`/tmp/prof/push.cpuprofile`, JSON.stringify(profile));
    ws.close();
  }
} finally { await queue.stop(); }
