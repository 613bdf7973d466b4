/**
 * Agent definitions: the agents file read (JSON or YAML; one agent, a list, or `{ agents }`) and each definition
 * checked, one code for the file and the operator API; the JSON schema itself is agent-schema.ts's.
 */
import { readFile } from 'node:fs/promises'
import { dirname, extname, join, resolve } from 'node:path'
import type { ErrorObject } from 'ajv'
import { parse as parseYaml } from 'yaml'
import { validateRoutineDeclarations, type RoutineDeclaration } from 'a2a-converse'
import type { KnowledgeDocument, OutOfScopeTopic } from 'a2a-converse/runtime'
import type { UpstreamDefinition as LibraryUpstreamDefinition } from 'a2a-converse/service'
import { packageRoot } from './package-root.js'
import { validateAgent } from './agent-schema.js'

/**
 * A proxied agent's `upstream` as the agents file declares it: the library's, except that `exchange`'s client secret
 * is named by the environment variable holding it (`identity.clientSecretEnv`), never written in the file.
 */
export type UpstreamDefinition = LibraryUpstreamDefinition & { identity?: LibraryUpstreamDefinition['identity'] & { clientSecretEnv?: string } }

/** An HTTP envelope provider (httpEnvelopeProvider): where envelopes come from when the agent attaches none. */
export interface EnvelopeProviderDefinition {
  url: string
  /** Default: PROVIDER_TIMEOUT_MS. */
  timeoutMs?: number
}

/** One agent as declared in AGENTS_FILE. */
export interface AgentDefinition {
  id: string
  /** Required unless `upstream` is set (the upstream's card then names it). */
  name?: string
  description?: string
  /** Proxy mode: the agent is another A2A server; `executor`, `documents` and `outOfScope` do not apply. */
  upstream?: UpstreamDefinition
  /** Envelopes for the agent's objects that carry none of their own (an upstream agent's, typically). */
  envelopeProvider?: EnvelopeProviderDefinition
  version?: string
  /** Which executor runs it (a key of the gateway's executor factories). Default "conversation". */
  executor?: string
  /**
   * Folder of Markdown documents, resolved against the declaring file's folder (AGENTS_FILE only); or the documents
   * themselves, inline (what the operator API publishes).
   */
  documents?: string | KnowledgeDocument[]
  /** Topics the agent declares out of scope: a phrase, or { topic, keywords }. */
  outOfScope?: Array<string | OutOfScopeTopic>
  routines?: RoutineDeclaration[]
  /** Overrides A2A_AUTH for this agent: `walk-in` (anyone) or `required` (a credential). */
  auth?: 'walk-in' | 'required'
  /** Overrides WELL_KNOWN_CARD for this agent: `v1` or `compat` (docs/protocol-versions.md, "The card"). */
  wellKnownCard?: 'v1' | 'compat'
}

/** An invalid agent definition; the message names the field (`<where>.<path>`). */
export class AgentDefinitionError extends Error {
  constructor (problem: string) {
    super(problem)
    this.name = 'AgentDefinitionError'
  }
}

/** Raised for an unreadable or invalid AGENTS_FILE; the message names the file and the field. */
export class AgentsFileError extends Error {
  constructor (file: string, problem: string) {
    super(`AGENTS_FILE ${file}: ${problem}`)
    this.name = 'AgentsFileError'
  }
}

/** Headers the gateway itself writes on every upstream request: the caller's token cannot go in one of them. */
const GATEWAY_HEADERS = ['content-type', 'accept', 'a2a-version', 'a2a-extensions', 'x-a2a-extensions', 'traceparent', 'tracestate', 'baggage', 'host', 'content-length']

const EXCHANGE_REQUIRED = ['tokenEndpoint', 'clientId', 'clientSecretEnv'] as const
const EXCHANGE_ONLY = [...EXCHANGE_REQUIRED, 'resource', 'scope', 'subjectTokenType'] as const

/** What is wrong with `upstream.identity` (`<field> <problem>`, under `upstream.identity.`), or undefined. */
function identityProblem (upstream: UpstreamDefinition): string | undefined {
  const identity = upstream.identity
  if (identity === undefined || identity.mode === 'none') return undefined
  const exchange = identity.mode === 'exchange'
  const missing = exchange ? EXCHANGE_REQUIRED.find((field) => identity[field] === undefined) : undefined
  if (missing !== undefined) return `${missing} is required with mode "exchange"`
  const misplaced = exchange ? undefined : EXCHANGE_ONLY.find((field) => identity[field] !== undefined)
  if (misplaced !== undefined) return `${misplaced} applies to mode "exchange" only`
  if (identity.lifetimeSec !== undefined && identity.mode !== 'assertion') return 'lifetimeSec applies to mode "assertion" only'
  const header = (identity.header ?? 'authorization').toLowerCase()
  if (GATEWAY_HEADERS.includes(header)) return `header "${header}" is a header the gateway writes itself`
  if (Object.keys(upstream.headers ?? {}).some((name) => name.toLowerCase() === header)) {
    return `header "${header}" is in upstream.headers too: the caller's token would replace it (name another header for one of them)`
  }
  return undefined
}

/** The demo agent's declaration, shipped in examples/. */
export function defaultAgentsFile (): string {
  return join(packageRoot(), 'examples', 'demo', 'agent.json')
}

/**
 * Reads a JSON or YAML file holding one agent, an array of agents or `{ agents: [...] }`.
 * `documents` paths come back absolute.
 */
export async function loadAgentDefinitions (file: string): Promise<AgentDefinition[]> {
  const path = resolve(file)
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    // Node's fs errors always carry a code (ENOENT, EACCES, EISDIR, …).
    throw new AgentsFileError(file, `cannot be read (${(error as NodeJS.ErrnoException).code as string})`)
  }
  let parsed: unknown
  try {
    parsed = ['.yaml', '.yml'].includes(extname(path).toLowerCase()) ? parseYaml(text) : JSON.parse(text)
  } catch (error) {
    throw new AgentsFileError(file, `is not valid ${extname(path).slice(1) || 'JSON'}: ${(error as Error).message.split('\n')[0]}`)
  }
  const list = Array.isArray(parsed)
    ? parsed
    : parsed !== null && typeof parsed === 'object' && Array.isArray((parsed as { agents?: unknown }).agents)
      ? (parsed as { agents: unknown[] }).agents
      : [parsed]
  if (list.length === 0) throw new AgentsFileError(file, 'declares no agent')
  const ids = new Set<string>()
  return list.map((agent, index) => {
    let definition: AgentDefinition
    try {
      definition = checkAgentDefinition(agent, `agents[${index}]`)
    } catch (error) {
      throw new AgentsFileError(file, (error as AgentDefinitionError).message)
    }
    if (ids.has(definition.id)) throw new AgentsFileError(file, `agents[${index}].id "${definition.id}" is declared twice`)
    ids.add(definition.id)
    return typeof definition.documents !== 'string'
      ? definition
      : { ...definition, documents: resolve(dirname(path), definition.documents) }
  })
}

/**
 * One agent's definition checked (the agents file's and the operator API's rules, one code): the schema, what does
 * not apply to an upstream agent, inline documents' ids, the routines. AgentDefinitionError names the field under
 * `where` (`agents[0]`, `agent`).
 */
export function checkAgentDefinition (agent: unknown, where: string): AgentDefinition {
  if (!validateAgent(agent)) {
    // ajv sets `errors` (with messages) whenever validation fails.
    const [error] = validateAgent.errors as ErrorObject[]
    const field = `${where}${error.instancePath.replaceAll('/', '.')}`
    const allowed = error.keyword === 'enum' ? `: ${(error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}` : ''
    throw new AgentDefinitionError(`${field} ${error.message as string}${allowed}`)
  }
  const definition = agent as unknown as AgentDefinition
  if (definition.upstream !== undefined) {
    const local = (['executor', 'documents', 'outOfScope'] as const).find((key) => definition[key] !== undefined)
    if (local !== undefined) throw new AgentDefinitionError(`${where}.${local} does not apply to an upstream agent (proxy mode)`)
    const problem = identityProblem(definition.upstream)
    if (problem !== undefined) throw new AgentDefinitionError(`${where}.upstream.identity.${problem}`)
    const keys = definition.upstream.cardKeys
    if (keys !== undefined && [keys.jwks, keys.jwksUrl, keys.jkuHost].filter((value) => value !== undefined).length !== 1) {
      throw new AgentDefinitionError(`${where}.upstream.cardKeys must have one of jwks (a JWKS), jwksUrl (where to read one) and jkuHost (the host the card's jku must be on), not two`)
    }
  }
  if (Array.isArray(definition.documents)) {
    const seen = new Set<string>()
    definition.documents.forEach((document, position) => {
      if (seen.has(document.id)) throw new AgentDefinitionError(`${where}.documents.${position}.id "${document.id}" is used twice`)
      seen.add(document.id)
    })
  }
  try {
    validateRoutineDeclarations(definition.routines ?? [])
  } catch (error) {
    // A RoutineDeclarationError, whose message names the routine and the field.
    throw new AgentDefinitionError(`agent "${definition.id}": ${(error as Error).message}`)
  }
  return definition
}
