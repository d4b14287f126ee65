// The official TypeScript SDK as a client, measured the way bench_async measures the Python ones:
// one Client over StdioClientTransport to the same server, the same echo call, sequential and
// 64 in flight.  Prints one line, "BENCH_RESULT " and JSON: {"connect": [s...], "seq": [calls/s...],
// "conc": [...], "version": "1.32.2"} (or {"error": ...}).
//
//   node benchmarks/ts_sdk_client.cjs NODE_MODULES CONFIG_JSON
//
// NODE_MODULES is the directory holding @modelcontextprotocol/sdk (.ci/node/node_modules, where
// .ci/install puts server-everything and the SDK it depends on); CONFIG_JSON holds python,
// server, n_seq, n_conc, inflight and repeats.
"use strict";
const path = require("node:path");

const [modules, configText] = process.argv.slice(2);
const sdk = (p) => require(path.join(modules, "@modelcontextprotocol", "sdk", "dist", "cjs", p));
const { Client } = sdk("client/index.js");
const { StdioClientTransport } = sdk("client/stdio.js");
const cfg = JSON.parse(configText);
const ARGS = { text: "hello world" };

async function connect() {
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(new StdioClientTransport({ command: cfg.python, args: [cfg.server] }));
  return client;
}

async function calls(client, count) {
  for (let i = 0; i < count; i++) await client.callTool({ name: "echo", arguments: ARGS });
}

async function main() {
  const out = { connect: [], seq: [], conc: [], version: sdk("../../package.json").version };
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const c = await connect();
    out.connect.push((performance.now() - t0) / 1000);
    await calls(c, 1);
    await c.close();
  }
  const client = await connect();
  const first = await client.callTool({ name: "echo", arguments: ARGS });
  if (first.content[0].text !== ARGS.text) throw new Error("echo answered " + JSON.stringify(first));
  const per = Math.floor(cfg.n_conc / cfg.inflight);
  await calls(client, 300); // warm-up, as for the Python clients
  const runs = {
    seq: [cfg.n_seq, () => calls(client, cfg.n_seq)],
    conc: [per * cfg.inflight,
      () => Promise.all(Array.from({ length: cfg.inflight }, () => calls(client, per)))],
  };
  for (const [key, [n, run]] of Object.entries(runs)) {
    if (key === "conc") await run(); // one untimed round, as for the Python clients
    for (let r = 0; r < cfg.repeats; r++) {
      const t0 = performance.now();
      await run();
      out[key].push(n / ((performance.now() - t0) / 1000));
    }
  }
  await client.close();
  process.stdout.write("BENCH_RESULT " + JSON.stringify(out) + "\n");
}

main().catch((err) => {
  process.stdout.write("BENCH_RESULT " + JSON.stringify({ error: String(err && err.stack || err) }) + "\n");
  process.exit(1);
});
