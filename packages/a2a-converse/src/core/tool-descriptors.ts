import type { RoutineDeclaration } from './routine-declarations.js'
import { deepFreeze } from './deep-freeze.js'

export interface ToolInputSchema {
  type: 'object'
  properties: Record<string, { type: string, description?: string }>
  required: string[]
  additionalProperties: false
}

/** One exposed routine as a tool: the card's params.tools entry and the tools route's entry. */
export interface ToolDescriptor {
  toolName: string
  description: string
  inputSchema: ToolInputSchema
}

/** The JSON Schema of a routine's input, built from its slots. */
export function routineInputSchema (routine: RoutineDeclaration): ToolInputSchema {
  const properties: ToolInputSchema['properties'] = {}
  const required: string[] = []
  for (const slot of routine.slots) {
    properties[slot.key] = slot.description === undefined
      ? { type: slot.type }
      : { type: slot.type, description: slot.description }
    if (slot.required === true) required.push(slot.key)
  }
  return { type: 'object', properties, required, additionalProperties: false }
}

/** One descriptor per exposed routine, in declaration order; `[]` when none is exposed. Frozen: shared as is. */
export function buildToolDescriptors (routines: readonly RoutineDeclaration[]): readonly ToolDescriptor[] {
  const tools = routines
    .filter((routine) => routine.exposed === true)
    .map((routine) => deepFreeze({
      toolName: routine.toolName as string,
      description: routine.description,
      inputSchema: routineInputSchema(routine)
    }))
  return Object.freeze(tools)
}
