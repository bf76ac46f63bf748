// A client built on the TypeScript MCP SDK that uses what a server offers besides tools, run by
// tests/standalone/test_ts_client_offerings.py against `mcp-testkit serve --admin`. It lists and reads
// resources and templates, subscribes to one and has the admin API change it (then waits for the
// server's notifications/resources/updated), lists and gets prompts, completes an argument, and calls
// a tool that asks for input, answering the elicitation through its request handler. It prints one
// JSON object on stdout: what it saw; the test asserts on it and on the journal.
//
// usage: node offerings.mjs URL ADMIN_URL ADMIN_TOKEN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, adminUrl, adminToken] = process.argv.slice(2);
const WAIT_MS = 10000; // the notification's bound; the test's own limit is above it
const seen = { elicited: [], updated: [], errors: {} };

const client = new Client(
  { name: "mcp-testkit-ts-offerings", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  seen.elicited.push(request.params);
  return { action: "accept", content: { date: "2026-12-24" } };
});
let updated;
const arrived = new Promise((resolve) => (updated = resolve));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => {
  seen.updated.push(notification.params.uri);
  updated();
});

async function failure(label, request) {
  try {
    await request();
    seen.errors[label] = null;
  } catch (error) {
    seen.errors[label] = { code: error?.code ?? null, message: String(error?.message ?? error) };
  }
}

async function admin(path, body) {
  const answer = await fetch(adminUrl + path, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return answer.status;
}

try {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  seen.protocolVersion = transport.protocolVersion;
  seen.capabilities = client.getServerCapabilities();

  seen.resources = (await client.listResources()).resources;
  seen.templates = (await client.listResourceTemplates()).resourceTemplates;
  seen.text = (await client.readResource({ uri: "file:///notes.txt" })).contents;
  seen.blob = (await client.readResource({ uri: "file:///logo.png" })).contents;
  seen.row = (await client.readResource({ uri: "db://rows/42" })).contents;
  await failure("unknownUri", () => client.readResource({ uri: "file:///missing.txt" }));

  await client.subscribeResource({ uri: "file:///notes.txt" });
  seen.adminStatus = await admin("/resources", { uri: "file:///notes.txt", text: "changed", mimeType: "text/plain" });
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no resources/updated within ${WAIT_MS} ms`)), WAIT_MS);
  });
  await Promise.race([arrived, late]).finally(() => clearTimeout(timer));
  seen.changed = (await client.readResource({ uri: "file:///notes.txt" })).contents;
  await client.unsubscribeResource({ uri: "file:///notes.txt" });

  seen.prompts = (await client.listPrompts()).prompts;
  seen.prompt = await client.getPrompt({ name: "summarize", arguments: { topic: "mcp", style: "short" } });
  await failure("missingArgument", () => client.getPrompt({ name: "summarize", arguments: {} }));
  seen.completion = (
    await client.complete({ ref: { type: "ref/prompt", name: "summarize" }, argument: { name: "topic", value: "p" } })
  ).completion;
  seen.rowCompletion = (
    await client.complete({
      ref: { type: "ref/resource", uri: "db://rows/{id}" },
      argument: { name: "id", value: "4" },
    })
  ).completion;

  const booked = await client.callTool({ name: "book", arguments: { what: "a table" } });
  seen.booked = { text: booked.content?.[0]?.text, isError: booked.isError ?? false };
} catch (error) {
  seen.fatal = String(error?.stack ?? error);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(seen) + "\n");
