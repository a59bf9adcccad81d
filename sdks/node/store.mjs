// Where a Node.js step's sessions are kept, beyond its home: a database store through the
// TypeScript SDK's SessionFs provider, and the registry (who made and resumed a session,
// with which runtime and SDK), as the Python worker keeps them.
//
// The database itself is reached through the store bridge (handoff/worker/store_bridge.py):
// a Python process this worker starts and talks to over a pipe, one JSON object per line
// each way, which runs the project's own store code (handoff/stores/files.py's schema,
// handoff/worker/store.py's reconnects). So a session's rows are the same whichever SDK
// wrote them, and the schema is written once. What is the Node.js SDK's here is the
// provider: the runtime calls the SDK's sessionFs handlers, the SDK calls createProvider's
// object, and each call is answered from the store.

import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";

// The SessionFs configuration the Python worker gives its client (handoff/worker/sdk.py).
export const SESSION_FS = { initialCwd: "/work", sessionStatePath: "/state", conventions: "posix" };
const BRIDGE_STOP_MS = 10_000; // closing a database connection that went away may hang

// The Python that runs the bridge: HANDOFF_PYTHON (a container's, set by its host), else
// the project's virtual environment, beside this file.
function bridgePython() {
  if (process.env.HANDOFF_PYTHON) return process.env.HANDOFF_PYTHON;
  const here = path.dirname(new URL(import.meta.url).pathname);
  return path.join(here, "..", "..", ".venv", "bin", "python");
}

function failure(answer) {
  const error = new Error(answer.message);
  error.code = answer.code; // "ENOENT" becomes the SDK's SessionFs ENOENT, anything else UNKNOWN
  return error;
}

export class StoreBridge {
  // Open the store a spec names (spec.store: a database; spec.registry: a registry file
  // beside a home); the bridge's own failure to open it is thrown here, with its reason.
  static async open(spec, home) {
    const bridge = new StoreBridge();
    const opened = await bridge.request({ op: "open", store: spec.store ?? null, registry: spec.registry ?? null, home });
    bridge.store = opened.store;
    bridge.hasRegistry = opened.registry;
    return bridge;
  }

  constructor() {
    this.child = spawn(bridgePython(), ["-m", "handoff.worker.store_bridge"], { stdio: ["pipe", "pipe", "inherit"] });
    this.pending = [];
    this.next = 1;
    this.ended = null;
    this.child.on("error", (error) => this.end(`cannot start the store bridge (${bridgePython()}): ${error.message}`));
    this.child.on("exit", (code, signal) => this.end(`the store bridge ended (${signal ?? `exit ${code}`})`));
    readline.createInterface({ input: this.child.stdout }).on("line", (line) => {
      const waiting = this.pending.shift();
      if (!waiting) return;
      let answer;
      try {
        answer = JSON.parse(line);
      } catch {
        waiting.reject(new Error(`the store bridge said something that is not JSON: ${line.slice(0, 200)}`));
        return;
      }
      if (answer.ok) waiting.resolve(answer.value);
      else waiting.reject(failure(answer));
    });
  }

  end(why) {
    this.ended = why;
    for (const waiting of this.pending.splice(0)) waiting.reject(new Error(why));
  }

  // Answers come back in the order of the requests: one queue, no ids needed to match them.
  request(body) {
    if (this.ended) return Promise.reject(new Error(this.ended));
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.child.stdin.write(JSON.stringify({ id: this.next++, ...body }) + "\n");
    });
  }

  call(op, session, ...args) {
    return this.request({ op, session, args });
  }

  // The SDK's SessionFsProvider for one session (createSessionFsProvider's result).
  provider(sessionId) {
    const call = (op, ...args) => this.call(op, sessionId, ...args);
    const iso = (seconds) => new Date(seconds * 1000).toISOString();
    return {
      readFile: (p) => call("read_file", p),
      writeFile: async (p, content) => { await call("write_file", p, content); },
      appendFile: async (p, content) => { await call("append_file", p, content); },
      exists: (p) => call("exists", p),
      stat: async (p) => {
        const entry = await call("stat", p);
        return { isFile: !entry.is_dir, isDirectory: entry.is_dir, size: entry.size,
                 mtime: iso(entry.mtime), birthtime: iso(entry.birthtime) };
      },
      mkdir: async (p, recursive) => { await call("mkdir", p, Boolean(recursive)); },
      readdir: async (p) => (await call("readdir", p)).map(([name]) => name),
      readdirWithTypes: async (p) =>
        (await call("readdir", p)).map(([name, isDir]) => ({ name, type: isDir ? "directory" : "file" })),
      rm: async (p, recursive, force) => { await call("rm", p, Boolean(recursive), Boolean(force)); },
      rename: async (src, dest) => { await call("rename", src, dest); },
    };
  }

  // The session's events.jsonl as stored (null if there is none), as text.
  async eventsLog(sessionId) {
    const encoded = await this.call("events_log", sessionId);
    return encoded === null ? null : Buffer.from(encoded, "base64").toString("utf8");
  }

  // End the bridge (at the end of its input it closes the store and exits) and wait for it,
  // so that it is reaped before the worker reports its CPU and ends; one that does not end
  // within BRIDGE_STOP_MS is killed.
  async close() {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin.end();
    let timer;
    const late = new Promise((resolve) => { timer = setTimeout(() => resolve("late"), BRIDGE_STOP_MS); });
    if ((await Promise.race([exited, late])) === "late") {
      this.child.kill("SIGKILL");
      await exited;
    }
    clearTimeout(timer);
  }
}
