/**
 * A routine waiting for the user, as the 2026-07-28 revision's multi-round-trip machinery (`input_required`):
 * a tool call whose A2A task stops in TASK_STATE_INPUT_REQUIRED (a slot to fill, an approval to give) answers with
 * an `input_required` result instead of a tool result that says "waiting". Its one input request is a form
 * elicitation — the agent's question, one required text field `reply` — and its `requestState` names the task.
 * The client asks its user and sends the same call again with the answer (`inputResponses.reply`) and the state
 * echoed; the door sends the answer to the task as the next A2A message, and so on until the task is done.
 *
 * Only for a client that declares the elicitation capability on the request (the spec forbids asking others);
 * otherwise, and on older revisions (no `input_required` there; a stateless request cannot carry a server→client
 * elicitation either), the tool result with `state: TASK_STATE_INPUT_REQUIRED` stays, and the caller continues
 * with `ask_agent` and the taskId.
 *
 * The requestState is `{"contextId","taskId"}` as JSON, unsigned: it lets a client do nothing it could not do with
 * ask_agent's own `taskId` argument, and the A2A service checks that the caller owns the task either way. Its shape
 * is checked (strings, bounded); anything else is the SDK's `-32602` "Invalid or expired requestState".
 */
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server'
import { CLIENT_CAPABILITIES_META_KEY, inputRequired, inputResponse } from '../peers/mcp.js'
import type { ToolOutput } from './tool-result.js'

/** The key of the one input request, and the field of its form. */
export const REPLY = 'reply'

/** The form the client shows its user: one required line of text. */
const REPLY_SCHEMA = Object.freeze({
  type: 'object' as const,
  properties: { [REPLY]: { type: 'string' as const, title: 'Your reply', minLength: 1 } },
  required: [REPLY]
})

/** What the agent is asked when its question has no text (a task waiting without a status message). */
const DEFAULT_QUESTION = 'The agent is waiting for your input.'

/** A2A ids are at most this long in this gateway's stores; more in a requestState is not one of ours. */
const ID_LIMIT = 256

export interface TaskIds { contextId: string, taskId: string }

/** A later round: the task to continue and the user's answer (absent: declined, cancelled, or no answer). */
export interface Continuation {
  ids: TaskIds
  reply?: string
}

/**
 * The Server's `requestState.verify` hook: the task ids of a requestState the door issued; throws otherwise (the SDK
 * then answers `-32602`). Its value is what `requestState()` gives the handler.
 */
export function verifyRequestState (state: string): TaskIds {
  const ids = state.length <= 2 * ID_LIMIT + 32 ? parsed(state) : undefined
  if (ids === undefined) throw new Error('not a requestState of this door')
  return ids
}

function parsed (state: string): TaskIds | undefined {
  let value: unknown
  try {
    value = JSON.parse(state)
  } catch {
    return undefined
  }
  const { contextId, taskId } = (value ?? {}) as Record<string, unknown>
  const valid = (id: unknown): id is string => typeof id === 'string' && id !== '' && id.length <= ID_LIMIT
  return valid(contextId) && valid(taskId) ? { contextId, taskId } : undefined
}

/** The round this request is: a continuation when it echoes a requestState, else undefined (a first call). */
export function continuationOf (context: ServerContext): Continuation | undefined {
  const ids = context.mcpReq.requestState<TaskIds>()
  if (ids === undefined) return undefined
  const answer = inputResponse(context.mcpReq.inputResponses, REPLY)
  const reply = answer.kind === 'elicit' && answer.action === 'accept' ? answer.content?.[REPLY] : undefined
  return typeof reply === 'string' && reply.trim() !== '' ? { ids, reply } : { ids }
}

/** The `input_required` result for a tool result whose task waits for input, when the client can be asked; else undefined. */
export function askForInput (result: CallToolResult, context: ServerContext): CallToolResult | undefined {
  const output = result.structuredContent as ToolOutput | undefined
  if (result.isError === true || output?.state !== 'TASK_STATE_INPUT_REQUIRED') return undefined
  // Asked on 2026-07-28 only, whose requests all carry the envelope with the client's capabilities (the SDK
  // refuses them otherwise).
  const envelope = context.mcpReq.envelope as Record<string, { elicitation?: { form?: unknown } }>
  const { elicitation } = envelope[CLIENT_CAPABILITIES_META_KEY]
  // An empty elicitation capability means form mode (the spec's rule for clients of before modes).
  if (elicitation === undefined || (Object.keys(elicitation).length > 0 && elicitation.form === undefined)) return undefined
  // The door's tool results are text parts only (packages/a2a-converse/src/mcp/tool-result.ts): the reply's text, then its data as JSON.
  const question = result.content.map((part) => (part as { text: string }).text).join('\n').trim()
  return inputRequired({
    inputRequests: { [REPLY]: inputRequired.elicit({ message: question === '' ? DEFAULT_QUESTION : question, requestedSchema: REPLY_SCHEMA }) },
    requestState: JSON.stringify({ contextId: output.contextId, taskId: output.taskId })
  }) as unknown as CallToolResult
}
