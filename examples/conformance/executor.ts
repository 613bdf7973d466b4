/**
 * The agent the official A2A 1.0 conformance kit (a2a-tck) drives: its `scenarios/*.feature` key the agent's
 * behaviour to the request message's `messageId` prefix (`tck-complete-task-<session>` → COMPLETED with "Hello
 * from TCK", `tck-input-required-…` → INPUT_REQUIRED, …). A message whose prefix no scenario names completes
 * with a message naming it. Protocol behaviour (errors, capabilities, contextId / taskId rules) is the
 * gateway's, which is what the kit measures; this executor only plays the scenarios.
 */
import { Artifact, Message, Task, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server'

export interface ConformanceExecutorOptions {
  /**
   * The kit's TCK_STREAMING_TIMEOUT in ms: the resubscription scenario keeps its task WORKING for twice this long
   * before completing it. Default 2000 (the kit's run-kit.sh default of 2 s).
   */
  streamingTimeoutMs?: number
}

/** One scenario step: a status change (with an optional agent message) or an artifact (chunk). */
type Step =
  | { state: string, text?: string }
  | { artifact: Record<string, unknown>, append?: boolean, lastChunk?: boolean }
  | { wait: true }

interface Scenario {
  /** A direct Message reply instead of a task. */
  message?: string
  steps?: Step[]
}

const text = (value: string) => ({ parts: [{ text: value }] })
const completed: Step = { state: 'TASK_STATE_COMPLETED' }
const working: Step = { state: 'TASK_STATE_WORKING' }
const fileArtifact = { artifactId: 'file', parts: [{ raw: Buffer.from('Generated file content').toString('base64'), filename: 'output.txt', mediaType: 'text/plain' }] }
const streamed = (value: string): Step[] => [working, { artifact: { artifactId: 'stream', ...text(value) } }, completed]

/**
 * The scenarios of kit/scenarios/core_operations.feature and streaming.feature, by messageId prefix. Looked up
 * longest prefix first (`tck-artifact-file-url` before `tck-artifact-file`).
 */
const SCENARIOS: Record<string, Scenario> = {
  'tck-complete-task': { steps: [{ state: 'TASK_STATE_COMPLETED', text: 'Hello from TCK' }] },
  'tck-artifact-text': { steps: [{ artifact: { artifactId: 'text', ...text('Generated text content') } }, completed] },
  'tck-artifact-file': { steps: [{ artifact: fileArtifact }, completed] },
  'tck-artifact-file-url': {
    steps: [{ artifact: { artifactId: 'file-url', parts: [{ url: 'https://example.com/output.txt', filename: 'output.txt', mediaType: 'text/plain' }] } }, completed]
  },
  'tck-artifact-data': { steps: [{ artifact: { artifactId: 'data', parts: [{ data: { key: 'value', count: 42 } }] } }, completed] },
  'tck-message-response': { message: 'Direct message response' },
  'tck-input-required': { steps: [{ state: 'TASK_STATE_INPUT_REQUIRED', text: 'Input required by TCK' }] },
  'tck-reject-task': { steps: [{ state: 'TASK_STATE_REJECTED', text: 'rejected' }] },
  'tck-stream-001': { steps: streamed('Stream hello from TCK') },
  'tck-stream-002': { steps: [completed] },
  'tck-stream-003': { steps: streamed('Stream task lifecycle') },
  'tck-stream-ordering-001': { steps: streamed('Ordered output') },
  'tck-stream-artifact-text': { steps: streamed('Streamed text content') },
  'tck-stream-artifact-file': { steps: [working, { artifact: fileArtifact }, completed] },
  'tck-stream-artifact-chunked': {
    steps: [
      working,
      { artifact: { artifactId: 'chunked', ...text('chunk-1 ') }, append: false, lastChunk: false },
      { artifact: { artifactId: 'chunked', ...text('chunk-2') }, append: true, lastChunk: true },
      completed
    ]
  },
  'test-resubscribe-message-id': { steps: [working, { wait: true }, completed] }
}
const PREFIXES = Object.keys(SCENARIOS).sort((a, b) => b.length - a.length)

/** The scenario a messageId plays, or undefined when no prefix matches. */
export function scenarioOf (messageId: string): Scenario | undefined {
  const prefix = PREFIXES.find((candidate) => messageId.startsWith(candidate))
  return prefix === undefined ? undefined : SCENARIOS[prefix]
}

/** The kit's session suffix (`-<8 hex>`) taken off, so the reply names the prefix the kit used. */
export function prefixOf (messageId: string): string {
  return messageId.replace(/-[0-9a-f]{8}$/, '')
}

export function conformanceExecutor (options: ConformanceExecutorOptions = {}): AgentExecutor {
  const waitMs = 2 * (options.streamingTimeoutMs ?? 2000)
  /** The waits of running tasks, by task id: a cancel ends its task's wait at once, with `true`. */
  const waits = new Map<string, (canceled: boolean) => void>()
  const wait = (taskId: string) => new Promise<boolean>((resolve) => {
    const timer = setTimeout(wake, waitMs, false)
    function wake (canceled: boolean): void {
      clearTimeout(timer)
      waits.delete(taskId)
      resolve(canceled)
    }
    waits.set(taskId, wake)
  })

  const agentMessage = (context: RequestContext, value: string) => Message.fromJSON({
    messageId: `tck-agent-${context.userMessage.messageId}-${Date.now()}`,
    contextId: context.contextId,
    taskId: context.taskId,
    role: 'ROLE_AGENT',
    ...text(value)
  })

  const publishStep = (context: RequestContext, bus: ExecutionEventBus, step: Exclude<Step, { wait: true }>): void => {
    if ('state' in step) {
      bus.publish(AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({
        taskId: context.taskId,
        contextId: context.contextId,
        status: {
          state: step.state,
          timestamp: new Date().toISOString(),
          ...(step.text === undefined ? {} : { message: Message.toJSON(agentMessage(context, step.text)) })
        }
      })))
      return
    }
    bus.publish(AgentEvent.artifactUpdate({
      taskId: context.taskId,
      contextId: context.contextId,
      artifact: Artifact.fromJSON(step.artifact),
      append: step.append ?? false,
      lastChunk: step.lastChunk ?? true,
      metadata: undefined
    }))
  }

  return {
    async execute (context, bus) {
      const { messageId } = context.userMessage
      const scenario = scenarioOf(messageId) ?? { steps: [{ state: 'TASK_STATE_COMPLETED', text: `Unhandled messageId prefix: ${prefixOf(messageId)}` }] }
      if (scenario.message !== undefined) {
        bus.publish(AgentEvent.message(Message.fromJSON({
          messageId: `tck-agent-${messageId}`, contextId: context.contextId, role: 'ROLE_AGENT', ...text(scenario.message)
        })))
        bus.finished()
        return
      }
      bus.publish(AgentEvent.task(context.task ?? Task.fromJSON({
        id: context.taskId,
        contextId: context.contextId,
        status: { state: 'TASK_STATE_SUBMITTED', timestamp: new Date().toISOString() },
        history: [Message.toJSON(context.userMessage)]
      })))
      for (const step of scenario.steps as Step[]) {
        if ('wait' in step) {
          // Canceled while waiting: the cancel published the final state. (Every other step is published at once.)
          if (await wait(context.taskId)) break
          continue
        }
        publishStep(context, bus, step)
      }
      bus.finished()
    },
    async cancelTask (taskId, bus) {
      waits.get(taskId)?.(true)
      bus.publish(AgentEvent.statusUpdate(TaskStatusUpdateEvent.fromJSON({
        taskId, status: { state: 'TASK_STATE_CANCELED', timestamp: new Date().toISOString() }
      })))
      bus.finished()
    }
  }
}
