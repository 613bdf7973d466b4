/**
 * `express` (5.x) for a2a-converse/express: an optional peer dependency (peers/import-peer.ts). The router serves the
 * MCP door too, so the MCP SDK is checked here as well: one line names whatever of the two is missing.
 */
import { importPeer, requirePeers } from './import-peer.js'

const ENTRY = 'a2a-converse/express'
requirePeers(ENTRY, ['express', '@modelcontextprotocol/server'])
const express = await importPeer<typeof import('express')>('express', ENTRY)
export const Router = express.Router
