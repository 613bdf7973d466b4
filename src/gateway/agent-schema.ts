/**
 * The JSON schema of one agent definition (the agents file's and the operator API's), compiled once. Apart from
 * agent-definitions.ts, which reads the file and checks what a schema cannot say (upstream identity, card keys,
 * inline documents' ids, the routines).
 */
import { Ajv } from 'ajv'
import { UPSTREAM_ERROR_DETAILS } from 'a2a-converse/service'

const positiveMs = { type: 'integer', minimum: 1, maximum: 3_600_000 } as const

const agentSchema = {
  type: 'object',
  required: ['id'],
  if: { required: ['upstream'] },
  else: { required: ['name', 'description'] },
  properties: {
    upstream: {
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: {
        url: { type: 'string', pattern: '^https?://[^/]' },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        timeoutMs: positiveMs,
        connectTimeoutMs: positiveMs,
        streamIdleTimeoutMs: positiveMs,
        cardTtlMs: positiveMs,
        maxResponseBytes: { type: 'integer', minimum: 1024, maximum: 268_435_456 },
        errorDetails: { enum: UPSTREAM_ERROR_DETAILS },
        // Exactly one of them (checked below): an inline JWKS, where to read one, or the host the card's jku must be on.
        cardKeys: {
          type: 'object',
          additionalProperties: false,
          properties: {
            jwks: { type: 'object', required: ['keys'], properties: { keys: { type: 'array', minItems: 1, items: { type: 'object', required: ['kid'] } } } },
            jwksUrl: { type: 'string', pattern: '^https?://[^/]' },
            // A URL's host: a name or an IPv4/[IPv6] address, and a port off the default.
            jkuHost: { type: 'string', pattern: '^(?:[A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?$', maxLength: 260 }
          }
        },
        identity: {
          type: 'object',
          required: ['mode'],
          additionalProperties: false,
          properties: {
            mode: { enum: ['none', 'assertion', 'passthrough', 'exchange'] },
            // An HTTP field name (RFC 9110 token).
            header: { type: 'string', pattern: '^[A-Za-z0-9!#$%&\'*+.^_`|~-]{1,64}$' },
            audience: { type: 'string', minLength: 1, maxLength: 1024 },
            lifetimeSec: { type: 'integer', minimum: 60, maximum: 300 },
            // exchange only (checked below).
            tokenEndpoint: { type: 'string', pattern: '^https?://[^/]' },
            clientId: { type: 'string', minLength: 1, maxLength: 256 },
            clientSecretEnv: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' },
            resource: { type: 'string', minLength: 1, maxLength: 1024 },
            scope: { type: 'string', minLength: 1, maxLength: 1024 },
            subjectTokenType: { enum: ['access_token', 'jwt'] }
          }
        }
      }
    },
    envelopeProvider: {
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: { url: { type: 'string', pattern: '^https?://[^/]' }, timeoutMs: { type: 'integer', minimum: 1, maximum: 60_000 } }
    },
    id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,128}$' },
    name: { type: 'string', minLength: 1 },
    description: { type: 'string', minLength: 1 },
    version: { type: 'string', minLength: 1 },
    executor: { type: 'string', minLength: 1 },
    // A folder (a string), or the documents inline (each as a knowledge base takes it: docs/knowledge.md).
    documents: {
      if: { type: 'string' },
      then: { type: 'string', minLength: 1 },
      else: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'title', 'body'],
          additionalProperties: false,
          properties: {
            id: { type: 'string', pattern: '^[^\\s#]{1,128}$' },
            title: { type: 'string', pattern: '\\S', maxLength: 1000 },
            body: { type: 'string' },
            sourceUrl: { type: 'string', pattern: '^https?://\\S+$', maxLength: 2048 }
          }
        }
      }
    },
    outOfScope: {
      type: 'array',
      items: {
        anyOf: [
          { type: 'string', minLength: 1 },
          {
            type: 'object',
            required: ['topic'],
            properties: { topic: { type: 'string', minLength: 1 }, keywords: { type: 'array', items: { type: 'string', minLength: 1 } } }
          }
        ]
      }
    },
    routines: { type: 'array' },
    auth: { type: 'string', enum: ['walk-in', 'required'] },
    wellKnownCard: { enum: ['v1', 'compat'] }
  }
} as const

export const validateAgent = new Ajv({ allErrors: false }).compile(agentSchema)
