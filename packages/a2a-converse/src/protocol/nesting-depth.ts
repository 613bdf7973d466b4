/**
 * How deep a decoded JSON body nests, measured without recursion: a request nested thousands of levels deep must
 * be refused at the door, before code that walks values recursively (copies, serializers, validators) sees it.
 */

/**
 * The deepest nesting a request may have: the body object is level 1, `params` level 2, `params.message` level 3,
 * so a message's `metadata`, `parts[].data` or a typed call's `arguments` may nest about 60 levels.
 * (Protocol Buffers parsers stop at 100 levels; this leaves room for the wrapping the server adds.)
 */
export const MAX_NESTING_DEPTH = 64

/**
 * The path (member names and array indexes from the root) of the first object or array that lies deeper than
 * `limit` levels, or undefined when none does. Visits each value once, with an explicit stack.
 */
export function tooDeepPath (value: unknown, limit: number = MAX_NESTING_DEPTH): Array<string | number> | undefined {
  if (value === null || typeof value !== 'object') return undefined
  // Each entry: the value, its depth, and the entry it came from with its key (for the path, built only on failure).
  interface Frame { value: object, depth: number, parent?: Frame, key?: string | number }
  const stack: Frame[] = [{ value, depth: 1 }]
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if (frame.depth > limit) return pathOf(frame)
    const entries: Array<[string | number, unknown]> = Array.isArray(frame.value)
      ? frame.value.map((item, index) => [index, item])
      : Object.entries(frame.value)
    for (const [key, child] of entries) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: frame.depth + 1, parent: frame, key })
    }
  }
  return undefined
}

function pathOf (frame: { parent?: typeof frame, key?: string | number }): Array<string | number> {
  const path: Array<string | number> = []
  for (let at: typeof frame | undefined = frame; at?.parent !== undefined; at = at.parent) path.unshift(at.key as string | number)
  return path
}

/** `['message', 'parts', 0, 'data']` → `message.parts[0].data`. */
export function fieldPath (path: ReadonlyArray<string | number>): string {
  let field = ''
  for (const segment of path) {
    if (typeof segment === 'number') field += `[${segment}]`
    else field = field === '' ? segment : `${field}.${segment}`
  }
  return field
}
