import { SLOT_TYPES, type SlotType } from './envelope.js'
import { RoutineDeclarationError } from './errors.js'

/** One input a routine collects. */
export interface SlotDeclaration {
  key: string
  type: SlotType
  required?: boolean
  /** Required for required slots: it is what a client shows the user. */
  description?: string
  /** The step that asks for it (optional slots are offered while that step is current). */
  step?: string
}

export interface RoutineStepDeclaration {
  id: string
  /** What the agent says when the step starts waiting for input. */
  prompt?: string
}

/** A routine is declared once; the card, the tools route and the runtime all read this declaration. */
export interface RoutineDeclaration {
  name: string
  /** The tool name when exposed; matches the card skill id. */
  toolName?: string
  description: string
  /** Exposed routines are listed as tools on the card and may be called by name. */
  exposed?: boolean
  /** False when the operator has switched the routine off: typed calls are then declined. Default true. */
  enabled?: boolean
  steps?: RoutineStepDeclaration[]
  slots: SlotDeclaration[]
  /** When present, the routine waits for approval once every required slot is filled. */
  approval?: { prompt?: string }
  /** Plain-text phrases that start the routine in conversation (e.g. "book a table"). */
  triggers?: string[]
}

export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/
const SLOT_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/
const slotTypes = new Set<string>(SLOT_TYPES)

/**
 * Checks declarations once, at registration. Throws a RoutineDeclarationError naming the routine and the field:
 * duplicate names or toolNames, a toolName outside ^[a-zA-Z0-9_-]{1,64}$, an exposed routine without a toolName,
 * an unknown slot type, a required slot without a description, a slot naming an undeclared step.
 */
export function validateRoutineDeclarations (routines: unknown): asserts routines is RoutineDeclaration[] {
  if (!Array.isArray(routines)) throw new RoutineDeclarationError('(all)', 'routines', 'must be an array')
  const names = new Set<string>()
  const toolNames = new Set<string>()
  routines.forEach((routine: Partial<RoutineDeclaration>, index) => {
    if (routine === null || typeof routine !== 'object') {
      throw new RoutineDeclarationError(`#${index}`, 'routine', 'must be an object')
    }
    const name = routine.name
    if (typeof name !== 'string' || name.trim() === '') {
      throw new RoutineDeclarationError(`#${index}`, 'name', 'must be a non-empty string')
    }
    if (names.has(name)) throw new RoutineDeclarationError(name, 'name', 'is declared twice')
    names.add(name)
    if (typeof routine.description !== 'string' || routine.description.trim() === '') {
      throw new RoutineDeclarationError(name, 'description', 'must be a non-empty string')
    }
    if (routine.exposed !== undefined && typeof routine.exposed !== 'boolean') {
      throw new RoutineDeclarationError(name, 'exposed', 'must be a boolean')
    }
    if (routine.enabled !== undefined && typeof routine.enabled !== 'boolean') {
      throw new RoutineDeclarationError(name, 'enabled', 'must be a boolean')
    }
    if (routine.toolName !== undefined) {
      if (typeof routine.toolName !== 'string' || !TOOL_NAME_PATTERN.test(routine.toolName)) {
        throw new RoutineDeclarationError(name, 'toolName', 'must match ^[a-zA-Z0-9_-]{1,64}$')
      }
      if (toolNames.has(routine.toolName)) {
        throw new RoutineDeclarationError(name, 'toolName', `"${routine.toolName}" is used by another routine`)
      }
      toolNames.add(routine.toolName)
    } else if (routine.exposed === true) {
      throw new RoutineDeclarationError(name, 'toolName', 'is required when the routine is exposed')
    }
    const steps = new Set<string>()
    if (routine.steps !== undefined) {
      if (!Array.isArray(routine.steps)) throw new RoutineDeclarationError(name, 'steps', 'must be an array')
      for (const step of routine.steps) {
        if (step === null || typeof step !== 'object' || typeof step.id !== 'string' || step.id === '') {
          throw new RoutineDeclarationError(name, 'steps[].id', 'must be a non-empty string')
        }
        if (steps.has(step.id)) throw new RoutineDeclarationError(name, `steps.${step.id}`, 'is declared twice')
        steps.add(step.id)
      }
    }
    if (routine.approval !== undefined && (routine.approval === null || typeof routine.approval !== 'object')) {
      throw new RoutineDeclarationError(name, 'approval', 'must be an object')
    }
    if (routine.triggers !== undefined &&
      (!Array.isArray(routine.triggers) || routine.triggers.some((phrase) => typeof phrase !== 'string' || phrase.trim() === ''))) {
      throw new RoutineDeclarationError(name, 'triggers', 'must be an array of non-empty strings')
    }
    validateSlots(name, routine.slots, steps)
  })
}

function validateSlots (routine: string, slots: unknown, steps: Set<string>): void {
  if (!Array.isArray(slots)) throw new RoutineDeclarationError(routine, 'slots', 'must be an array')
  const keys = new Set<string>()
  for (const slot of slots as Array<Partial<SlotDeclaration>>) {
    if (slot === null || typeof slot !== 'object' || typeof slot.key !== 'string' || !SLOT_KEY_PATTERN.test(slot.key)) {
      throw new RoutineDeclarationError(routine, 'slots[].key', 'must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$')
    }
    const field = `slots.${slot.key}`
    if (keys.has(slot.key)) throw new RoutineDeclarationError(routine, field, 'is declared twice')
    keys.add(slot.key)
    if (typeof slot.type !== 'string' || !slotTypes.has(slot.type)) {
      throw new RoutineDeclarationError(routine, `${field}.type`, `must be one of ${SLOT_TYPES.join(', ')}`)
    }
    if (slot.required !== undefined && typeof slot.required !== 'boolean') {
      throw new RoutineDeclarationError(routine, `${field}.required`, 'must be a boolean')
    }
    if (slot.description !== undefined && typeof slot.description !== 'string') {
      throw new RoutineDeclarationError(routine, `${field}.description`, 'must be a string')
    }
    if (slot.required === true && (slot.description === undefined || slot.description.trim() === '')) {
      throw new RoutineDeclarationError(routine, `${field}.description`, 'is required for a required slot')
    }
    if (slot.step !== undefined && !steps.has(slot.step)) {
      throw new RoutineDeclarationError(routine, `${field}.step`, `names undeclared step "${String(slot.step)}"`)
    }
  }
}
