// A driver (docs/driver.md) for the TypeScript MCP SDK client: `Client` over
// `StreamableHTTPClientTransport`, the listing walked with `listTools({cursor})`, tools called with
// `callTool`. Session model: persistent (one transport from connect to close; the SDK starts no
// new session after a 404). Retries: none. The listing follows nextCursor without a page limit.
// Errors: an isError result is tool_error; a JSON-RPC error (McpError with a server's code) is
// tool_error; an HTTP error is sorted by its status (401/403 auth_error, 404 connection_error, else
// outcome_unknown); a request timeout or a lost connection after the call was sent is
// outcome_unknown; a failure before any tools/call left is connection_error.
// Set up with `npm ci --prefix drivers/typescript`; run with `node drivers/typescript/drive.mjs`.
import { createInterface } from "node:readline";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";

const TIMEOUT_MS = 1000;
const sdkVersion = JSON.parse(
  readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url), "utf8"),
).version;

const say = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const describe = (error) => `${error?.name ?? "Error"}: ${String(error?.message ?? error)}`.slice(0, 3900);

let headers = {};
let client = null;
let names = [];
let seen = { statuses: [], methods: new Set() };

async function watchedFetch(url, init = {}) {
  const merged = new Headers(init.headers ?? {});
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  if (init.method === "POST" && typeof init.body === "string") {
    try {
      const message = JSON.parse(init.body);
      for (const item of Array.isArray(message) ? message : [message]) if (item?.method) seen.methods.add(item.method);
    } catch {}
  }
  const response = await fetch(url, { ...init, headers: merged });
  if (init.method === "POST" && response.status >= 400) seen.statuses.push(response.status);
  return response;
}

function kind(error, at) {
  if (seen.statuses.some((status) => status === 401 || status === 403)) return "auth_error";
  if (at !== "call" || seen.statuses.includes(404) || !seen.methods.has("tools/call")) return "connection_error";
  const timeoutOrClosed = [ErrorCode.RequestTimeout, ErrorCode.ConnectionClosed];
  if (error instanceof McpError && !timeoutOrClosed.includes(error.code) && !(error instanceof StreamableHTTPError)) {
    return "tool_error";
  }
  return "outcome_unknown";
}

const outcome = (kindName, text = null, error = null) => ({ kind: kindName, text, message: error ? describe(error) : "" });

const operations = {
  async connect({ url, headers: given }) {
    headers = { ...given };
    seen = { statuses: [], methods: new Set() };
    const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: watchedFetch });
    const candidate = new Client({ name: "mcp-testkit-driver", version: "1.0.0" });
    try {
      await candidate.connect(transport, { timeout: TIMEOUT_MS });
      names = [];
      let cursor;
      do {
        const page = await candidate.listTools(cursor === undefined ? {} : { cursor }, { timeout: TIMEOUT_MS });
        names.push(...page.tools.map((tool) => tool.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    } catch (error) {
      await candidate.close().catch(() => {});
      return outcome(kind(error, "connect"), null, error);
    }
    client = candidate;
    return outcome("ok", "");
  },
  async list() {
    return { kind: "tools", tools: [...names] };
  },
  async call({ name, arguments: args }) {
    if (client === null) return outcome("connection_error", null, new Error("not connected"));
    seen = { statuses: [], methods: new Set() };
    let result;
    try {
      result = await client.callTool({ name, arguments: args }, undefined, { timeout: TIMEOUT_MS });
    } catch (error) {
      return outcome(kind(error, "call"), null, error);
    }
    const text = JSON.stringify({ content: result.content ?? [], structuredContent: result.structuredContent ?? null });
    return result.isError ? outcome("tool_error", text) : outcome("ok", text);
  },
  async set_headers({ headers: given }) {
    headers = { ...headers, ...given };
    return { kind: "done" };
  },
  async close() {
    const closing = client;
    client = null;
    if (closing !== null) await closing.close().catch(() => {});
    return { kind: "done" };
  },
};

async function watched(work, watchdogSeconds, op) {
  let timer;
  const watchdog = new Promise((resolve) => {
    timer = setTimeout(
      () => resolve({ kind: "hung", message: `the bridge did not finish ${op} within ${watchdogSeconds} s` }),
      watchdogSeconds * 1000,
    );
  });
  try {
    return await Promise.race([work(), watchdog]);
  } catch (error) {
    return { kind: "driver_error", message: `the driver's ${op} raised ${describe(error)}` };
  } finally {
    clearTimeout(timer);
  }
}

say({
  protocol: "mcp-testkit-driver",
  version: 1,
  bridge: "@modelcontextprotocol/sdk",
  bridge_version: sdkVersion,
  page_limit: null,
  retry: 0,
  timeout_s: TIMEOUT_MS / 1000,
  sessions: "persistent",
});

const lines = createInterface({ input: process.stdin });
const queue = [];
let busy = false;
lines.on("line", (line) => {
  queue.push(line);
  if (!busy) drain();
});
lines.on("close", async () => {
  while (busy) await new Promise((resolve) => setTimeout(resolve, 10));
  await operations.close();
  process.exit(0);
});

async function drain() {
  busy = true;
  while (queue.length > 0) {
    const request = JSON.parse(queue.shift());
    const operation = operations[request.op];
    if (operation === undefined) {
      say({ id: request.id, kind: "driver_error", message: `unknown op ${request.op}` });
      continue;
    }
    const watchdog = request.watchdog_s ?? 30;
    say({ id: request.id, ...(await watched(() => operation(request), watchdog, request.op)) });
  }
  busy = false;
}
