#!/usr/bin/env node
// Reference adapter for the Orbtile Adapter Protocol v1, Node 18+, no packages.
//
// Copy it. It shows one session on the keypad and walks it through every
// activity, and it does what every adapter must: reads the discovery file
// (ORBTILE_API_FILE, else the default path) and backs off when there is none;
// checks the server's nonce proof before it sends session data; opens a new
// connection per call (http.request with socketPath: fetch() cannot use a Unix
// socket); on 401 reads the file again once and retries; on 404
// adapter_not_registered registers again and resends the whole session;
// heartbeats at least every 10 s; honours Retry-After on 429/503; keeps the
// token out of argv, URLs and logs.
//
// Usage: node ref.mjs [--id dev.example.ref-node] [--title T] [--step S]
//        [--allow-timeout S] [--loops N] [--heartbeat S]
// Exit 0 after the walk, 2 when not allowed, 3 when the API is off.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

const ACTIVITIES = [
  "starting", "thinking", "tool", "streaming", "waitingPermission",
  "waitingQuestion", "compacting", "done", "error", "idle",
];
const AWKWARD_TITLE = "ref.mjs \u202eevil\u202c \u0007bell \u{1F680} r\u00e9sum\u00e9";
const AWKWARD_MESSAGE = "line one\tTab\n\u2067isolate\u2069 \u{1F469}\u200d\u{1F4BB} " +
  "x".repeat(10_000) + " the end \u00e9";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (line) => process.stderr.write(`ref.mjs: ${line}\n`);

export function defaultApiFile() {
  if (process.env.ORBTILE_API_FILE) return process.env.ORBTILE_API_FILE;
  if (process.platform === "darwin") {
    return path.join(os.homedir(), "Library/Application Support/Orbtile/adapter-api.json");
  }
  const base = process.env.ORBIT_CONFIG_DIR ||
    path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config"), "orbit");
  return path.join(base, "adapter-api.json");
}

class Off extends Error {}
class ApiError extends Error {
  constructor(status, body) {
    super(`HTTP ${status}: ${body?.error?.code ?? "?"}`);
    this.status = status;
    this.body = body;
  }
}

export class Client {
  constructor(adapterId, registration, apiFile = defaultApiFile()) {
    this.adapterId = adapterId;
    this.registration = registration;
    this.apiFile = apiFile;
    this.discovery = null;
    this.verifiedToken = null;
    this.sessions = new Map();
    this.enabled = false;
    this.reason = null;
    this.lastCall = 0;
  }

  load() {
    let data;
    try {
      data = JSON.parse(readFileSync(this.apiFile, "utf8"));
    } catch (e) {
      throw new Off(e.code === "ENOENT"
        ? "no discovery file: the adapter API is off or Orbit is not running"
        : `unreadable discovery file: ${e.code ?? e.name}`);
    }
    if (data.api !== 1 || typeof data.token !== "string") throw new Off("discovery file is not API v1");
    this.discovery = data;
  }

  raw(method, urlPath, body, extraHeaders = {}) {
    if (!this.discovery) this.load();
    const d = this.discovery;
    const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body), "utf8");
    return new Promise((resolve, reject) => {
      const req = http.request({
        socketPath: d.socketPath,
        path: (d.basePath ?? "/a/v1") + urlPath,
        method,
        headers: {
          Host: "localhost",
          "Content-Type": "application/json",
          Authorization: `Bearer ${d.token}`,
          "Content-Length": payload.length,
          ...extraHeaders,
        },
        agent: false, // a new connection per call
        timeout: 10_000,
      }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          let parsed = {};
          try {
            parsed = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
          } catch { /* not JSON */ }
          resolve({ status: res.statusCode, body: parsed, retryAfter: res.headers["retry-after"] });
        });
      });
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", (e) => {
        if (e.code === "ENOENT" || e.code === "ECONNREFUSED") {
          this.discovery = null;
          reject(new Off(`socket unavailable: ${e.code}`));
        } else reject(e);
      });
      req.end(payload);
    });
  }

  async call(method, urlPath, body, { reread = true, reregister = true } = {}) {
    let last;
    let offWait = 0.25;
    for (let i = 0; i < 12; i++) {
      let r;
      try {
        r = await this.raw(method, urlPath, body);
      } catch (e) {
        // Orbit quit or is relaunching: wait (0.25 s doubling, about 30 s in
        // all), read the file again, retry.
        if (!(e instanceof Off) || offWait > 16) throw e;
        await sleep(offWait * 1000);
        offWait *= 2;
        try { this.load(); } catch { /* still off */ }
        continue;
      }
      last = r;
      if (r.status === 429 || r.status === 503) {
        await sleep(Math.min(Number(r.retryAfter ?? 1), 30) * 1000);
        continue;
      }
      if (r.status === 401 && reread) {
        reread = false; // read the file again once, then retry
        this.load();
        await this.verify();
        continue;
      }
      if (r.status === 404 && reregister && r.body?.error?.code === "adapter_not_registered") {
        reregister = false;
        await this.register();
        // The hub lost every session: send each one whole again.
        const prefix = `/adapters/${this.adapterId}/sessions/`;
        let posting = null;
        if (method === "POST" && urlPath.startsWith(prefix)) {
          posting = urlPath.slice(prefix.length).split("?")[0];
          body = this.sessions.get(posting) ?? body;
        }
        for (const [sid, whole] of this.sessions) {
          if (sid !== posting) await this.raw("POST", `${prefix}${sid}`, whole);
        }
        continue;
      }
      if (r.status >= 400) throw new ApiError(r.status, r.body);
      if (urlPath.startsWith(`/adapters/${this.adapterId}`)) this.lastCall = Date.now();
      return r;
    }
    throw last ? new ApiError(last.status, last.body) : new Off("the hub did not come back");
  }

  async verify() {
    const nonce = randomBytes(16).toString("hex");
    let r = await this.raw("GET", "/info", undefined, { "X-Orbtile-Nonce": nonce });
    if (r.status === 401) {
      this.load();
      r = await this.raw("GET", "/info", undefined, { "X-Orbtile-Nonce": nonce });
    }
    if (r.status !== 200) throw new ApiError(r.status, r.body);
    const expected = createHmac("sha256", this.discovery.token).update(nonce).digest("hex");
    const got = Buffer.from(String(r.body.proof ?? ""));
    if (got.length !== expected.length || !timingSafeEqual(got, Buffer.from(expected))) {
      log("the server failed the nonce proof; not sending session data");
      process.exit(4);
    }
    this.verifiedToken = this.discovery.token;
    return r.body;
  }

  async register() {
    const r = await this.call("PUT", `/adapters/${this.adapterId}`, this.registration, { reregister: false });
    this.enabled = Boolean(r.body.enabled);
    this.reason = r.body.reason ?? null;
    for (const w of r.body.warnings ?? []) log(`warning: ${w}`);
    return r;
  }

  async update(sessionId, fields) {
    const whole = { ...(this.sessions.get(sessionId) ?? {}) };
    for (const [k, v] of Object.entries(fields)) {
      if (v === null) delete whole[k];
      else whole[k] = v;
    }
    this.sessions.set(sessionId, whole);
    if (this.verifiedToken !== this.discovery?.token) await this.verify();
    return this.call("POST", `/adapters/${this.adapterId}/sessions/${sessionId}`, fields);
  }

  heartbeat() {
    return this.call("POST", `/adapters/${this.adapterId}/heartbeat`);
  }

  end(sessionId) {
    this.sessions.delete(sessionId);
    return this.call("DELETE", `/adapters/${this.adapterId}/sessions/${sessionId}`, undefined,
      { reregister: false });
  }

  async waitAllowed(timeoutSeconds) {
    const deadline = Date.now() + timeoutSeconds * 1000;
    while (!this.enabled) {
      if (this.reason === "disabled_by_user" || Date.now() > deadline) return false;
      await sleep(500);
      await this.register();
    }
    return true;
  }

  async sleepWithHeartbeats(seconds, every = 5) {
    const end = Date.now() + seconds * 1000;
    for (;;) {
      const left = end - Date.now();
      if (left <= 0) return;
      if (this.sessions.size && Date.now() - this.lastCall >= every * 1000) await this.heartbeat();
      await sleep(Math.min(left, 1000));
    }
  }
}

function parseArgs(argv) {
  const args = { id: "dev.example.ref-node", title: AWKWARD_TITLE, step: 2, allowTimeout: 300, loops: 1, heartbeat: 5 };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    switch (argv[i]) {
      case "--id": args.id = value; i++; break;
      case "--title": args.title = value; i++; break;
      case "--step": args.step = Number(value); i++; break;
      case "--allow-timeout": args.allowTimeout = Number(value); i++; break;
      case "--loops": args.loops = Number(value); i++; break;
      case "--heartbeat": args.heartbeat = Number(value); i++; break;
      default: log(`unknown argument ${JSON.stringify(argv[i])}`); process.exit(64);
    }
  }
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const client = new Client(args.id, {
    name: "Reference (Node)", shortName: "Node",
    palette: { baseHue: 200, attentionHue: 330 },
    glyph: { monogram: "Js" }, version: "1.0.0", urlSchemes: ["https"],
  });
  let backoff = 1;
  for (;;) {
    try {
      client.load();
      await client.verify();
      break;
    } catch (e) {
      if (!(e instanceof Off)) throw e;
      log(`${e.message}; retrying in ${backoff} s`);
      if (backoff >= 30 && process.env.REF_GIVE_UP) return 3;
      await sleep(backoff * 1000);
      backoff = Math.min(backoff * 2, 30);
    }
  }
  await client.register();
  if (!(await client.waitAllowed(args.allowTimeout))) {
    log(`not allowed (${client.reason})`);
    return 2;
  }
  log("allowed");
  const sid = "ref-node-1";
  await client.update(sid, {
    title: args.title, activity: "starting", cwd: process.cwd(), model: "reference",
    pid: process.pid, ttlSeconds: 120, openURL: "https://example.com/ref-node",
  });
  for (let loop = 0; loop < args.loops; loop++) {
    for (const [n, activity] of ACTIVITIES.entries()) {
      const fields = { activity, statusDetail: null };
      if (activity === "tool") Object.assign(fields, { toolLabel: "Bash  make test", toolKind: "shell" });
      if (activity === "streaming") fields.message = { id: `m${loop}-${n}`, text: AWKWARD_MESSAGE };
      if (activity === "waitingPermission" || activity === "error") {
        fields.statusDetail = "Bash wants to run \u202emake\u202c";
      }
      if (activity === "thinking") fields.message = null;
      await client.update(sid, fields);
      log(activity);
      await client.sleepWithHeartbeats(args.step, args.heartbeat);
    }
  }
  await client.end(sid);
  log("done");
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.on("SIGINT", () => process.exit(130));
  main().then((code) => process.exit(code), (e) => {
    log(`error: ${e.message}`);
    process.exit(1);
  });
}
