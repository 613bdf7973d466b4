/**
 * A fresh project's MCP client on the v2 SDK (`@modelcontextprotocol/client`): connects to the URL given (the question: the second argument) with
 * version negotiation (`server/discover` first, so 2026-07-28 against this door), lists the tools, asks once and
 * prints what it got as one JSON line.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'

const client = new Client({ name: 'consumer', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } })
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2] as string)))
const { tools } = await client.listTools()
const reply = await client.callTool({ name: 'ask_agent', arguments: { message: process.argv[3] ?? 'How long do I have to return an order?' } })
console.log(JSON.stringify({ revision: client.getNegotiatedProtocolVersion(), tools: tools.map((tool) => tool.name), reply }))
await client.close()
