import type { Context } from '../telemetry/tracing.js'
import type { ConverseEnvelope } from './envelope.js'
import type { EnvelopeProvider } from './envelope-provider.js'
import { providedEnvelope } from './provided-envelope.js'
import { CONVERSE_EXTENSION_URI } from './uri.js'
import {
  ROLE_USER, type EnvelopeTarget, type Metadata, type TargetKind, type WireArtifact, type WireMessage, type WireTask
} from './wire.js'

/** pino-compatible; the core logs only through what it is given. */
export interface EnvelopeLogger {
  warn (object: object, message: string): void
}

/** Per-request facts the decorator passes on to the provider. */
export interface TurnContext {
  agentId: string
  activated: readonly string[]
  requestMessage?: WireMessage
  requestId?: string | number | null
  log?: EnvelopeLogger
  traceContext?: Context
}

export interface DecoratorOptions {
  provider: EnvelopeProvider
  /** How long an async provider may take per object before the envelope degrades to `failed`. */
  timeoutMs: number
}

/** How each JSON-RPC method's `result` holds agent objects. Methods not listed carry none. */
const RESULT_SHAPES: Readonly<Record<string, 'wrapped' | 'task' | 'taskList'>> = {
  SendMessage: 'wrapped',
  SendStreamingMessage: 'wrapped',
  SubscribeToTask: 'wrapped',
  GetTask: 'task',
  CancelTask: 'task',
  ListTasks: 'taskList'
}

/** Whether a method's result can hold envelopes at all (cheap check for callers). */
export function carriesEnvelopes (method: unknown): boolean {
  return typeof method === 'string' && Object.hasOwn(RESULT_SHAPES, method)
}

interface Ids { contextId?: string, taskId?: string }
/** Returns the object to put in place of `object` (the same one when nothing changes). */
type Visit = <T extends EnvelopeTarget>(object: T, kind: TargetKind, ids: Ids, agentAuthored: boolean) => T

/** Walks every Message / status.message / Artifact in a method's result, copying only what `visit` changes. */
function walkResult (method: string, result: unknown, visit: Visit): unknown {
  if (result === null || typeof result !== 'object') return result
  switch (RESULT_SHAPES[method]) {
    case 'wrapped': return walkWrapped(result as Record<string, unknown>, visit)
    case 'task': return walkTask(result as WireTask, visit)
    case 'taskList': {
      const list = result as { tasks?: WireTask[] }
      if (!Array.isArray(list.tasks)) return result
      const tasks = mapSame(list.tasks, (task) => walkTask(task, visit))
      return tasks === list.tasks ? result : { ...list, tasks }
    }
    default: return result
  }
}

/** A SendMessageResponse or StreamResponse: exactly one of message / task / statusUpdate / artifactUpdate. */
function walkWrapped (wrapper: Record<string, unknown>, visit: Visit): unknown {
  if (wrapper.message !== undefined) {
    const message = wrapper.message as WireMessage
    const next = visit(message, 'message', message, message.role !== ROLE_USER)
    return next === message ? wrapper : { ...wrapper, message: next }
  }
  if (wrapper.task !== undefined) {
    const task = wrapper.task as WireTask
    const next = walkTask(task, visit)
    return next === task ? wrapper : { ...wrapper, task: next }
  }
  if (wrapper.statusUpdate !== undefined) {
    const event = wrapper.statusUpdate as { taskId: string, contextId: string, status?: WireTask['status'] }
    const message = event.status?.message
    if (message === undefined) return wrapper
    const next = visit(message, 'status', event, message.role !== ROLE_USER)
    return next === message ? wrapper : { ...wrapper, statusUpdate: { ...event, status: { ...event.status, message: next } } }
  }
  if (wrapper.artifactUpdate !== undefined) {
    const event = wrapper.artifactUpdate as { taskId: string, contextId: string, artifact?: WireArtifact }
    if (event.artifact === undefined) return wrapper
    const next = visit(event.artifact, 'artifact', event, true)
    return next === event.artifact ? wrapper : { ...wrapper, artifactUpdate: { ...event, artifact: next } }
  }
  return wrapper
}

function walkTask (task: WireTask, visit: Visit): WireTask {
  if (task === null || typeof task !== 'object') return task
  const ids: Ids = { contextId: task.contextId, taskId: task.id }
  let result = task
  const statusMessage = task.status?.message
  if (statusMessage !== undefined) {
    const next = visit(statusMessage, 'status', ids, statusMessage.role !== ROLE_USER)
    if (next !== statusMessage) result = { ...result, status: { ...task.status, message: next } }
  }
  if (Array.isArray(task.artifacts)) {
    const artifacts = mapSame(task.artifacts, (artifact) => visit(artifact, 'artifact', ids, true))
    if (artifacts !== task.artifacts) result = { ...result, artifacts }
  }
  if (Array.isArray(task.history)) {
    const history = mapSame(task.history, (message) => visit(message, 'message', ids, message.role !== ROLE_USER))
    if (history !== task.history) result = { ...result, history }
  }
  return result
}

/** Array map that returns the input array itself when no element changed. */
function mapSame<T> (items: T[], fn: (item: T) => T): T[] {
  let out: T[] | undefined
  for (let i = 0; i < items.length; i++) {
    const next = fn(items[i])
    if (next !== items[i]) {
      out ??= items.slice(0, i)
    }
    if (out !== undefined) out.push(next)
  }
  return out ?? items
}

/** The object with `metadata[URI]` = envelope and the URI listed exactly once in `extensions`. */
export function attachEnvelope<T extends EnvelopeTarget> (object: T, envelope: ConverseEnvelope): T {
  const extensions = object.extensions == null
    ? [CONVERSE_EXTENSION_URI]
    : [...object.extensions.filter((uri) => uri !== CONVERSE_EXTENSION_URI), CONVERSE_EXTENSION_URI]
  const metadata: Metadata = object.metadata == null ? {} : shallowCopy(object.metadata)
  metadata[CONVERSE_EXTENSION_URI] = envelope
  const copy = shallowCopy(object)
  copy.metadata = metadata
  copy.extensions = extensions
  return copy
}

/**
 * `{ ...object }`, built so that members can be added to it cheaply. On Node 20, adding a member the source
 * does not have to a spread copy (`{ ...object, metadata }`) costs about a microsecond per member, which this
 * hot path (every decorated object) cannot afford; a copy made by Object.assign takes new members at normal
 * speed. Object.assign would call the `__proto__` setter for an own "__proto__" member (JSON can carry one),
 * so such an object is spread instead.
 */
function shallowCopy<T extends object> (object: T): T {
  return Object.hasOwn(object, '__proto__') ? { ...object } : Object.assign({}, object)
}

/** The object without `metadata[URI]` and without the URI in `extensions`; the same object if it had neither. */
export function stripEnvelope<T extends EnvelopeTarget> (object: T): T {
  if (object === null || typeof object !== 'object') return object
  const hasMetadata = object.metadata !== undefined && object.metadata !== null &&
    Object.hasOwn(object.metadata, CONVERSE_EXTENSION_URI)
  const hasExtension = Array.isArray(object.extensions) && object.extensions.includes(CONVERSE_EXTENSION_URI)
  if (!hasMetadata && !hasExtension) return object
  const copy = { ...object }
  if (hasMetadata) {
    const { [CONVERSE_EXTENSION_URI]: _removed, ...rest } = object.metadata as Record<string, unknown>
    if (Object.keys(rest).length === 0) delete copy.metadata
    else copy.metadata = rest
  }
  if (hasExtension) {
    const rest = (object.extensions as string[]).filter((uri) => uri !== CONVERSE_EXTENSION_URI)
    if (rest.length === 0) delete copy.extensions
    else copy.extensions = rest
  }
  return copy
}

/** Removes every trace of the extension from a method's result (requests that did not activate it). */
export function stripResult (method: string, result: unknown): unknown {
  return walkResult(method, result, (object) => stripEnvelope(object))
}

/** Builds the per-process decorator: provider, timeout, validation — all fixed at registration. */
export function createEnvelopeDecorator (options: DecoratorOptions) {
  const { provider, timeoutMs } = options

  /**
   * Attaches an envelope to every agent-authored object of the result; user messages are left as they are.
   * Answers synchronously when every envelope is known at once (a sync provider), with a promise otherwise.
   * Never throws nor rejects: provider failures degrade the envelope, they do not fail the reply.
   */
  function decorate (method: string, result: unknown, turn: TurnContext): unknown {
    const envelopes: Array<ConverseEnvelope | Promise<ConverseEnvelope>> = []
    let async = false
    // One walk asks for the envelopes and, while they all come synchronously, attaches them on the way.
    const decorated = walkResult(method, result, (object, kind, ids, agentAuthored) => {
      if (!agentAuthored) return object
      const envelope = providedEnvelope(provider, timeoutMs, {
        agentId: turn.agentId,
        contextId: ids.contextId,
        taskId: ids.taskId,
        requestMessage: turn.requestMessage,
        requestId: turn.requestId,
        object,
        kind,
        activated: turn.activated,
        traceContext: turn.traceContext
      }, turn.log)
      envelopes.push(envelope)
      if (envelope instanceof Promise) async = true
      return async ? object : attachEnvelope(object, envelope as ConverseEnvelope)
    })
    if (!async) return decorated
    // Some envelope is pending: wait for all, then attach them in the same walk order to the original result.
    return Promise.all(envelopes).then((settled) => {
      let index = 0
      return walkResult(method, result, (object, _kind, _ids, agentAuthored) =>
        agentAuthored ? attachEnvelope(object, settled[index++]) : object)
    })
  }

  /** `decorate`, always as a promise. */
  async function decorateResult (method: string, result: unknown, turn: TurnContext): Promise<unknown> {
    return decorate(method, result, turn)
  }

  return { decorate, decorateResult, stripResult }
}

export type EnvelopeDecorator = ReturnType<typeof createEnvelopeDecorator>
