/**
 * The operator API's agent routes (docs/agents.md): list, read, publish, replace, open or close to walk-ins, add or
 * remove a knowledge document, unpublish, and an agent's audit. Registered by operator-api.ts inside its scope (its
 * key check, its rate limit, its error handler). Published agents live in the state store; AGENTS_FILE's agents are
 * listed and read here, never changed (read-only).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { parse as parseYaml } from 'yaml'
import { AgentExistsError, AgentLimitError, AgentVersionConflictError } from 'a2a-converse/runtime'
import type { AgentDocument, AgentStore, StoredAgent } from 'a2a-converse/runtime'
import { checkAgentDefinition, type AgentDefinition } from '../src/gateway/agent-definitions.js'

export interface AgentAdminOptions {
  store: AgentStore
  /** AGENTS_FILE's agents (or the demo): listed and read, never changed. */
  fileAgents: readonly AgentDefinition[]
  /** What this instance serves now: an agent's id → its store version ('file' for AGENTS_FILE's). */
  served: ReadonlyMap<string, number | 'file'>
  /** The executors an agent may name. */
  executors: readonly string[]
  /** Whether callers can authenticate (A2A_API_KEYS or A2A_JWT_*): an agent may require a credential only then. */
  authenticates: boolean
  /** A2A_AUTH: an agent's access when it names none. */
  defaultAuth: 'walk-in' | 'required'
  /** MAX_AGENT_BYTES: a definition's JSON at most. */
  maxAgentBytes: number
  /** MAX_AGENT_DOCUMENTS: inline documents per agent at most. */
  maxAgentDocuments: number
  /**
   * Told of every change written, before the reply: switches it onto this instance's doors and tells the others
   * (src/gateway/live-agents.ts). Never rejects. Without it a change is served from the next start.
   */
  changed?: (agentId: string) => Promise<void>
}

interface AgentParams { agentId: string }
interface DocumentParams extends AgentParams { documentId: string }

/** The only author an operator key names (one OPERATOR_API_KEY: "operator"). */
const OPERATOR = 'operator'
/** A read-modify-write without If-Match that lost a race is tried again this many times. */
const RETRIES = 5

const agentParams = {
  type: 'object',
  required: ['agentId'],
  properties: { agentId: { type: 'string', maxLength: 128 } }
} as const

const documentParams = {
  type: 'object',
  required: ['agentId', 'documentId'],
  properties: { agentId: { type: 'string', maxLength: 128 }, documentId: { type: 'string', maxLength: 128 } }
} as const

/** A definition's bytes (what MAX_AGENT_BYTES bounds). */
function bytesOf (definition: AgentDocument): number {
  return Buffer.byteLength(JSON.stringify(definition))
}

/** A strong ETag of a store version, and the versions an If-Match names (`*`: any). */
const etagOf = (version: number): string => `"${version}"`
function ifMatch (header: string | undefined): { any: true } | { versions: number[] } | undefined {
  if (header === undefined) return undefined
  if (header.trim() === '*') return { any: true }
  const versions = header.split(',').map((tag) => /^\s*"([1-9][0-9]{0,9})"\s*$/.exec(tag)?.[1]).filter((tag) => tag !== undefined).map(Number)
  return { versions }
}

function walkInOf (definition: AgentDefinition, defaultAuth: 'walk-in' | 'required'): boolean {
  return (definition.auth ?? defaultAuth) === 'walk-in'
}

function toolsOf (definition: AgentDefinition): string[] {
  return (definition.routines ?? []).filter((routine) => routine.exposed === true).map((routine) => routine.toolName as string)
}

class Refusal extends Error {
  constructor (readonly statusCode: number, message: string) {
    super(message)
  }
}

const ERRORS: Record<number, string> = {
  400: 'Bad Request', 404: 'Not Found', 409: 'Conflict', 412: 'Precondition Failed', 413: 'Content Too Large', 428: 'Precondition Required'
}

export function agentRoutes (fastify: FastifyInstance, options: AgentAdminOptions): void {
  const { store, served, defaultAuth } = options
  const fileAgents = new Map(options.fileAgents.map((definition) => [definition.id, definition]))

  // YAML as well as JSON (the inbox page publishes either): parsed to the same value, bounded by BODY_LIMIT.
  fastify.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml'], { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseYaml(body as string))
    } catch (error) {
      done(Object.assign(new Error(`body is not valid YAML: ${(error as Error).message.split('\n')[0]}`), { statusCode: 400 }))
    }
  })

  const refuse = (reply: FastifyReply, error: Refusal) =>
    reply.code(error.statusCode).send({ statusCode: error.statusCode, error: ERRORS[error.statusCode], message: error.message })

  /** A definition as published: the agents file's checks, then what a published agent may not do. */
  const checked = (value: unknown): AgentDefinition => {
    let definition: AgentDefinition
    try {
      definition = checkAgentDefinition(value, 'agent')
    } catch (error) {
      throw new Refusal(400, (error as Error).message)
    }
    if (typeof definition.documents === 'string') {
      throw new Refusal(400, 'agent.documents: a folder is read from AGENTS_FILE only; publish the documents inline (an array of { id, title, body, sourceUrl? })')
    }
    if (definition.executor !== undefined && !options.executors.includes(definition.executor)) {
      throw new Refusal(400, `agent.executor "${definition.executor}" is not an executor of this gateway (known: ${options.executors.join(', ')})`)
    }
    if (definition.auth === 'required' && !options.authenticates) {
      throw new Refusal(400, 'agent.auth "required": this gateway has no credentials to check (set A2A_API_KEYS or A2A_JWT_*)')
    }
    const documents = definition.documents?.length ?? 0
    if (documents > options.maxAgentDocuments) {
      throw new Refusal(400, `agent.documents holds ${documents} documents; MAX_AGENT_DOCUMENTS is ${options.maxAgentDocuments}`)
    }
    const bytes = bytesOf(definition as unknown as AgentDocument)
    if (bytes > options.maxAgentBytes) throw new Refusal(413, `agent is ${bytes} bytes of JSON; MAX_AGENT_BYTES is ${options.maxAgentBytes}`)
    return definition
  }

  const fileOnly = (id: string) => new Refusal(409, `agent "${id}" is declared in AGENTS_FILE, which is read-only here: change the file`)

  /** The stored agent, or a 404 (409 for AGENTS_FILE's). */
  const stored = async (id: string): Promise<StoredAgent> => {
    const agent = await store.get(id)
    if (agent !== undefined) return agent
    if (fileAgents.has(id)) throw fileOnly(id)
    throw new Refusal(404, `unknown agent "${id}"`)
  }

  const summary = (id: string, definition: AgentDefinition, agent?: StoredAgent) => {
    const servedVersion = served.get(id)
    return {
      id,
      source: agent === undefined ? 'file' : 'store',
      ...(agent !== undefined ? { version: agent.version, updatedAt: new Date(agent.updatedAt).toISOString(), updatedBy: agent.updatedBy } : {}),
      // What this instance serves: the version, 'file', or null (not served here: see the log for why).
      served: servedVersion ?? null,
      name: definition.name ?? null,
      walkIn: walkInOf(definition, defaultAuth),
      tools: toolsOf(definition),
      documents: Array.isArray(definition.documents) ? definition.documents.length : null
    }
  }
  const view = (agent: StoredAgent) => ({ ...summary(agent.id, agent.definition as unknown as AgentDefinition, agent), definition: agent.definition })

  const sendAgent = (reply: FastifyReply, agent: StoredAgent, status = 200) =>
    reply.code(status).header('etag', etagOf(agent.version)).send(view(agent))

  const log = (request: FastifyRequest, agent: { id: string }, version: number, change: string, detail?: string): void => {
    request.log.info({ agentId: agent.id, version, change, by: OPERATOR, ...(detail !== undefined ? { detail } : {}) }, `agent ${change}: ${agent.id} version ${version}`)
  }

  /**
   * A change of a stored agent made from its current definition: over the version If-Match names (412 otherwise),
   * else over the version read (tried again when another change came between).
   */
  const change = async (
    request: FastifyRequest<{ Params: AgentParams }>, name: string, next: (current: AgentDefinition) => AgentDefinition, detail?: string
  ): Promise<StoredAgent> => {
    const { agentId } = request.params
    const precondition = ifMatch(request.headers['if-match'])
    let attempt = 1
    for (;;) {
      const current = await stored(agentId)
      if (precondition !== undefined && !('any' in precondition) && !precondition.versions.includes(current.version)) {
        throw new Refusal(412, `agent "${agentId}" is at version ${current.version} (ETag ${etagOf(current.version)})`)
      }
      const definition = checked(next(current.definition as unknown as AgentDefinition))
      const written = await store.replace(agentId, definition as unknown as AgentDocument, current.version, { by: OPERATOR, change: name, detail })
        .catch((error: unknown) => {
          if (!(error instanceof AgentVersionConflictError)) throw error
          // Another change came between the read and the write: read again, unless If-Match named the version.
          if (precondition !== undefined || attempt++ >= RETRIES) throw new Refusal(412, `agent "${agentId}" is at version ${error.current} (ETag ${etagOf(error.current)})`)
          return 'again' as const
        })
      if (written === 'again') continue
      if (written === undefined) throw new Refusal(404, `unknown agent "${agentId}"`)
      log(request, written, written.version, name, detail)
      await options.changed?.(agentId)
      return written
    }
  }

  /** Runs a route, answering its refusals (400, 404, 409, 412, 413, 428) with a JSON body. */
  const guarded = <R extends FastifyRequest>(handler: (request: R, reply: FastifyReply) => Promise<unknown>) =>
    async (request: R, reply: FastifyReply): Promise<unknown> => {
      try {
        return await handler(request, reply)
      } catch (error) {
        if (error instanceof Refusal) return refuse(reply, error)
        if (error instanceof AgentExistsError) return refuse(reply, new Refusal(409, error.message))
        if (error instanceof AgentLimitError) return refuse(reply, new Refusal(409, `${error.message} (MAX_AGENTS)`))
        throw error
      }
    }

  // Every agent: AGENTS_FILE's, then the store's (an id in both is the file's: docs/agents.md).
  fastify.get('/api/v1/agents', guarded(async () => {
    const agents = [...fileAgents.values()].map((definition) => summary(definition.id, definition))
    for (const agent of await store.list()) {
      if (!fileAgents.has(agent.id)) agents.push(summary(agent.id, agent.definition as unknown as AgentDefinition, agent))
    }
    return { agents, maxAgents: store.maxAgents }
  }))

  fastify.get<{ Params: AgentParams }>('/api/v1/agents/:agentId', { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>, reply) => {
    const { agentId } = request.params
    const file = fileAgents.get(agentId)
    if (file !== undefined) return { ...summary(agentId, file), definition: file }
    const agent = await store.get(agentId)
    if (agent === undefined) throw new Refusal(404, `unknown agent "${agentId}"`)
    return sendAgent(reply, agent)
  }))

  fastify.post('/api/v1/agents', guarded(async (request, reply) => {
    const definition = checked(request.body)
    if (fileAgents.has(definition.id)) throw fileOnly(definition.id)
    const agent = await store.create(definition.id, definition as unknown as AgentDocument, { by: OPERATOR, change: 'publish' })
    log(request, agent, agent.version, 'publish')
    await options.changed?.(agent.id)
    reply.header('location', `/api/v1/agents/${agent.id}`)
    return sendAgent(reply, agent, 201)
  }))

  fastify.put<{ Params: AgentParams }>('/api/v1/agents/:agentId', { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>, reply) => {
    const { agentId } = request.params
    if (fileAgents.has(agentId)) throw fileOnly(agentId)
    // A replace overwrites the whole definition: it must say which version it replaces.
    if (request.headers['if-match'] === undefined) {
      throw new Refusal(428, 'If-Match is required: the ETag of the version this replaces (GET the agent first)')
    }
    const body = request.body
    if (body !== null && typeof body === 'object' && !Array.isArray(body) && (body as { id?: unknown }).id !== undefined && (body as { id?: unknown }).id !== agentId) {
      throw new Refusal(400, `agent.id must be "${agentId}" (the path's), or left out`)
    }
    const replacement = body !== null && typeof body === 'object' && !Array.isArray(body) ? { ...body, id: agentId } : body
    return sendAgent(reply, await change(request, 'replace', () => replacement as AgentDefinition))
  }))

  for (const [action, auth] of [['open', 'walk-in'], ['close', 'required']] as const) {
    fastify.post<{ Params: AgentParams }>(`/api/v1/agents/:agentId/${action}`, { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>, reply) => {
      return sendAgent(reply, await change(request, action, (current) => ({ ...current, auth })))
    }))
  }

  fastify.post<{ Params: AgentParams }>('/api/v1/agents/:agentId/documents', { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>, reply) => {
    const document = request.body as { id?: unknown }
    const id = document !== null && typeof document === 'object' && typeof document.id === 'string' ? document.id : undefined
    const agent = await change(request, 'add-document', (current) => {
      if (current.upstream !== undefined) throw new Refusal(400, `agent "${current.id}" is an upstream agent (proxy mode): it has no documents`)
      const documents = Array.isArray(current.documents) ? current.documents : []
      if (id !== undefined && documents.some((existing) => existing.id === id)) {
        throw new Refusal(409, `agent "${current.id}" already has a document "${id}": remove it first`)
      }
      if (documents.length >= options.maxAgentDocuments) {
        throw new Refusal(409, `agent "${current.id}" holds ${documents.length} documents, MAX_AGENT_DOCUMENTS: remove one first`)
      }
      return { ...current, documents: [...documents, document as never] }
    }, id)
    return sendAgent(reply, agent, 201)
  }))

  fastify.delete<{ Params: DocumentParams }>('/api/v1/agents/:agentId/documents/:documentId', { schema: { params: documentParams } }, guarded(async (request: FastifyRequest<{ Params: DocumentParams }>, reply) => {
    const { documentId } = request.params
    return sendAgent(reply, await change(request, 'remove-document', (current) => {
      const documents = Array.isArray(current.documents) ? current.documents : []
      if (!documents.some((document) => document.id === documentId)) throw new Refusal(404, `agent "${current.id}" has no document "${documentId}"`)
      return { ...current, documents: documents.filter((document) => document.id !== documentId) }
    }, documentId))
  }))

  fastify.delete<{ Params: AgentParams }>('/api/v1/agents/:agentId', { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>, reply) => {
    const { agentId } = request.params
    const current = await stored(agentId)
    const precondition = ifMatch(request.headers['if-match'])
    const expected = precondition === undefined || 'any' in precondition ? undefined : precondition.versions.includes(current.version) ? current.version : -1
    try {
      const version = await store.delete(agentId, expected, { by: OPERATOR, change: 'unpublish' })
      if (version === undefined) throw new Refusal(404, `unknown agent "${agentId}"`)
      log(request, current, version, 'unpublish')
    } catch (error) {
      if (error instanceof AgentVersionConflictError) throw new Refusal(412, `agent "${agentId}" is at version ${error.current} (ETag ${etagOf(error.current)})`)
      throw error
    }
    await options.changed?.(agentId)
    return reply.code(204).send()
  }))

  fastify.get<{ Params: AgentParams }>('/api/v1/agents/:agentId/versions', { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>) => {
    const { agentId } = request.params
    const versions = await store.versions(agentId)
    if (versions.length === 0) {
      if (fileAgents.has(agentId)) throw fileOnly(agentId)
      throw new Refusal(404, `unknown agent "${agentId}"`)
    }
    return { versions: versions.map((entry) => ({ ...entry, at: new Date(entry.at).toISOString() })) }
  }))
}
