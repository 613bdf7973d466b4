/** The converse extension v1: its URI is its identity, the activation token and the metadata key. */
export const CONVERSE_EXTENSION_URI = 'https://docs.radioso.ai/reference/a2a-converse-extension/v1'

/** The description the spec gives for the card's extension entry. */
export const CONVERSE_EXTENSION_DESCRIPTION =
  "Radioso conversation extension. params.mcp names this agent's MCP endpoint and server card; " +
  'params.tools lists each exposed routine with the JSON Schema of its input.'

/** A2A 1.0 service parameter (HTTP header) carrying requested / activated extension URIs. */
export const EXTENSIONS_HEADER = 'A2A-Extensions'
