/**
 * The operator API's agent routes (docs/agents.md): list, read, publish, replace, open or close to walk-ins, add or
 * remove a knowledge document, unpublish, and an agent's audit. Registered by operator-api.ts inside its scope (its
 * key check, its rate limit, its error handler). Published agents live in the state store; AGENTS_FILE's agents are
 * listed and read here, never changed (read-only).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { parse as parseYaml } from 'yaml'
import { AgentVersionConflictError } from 'a2a-converse/runtime'
import type { AgentDocument } from 'a2a-converse/runtime'
import type { AgentDefinition } from '../src/gateway/agent-definitions.js'
import { AgentAdmin, etagOf, fileOnly, guarded, ifMatch, OPERATOR, Refusal, type AgentAdminOptions } from './agent-admin.js'
import { agentParams, type AgentParams } from './operator-scope.js'

export type { AgentAdminOptions } from './agent-admin.js'

interface DocumentParams extends AgentParams { documentId: string }

const documentParams = {
  type: 'object',
  required: ['agentId', 'documentId'],
  properties: { agentId: { type: 'string', maxLength: 128 }, documentId: { type: 'string', maxLength: 128 } }
} as const

export function agentRoutes (fastify: FastifyInstance, options: AgentAdminOptions): void {
  // YAML as well as JSON (the inbox page publishes either): parsed to the same value, bounded by BODY_LIMIT.
  fastify.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml'], { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseYaml(body as string))
    } catch (error) {
      done(Object.assign(new Error(`body is not valid YAML: ${(error as Error).message.split('\n')[0]}`), { statusCode: 400 }))
    }
  })
  const admin = new AgentAdmin(options)
  readRoutes(fastify, admin)
  publishRoutes(fastify, admin)
  changeRoutes(fastify, admin)
}

/** The list, one agent and its versions. */
function readRoutes (fastify: FastifyInstance, admin: AgentAdmin): void {
  // Every agent: AGENTS_FILE's, then the store's (an id in both is the file's: docs/agents.md).
  fastify.get('/api/v1/agents', guarded(async () => {
    const agents = [...admin.fileAgents.values()].map((definition) => admin.summary(definition.id, definition))
    for (const agent of await admin.store.list()) {
      if (!admin.fileAgents.has(agent.id)) agents.push(admin.summary(agent.id, agent.definition as unknown as AgentDefinition, agent))
    }
    return { agents, maxAgents: admin.store.maxAgents }
  }))

  fastify.get<{ Params: AgentParams }>('/api/v1/agents/:agentId', { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>, reply) => {
    const { agentId } = request.params
    const file = admin.fileAgents.get(agentId)
    if (file !== undefined) return { ...admin.summary(agentId, file), definition: file }
    const agent = await admin.store.get(agentId)
    if (agent === undefined) throw new Refusal(404, `unknown agent "${agentId}"`)
    return admin.send(reply, agent)
  }))

  fastify.get<{ Params: AgentParams }>('/api/v1/agents/:agentId/versions', { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>) => {
    const { agentId } = request.params
    const versions = await admin.store.versions(agentId)
    if (versions.length === 0) {
      if (admin.fileAgents.has(agentId)) throw fileOnly(agentId)
      throw new Refusal(404, `unknown agent "${agentId}"`)
    }
    return { versions: versions.map((entry) => ({ ...entry, at: new Date(entry.at).toISOString() })) }
  }))
}

/** Publish, replace and unpublish. */
function publishRoutes (fastify: FastifyInstance, admin: AgentAdmin): void {
  fastify.post('/api/v1/agents', guarded(async (request, reply) => {
    const definition = admin.checked(request.body)
    if (admin.fileAgents.has(definition.id)) throw fileOnly(definition.id)
    const agent = await admin.store.create(definition.id, definition as unknown as AgentDocument, { by: OPERATOR, change: 'publish' })
    admin.log(request, agent, agent.version, 'publish')
    await admin.options.changed?.(agent.id)
    reply.header('location', `/api/v1/agents/${agent.id}`)
    return admin.send(reply, agent, 201)
  }))

  fastify.put<{ Params: AgentParams }>('/api/v1/agents/:agentId', { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>, reply) => {
    const { agentId } = request.params
    if (admin.fileAgents.has(agentId)) throw fileOnly(agentId)
    // A replace overwrites the whole definition: it must say which version it replaces.
    if (request.headers['if-match'] === undefined) {
      throw new Refusal(428, 'If-Match is required: the ETag of the version this replaces (GET the agent first)')
    }
    const body = request.body
    if (body !== null && typeof body === 'object' && !Array.isArray(body) && (body as { id?: unknown }).id !== undefined && (body as { id?: unknown }).id !== agentId) {
      throw new Refusal(400, `agent.id must be "${agentId}" (the path's), or left out`)
    }
    const replacement = body !== null && typeof body === 'object' && !Array.isArray(body) ? { ...body, id: agentId } : body
    return admin.send(reply, await admin.change(request, 'replace', () => replacement as AgentDefinition))
  }))

  fastify.delete<{ Params: AgentParams }>('/api/v1/agents/:agentId', { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>, reply) => {
    const { agentId } = request.params
    const current = await admin.stored(agentId)
    const precondition = ifMatch(request.headers['if-match'])
    const expected = precondition === undefined || 'any' in precondition ? undefined : precondition.versions.includes(current.version) ? current.version : -1
    try {
      const version = await admin.store.delete(agentId, expected, { by: OPERATOR, change: 'unpublish' })
      if (version === undefined) throw new Refusal(404, `unknown agent "${agentId}"`)
      admin.log(request, current, version, 'unpublish')
    } catch (error) {
      if (error instanceof AgentVersionConflictError) throw new Refusal(412, `agent "${agentId}" is at version ${error.current} (ETag ${etagOf(error.current)})`)
      throw error
    }
    await admin.options.changed?.(agentId)
    return reply.code(204).send()
  }))
}

/** Changes of a stored agent's definition: open or close it to walk-ins, add or remove a document. */
function changeRoutes (fastify: FastifyInstance, admin: AgentAdmin): void {
  for (const [action, auth] of [['open', 'walk-in'], ['close', 'required']] as const) {
    fastify.post<{ Params: AgentParams }>(`/api/v1/agents/:agentId/${action}`, { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>, reply) => {
      return admin.send(reply, await admin.change(request, action, (current) => ({ ...current, auth })))
    }))
  }

  fastify.post<{ Params: AgentParams }>('/api/v1/agents/:agentId/documents', { schema: { params: agentParams } }, guarded(async (request: FastifyRequest<{ Params: AgentParams }>, reply) => {
    const document = request.body as { id?: unknown }
    const id = document !== null && typeof document === 'object' && typeof document.id === 'string' ? document.id : undefined
    const agent = await admin.change(request, 'add-document', (current) => {
      if (current.upstream !== undefined) throw new Refusal(400, `agent "${current.id}" is an upstream agent (proxy mode): it has no documents`)
      const documents = Array.isArray(current.documents) ? current.documents : []
      if (id !== undefined && documents.some((existing) => existing.id === id)) {
        throw new Refusal(409, `agent "${current.id}" already has a document "${id}": remove it first`)
      }
      if (documents.length >= admin.options.maxAgentDocuments) {
        throw new Refusal(409, `agent "${current.id}" holds ${documents.length} documents, MAX_AGENT_DOCUMENTS: remove one first`)
      }
      return { ...current, documents: [...documents, document as never] }
    }, id)
    return admin.send(reply, agent, 201)
  }))

  fastify.delete<{ Params: DocumentParams }>('/api/v1/agents/:agentId/documents/:documentId', { schema: { params: documentParams } }, guarded(async (request: FastifyRequest<{ Params: DocumentParams }>, reply) => {
    const { documentId } = request.params
    return admin.send(reply, await admin.change(request, 'remove-document', (current) => {
      const documents = Array.isArray(current.documents) ? current.documents : []
      if (!documents.some((document) => document.id === documentId)) throw new Refusal(404, `agent "${current.id}" has no document "${documentId}"`)
      return { ...current, documents: documents.filter((document) => document.id !== documentId) }
    }, documentId))
  }))
}
