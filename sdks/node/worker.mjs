// `node sdks/node/worker.mjs`: the Node.js worker, on the official TypeScript SDK.
//
// It speaks handoff/protocol.py's protocol as `python -m handoff.worker` does: one
// WorkerSpec (JSON) on the first line of stdin, one event per line on stdout, the last
// one `finished`; it never crashes to its parent. Every event it writes is checked
// against the protocol's JSON Schema (handoff/protocol.schema.json) by
// tests/e2e/test_node_worker.py. It does the raw SDK's actions (create, resume, turns,
// close, metadata, list, discover), keeps a database store's sessions through the SDK's
// SessionFs provider and writes the registry (store.mjs, through the project's store
// bridge); what only the Python worker can do (the guard, fault holds, a second runtime)
// it reports as an `error` event and does not try.
//
// Anything else that writes to stdout would break the protocol, so console.log is sent to
// stderr, and events go straight to file descriptor 1.

import { readFileSync, readSync, writeSync } from "node:fs";
import dgram from "node:dgram";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { CopilotClient, RuntimeConnection, approveAll } from "@github/copilot-sdk";

import { questionPrompt, rememberPrompt } from "./fact.mjs";
import { report } from "./eventlog.mjs";
import { SESSION_FS, StoreBridge } from "./store.mjs";

const LANGUAGE = "node";
// The SDK's package.json is not among its exports: it is read where npm installed it, beside this file.
const SDK_PACKAGE = new URL("./node_modules/@github/copilot-sdk/package.json", import.meta.url);
const SDK_VERSION = JSON.parse(readFileSync(SDK_PACKAGE, "utf8")).version;
// The SDK as a step names it (sdk = "node@1.0.14"), and as `ready` reports it, so that the
// checker's "asked for SDK X, ran Y" compares like with like.
const SDK_NAME = `${LANGUAGE}@${SDK_VERSION}`;
const WITNESS_KEY = "handoff-witness-needs-no-key"; // the witness takes any key; the runtime needs one
const NO_KEY = "no-key-configured"; // handoff/worker/model.py's stand-in for an endpoint without a key
const TURN_HEADER = "x-handoff-turn"; // handoff/witness/tags.py TAG_HEADERS["turn"]
const RUNTIME_STOP_MS = 10_000; // stopping a runtime that died may never answer

// Why this worker cannot do some of the Python worker's actions; any other action that
// is not in Worker.prototype.actions is refused the same way, with a general reason.
const NOT_HERE = {
  mint: "the guard (minting ids) is the Python worker's",
  "mint-for-key": "the guard (minting ids) is the Python worker's",
  "concurrent-resume-and-ask": "a second runtime in one worker is the Python worker's",
  hold: "fault holds are the Python worker's",
  "restart-runtime": "restarting the runtime is the Python worker's",
};
const NEEDS_SESSION = new Set(["tell", "ask", "close"]);
// handoff/worker/lifeline.py's: the variable, how long to try, and the exit code.
const LIFELINE_VARIABLE = "HANDOFF_LIFELINE";
const LIFELINE_CONNECT_MS = 10_000;
const LIFELINE_LOST = 75;

console.log = console.info = console.debug = console.error; // stdout is the protocol's alone

const now = () => Date.now() / 1000;
const msSince = (started) => Math.round(performance.now() - started);

function emit(event) {
  writeSync(1, JSON.stringify(event) + "\n");
}

function oneLine(error) {
  const text = String(error?.message ?? error).split(/\s+/).filter(Boolean).join(" ");
  return (text || error?.name || "Error").slice(0, 400);
}

// The spec's first line, read a byte at a time so that nothing after it is consumed.
function specLine() {
  const bytes = [];
  const one = Buffer.alloc(1);
  for (;;) {
    let read;
    try {
      read = readSync(0, one, 0, 1, null);
    } catch (error) {
      if (error.code === "EAGAIN") continue;
      throw error;
    }
    if (read === 0 || one[0] === 0x0a) break;
    bytes.push(one[0]);
  }
  return Buffer.from(bytes).toString("utf8");
}

// The backend's secret variable: from this process's environment, or from the spec when
// the host could not pass the environment on (SSH).
function secret(spec, name) {
  return (name && (process.env[name] || spec.secrets?.[name])) || undefined;
}

// The variables a user's own GitHub token may be in: the runtime must see only the witness's.
const GITHUB_TOKEN_VARIABLES = ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"];

// handoff/worker/sdk.py's without_trust_store: a runtime whose every address is plain HTTP
// verifies no certificate, so it is not made to read the machine's trust store for every
// HTTP client it builds; it is given one certificate that signs nothing instead.
const TRUST_STORE_VARIABLES = ["SSL_CERT_FILE", "SSL_CERT_DIR"];
const NO_TRUST_ROOT = fileURLToPath(new URL("../../handoff/worker/no-trust.pem", import.meta.url));
function withoutTrustStore(env) {
  const kept = Object.fromEntries(Object.entries(env).filter(([name]) => !TRUST_STORE_VARIABLES.includes(name)));
  return { ...kept, SSL_CERT_FILE: NO_TRUST_ROOT };
}
const plainHttp = (url) => url.toLowerCase().startsWith("http://");

// The Copilot service: the real one, or the witness's (its URL for both of the runtime's
// APIs, the token it issued to this step, the step's tags on every turn).
function copilotService(spec, backend) {
  if (backend.kind === "witness-copilot-api") {
    if (!spec.witness_url || !spec.witness_token) throw new Error("the witness's Copilot API needs its URL and a token it issued");
    const kept = Object.fromEntries(Object.entries(process.env).filter(([name]) => !GITHUB_TOKEN_VARIABLES.includes(name)));
    const env = { ...kept, COPILOT_API_URL: spec.witness_url, COPILOT_DEBUG_GITHUB_API_URL: spec.witness_url };
    return {
      model: backend.model || undefined, provider: undefined, gitHubToken: spec.witness_token, turnHeaders: { ...(spec.tags ?? {}) },
      env: plainHttp(spec.witness_url) ? withoutTrustStore(env) : env,
    };
  }
  const token = secret(spec, backend.token_env);
  if (!token) throw new Error(`$${backend.token_env} is no longer set: set it to a GitHub token that may use Copilot`);
  return { model: backend.model, provider: undefined, gitHubToken: token };
}

// handoff/worker/model.py's model_source, for this SDK's options. Without the provider:
// on BYOK nothing; on the Copilot API the client's token and service stay, the model goes.
function modelSettings(spec) {
  const backend = { kind: "witness", model: "handoff-witness", ...spec.backend };
  if (backend.kind === "copilot" || backend.kind === "witness-copilot-api") {
    const service = copilotService(spec, backend);
    return spec.without_provider ? { ...service, model: undefined } : service;
  }
  if (spec.without_provider) return { model: undefined, provider: undefined, gitHubToken: undefined };
  let baseUrl = `${spec.witness_url}/v1`, apiKey = WITNESS_KEY;
  if (backend.kind === "openai-compatible") {
    apiKey = backend.api_key_env ? secret(spec, backend.api_key_env) : NO_KEY;
    if (!apiKey) throw new Error(`--api-key-env ${backend.api_key_env}: that variable is not set or empty`);
    baseUrl = spec.witness_url ? `${spec.witness_url}/v1` : backend.provider_url;
  }
  const provider = { type: "openai", wireApi: "completions", baseUrl, apiKey, headers: { ...(spec.tags ?? {}) } };
  const env = plainHttp(baseUrl) ? withoutTrustStore(process.env) : undefined;
  return { model: backend.model, provider, gitHubToken: undefined, env };
}

// This machine's address on the route to the witness (a connected UDP socket sends nothing).
async function addressTowards(url) {
  try {
    const { hostname, port } = new URL(url);
    const probe = dgram.createSocket("udp4");
    const address = await new Promise((resolve) => {
      probe.on("error", () => resolve(null));
      probe.connect(Number(port) || 80, hostname, () => resolve(probe.address().address));
    });
    probe.close();
    if (address && !address.startsWith("127.")) return address;
  } catch {
    // fall through to the first non-loopback address
  }
  for (const entries of Object.values(os.networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.family === "IPv4" && !entry.address.startsWith("127.")) return entry.address;
    }
  }
  return null;
}

// CPU seconds of this process, and of the children it reaped (its runtime), as the
// Python worker's cpu_seconds() counts them; /proc gives the latter (fields 16 and 17).
function cpuSeconds() {
  const usage = process.cpuUsage();
  const worker = Math.round((usage.user + usage.system) / 1000) / 1000;
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[13]) + Number(fields[14]); // cutime, cstime (fields 16, 17 of the line)
    return { worker, runtime: Math.round((ticks / 100) * 1000) / 1000 };
  } catch {
    return null;
  }
}

// In a container the worker is not the coordinator's child: it holds the run's lifeline
// (handoff/containers/lifeline.py) and exits when it closes, as the Python worker does
// (handoff/worker/lifeline.py); as the container's first process, its end ends the rest.
async function holdLifeline() {
  const address = process.env[LIFELINE_VARIABLE];
  if (!address) return;
  const at = address.lastIndexOf(":");
  const host = address.slice(0, at), port = Number(address.slice(at + 1));
  const lost = (why) => {
    process.stderr.write(`worker: ${why}; exiting\n`);
    process.exit(LIFELINE_LOST);
  };
  const deadline = Date.now() + LIFELINE_CONNECT_MS;
  for (;;) {
    const socket = await new Promise((resolve) => {
      const trying = net.connect({ host, port }, () => resolve(trying));
      trying.once("error", () => resolve(null));
    });
    if (socket) {
      socket.on("data", () => {});
      socket.on("close", () => lost("the run that started this worker has ended"));
      socket.unref(); // it must not keep the worker alive once its work is done
      return;
    }
    if (Date.now() > deadline) lost(`cannot reach the run at ${address}: it has ended`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function eventsLog(home, sessionId) {
  try {
    return readFileSync(path.join(home, "session-state", sessionId, "events.jsonl"), "utf8");
  } catch {
    return null;
  }
}

// What in the spec this worker cannot honour: the step is then not run at all, rather
// than run without what it asked for.
function unsupported(spec) {
  const missing = [];
  if (spec.guarded) missing.push("a guarded step (the gate is the Python worker's)");
  if ((spec.holds ?? []).length) missing.push("fault holds");
  return missing;
}

class Worker {
  constructor(spec) {
    this.spec = spec;
    this.home = spec.home.startsWith("~/") ? path.join(os.homedir(), spec.home.slice(2)) : spec.home;
    this.sessionId = spec.session_id ?? null;
    this.session = null;
    this.turns = 0;
    this.runtimeVersion = "";
    this.bridge = null; // the store bridge, when the spec names a database store or a registry
    const settings = modelSettings(spec);
    this.model = settings.model;
    this.provider = settings.provider;
    this.turnHeaders = settings.turnHeaders ?? {};
    this.client = new CopilotClient({
      connection: RuntimeConnection.forStdio({ path: spec.runtime_path || defaultRuntime() }),
      baseDirectory: this.home,
      gitHubToken: settings.gitHubToken,
      useLoggedInUser: false,
      sessionFs: spec.store ? SESSION_FS : undefined,
      env: settings.env,
    });
  }

  sessionConfig() {
    const config = { model: this.model, provider: this.provider, streaming: false, onPermissionRequest: approveAll };
    if (this.spec.store) config.createSessionFsProvider = (session) => this.bridge.provider(session.sessionId);
    return config;
  }

  // The registry's bookkeeping of a raw step (handoff/worker/sessions.py's Sessions): who
  // made a session, where, with which runtime and SDK; who resumed it; each turn's prompt.
  async registered(op, ...args) {
    if (this.bridge?.hasRegistry) await this.bridge.call(op, this.sessionId, ...args);
  }

  async storedLog() {
    return this.spec.store ? this.bridge.eventsLog(this.sessionId) : eventsLog(this.home, this.sessionId);
  }

  async run() {
    const started = performance.now();
    if (this.spec.store || this.spec.registry) this.bridge = await StoreBridge.open(this.spec, this.home);
    await this.client.start();
    const runtimeVersion = this.runtimeVersion = (await this.client.getStatus()).version;
    emit({
      event: "ready", t: now(), pid: process.pid, hostname: os.hostname(),
      address: await addressTowards(this.spec.witness_url), home: this.home, runtime_version: runtimeVersion,
      sdk_version: SDK_NAME, sdk_language: LANGUAGE, runtime_start_ms: msSince(started), store: this.bridge?.store ?? null,
    });
    let ok = true;
    try {
      const refused = [...this.substituted(runtimeVersion), ...unsupported(this.spec)];
      if (refused.length) {
        ok = false;
        emit({ event: "error", t: now(), action: "start", message: `this Node.js worker cannot run the step: ${refused.join("; ")}` });
        for (const action of this.spec.actions) {
          emit({ event: "skipped", t: now(), action, reason: "the step asks for what this worker cannot do" });
        }
      } else {
        for (const action of this.spec.actions) ok = (await this.do(action)) && ok;
      }
    } finally {
      ok = (await this.stop()) && ok;
    }
    if (this.sessionId) emit(report(this.sessionId, await this.storedLog(), now()));
    return ok;
  }

  // A step that names versions measures those or nothing (the Python worker's rule).
  substituted(runtimeVersion) {
    const wrong = [];
    const { runtime_version: runtime, sdk_version: sdk } = this.spec;
    if (runtime && runtime !== runtimeVersion) wrong.push(`asked for runtime ${runtime}, the runtime reports ${runtimeVersion}`);
    if (sdk && sdk !== SDK_NAME) wrong.push(`asked for SDK ${sdk}, this worker runs SDK ${SDK_NAME}`);
    return wrong;
  }

  async stop() {
    const started = performance.now();
    let timer;
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => resolve([new Error(`the runtime did not stop within ${RUNTIME_STOP_MS / 1000} s`)]), RUNTIME_STOP_MS);
    });
    try {
      const errors = await Promise.race([this.client.stop(), timeout]);
      if (!errors.length) return true;
      emit({ event: "error", t: now(), action: "stop", message: oneLine(errors.map(oneLine).join("; ")), ms: msSince(started) });
    } catch (error) {
      emit({ event: "error", t: now(), action: "stop", message: oneLine(error), ms: msSince(started) });
    } finally {
      clearTimeout(timer);
    }
    if (this.client.forceStop) await this.client.forceStop().catch(() => {});
    return false;
  }

  async do(action) {
    if (!Object.hasOwn(this.actions, action)) {
      const why = NOT_HERE[action] ?? "it is not among the actions this worker does";
      emit({ event: "error", t: now(), action, message: `the Node.js worker cannot do '${action}': ${why}` });
      return false;
    }
    if (NEEDS_SESSION.has(action) && this.session === null) {
      emit({ event: "skipped", t: now(), action, reason: "no open session" });
      return false;
    }
    const started = performance.now();
    let detail;
    try {
      detail = await this.actions[action].call(this);
    } catch (error) {
      const turn = action === "tell" || action === "ask" ? this.turns : undefined;
      const failed = { event: "error", t: now(), action, message: oneLine(error), ms: msSince(started) };
      if (turn !== undefined) failed.turn = turn;
      if (turn !== undefined && /^Timeout after \d+ms/.test(error?.message ?? "")) failed.timeout_s = this.spec.turn_timeout ?? 60;
      emit(failed);
      return false;
    }
    if (action !== "tell" && action !== "ask") {
      emit({ event: "action", t: now(), action, session_id: this.sessionId, ms: msSince(started), ...(detail ?? {}) });
    }
    return true;
  }

  async turn(kind, prompt) {
    const started = performance.now();
    this.turns += 1;
    const seenOnTheWire = (this.spec.backend?.kind ?? "witness") !== "copilot";
    const requestHeaders = seenOnTheWire ? { ...this.turnHeaders, [TURN_HEADER]: String(this.turns) } : {};
    const reply = await this.session.sendAndWait({ prompt, requestHeaders }, (this.spec.turn_timeout ?? 60) * 1000);
    await this.registered("turned", prompt);
    emit({
      event: "turn", t: now(), turn: this.turns, kind, session_id: this.sessionId, prompt,
      answer: reply?.data?.content ?? null, ms: msSince(started),
    });
  }
}

Worker.prototype.actions = {
  async create() {
    const config = this.sessionConfig();
    if (this.sessionId) config.sessionId = this.sessionId;
    this.session = await this.client.createSession(config);
    this.sessionId = this.session.sessionId;
    await this.registered("created", this.spec.owner ?? "alice", os.hostname(), this.runtimeVersion, SDK_NAME);
  },
  async "create-without-id"() {
    this.session = await this.client.createSession(this.sessionConfig());
    this.sessionId = this.session.sessionId;
    await this.registered("created", this.spec.owner ?? "alice", os.hostname(), this.runtimeVersion, SDK_NAME);
  },
  async resume() {
    if (!this.sessionId) throw new Error("no session id to resume");
    this.session = await this.client.resumeSession(this.sessionId, this.sessionConfig());
    await this.registered("resumed", os.hostname(), this.runtimeVersion, SDK_NAME);
  },
  async "resume-most-recent"() {
    const stored = await this.client.listSessions();
    if (!stored.length) throw new Error("listSessions returned no sessions to resume");
    const latest = stored.reduce((a, b) => (b.modifiedTime > a.modifiedTime ? b : a));
    this.sessionId = latest.sessionId;
    this.session = await this.client.resumeSession(this.sessionId, this.sessionConfig());
    await this.registered("resumed", os.hostname(), this.runtimeVersion, SDK_NAME);
    return { listed: stored.map((s) => s.sessionId) };
  },
  // The registry's sessions, most recently active first (not the runtime's index): the
  // first becomes this step's session. Only a database store's registry is searched, as
  // in the Python worker.
  async discover() {
    if (!this.spec.store) throw new Error("discover needs a database store with a registry");
    const registered = await this.bridge.call("registered", "");
    if (!registered.length) throw new Error("the registry lists no sessions");
    this.sessionId = registered[0];
    return { registered };
  },
  async tell() {
    await this.turn("tell", rememberPrompt(this.spec.fact_topic, this.spec.fact_value));
  },
  async ask() {
    await this.turn("ask", questionPrompt(this.spec.fact_topic));
  },
  async close() {
    const session = this.session;
    this.session = null;
    await session.disconnect();
  },
  async metadata() {
    const found = await this.client.getSessionMetadata(this.sessionId);
    return { found: found !== undefined, summary: found?.summary ?? null };
  },
  async list() {
    return { listed: (await this.client.listSessions()).map((s) => s.sessionId) };
  },
};

// The runtime `make setup` installed (handoff/runtime_locator.py's rule), for a spec that
// leaves the choice to this machine.
function defaultRuntime() {
  if (process.env.COPILOT_CLI_PATH) return process.env.COPILOT_CLI_PATH;
  const arch = { x64: "x64", arm64: "arm64" }[process.arch] ?? process.arch;
  const here = path.dirname(new URL(import.meta.url).pathname);
  return path.join(here, "..", "..", "runtime", "node_modules", "@github", `copilot-${process.platform}-${arch}`, "copilot");
}

function withoutSecrets(text, spec) {
  const names = [spec?.backend?.api_key_env, spec?.backend?.token_env].filter(Boolean);
  const values = [...names.map((n) => secret(spec, n)), ...Object.values(spec?.secrets ?? {})].filter(Boolean);
  return values.reduce((scrubbed, value) => scrubbed.replaceAll(value, "***"), text);
}

async function main() {
  await holdLifeline();
  let spec;
  try {
    spec = JSON.parse(specLine());
    if (typeof spec !== "object" || spec === null || !Array.isArray(spec.actions)) throw new Error("not a WorkerSpec");
  } catch (error) {
    emit({ event: "error", t: now(), action: "read-spec", message: `cannot read the worker spec from stdin: ${oneLine(error)}` });
    return;
  }
  let worker = null;
  try {
    worker = new Worker(spec);
    const ok = await worker.run();
    await worker.bridge?.close(); // reaped before its CPU is counted
    emit({ event: "finished", t: now(), ok, cpu_s: cpuSeconds() });
  } catch (error) {
    emit({ event: "error", t: now(), action: "worker", message: withoutSecrets(oneLine(error), spec) });
    await worker?.bridge?.close().catch(() => {});
    emit({ event: "finished", t: now(), ok: false });
    process.stderr.write(withoutSecrets(String(error?.stack ?? error), spec) + "\n");
  }
}

await main();
process.exit(0); // everything is reported and the runtime is stopped
