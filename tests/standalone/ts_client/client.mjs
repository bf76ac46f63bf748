// A small client built on the TypeScript MCP SDK, run by tests/standalone/test_ts_client.py
// against `mcp-testkit serve`. It pages through tools/list, calls tools, and after a call fails
// (the scenario loses its session) calls once more on the same client, to record what the SDK
// does then. It prints one JSON object on stdout: what it saw; the test asserts on the journal.
//
// usage: node client.mjs URL HEADER_NAME HEADER_VALUE TOOL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, headerName, headerValue, tool] = process.argv.slice(2);
const seen = { pages: 0, tools: [], calls: [] };

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { [headerName]: headerValue } },
});
const client = new Client({ name: "mcp-testkit-ts-client", version: "1.0.0" });

async function call(name) {
  try {
    const result = await client.callTool({ name, arguments: {} });
    seen.calls.push({ ok: true, text: result.content?.[0]?.text, isError: result.isError ?? false });
  } catch (error) {
    seen.calls.push({ ok: false, error: String(error?.message ?? error), code: error?.code ?? null });
  }
}

try {
  await client.connect(transport);
  seen.sessionId = transport.sessionId;
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    seen.pages += 1;
    seen.tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  await call(tool); // answered
  await call(tool); // the scenario loses the session here: 404
  await call(tool); // what does the SDK do after a 404? (recorded, not assumed)
  seen.sessionIdAfter = transport.sessionId;
} catch (error) {
  seen.fatal = String(error?.stack ?? error);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(seen) + "\n");
