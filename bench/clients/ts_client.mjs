// Clients (b') and (b''): a direct client on the ACP TypeScript SDK (@agentclientprotocol/sdk
// 1.9.0, and 2.x through its package entry, dist/v1/stable),
// the engine of today's VS Code ACP clients: ClientSideConnection over ndJsonStream, with a
// sessionUpdate handler that appends each chunk's text.
//
//   node ts_client.mjs SDK_DIR PYTHON AGENT_SCRIPT flood N SIZE | sustain SECONDS SIZE | paced N MS
//
// Prints one JSON object: frames, seconds (prompt sent -> last chunk handled), chars, sha256;
// for a paced run the latency figures (each chunk's text is "[seq:monotonic ns written]", and
// process.hrtime reads the same CLOCK_MONOTONIC as the agent's time.monotonic_ns).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [sdkDir, python, agentScript, ...scenario] = process.argv.slice(2);
const entry = existsSync(join(sdkDir, "dist", "acp.js"))
  ? join(sdkDir, "dist", "acp.js")
  : join(sdkDir, "dist", "v1", "stable", "acp.js");
const acp = await import(pathToFileURL(entry).href);

const agentArgs = [agentScript];
if (scenario[0] === "flood") agentArgs.push("--prebuild", scenario[1], scenario[2]);
const agent = spawn(python, agentArgs, { stdio: ["pipe", "pipe", "inherit"] });

const parts = [];
const receivedNs = [];
let tLast = 0;
const client = {
  async sessionUpdate(params) {
    const content = params.update.content;
    if (content && content.type === "text") {
      parts.push(content.text);
      receivedNs.push(process.hrtime.bigint());
      tLast = performance.now();
    }
  },
  async requestPermission() {
    throw acp.RequestError.methodNotFound("session/request_permission");
  },
};

const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const prompt = (sessionId) => ({ sessionId, prompt: [{ type: "text", text: scenario.join(" ") }] });
let t0 = 0;
let response;
if (acp.ClientSideConnection) {
  // 1.x: a Client object behind ClientSideConnection
  const conn = new acp.ClientSideConnection(() => client, stream);
  await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const session = await conn.newSession({ cwd: process.cwd(), mcpServers: [] });
  t0 = performance.now();
  response = await conn.prompt(prompt(session.sessionId));
} else {
  // 2.x: the client() app builder, handlers by method name, requests through its context
  const app = acp
    .client({ name: "acp-lsp-bench" })
    .onNotification(acp.methods.client.session.update, (ctx) => client.sessionUpdate(ctx.params))
    .onRequest(acp.methods.client.session.requestPermission, () => client.requestPermission());
  response = await app.connectWith(stream, async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const session = await ctx.request(acp.methods.agent.session.new, {
      cwd: process.cwd(),
      mcpServers: [],
    });
    t0 = performance.now();
    return ctx.request(acp.methods.agent.session.prompt, prompt(session.sessionId));
  });
}
function pacedFigures() {
  const latencies = parts.map((p, i) => Number(receivedNs[i] - BigInt(p.slice(1, -1).split(":")[1])) / 1e6);
  const sorted = [...latencies].sort((a, b) => a - b);
  const pct = (q) => sorted[Math.max(1, Math.min(sorted.length, Math.ceil((q / 100) * sorted.length))) - 1];
  return {
    client: "ts-sdk",
    frames: parts.length,
    in_order: parts.every((p, i) => Number(p.slice(1).split(":")[0]) === i),
    p50_ms: pct(50),
    p99_ms: pct(99),
    first_ms: latencies[0],
  };
}

const text = parts.join("");
const meta = response._meta || {};
process.stdout.write(
  scenario[0] === "paced" ? JSON.stringify(pacedFigures()) + "\n" : JSON.stringify({
    client: "ts-sdk",
    frames: parts.length,
    seconds: (tLast - t0) / 1000,
    chars: text.length,
    sha256: createHash("sha256").update(text).digest("hex"),
    chunks: meta.chunks ?? parts.length,
  }) + "\n",
);
agent.stdin.end();
agent.kill();
process.exit(0);
