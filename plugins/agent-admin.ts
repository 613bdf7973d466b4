/**
 * The agent routes' decisions (operator-agents.ts registers them): what a published definition may hold, how an agent
 * is summed up, If-Match and ETags, the refusals' statuses, and a change written over the version it was made from.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AgentExistsError, AgentLimitError, AgentVersionConflictError } from 'a2a-converse/runtime'
import type { AgentDocument, AgentStore, StoredAgent } from 'a2a-converse/runtime'
import { checkAgentDefinition, type AgentDefinition } from '../src/gateway/agent-definitions.js'
import type { AgentParams } from './operator-scope.js'

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

/** The only author an operator key names (one OPERATOR_API_KEY: "operator"). */
export const OPERATOR = 'operator'
/** A read-modify-write without If-Match that lost a race is tried again this many times. */
const RETRIES = 5

/** A definition's bytes (what MAX_AGENT_BYTES bounds). */
function bytesOf (definition: AgentDocument): number {
  return Buffer.byteLength(JSON.stringify(definition))
}

/** A strong ETag of a store version, and the versions an If-Match names (`*`: any). */
export const etagOf = (version: number): string => `"${version}"`
export function ifMatch (header: string | undefined): { any: true } | { versions: number[] } | undefined {
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

export class Refusal extends Error {
  constructor (readonly statusCode: number, message: string) {
    super(message)
  }
}

const ERRORS: Record<number, string> = {
  400: 'Bad Request', 404: 'Not Found', 409: 'Conflict', 412: 'Precondition Failed', 413: 'Content Too Large', 428: 'Precondition Required'
}

/** A definition as published: the agents file's checks, then what a published agent may not do. */
function checkPublished (value: unknown, options: AgentAdminOptions): AgentDefinition {
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

/** An agent as the list shows it: where it comes from, its version and what this instance serves of it. */
function summaryOf (id: string, definition: AgentDefinition, options: AgentAdminOptions, agent?: StoredAgent) {
  const servedVersion = options.served.get(id)
  return {
    id,
    source: agent === undefined ? 'file' : 'store',
    ...(agent !== undefined ? { version: agent.version, updatedAt: new Date(agent.updatedAt).toISOString(), updatedBy: agent.updatedBy } : {}),
    // What this instance serves: the version, 'file', or null (not served here: see the log for why).
    served: servedVersion ?? null,
    name: definition.name ?? null,
    walkIn: walkInOf(definition, options.defaultAuth),
    tools: toolsOf(definition),
    documents: Array.isArray(definition.documents) ? definition.documents.length : null
  }
}

/** A 4xx with the API's JSON body. */
const refuse = (reply: FastifyReply, error: Refusal) =>
  reply.code(error.statusCode).send({ statusCode: error.statusCode, error: ERRORS[error.statusCode], message: error.message })

/** Runs a route, answering its refusals (400, 404, 409, 412, 413, 428) with a JSON body. */
export const guarded = <R extends FastifyRequest>(handler: (request: R, reply: FastifyReply) => Promise<unknown>) =>
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

export const fileOnly = (id: string) => new Refusal(409, `agent "${id}" is declared in AGENTS_FILE, which is read-only here: change the file`)

/** What the routes share: the store, AGENTS_FILE's agents, and how a change is written, logged and answered. */
export class AgentAdmin {
  readonly store: AgentStore
  readonly fileAgents: ReadonlyMap<string, AgentDefinition>

  constructor (readonly options: AgentAdminOptions) {
    this.store = options.store
    this.fileAgents = new Map(options.fileAgents.map((definition) => [definition.id, definition]))
  }

  checked (value: unknown): AgentDefinition {
    return checkPublished(value, this.options)
  }

  /** The stored agent, or a 404 (409 for AGENTS_FILE's). */
  async stored (id: string): Promise<StoredAgent> {
    const agent = await this.store.get(id)
    if (agent !== undefined) return agent
    if (this.fileAgents.has(id)) throw fileOnly(id)
    throw new Refusal(404, `unknown agent "${id}"`)
  }

  summary (id: string, definition: AgentDefinition, agent?: StoredAgent) {
    return summaryOf(id, definition, this.options, agent)
  }

  send (reply: FastifyReply, agent: StoredAgent, status = 200) {
    const view = { ...this.summary(agent.id, agent.definition as unknown as AgentDefinition, agent), definition: agent.definition }
    return reply.code(status).header('etag', etagOf(agent.version)).send(view)
  }

  log (request: FastifyRequest, agent: { id: string }, version: number, change: string, detail?: string): void {
    request.log.info({ agentId: agent.id, version, change, by: OPERATOR, ...(detail !== undefined ? { detail } : {}) }, `agent ${change}: ${agent.id} version ${version}`)
  }

  /**
   * A change of a stored agent made from its current definition: over the version If-Match names (412 otherwise),
   * else over the version read (tried again when another change came between).
   */
  async change (
    request: FastifyRequest<{ Params: AgentParams }>, name: string, next: (current: AgentDefinition) => AgentDefinition, detail?: string
  ): Promise<StoredAgent> {
    const { agentId } = request.params
    const precondition = ifMatch(request.headers['if-match'])
    let attempt = 1
    for (;;) {
      const current = await this.stored(agentId)
      if (precondition !== undefined && !('any' in precondition) && !precondition.versions.includes(current.version)) {
        throw new Refusal(412, `agent "${agentId}" is at version ${current.version} (ETag ${etagOf(current.version)})`)
      }
      const definition = this.checked(next(current.definition as unknown as AgentDefinition))
      const written = await this.store.replace(agentId, definition as unknown as AgentDocument, current.version, { by: OPERATOR, change: name, detail })
        .catch((error: unknown) => {
          if (!(error instanceof AgentVersionConflictError)) throw error
          // Another change came between the read and the write: read again, unless If-Match named the version.
          if (precondition !== undefined || attempt++ >= RETRIES) throw new Refusal(412, `agent "${agentId}" is at version ${error.current} (ETag ${etagOf(error.current)})`)
          return 'again' as const
        })
      if (written === 'again') continue
      if (written === undefined) throw new Refusal(404, `unknown agent "${agentId}"`)
      this.log(request, written, written.version, name, detail)
      await this.options.changed?.(agentId)
      return written
    }
  }
}
