/** Reads knowledge documents from Markdown files with a small YAML front matter (id, title, optional sourceUrl). */
import { readdir, readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { parse } from 'yaml'
import { KnowledgeBase, KnowledgeBaseError, type KnowledgeBaseOptions, type KnowledgeDocument, type OutOfScopeTopic } from './knowledge-base.js'

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/

/**
 * Parses one Markdown source: a front matter block between `---` lines with `id` and `title` (strings) and an
 * optional `sourceUrl`, then the body. `origin` (a file name) only appears in error messages.
 */
export function parseDocument (source: string, origin: string): KnowledgeDocument {
  const match = FRONT_MATTER.exec(source)
  if (match === null) throw new KnowledgeBaseError(`${origin}: missing front matter (a block between "---" lines)`)
  let meta: unknown
  try {
    meta = parse(match[1])
  } catch (error) {
    throw new KnowledgeBaseError(`${origin}: invalid front matter: ${(error as Error).message}`)
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    throw new KnowledgeBaseError(`${origin}: front matter must be a mapping`)
  }
  const { id, title, sourceUrl } = meta as Record<string, unknown>
  if (typeof id !== 'string' || id === '') throw new KnowledgeBaseError(`${origin}: front matter needs an "id" string`)
  if (typeof title !== 'string' || title === '') throw new KnowledgeBaseError(`${origin}: front matter needs a "title" string`)
  if (sourceUrl !== undefined && sourceUrl !== null && typeof sourceUrl !== 'string') {
    throw new KnowledgeBaseError(`${origin}: "sourceUrl" must be a string`)
  }
  return {
    id,
    title,
    body: source.slice(match[0].length),
    ...(typeof sourceUrl === 'string' && sourceUrl !== '' ? { sourceUrl } : {})
  }
}

/** Every `*.md` file of a folder (not recursive), in file-name order. */
export async function loadDocuments (folder: string): Promise<KnowledgeDocument[]> {
  const names = (await readdir(folder, { withFileTypes: true }))
    .filter((entry) => entry.isFile() && entry.name.toLowerCase().endsWith('.md'))
    .map((entry) => entry.name)
    .sort()
  return Promise.all(names.map(async (name) => parseDocument(await readFile(join(folder, name), 'utf8'), join(folder, name))))
}

/** The knowledge part of an agent declaration (e.g. examples/demo/agent.json). */
export interface KnowledgeDeclaration {
  /** Folder of Markdown documents, relative to the declaration's own folder. */
  documents?: string
  outOfScope?: Array<string | OutOfScopeTopic>
}

/**
 * Builds the knowledge base an agent declaration describes: its `documents` folder (resolved against
 * `baseDir`, the folder of the declaration file) and its `outOfScope` topics. No `documents` → no documents.
 */
export async function loadKnowledgeBase (
  declaration: KnowledgeDeclaration,
  baseDir: string,
  options: Omit<KnowledgeBaseOptions, 'documents' | 'outOfScope'> = {}
): Promise<KnowledgeBase> {
  const documents = declaration.documents === undefined ? [] : await loadDocuments(resolve(baseDir, declaration.documents))
  return new KnowledgeBase({ ...options, documents, outOfScope: declaration.outOfScope })
}
