/**
 * What a message to a running routine means: a cancel, an approval answer (while the routine waits for one), or
 * slot values (slot-input.ts reads them). Whole-message phrase matching, so an answer with more in it ("yes but
 * change the order") is not taken for a yes.
 */
import { messageData, messageText, parseSlotInput, toWireParts, type ParsedSlotInput, type SlotInputContext } from './slot-input.js'

const APPROVE_WORDS = new Set([
  'yes', 'y', 'yeah', 'yep', 'yup', 'sure', 'ok', 'okay', 'approve', 'approved', 'i approve', 'confirm',
  'confirmed', 'i confirm', 'go ahead', 'do it', 'accept', 'accepted'
])
const DECLINE_WORDS = new Set([
  'no', 'n', 'nope', 'nah', 'decline', 'declined', 'i decline', 'reject', 'rejected', 'i reject', 'deny',
  'denied', 'don t', 'do not'
])
const CANCEL_WORDS = new Set(['cancel', 'stop', 'abort', 'quit', 'never mind', 'nevermind', 'forget it', 'cancel it'])
/** Words around an answer that do not change it: "yes please", "please cancel", "no, thanks". */
const POLITE = /^(?:please )?(.*?)(?: (?:please|thanks|thank you|thx))*$/

/** Lower-cased, punctuation turned into spaces (apostrophes included: "don't" → "don t"), spaces collapsed. */
function normalise (text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim()
}

function matchesPhrase (text: string, phrases: Set<string>): boolean {
  const normalised = normalise(text)
  if (normalised === '') return false
  const core = (POLITE.exec(normalised) as RegExpExecArray)[1]
  return phrases.has(core)
}

/**
 * An approval answer: a data part `{ approved: true | false }`, or a text that is an approval phrase (yes, ok,
 * approve, confirm, …) or a decline phrase (no, decline, reject, …), optionally with "please" / "thanks".
 * Whole-message match, case-insensitive: "yes please" approves, "yes but change the order" does not.
 * Returns true (approved), false (declined) or undefined (not an answer).
 */
export function detectApproval (parts: readonly unknown[] | undefined): boolean | undefined {
  for (const data of messageData(parts)) {
    if (typeof data.approved === 'boolean') return data.approved
  }
  const text = messageText(parts)
  if (matchesPhrase(text, APPROVE_WORDS)) return true
  if (matchesPhrase(text, DECLINE_WORDS)) return false
  return undefined
}

/**
 * True when the message asks to cancel the routine: its whole text is "cancel", "stop", "abort", "quit",
 * "never mind" or "forget it" (case-insensitive, punctuation and "please" / "thanks" ignored), or a data part
 * holds `{ cancel: true }`.
 */
export function detectCancel (parts: readonly unknown[] | undefined): boolean {
  if (messageData(parts).some((data) => data.cancel === true)) return true
  return matchesPhrase(messageText(parts), CANCEL_WORDS)
}

export type RoutineMessage =
  | { kind: 'cancel' }
  | { kind: 'approval', approved: boolean }
  | ({ kind: 'slots' } & ParsedSlotInput)

/**
 * What a message to a running routine means, checked in this order: cancel; an approval answer (only when
 * `awaitingApproval`); slot values (possibly none: `values` is then `{}`).
 */
export function interpretRoutineMessage (
  parts: readonly unknown[] | undefined,
  context: SlotInputContext & { awaitingApproval?: boolean }
): RoutineMessage {
  const wire = toWireParts(parts)
  if (detectCancel(wire)) return { kind: 'cancel' }
  if (context.awaitingApproval === true) {
    const approved = detectApproval(wire)
    if (approved !== undefined) return { kind: 'approval', approved }
  }
  return { kind: 'slots', ...parseSlotInput(wire, context) }
}
