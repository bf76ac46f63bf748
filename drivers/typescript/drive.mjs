// A driver (docs/driver.md) for the TypeScript MCP SDK client: `Client` over
// `StreamableHTTPClientTransport`, the listing walked with `listTools({cursor})`, tools called with
// `callTool`. Session model: persistent (one transport from connect to close; the SDK starts no
// new session after a 404). Retries: none. The listing follows nextCursor without a page limit.
// Errors are sorted from what the SDK throws to its caller, nothing else (no watch on the wire, issue 21
// item 11): an isError result is tool_error; a StreamableHTTPError carries the HTTP status as its `code`
// (401/403 auth_error, 404 connection_error, else outcome_unknown at a call); an UnauthorizedError is
// auth_error; a request timeout or a closed connection (McpError RequestTimeout, ConnectionClosed) is
// outcome_unknown at a call; any other McpError is the server's answer, tool_error; anything else is
// outcome_unknown at a call. At connect every failure is connection_error but a 401/403.
// Declared waits: each request (initialize, each listTools page, each callTool) has `timeout: TIMEOUT_MS`
// (RequestOptions.timeout, `DEFAULT_REQUEST_TIMEOUT_MSEC` otherwise); progress does not extend it
// (RequestOptions.resetTimeoutOnProgress defaults to false and is not set), so no progress_timeout_s; the SDK
// sets no result size limit, so no max_result_bytes; this driver answers one request at a time and cannot
// abandon one, so no concurrency and no cancellation.
// Set up with `npm ci --prefix drivers/typescript`; run with `node drivers/typescript/drive.mjs`.
import { createInterface } from "node:readline";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
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
// Sets the application's current credentials on every request (a rotation reaches a client built once); it
// reads nothing that comes back.
async function withCurrentHeaders(url, init = {}) {
  const merged = new Headers(init.headers ?? {});
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  return fetch(url, { ...init, headers: merged });
}

function kind(error, at) {
  if (error instanceof UnauthorizedError) return "auth_error";
  if (error instanceof StreamableHTTPError) {
    if (error.code === 401 || error.code === 403) return "auth_error";
    if (error.code === 404 || at !== "call") return "connection_error";
    return "outcome_unknown";
  }
  if (at !== "call") return "connection_error";
  const timeoutOrClosed = [ErrorCode.RequestTimeout, ErrorCode.ConnectionClosed];
  if (error instanceof McpError && !timeoutOrClosed.includes(error.code)) return "tool_error";
  return "outcome_unknown";
}

// A result's text is cut at MAX_TEXT characters (the protocol's lines are bounded at 4 MiB, a result is not: P12).
const MAX_TEXT = 512 * 1024;
const bounded = (text) =>
  typeof text === "string" && text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}... (cut: ${text.length} characters in all)` : text;
const outcome = (kindName, text = null, error = null) => ({
  kind: kindName,
  text: bounded(text),
  message: error ? describe(error) : "",
});

const operations = {
  async connect({ url, headers: given }) {
    headers = { ...given };
    const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: withCurrentHeaders });
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
  // initialize and one listTools page, each bounded by TIMEOUT_MS: two for the one-page listing of P11's connects
  connect_timeout_s: (2 * TIMEOUT_MS) / 1000,
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
