/**
 * The operator inbox page at /inbox: a few fixed files (no directory is served, so no path reaches anything else),
 * each answered with a strict Content-Security-Policy — scripts, styles and requests from this origin only, no
 * inline script or style, no frames, no forms posting elsewhere. The page talks to the operator API with the key
 * the operator types in (kept in sessionStorage, sent as a Bearer header, never in a URL).
 *
 * The HTML and CSS are read from `web/inbox/`, the scripts from `dist/web/inbox/` (inbox.js and the modules it
 * imports, compiled from web/inbox/*.ts by `npm run build`). A missing file answers 404 with a JSON body saying how
 * to build it.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'

export interface InboxPageOptions {
  /** Folder of index.html and inbox.css. */
  pageDir: string
  /** Folder of the compiled scripts (inbox.js and the modules it imports). */
  scriptDir: string
}

export const INBOX_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

/** The page's script and the modules it imports (web/inbox/*.ts compiled). */
const SCRIPTS = ['inbox.js', 'agents.js', 'agents-api.js']

const SECURITY_HEADERS = Object.freeze({
  'content-security-policy': INBOX_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache'
})

export default async function inboxPage (fastify: FastifyInstance, options: InboxPageOptions): Promise<void> {
  const files: Record<string, { path: string, type: string }> = {
    '/inbox': { path: join(options.pageDir, 'index.html'), type: 'text/html; charset=utf-8' },
    '/inbox/': { path: join(options.pageDir, 'index.html'), type: 'text/html; charset=utf-8' },
    '/inbox/inbox.css': { path: join(options.pageDir, 'inbox.css'), type: 'text/css; charset=utf-8' },
    ...Object.fromEntries(SCRIPTS.map((name) => [`/inbox/${name}`, { path: join(options.scriptDir, name), type: 'text/javascript; charset=utf-8' }]))
  }
  fastify.addHook('onSend', async (_request, reply) => { reply.headers(SECURITY_HEADERS) })
  for (const [url, file] of Object.entries(files)) {
    fastify.get(url, async (_request, reply) => {
      let body: Buffer
      try {
        body = await readFile(file.path)
      } catch {
        return reply.code(404).send({
          statusCode: 404,
          error: 'Not Found',
          message: `the inbox file ${url} is missing: run \`npm run build\` (it compiles the page's script)`
        })
      }
      return reply.type(file.type).send(body)
    })
  }
}
