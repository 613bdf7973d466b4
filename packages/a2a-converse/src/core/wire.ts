/**
 * The few A2A 1.0 wire (ProtoJSON) shapes the core reads and writes. The SDK's own types are its internal
 * ts-proto classes, not the JSON on the wire, so the core keeps these small structural ones.
 */
export type Metadata = Record<string, unknown>

export interface WireMessage {
  messageId: string
  contextId?: string
  taskId?: string
  role: string
  parts: unknown[]
  metadata?: Metadata
  extensions?: string[]
  referenceTaskIds?: string[]
}

export interface WireArtifact {
  artifactId: string
  name?: string
  description?: string
  parts: unknown[]
  metadata?: Metadata
  extensions?: string[]
}

export interface WireTaskStatus {
  state: string
  message?: WireMessage
  timestamp?: string
}

export interface WireTask {
  id: string
  contextId?: string
  status: WireTaskStatus
  artifacts?: WireArtifact[]
  history?: WireMessage[]
  metadata?: Metadata
}

/** The objects an envelope attaches to. */
export type EnvelopeTarget = WireMessage | WireArtifact

/** Where the object sits: an agent Message, a task's status.message, or an artifact. */
export type TargetKind = 'message' | 'status' | 'artifact'

export const ROLE_AGENT = 'ROLE_AGENT'
export const ROLE_USER = 'ROLE_USER'
