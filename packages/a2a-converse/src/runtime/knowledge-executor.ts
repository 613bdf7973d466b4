/**
 * An @a2a-js/sdk AgentExecutor that answers every user message from a {@link KnowledgeBase} with one agent
 * Message carrying the converse envelope, plus the pieces it is made of ({@link answerTurn},
 * {@link buildReplyMessage}, {@link messageText}) for executors that do more (routines, human takeover).
 */
import { randomUUID } from 'node:crypto'
import type { Message, Part } from '@a2a-js/sdk'
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server'
import type { ConverseEnvelope } from '../core/envelope.js'
import type { KnowledgeAnswer, KnowledgeBase } from './knowledge-base.js'
import { agentMessage, textPart, type AgentMessageInput } from './agent-messages.js'
import { firstChars, maxReadCharsOf } from './slot-input.js'

export interface AnswerTurnOptions {
  knowledgeBase: KnowledgeBase
  /** The user message's `messageId`: becomes `answerCoverage.originatingRequestId` (omitted when empty). */
  requestMessageId?: string
  /** Id of this turn: `answerCoverage.originatingTurnId`. Default: a fresh UUID. */
  turnId?: string
}

/** One answered turn: what to put in the reply message and the envelope that describes it. */
export interface TurnReply {
  text: string
  /** A single text part, in the SDK's internal shape. */
  parts: Part[]
  envelope: ConverseEnvelope
  /** The knowledge base's full answer, evidence included (not for the wire). */
  answer: KnowledgeAnswer
}

export { textPart }

/** The text a user message asks: its text parts joined by newlines (other parts are ignored). */
export function messageText (message: Pick<Message, 'parts'> | undefined): string {
  const texts: string[] = []
  for (const part of message?.parts ?? []) {
    if (part.content?.$case === 'text') texts.push(part.content.value)
  }
  return texts.join('\n')
}

/**
 * Answers one question and builds the complete envelope for it: author `agent`, the assessed coverage with
 * `originatingTurnId` / `originatingRequestId`, ownership `ai_owned` (not suppressed) and the citations.
 */
export function answerTurn (question: string, options: AnswerTurnOptions): TurnReply {
  const answer = options.knowledgeBase.answer(question)
  const requestId = options.requestMessageId
  const envelope: ConverseEnvelope = {
    author: 'agent',
    answerCoverage: {
      ...answer.coverage,
      originatingTurnId: options.turnId ?? randomUUID(),
      ...(requestId !== undefined && requestId !== '' ? { originatingRequestId: requestId } : {})
    },
    ownership: { state: 'ai_owned', suppressed: false },
    citations: answer.citations
  }
  return { text: answer.text, parts: [textPart(answer.text)], envelope, answer }
}

/** The agent Message of a reply (packages/a2a-converse/src/runtime/agent-messages.ts), under the name this module has always exported. */
export const buildReplyMessage = agentMessage
export type ReplyMessageInput = AgentMessageInput

export interface KnowledgeExecutorOptions {
  knowledgeBase: KnowledgeBase
  /** Id generator for reply message ids and turn ids. Default: `crypto.randomUUID`. */
  newId?: () => string
  /** Characters of a message's text that are searched (the rest is not read). Default DEFAULT_MAX_READ_CHARS (slot-input.ts). */
  maxReadChars?: number
}

/**
 * An AgentExecutor that replies to each user message with ONE agent Message (no task): contextId from the
 * request context, taskId only when the request continues an existing task.
 */
export function knowledgeExecutor (options: KnowledgeExecutorOptions): AgentExecutor {
  const { knowledgeBase } = options
  const newId = options.newId ?? randomUUID
  const maxReadChars = maxReadCharsOf(options.maxReadChars)
  return {
    async execute (requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> {
      const userMessage = requestContext.userMessage
      const reply = answerTurn(firstChars(messageText(userMessage), maxReadChars), {
        knowledgeBase,
        requestMessageId: userMessage.messageId,
        turnId: newId()
      })
      eventBus.publish(AgentEvent.message(buildReplyMessage({
        contextId: requestContext.contextId,
        ...(requestContext.task !== undefined ? { taskId: requestContext.task.id } : {}),
        parts: reply.parts,
        envelope: reply.envelope,
        messageId: newId()
      })))
    },
    // A Message reply creates no task, so there is never anything of ours to cancel: publish nothing.
    async cancelTask (): Promise<void> {}
  }
}
