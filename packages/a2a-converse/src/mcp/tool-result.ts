/**
 * What an MCP tool call answers, from the A2A service's SendMessage reply: the reply text as `content`, and as
 * `structuredContent` the converse envelope the reply carries under `metadata[URI]` with the ids a caller needs to
 * continue (`contextId`, `taskId`, `state`) beside it. One output schema for `ask_agent` and the routine tools,
 * built from the envelope's own schema so the two cannot drift.
 */
import type { CallToolResult } from '@modelcontextprotocol/server'
import type { ConverseEnvelope } from '../core/envelope.js'
import { envelopeSchema, validateEnvelope } from '../core/envelope-schema.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import type { JsonRpcError, JsonRpcResponse } from '../protocol/errors.js'

/** The envelope's members plus the ids; what `structuredContent` holds (flat: a client reads `answerCoverage` at the top). */
export interface ToolOutput extends ConverseEnvelope {
  /** The conversation: send it (or taskId) with the next ask_agent call, or as the A2A message's contextId. */
  contextId?: string
  /** Present when the agent answered with a task (absent for a plain Message reply). */
  taskId?: string
  /** The task's A2A state (`TASK_STATE_INPUT_REQUIRED`, …), present with taskId. */
  state?: string
}

const { $id: _id, ...envelopeShape } = envelopeSchema

/**
 * The output schema of every tool of the door: the envelope schema's members (the same objects) and the ids.
 * JSON Schema draft-07 like the envelope's; the MCP client validates `structuredContent` against it.
 */
export const TOOL_OUTPUT_SCHEMA = Object.freeze({
  ...envelopeShape,
  properties: {
    ...envelopeShape.properties,
    contextId: { type: 'string', minLength: 1 },
    taskId: { type: 'string', minLength: 1 },
    state: { type: 'string', pattern: '^TASK_STATE_[A-Z_]+$' }
  },
  dependencies: { taskId: ['state'], state: ['taskId'] }
})

/** A reply that carried no envelope at all (a task without a status message or artifact): no verdict was recorded. */
const NO_ENVELOPE: ConverseEnvelope = Object.freeze({ answerCoverage: Object.freeze({ availability: 'not_recorded' as const }) })

interface WirePart { text?: unknown, data?: unknown }
interface WireCarrier { parts?: WirePart[], metadata?: Record<string, unknown> | null, contextId?: unknown }
interface WireTask {
  id?: unknown
  contextId?: unknown
  status?: { state?: unknown, message?: WireCarrier | null }
  artifacts?: WireCarrier[]
}

/**
 * The tool result of one SendMessage reply. A JSON-RPC error is a tool error (`isError: true`) whose text names the
 * A2A code and message, and for bad params each field and what is wrong with it: the caller's model can read it, the
 * MCP session goes on.
 */
export function toolResultOf (response: JsonRpcResponse, failed: (envelope: ConverseEnvelope) => boolean = () => false): CallToolResult {
  if ('error' in response) {
    const fields = violationsOf(response.error.data)
    const text = `A2A error ${response.error.code}: ${response.error.message}${fields === '' ? '' : ` (${fields})`}`
    return { isError: true, content: [{ type: 'text', text }] }
  }
  const result = response.result as { message?: WireCarrier, task?: WireTask }
  let carrier: WireCarrier | undefined
  const output: ToolOutput = { ...NO_ENVELOPE }
  if (result.task !== undefined) {
    const task = result.task
    // The status message is the turn's answer; a task that only produced an artifact answers with its last one.
    carrier = task.status?.message ?? task.artifacts?.at(-1) ?? undefined
    Object.assign(output, envelopeOf(carrier))
    output.contextId = stringOr(task.contextId)
    output.taskId = stringOr(task.id)
    output.state = stringOr(task.status?.state)
  } else {
    carrier = result.message
    Object.assign(output, envelopeOf(carrier))
    output.contextId = stringOr(carrier?.contextId)
  }
  for (const key of ['contextId', 'taskId', 'state'] as const) if (output[key] === undefined) delete output[key]
  return { isError: failed(output), content: contentOf(carrier), structuredContent: { ...output } }
}

function envelopeOf (carrier: WireCarrier | undefined): ConverseEnvelope {
  const envelope = carrier?.metadata?.[CONVERSE_EXTENSION_URI]
  // The service decorated the reply (the request activated the extension), so an envelope present is valid;
  // the check only keeps a foreign backend's malformed one out of a result the client validates.
  return validateEnvelope(envelope) ? envelope : NO_ENVELOPE
}

/** The reply's text parts; data parts (a booking confirmation, say) as JSON text after them. */
function contentOf (carrier: WireCarrier | undefined): CallToolResult['content'] {
  const parts = carrier?.parts ?? []
  const texts = parts.filter((part) => typeof part.text === 'string').map((part) => ({ type: 'text' as const, text: part.text as string }))
  const data = parts.filter((part) => part.data !== undefined).map((part) => ({ type: 'text' as const, text: JSON.stringify(part.data) }))
  return [...texts, ...data]
}

function stringOr (value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** `field: description; …` of the google.rpc.BadRequest details of an error, or '' when it has none. */
function violationsOf (data: JsonRpcError['data'] = []): string {
  return data.flatMap((detail) => 'fieldViolations' in detail ? detail.fieldViolations : [])
    .map((violation) => `${violation.field}: ${violation.description}`).join('; ')
}
