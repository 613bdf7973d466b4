/**
 * Reading a user's message: its parts, its text, and slot values for a routine (approval answers and cancel
 * words: routine-message.ts). Works on A2A 1.0 wire JSON parts (`{ text }`, `{ data }`, `{ url }`, `{ raw }`) and,
 * through `toWireParts`, on the @a2a-js/sdk internal parts (`{ content: { $case, value } }`) that an AgentExecutor
 * sees. Rules: docs/routines.md.
 */
import type { PendingInput } from '../core/envelope.js'
import { InvalidOptionError } from '../core/errors.js'

/** One A2A 1.0 part as JSON on the wire. Only the members this module reads are typed. */
export interface WirePart {
  text?: string
  data?: unknown
  url?: string
  raw?: string
  mediaType?: string
  filename?: string
  metadata?: Record<string, unknown>
}

/** The @a2a-js/sdk internal part (ts-proto oneof), structurally: what `RequestContext.userMessage.parts` holds. */
export interface SdkPartLike {
  content?: { $case: string, value: unknown }
  metadata?: Record<string, unknown>
  mediaType?: string
  filename?: string
}

/**
 * Parts in either shape → wire parts. SDK parts (`content.$case` text / data / url / raw) are converted; wire
 * parts pass through; anything else (null, strings, parts without content) is dropped.
 */
export function toWireParts (parts: readonly unknown[] | undefined): WirePart[] {
  const out: WirePart[] = []
  for (const part of parts ?? []) {
    if (part === null || typeof part !== 'object') continue
    const content = (part as SdkPartLike).content
    if (content === undefined || content === null || typeof content !== 'object' || typeof content.$case !== 'string') {
      if ('content' in part) continue
      out.push(part as WirePart)
      continue
    }
    const sdk = part as SdkPartLike
    const wire: WirePart = {}
    switch (content.$case) {
      case 'text': wire.text = String(content.value); break
      case 'data': wire.data = content.value; break
      case 'url': wire.url = String(content.value); break
      case 'raw': wire.raw = Buffer.from(content.value as Uint8Array).toString('base64'); break
      default: continue
    }
    if (sdk.mediaType !== undefined && sdk.mediaType !== '') wire.mediaType = sdk.mediaType
    if (sdk.filename !== undefined && sdk.filename !== '') wire.filename = sdk.filename
    if (sdk.metadata !== undefined) wire.metadata = sdk.metadata
    out.push(wire)
  }
  return out
}

/** The text of the message: its text parts joined with a newline, trimmed. */
export function messageText (parts: readonly unknown[] | undefined): string {
  return toWireParts(parts)
    .filter((part) => typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n')
    .trim()
}

/**
 * How many characters of a message's text the runtime reads by default: what it searches, matches against routine
 * triggers and slot rules, and keeps in the conversation. A knowledge question or a slot value is never this long,
 * and every search the runtime runs costs time in proportion to the text (docs/conversation.md, "Long messages").
 */
export const DEFAULT_MAX_READ_CHARS = 4096

/** The `maxReadChars` option: the default when not given, else a positive integer. */
export function maxReadCharsOf (value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_READ_CHARS
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidOptionError('maxReadChars', 'must be a positive integer')
  return value
}

/**
 * The parts as the runtime reads them: text parts cut so that their text together holds at most `maxChars`
 * characters (later text parts then empty); other parts as they are.
 */
export function readableParts (parts: readonly WirePart[], maxChars: number): WirePart[] {
  let left = maxChars
  return parts.map((part) => {
    if (typeof part.text !== 'string') return part
    const text = firstChars(part.text, left)
    left -= text.length
    return text === part.text ? part : { ...part, text }
  })
}

/**
 * The first `count` characters of `text`, as a string of their own. A plain `slice` of a long string is, in V8, a
 * view that keeps the whole original alive: the conversation would then hold every long message whole while its
 * memory bound counted only the cut (test/library/runtime/long-messages.test.ts measures the heap).
 */
export function firstChars (text: string, count: number): string {
  if (text.length <= count) return text
  // UTF-16LE round-trips every code unit, unpaired surrogates included.
  return Buffer.from(text.slice(0, count), 'utf16le').toString('utf16le')
}

/** The objects (not arrays) held by the message's data parts, in order. */
export function messageData (parts: readonly unknown[] | undefined): Array<Record<string, unknown>> {
  return toWireParts(parts)
    .map((part) => part.data)
    .filter((data): data is Record<string, unknown> => data !== null && typeof data === 'object' && !Array.isArray(data))
}

export interface SlotInputContext {
  /** The routine's declared slot keys (a declaration's `slots` or their keys). */
  slots: ReadonlyArray<string | { key: string }>
  /** What the routine waits for: the engine's `pendingInput(progress)`. Drives the plain-text rule. */
  pending?: readonly PendingInput[]
}

export interface ParsedSlotInput {
  /**
   * Values by key. Declared keys are spelled as declared; unknown keys from pairs or data parts are kept as
   * received so that the engine's `fill` rejects them with a reason.
   */
  values: Record<string, unknown>
  /** Where the values came from, in order of first appearance. */
  sources: Array<'data' | 'pairs' | 'text'>
  /** Text that was read as neither pairs nor a plain value (e.g. a greeting before the first pair). */
  unparsed?: string
}

/** One key/value pair: a key (letters, digits, _, - or spaces) at the start or after , ; or a newline, then : or =. */
const PAIR = /(?:^|[,;\n])[ \t]*([A-Za-z_][A-Za-z0-9_ -]{0,63}?)[ \t]*[:=]/g

/**
 * Slot values from a message's parts:
 * - a data part holding an object: its members are slot values (keys matched case-insensitively);
 * - text holding `key: value` or `key=value` pairs, separated by commas, semicolons or newlines; a value runs
 *   to the next pair, so it may contain commas. Keys are matched case-insensitively, ignoring spaces, `_` and
 *   `-` ("party size" → partySize). Text counts as pairs only when at least one key is a declared slot;
 * - otherwise plain text, when exactly one slot is pending (or, among several, exactly one required slot):
 *   the whole trimmed text is that slot's value.
 * Later parts win over earlier ones for the same key. Call `detectCancel` (and, while a routine waits for
 * approval, `detectApproval`) first, or use `interpretRoutineMessage` which does.
 */
export function parseSlotInput (parts: readonly unknown[] | undefined, context: SlotInputContext): ParsedSlotInput {
  const keys = context.slots.map((slot) => typeof slot === 'string' ? slot : slot.key)
  const canonical = (key: string): string | undefined => {
    const exact = keys.find((declared) => declared === key)
    if (exact !== undefined) return exact
    const loose = looseKey(key)
    return keys.find((declared) => looseKey(declared) === loose)
  }
  const values: Record<string, unknown> = {}
  const sources: ParsedSlotInput['sources'] = []
  const unparsed: string[] = []
  const note = (source: ParsedSlotInput['sources'][number]): void => {
    if (!sources.includes(source)) sources.push(source)
  }
  for (const part of toWireParts(parts)) {
    const data = part.data
    if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
      for (const [key, value] of Object.entries(data)) values[canonical(key) ?? key] = value
      note('data')
      continue
    }
    if (typeof part.text !== 'string' || part.text.trim() === '') continue
    const pairs = liftIntroducedPairs(readPairs(part.text), (key) => canonical(key) !== undefined)
    if (pairs.pairs.some(([key]) => canonical(key) !== undefined)) {
      for (const [key, value] of pairs.pairs) values[canonical(key) ?? key] = value
      if (pairs.before !== '') unparsed.push(pairs.before)
      note('pairs')
      continue
    }
    const target = plainTextTarget(context.pending ?? [])
    if (target !== undefined) {
      values[target] = part.text.trim()
      note('text')
    } else {
      unparsed.push(part.text.trim())
    }
  }
  const result: ParsedSlotInput = { values, sources }
  if (unparsed.length > 0) result.unparsed = unparsed.join('\n')
  return result
}

function looseKey (key: string): string {
  return key.toLowerCase().replace(/[\s_-]/g, '')
}

interface PairsRead { pairs: Array<[string, string]>, before: string }

function readPairs (text: string): PairsRead {
  const matches = [...text.matchAll(PAIR)]
  const pairs: Array<[string, string]> = []
  matches.forEach((match, index) => {
    const start = (match.index as number) + match[0].length
    const end = index + 1 < matches.length ? matches[index + 1].index as number : text.length
    pairs.push([match[1].trim(), text.slice(start, end).replace(/[\s,;]+$/, '').trim()])
  })
  const before = matches.length > 0 ? text.slice(0, matches[0].index).trim() : text.trim()
  return { pairs, before }
}

/**
 * "book a table: date=2026-12-24, partySize=2": a key that is no slot, whose value opens with pairs of slots, is a
 * phrase introducing them, not a pair: it joins the text before the pairs, and its value's pairs count.
 */
function liftIntroducedPairs (read: PairsRead, isSlot: (key: string) => boolean): PairsRead {
  const pairs: Array<[string, string]> = []
  const before = [read.before]
  for (const [key, value] of read.pairs) {
    const inner = isSlot(key) ? undefined : readPairs(value)
    if (inner !== undefined && inner.before === '' && inner.pairs.some(([innerKey]) => isSlot(innerKey))) {
      before.push(key)
      pairs.push(...inner.pairs)
    } else {
      pairs.push([key, value])
    }
  }
  return { pairs, before: before.filter((text) => text !== '').join(' ') }
}

/** The slot plain text fills: the only pending slot, else the only pending required slot, else none. */
function plainTextTarget (pending: readonly PendingInput[]): string | undefined {
  if (pending.length === 1) return pending[0].key
  const required = pending.filter((entry) => entry.required)
  return required.length === 1 ? required[0].key : undefined
}
