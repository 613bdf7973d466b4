/**
 * The one place the runtime builds an agent Message: ROLE_AGENT, the converse envelope under
 * `metadata[CONVERSE_EXTENSION_URI]` and the URI in `extensions`. The envelope is always attached: the A2A service
 * strips it from a reply to a request that did not activate the extension. Parts are the SDK's internal
 * (protobuf-shaped) form.
 */
import { randomUUID } from 'node:crypto'
import { Role, type Message, type Part } from '@a2a-js/sdk'
import type { ConverseEnvelope } from '../core/envelope.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'

export interface AgentMessageInput {
  contextId: string
  /** Only when the message belongs to a task. */
  taskId?: string
  parts: Part[]
  envelope: ConverseEnvelope
  /** Default: a fresh UUID. */
  messageId?: string
}

export function agentMessage (input: AgentMessageInput): Message {
  return {
    messageId: input.messageId ?? randomUUID(),
    contextId: input.contextId,
    taskId: input.taskId ?? '',
    role: Role.ROLE_AGENT,
    parts: input.parts,
    metadata: { [CONVERSE_EXTENSION_URI]: input.envelope },
    extensions: [CONVERSE_EXTENSION_URI],
    referenceTaskIds: []
  }
}

/** What a person wrote in the inbox, as the agent side of the conversation: author human, the conversation human-owned. */
export function humanMessage (contextId: string, taskId: string | undefined, reply: { id: string, text: string }, newId: () => string): Message {
  return agentMessage({
    messageId: newId(),
    contextId,
    taskId,
    parts: [textPart(reply.text)],
    envelope: {
      author: 'human',
      answerCoverage: { availability: 'not_recorded', originatingTurnId: reply.id },
      ownership: { state: 'human_owned', suppressed: false }
    }
  })
}

export function textPart (text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }
}

export function dataPart (data: Record<string, unknown>): Part {
  return { content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType: 'application/json' }
}
