/**
 * An agent's MCP tools: `ask_agent`, then one tool per exposed routine whose inputSchema is the very object the
 * card's params.tools[] and the tools route serve. Built once per agent declaration, so an agent put or replaced
 * at runtime brings its tools at once.
 */
import type { Tool } from '@modelcontextprotocol/server'
import type { A2AService } from '../a2a/service.js'
import type { ConverseExtension, ResolvedAgent } from '../core/converse-extension.js'
import { InvalidOptionError } from '../core/errors.js'
import { TOOL_OUTPUT_SCHEMA } from './tool-result.js'
import { ASK_AGENT } from './tool-calls.js'

/**
 * ask_agent's input: `message` is required and named so by the issue; the ids continue a conversation, and a
 * `messageId` makes a retry safe (the A2A retry rule: the same messageId with the same content gets the first reply).
 */
export const ASK_AGENT_INPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: Object.freeze({
    message: Object.freeze({ type: 'string', minLength: 1, description: 'What to say to the agent (plain text).' }),
    contextId: Object.freeze({ type: 'string', minLength: 1, description: 'Continue this conversation (from an earlier reply, either door).' }),
    taskId: Object.freeze({ type: 'string', minLength: 1, description: 'Continue this task (a routine waiting for input or approval).' }),
    messageId: Object.freeze({
      type: 'string',
      minLength: 1,
      maxLength: 128,
      description: 'This turn\'s id (default: a new one). A call sent again with the same messageId and message (a lost reply) gets the first reply back; nothing runs twice.'
    })
  }),
  required: Object.freeze(['message']),
  additionalProperties: false
})

/** The SDK's type of a tool's input and output schema (the objects are frozen JSON Schema, served as they are). */
type ToolSchema = Tool['inputSchema']

/** Whether a routine of the agent takes the MCP door's own tool name. */
function ownsAskAgent (agent: ResolvedAgent): boolean {
  return agent.tools.some((tool) => tool.toolName === ASK_AGENT)
}

/** The tools of one agent: ask_agent, then the routine tools in declaration order. */
function toolsOf (agent: ResolvedAgent): Tool[] {
  return [
    {
      name: ASK_AGENT,
      title: 'Ask the agent',
      description: 'Send one message to the agent and get its reply, with the converse envelope (coverage, ' +
        'citations, ownership, routine status) and the contextId/taskId to continue the conversation.',
      inputSchema: ASK_AGENT_INPUT_SCHEMA as unknown as ToolSchema,
      outputSchema: TOOL_OUTPUT_SCHEMA as unknown as ToolSchema
    },
    ...agent.tools.map((tool) => ({
      name: tool.toolName,
      description: tool.description,
      // The very object of the card and the tools route.
      inputSchema: tool.inputSchema as unknown as ToolSchema,
      outputSchema: TOOL_OUTPUT_SCHEMA as unknown as ToolSchema
    }))
  ]
}

/** Refuses, at construction, an agent served here whose routine takes ask_agent's name. */
export function checkAskAgentFree (extension: ConverseExtension, services: ReadonlyMap<string, A2AService>): void {
  for (const [agentId, agent] of extension.agents) {
    if (services.has(agentId) && ownsAskAgent(agent)) {
      throw new InvalidOptionError(`agents "${agentId}" routines`, `toolName "${ASK_AGENT}" is the MCP door's own tool: rename the routine's toolName`)
    }
  }
}

/**
 * The tools of an agent served here now; undefined: not served (one put at runtime whose routine takes
 * ask_agent's name is not). Built once per declaration: a removed agent's tools go with it (nothing here keeps
 * it alive).
 */
export function agentTools (extension: ConverseExtension, services: ReadonlyMap<string, A2AService>): (agentId: string) => Tool[] | undefined {
  const built = new WeakMap<ResolvedAgent, Tool[]>()
  return (agentId) => {
    const agent = extension.agents.get(agentId)
    if (agent === undefined || !services.has(agentId)) return undefined
    let tools = built.get(agent)
    if (tools === undefined) {
      if (ownsAskAgent(agent)) return undefined
      built.set(agent, tools = toolsOf(agent))
    }
    return tools
  }
}
