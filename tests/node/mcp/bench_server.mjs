// Baseline server for bench/mcp: the TypeScript MCP SDK serving the same
// trivial tool as Orbit (`orbit_tools_list`, answering a fixed object given
// as a JSON file), on stdio.
import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const payload = JSON.parse(readFileSync(process.argv[2], "utf8"));
const server = new McpServer({ name: "bench-typescript", version: "1.0.0" });
server.registerTool(
  "orbit_tools_list",
  { description: "Every tool by its canonical name beside its advertised one." },
  async () => ({
    content: [{ type: "text", text: JSON.stringify(payload) }],
    structuredContent: payload,
  }),
);
await server.connect(new StdioServerTransport());
