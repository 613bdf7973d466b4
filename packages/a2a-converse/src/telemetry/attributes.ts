/**
 * The span attribute keys of a2a-converse, named once here (docs/observability.md has the table). RPC keys follow
 * the OpenTelemetry semantic conventions for RPC; the rest are this gateway's own (`a2a.*`, `converse.*`).
 * Attributes carry ids, states and the envelope's verdicts, never message text, a credential or a header value.
 * This folder imports nothing of src/ (every layer may import it): the envelope is read by its wire shape.
 */

export const ATTR = {
  rpcSystem: 'rpc.system',
  rpcService: 'rpc.service',
  rpcMethod: 'rpc.method',
  rpcJsonRpcVersion: 'rpc.jsonrpc.version',
  rpcJsonRpcErrorCode: 'rpc.jsonrpc.error_code',
  rpcGrpcStatusCode: 'rpc.grpc.status_code',
  rpcJsonRpcErrorMessage: 'rpc.jsonrpc.error_message',
  httpStatusCode: 'http.response.status_code',
  httpMethod: 'http.request.method',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  urlFull: 'url.full',
  agentId: 'a2a.agent.id',
  binding: 'a2a.binding',
  taskId: 'a2a.task.id',
  contextId: 'a2a.context.id',
  taskState: 'a2a.task.state',
  author: 'converse.author',
  availability: 'converse.answer.availability',
  coverage: 'converse.answer.coverage',
  reason: 'converse.answer.reason',
  ownershipState: 'converse.ownership.state',
  suppressed: 'converse.ownership.suppressed',
  routineName: 'converse.routine.name',
  routineStatus: 'converse.routine.status',
  invocationTool: 'converse.invocation.tool_name',
  invocationOutcome: 'converse.invocation.outcome',
  citationCount: 'converse.citation.count',
  storeOperation: 'converse.store.operation'
} as const

/** The service name on RPC spans: the A2A 1.0 proto service. */
export const A2A_RPC_SERVICE = 'lf.a2a.v1.A2AService'

export type Attributes = Record<string, string | number | boolean>

/** `server.address` and `server.port` of an outgoing request's URL (never its path, query or user info). */
export function serverAttributes (url: string | URL): Attributes {
  const { hostname, port, protocol } = new URL(url)
  const defaultPort = protocol === 'https:' ? 443 : 80
  return { [ATTR.serverAddress]: hostname.replace(/^\[|\]$/g, ''), [ATTR.serverPort]: port === '' ? defaultPort : Number(port) }
}

/** The members of a converse envelope (packages/a2a-converse/src/core/envelope.ts) read here. */
export interface EnvelopeFacts {
  author?: string
  answerCoverage?: { availability?: string, coverage?: string, reason?: string }
  ownership?: { state?: string, suppressed?: boolean }
  routine?: { name?: string, status?: string }
  invocation?: { toolName?: string, outcome?: string }
  citations?: unknown[]
}

/** What a turn's result says, for spans and metrics: its ids, its task's state and its agent reply's envelope. */
export interface AnswerSummary {
  taskId?: string
  contextId?: string
  taskState?: string
  envelope?: EnvelopeFacts
}

interface WireObject {
  id?: unknown
  taskId?: unknown
  contextId?: unknown
  metadata?: Record<string, unknown> | null
  status?: { state?: unknown, message?: WireObject }
}

function envelopeOf (object: WireObject | undefined, key: string): EnvelopeFacts | undefined {
  const envelope = object?.metadata?.[key]
  return envelope !== null && typeof envelope === 'object' ? envelope as EnvelopeFacts : undefined
}

function text (value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/**
 * The summary of a SendMessageResponse or StreamResponse (a message, a task, a status update; an artifact update
 * has no state and no reply): the reply's envelope (under `metadata[envelopeKey]`, the extension's URI) where the
 * result carries one (the caller activated the extension).
 */
export function summarizeResult (result: unknown, envelopeKey: string): AnswerSummary | undefined {
  if (result === null || typeof result !== 'object') return undefined
  const wrapper = result as { message?: WireObject, task?: WireObject, statusUpdate?: WireObject }
  if (wrapper.message !== undefined) {
    const message = wrapper.message
    return defined({ taskId: text(message.taskId), contextId: text(message.contextId), envelope: envelopeOf(message, envelopeKey) })
  }
  const task = wrapper.task ?? wrapper.statusUpdate
  if (task === undefined) return undefined
  return defined({
    taskId: text(task.id) ?? text(task.taskId),
    contextId: text(task.contextId),
    taskState: text(task.status?.state),
    envelope: envelopeOf(task.status?.message, envelopeKey)
  })
}

/** The summary without its undefined members (so a later event's summary spreads over an earlier one's). */
function defined (summary: AnswerSummary): AnswerSummary {
  const kept: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(summary)) if (value !== undefined) kept[key] = value
  return kept as AnswerSummary
}

/** The summary's span attributes (members it does not have are left out). */
export function answerAttributes (summary: AnswerSummary): Attributes {
  const attributes: Attributes = {}
  const put = (key: string, value: string | number | boolean | undefined): void => {
    if (value !== undefined) attributes[key] = value
  }
  put(ATTR.taskId, summary.taskId)
  put(ATTR.contextId, summary.contextId)
  put(ATTR.taskState, summary.taskState)
  const envelope = summary.envelope
  if (envelope === undefined) return attributes
  put(ATTR.author, envelope.author)
  put(ATTR.availability, envelope.answerCoverage?.availability)
  put(ATTR.coverage, envelope.answerCoverage?.coverage)
  put(ATTR.reason, envelope.answerCoverage?.reason)
  put(ATTR.ownershipState, envelope.ownership?.state)
  put(ATTR.suppressed, envelope.ownership?.suppressed)
  put(ATTR.routineName, envelope.routine?.name)
  put(ATTR.routineStatus, envelope.routine?.status)
  // An unknown tool's name is the caller's text: left out.
  if (envelope.invocation?.outcome !== 'unknown_tool') put(ATTR.invocationTool, envelope.invocation?.toolName)
  put(ATTR.invocationOutcome, envelope.invocation?.outcome)
  put(ATTR.citationCount, Array.isArray(envelope.citations) ? envelope.citations.length : undefined)
  return attributes
}
