/**
 * A knowledge document split into its searchable chunks and a chunk's text into sentences: what is indexed
 * and what an answer may quote, with stable ids (docs/knowledge.md "Chunks").
 */

/** One source document (a Markdown body; headings start sections). */
export interface KnowledgeDocument {
  /** Stable id, cited as `documentId`; no whitespace and no `#` (the chunk-id separator). */
  id: string
  title: string
  /** Markdown. */
  body: string
  /** Public address of the document; cited only when present. Must start with http:// or https://. */
  sourceUrl?: string
}

/** A searchable piece of a document: one paragraph (or list) under its nearest heading. */
export interface KnowledgeChunk {
  /** `<documentId>#<index>`, e.g. `returns-policy#0`. */
  id: string
  documentId: string
  /** 0-based position of the chunk in its document. */
  index: number
  title: string
  /** Text of the nearest heading above the chunk, when there is one. */
  section?: string
  /** Plain text (Markdown inline markup removed); list items are separated by newlines. */
  text: string
  sourceUrl?: string
}

const HEADING = /^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$/
const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+/

/** Removes Markdown inline markup: links and images keep their text, emphasis and code marks go. */
export function plainInline (text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[^\p{L}\p{N}*])\*(?!\s)([^*]+?)\*(?![\p{L}\p{N}])/gu, '$1$2')
    .replace(/(^|[^\p{L}\p{N}_])_(?!\s)([^_]+?)_(?![\p{L}\p{N}])/gu, '$1$2')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\s+/g, ' ')
    .trim()
}

/** One block of non-blank lines → plain text: wrapped lines joined, each list item on its own line. */
function blockText (lines: string[]): string {
  const entries: string[] = []
  for (const line of lines) {
    const item = LIST_ITEM.test(line)
    const text = plainInline(line.replace(LIST_ITEM, ''))
    if (item || entries.length === 0) entries.push(text)
    else entries[entries.length - 1] = `${entries[entries.length - 1]} ${text}`.trim()
  }
  return entries.filter((entry) => entry !== '').join('\n')
}

/**
 * Splits a document into chunks: every run of non-blank lines (a paragraph or a list) is one chunk; headings
 * are not chunks, they become the `section` of the chunks below them. Ids are `<documentId>#<index>`, the
 * index counting chunks in document order from 0, so they are stable while the document is unchanged.
 */
export function chunkDocument (document: KnowledgeDocument): KnowledgeChunk[] {
  const chunks: KnowledgeChunk[] = []
  let section: string | undefined
  let block: string[] = []
  const flush = (): void => {
    const text = blockText(block)
    block = []
    if (text === '') return
    const index = chunks.length
    chunks.push({
      id: `${document.id}#${index}`,
      documentId: document.id,
      index,
      title: document.title,
      ...(section !== undefined ? { section } : {}),
      text,
      ...(document.sourceUrl !== undefined ? { sourceUrl: document.sourceUrl } : {})
    })
  }
  for (const line of document.body.split(/\r?\n/)) {
    const heading = HEADING.exec(line)
    if (heading !== null) {
      flush()
      const text = plainInline(heading[1] ?? '')
      section = text === '' ? undefined : text
    } else if (line.trim() === '') {
      flush()
    } else {
      block.push(line)
    }
  }
  flush()
  return chunks
}

/** Sentences of a chunk's text: each line (list item) on its own, then split after `.`, `!` or `?`. */
export function sentences (text: string): string[] {
  return text.split('\n')
    .flatMap((line) => line.split(/(?<=[.!?]["”')\]]?)\s+(?=["“([]?[\p{Lu}\p{N}])/u))
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== '')
}
