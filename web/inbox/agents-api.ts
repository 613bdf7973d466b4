/**
 * The Agents view's calls to the operator API's agent routes (docs/agents.md): the key as a Bearer header, a
 * definition sent as typed (JSON, or YAML with its own Content-Type: the page parses neither), the ETag kept for
 * If-Match, and a refusal turned into a sentence an operator can act on.
 */

export interface AgentDocument { id: string, title: string, body: string, sourceUrl?: string }

/** An entry of GET /api/v1/agents (and, with `definition`, of GET /api/v1/agents/:id). */
export interface AgentEntry {
  id: string
  source: 'file' | 'store'
  version?: number
  updatedAt?: string
  updatedBy?: string
  /** What this instance serves: a store version, 'file' (AGENTS_FILE's), or null (not yet). */
  served: number | 'file' | null
  name: string | null
  walkIn: boolean
  tools: string[]
  documents: number | null
  definition: { documents?: string | AgentDocument[], upstream?: unknown }
}

export interface AgentVersion { version: number, at: string, by: string, change: string, detail?: string }

/** A refusal of the API: its status and its message (which names the field). */
export class RequestFailed extends Error {
  constructor (readonly status: number, message: string) {
    super(message)
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Refused', 404: 'Not found', 409: 'Conflict', 413: 'Too large', 428: 'Needs the version it replaces'
}

/** What an operator reads of a failure: a 412 says to reload; the others say what the API said. */
export function describeFailure (error: unknown): string {
  if (!(error instanceof RequestFailed)) return `Cannot reach the gateway: ${(error as Error).message}`
  if (error.status === 412) return `Changed since you loaded it — reload. (${error.message})`
  return `${STATUS_TEXT[error.status] ?? 'Failed'} (${error.status}): ${error.message}`
}

/** JSON when the text starts as JSON does (an object or a list), else YAML; the API parses either. */
export function contentTypeOf (definition: string): string {
  return /^\s*[[{]/.test(definition) ? 'application/json' : 'application/yaml'
}

interface Sent { status: number, etag?: string, body: any }

export class AgentsApi {
  constructor (private readonly key: () => string) {}

  private async call (method: string, path: string, options: { body?: string, type?: string, ifMatch?: string } = {}): Promise<Sent> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key()}` }
    if (options.body !== undefined) headers['content-type'] = options.type ?? 'application/json'
    if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch
    const response = await fetch(`/api/v1/agents${path}`, { method, headers, body: options.body, cache: 'no-store' })
    const body = response.status === 204 ? {} : await response.json().catch(() => ({}))
    if (!response.ok) {
      throw new RequestFailed(response.status, typeof body.message === 'string' ? body.message : `HTTP ${response.status}`)
    }
    return { status: response.status, etag: response.headers.get('etag') ?? undefined, body }
  }

  async list (): Promise<{ agents: AgentEntry[], maxAgents: number }> {
    return (await this.call('GET', '')).body
  }

  /** One agent with its definition, and the ETag of its version (none for AGENTS_FILE's). */
  async get (id: string): Promise<{ agent: AgentEntry, etag?: string }> {
    const sent = await this.call('GET', `/${encodeURIComponent(id)}`)
    return { agent: sent.body, etag: sent.etag }
  }

  async versions (id: string): Promise<AgentVersion[]> {
    return (await this.call('GET', `/${encodeURIComponent(id)}/versions`)).body.versions
  }

  async publish (definition: string): Promise<{ agent: AgentEntry }> {
    return { agent: (await this.call('POST', '', { body: definition, type: contentTypeOf(definition) })).body }
  }

  async replace (id: string, definition: string, etag: string): Promise<{ agent: AgentEntry }> {
    const sent = await this.call('PUT', `/${encodeURIComponent(id)}`, { body: definition, type: contentTypeOf(definition), ifMatch: etag })
    return { agent: sent.body }
  }

  async access (id: string, action: 'open' | 'close'): Promise<AgentEntry> {
    return (await this.call('POST', `/${encodeURIComponent(id)}/${action}`)).body
  }

  async addDocument (id: string, document: AgentDocument): Promise<AgentEntry> {
    return (await this.call('POST', `/${encodeURIComponent(id)}/documents`, { body: JSON.stringify(document) })).body
  }

  async removeDocument (id: string, documentId: string): Promise<AgentEntry> {
    return (await this.call('DELETE', `/${encodeURIComponent(id)}/documents/${encodeURIComponent(documentId)}`)).body
  }

  /** Unpublishes the version listed (If-Match), so a change made meanwhile is not unpublished unseen. */
  async unpublish (id: string, version: number | undefined): Promise<void> {
    await this.call('DELETE', `/${encodeURIComponent(id)}`, version === undefined ? {} : { ifMatch: `"${version}"` })
  }
}
