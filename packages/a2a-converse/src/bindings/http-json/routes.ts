/**
 * The HTTP+JSON routes (A2A 1.0 §11.3, the proto's `google.api.http` rules): an HTTP method and a path under the
 * agent's HTTP+JSON URL → the A2A method and its ProtoJSON params, built from the path, the query (§11.5: the
 * camelCase field names; numbers and booleans as decimal and lowercase strings) and the body. Every route may be
 * prefixed with a `{tenant}` segment, which becomes the params' `tenant`.
 *
 * Values that are not what the field wants (`historyLength=abc`, a repeated parameter) are passed on as they came,
 * so the params check answers them -32602 with the field's name, exactly as for JSON-RPC.
 */
import type { A2AMethod } from '../../protocol/methods.js'

/** Where a path and method lead: an A2A call, or no route (404) or no such method on the route (405, `allow`). */
export type RouteMatch =
  | { kind: 'call', method: A2AMethod, params: (input: RouteInput) => unknown, status?: number }
  | { kind: 'not_found' }
  | { kind: 'method_not_allowed', allow: string }

/** What the params are built from: the query parameters and the body (undefined: none). */
export interface RouteInput {
  query: Readonly<Record<string, unknown>>
  body: unknown
}

/** The query parameters each GET route reads (§11.5): their field types decide the conversion. */
const INTEGERS = new Set(['historyLength', 'pageSize'])
const BOOLEANS = new Set(['includeArtifacts'])
const LIST_TASKS_QUERY = ['contextId', 'status', 'pageSize', 'pageToken', 'historyLength', 'statusTimestampAfter', 'includeArtifacts']

/** Top-level segments of the routes: anything else in first place is a tenant. */
const ROOTS = new Set(['message:send', 'message:stream', 'tasks', 'extendedAgentCard'])

/**
 * The route of `httpMethod` on `path` (the part after the agent's HTTP+JSON URL, `/tasks/t-1:cancel`): path
 * segments percent-decoded (undefined: a segment cannot be decoded, answered 400 by the binding).
 */
export function matchRoute (httpMethod: string, path: string): RouteMatch | undefined {
  const segments = path.split('/').filter((segment) => segment !== '')
  // Routes are matched on the segments as sent (`:cancel` is a literal colon, `%3A` part of an id); values decoded.
  for (const segment of segments) {
    try {
      decodeURIComponent(segment)
    } catch {
      return undefined
    }
  }
  let tenant: string | undefined
  if (segments.length > 1 && !ROOTS.has(segments[0])) tenant = decodeURIComponent(segments.shift() as string)
  const match = routeOf(httpMethod.toUpperCase(), segments)
  if (tenant === undefined || match.kind !== 'call') return match
  const params = match.params
  return { ...match, params: (input) => withTenant(params(input), tenant) }
}

/** The route of segments as sent (each one known to decode). */
function routeOf (verb: string, segments: readonly string[]): RouteMatch {
  const [first, raw, third, rawFourth] = segments
  const second = raw === undefined ? '' : decodeURIComponent(raw)
  const fourth = rawFourth === undefined ? '' : decodeURIComponent(rawFourth)
  switch (segments.length) {
    case 1:
      if (first === 'message:send') return only(verb, 'POST', { kind: 'call', method: 'SendMessage', params: bodyParams })
      if (first === 'message:stream') return only(verb, 'POST', { kind: 'call', method: 'SendStreamingMessage', params: bodyParams })
      if (first === 'tasks') return only(verb, 'GET', { kind: 'call', method: 'ListTasks', params: ({ query }) => pick(query, LIST_TASKS_QUERY) })
      if (first === 'extendedAgentCard') return only(verb, 'GET', { kind: 'call', method: 'GetExtendedAgentCard', params: () => ({}) })
      return { kind: 'not_found' }
    case 2: {
      if (first !== 'tasks') return { kind: 'not_found' }
      const action = /^(.+):(cancel|subscribe)$/s.exec(raw)
      if (action === null) {
        return only(verb, 'GET', { kind: 'call', method: 'GetTask', params: ({ query }) => ({ ...pick(query, ['historyLength']), id: second }) })
      }
      const id = decodeURIComponent(action[1])
      if (action[2] === 'cancel') return only(verb, 'POST', { kind: 'call', method: 'CancelTask', params: ({ body }) => withMember(body, 'id', id) })
      // §11.3.2 says POST, the proto's http rule GET: both are served (the SDK does the same).
      if (verb === 'GET' || verb === 'POST') return { kind: 'call', method: 'SubscribeToTask', params: () => ({ id }) }
      return { kind: 'method_not_allowed', allow: 'GET, POST' }
    }
    case 3:
      if (first !== 'tasks' || third !== 'pushNotificationConfigs') return { kind: 'not_found' }
      if (verb === 'POST') return { kind: 'call', method: 'CreateTaskPushNotificationConfig', params: ({ body }) => withMember(body, 'taskId', second), status: 201 }
      if (verb === 'GET') {
        return { kind: 'call', method: 'ListTaskPushNotificationConfigs', params: ({ query }) => ({ ...pick(query, ['pageSize', 'pageToken']), taskId: second }) }
      }
      return { kind: 'method_not_allowed', allow: 'GET, POST' }
    case 4:
      if (first !== 'tasks' || third !== 'pushNotificationConfigs') return { kind: 'not_found' }
      if (verb === 'GET') return { kind: 'call', method: 'GetTaskPushNotificationConfig', params: () => ({ taskId: second, id: fourth }) }
      if (verb === 'DELETE') return { kind: 'call', method: 'DeleteTaskPushNotificationConfig', params: () => ({ taskId: second, id: fourth }), status: 204 }
      return { kind: 'method_not_allowed', allow: 'DELETE, GET' }
    default:
      return { kind: 'not_found' }
  }
}

function only (verb: string, allowed: string, match: RouteMatch): RouteMatch {
  return verb === allowed ? match : { kind: 'method_not_allowed', allow: allowed }
}

/** The body is the request message (SendMessageRequest); none is none (the params check says what is missing). */
function bodyParams ({ body }: RouteInput): unknown {
  return body
}

/** The body's members with the path's field: the path wins (the body may repeat it). Not an object: as it came. */
function withMember (body: unknown, name: string, value: string): unknown {
  if (body === undefined) return { [name]: value }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body
  return { ...body, [name]: value }
}

function withTenant (params: unknown, tenant: string): unknown {
  if (params === undefined) return { tenant }
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return params
  return { ...params, tenant }
}

/** The named query parameters present, numbers and booleans converted where they read as such (§11.5). */
function pick (query: Readonly<Record<string, unknown>>, names: readonly string[]): Record<string, unknown> {
  const params: Record<string, unknown> = {}
  for (const name of names) {
    if (!Object.hasOwn(query, name)) continue
    const value = query[name]
    if (typeof value !== 'string') params[name] = value
    else if (INTEGERS.has(name) && /^-?\d{1,10}$/.test(value)) params[name] = Number(value)
    else if (BOOLEANS.has(name) && (value === 'true' || value === 'false')) params[name] = value === 'true'
    else params[name] = value
  }
  return params
}
