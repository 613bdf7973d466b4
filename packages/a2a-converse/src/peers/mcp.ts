/** `@modelcontextprotocol/server` (v2) for the MCP door: an optional peer dependency (peers/import-peer.ts). */
/* eslint-disable @typescript-eslint/no-redeclare -- a class is exported as a value and a type of one name, as its package does */
import { importPeer } from './import-peer.js'

const ENTRY = 'the MCP door (a2a-converse/mcp, a2a-converse/express)'
const PACKAGES = ['@modelcontextprotocol/server']
const server = await importPeer<typeof import('@modelcontextprotocol/server')>('@modelcontextprotocol/server', ENTRY, PACKAGES)
const stdio = await importPeer<typeof import('@modelcontextprotocol/server/stdio')>('@modelcontextprotocol/server/stdio', ENTRY, PACKAGES)
const ajv = await importPeer<typeof import('@modelcontextprotocol/server/validators/ajv')>('@modelcontextprotocol/server/validators/ajv', ENTRY, PACKAGES)

export const {
  CLIENT_CAPABILITIES_META_KEY, createMcpHandler, inputResponse, isJsonContentType, PROTOCOL_VERSION_META_KEY,
  ProtocolError, ProtocolErrorCode, RELATED_TASK_META_KEY, Server, SUPPORTED_PROTOCOL_VERSIONS, TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY
} = server
/** Declared with its type: the SDK does not export the builder type this function returns. */
export const inputRequired: typeof import('@modelcontextprotocol/server').inputRequired = server.inputRequired
export type Server = import('@modelcontextprotocol/server').Server
export type ProtocolErrorCode = import('@modelcontextprotocol/server').ProtocolErrorCode
export const { serveStdio } = stdio
export const { AjvJsonSchemaValidator } = ajv
