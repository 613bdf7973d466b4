/**
 * A child app (child-app.ts) run under valgrind's callgrind, its instructions counted between dumps: what
 * instructions.ts and push-instructions.ts count. V8 on one thread (`--single-threaded`: the JIT counts on the thread
 * that serves), a young generation of SEMI_SPACE_MB that holds everything a run allocates, an old generation whose
 * first limit the run does not reach, and no memory reducer (`--no-memory-reducer`: on Node 22 and 24 it starts
 * collections of its own when the process looks idle, as it does between dumps). `--expose-gc`: the child's `usage(true)`.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startChildApp, type ChildApp } from './child-app.js'

const run = promisify(execFile)

/** A young generation that takes every object the run allocates: no collection at all (checked by the callers). */
const SEMI_SPACE_MB = 1024

export interface CountedChild {
  child: ChildApp
  /** Ends the current part of the count (callgrind_control --dump): parts are numbered from 1. */
  dump: () => Promise<void>
  /** The instructions of a dumped part. */
  part: (index: number) => Promise<number>
  close: () => Promise<void>
}

/** Starts `exportName` of `moduleUrl` under callgrind with the Node binary `node`. */
export async function startCounted (moduleUrl: string, exportName: string, node: string): Promise<CountedChild> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-instructions-'))
  let child: ChildApp
  try {
    child = await startChildApp(moduleUrl, exportName, {
      execPath: 'valgrind',
      execArgv: ['-q', '--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${join(dir, 'cg.%p')}`,
        node, '--single-threaded', `--min-semi-space-size=${SEMI_SPACE_MB}`, `--max-semi-space-size=${SEMI_SPACE_MB}`,
        `--initial-old-space-size=${SEMI_SPACE_MB}`, '--no-memory-reducer', '--expose-gc']
    })
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw error
  }
  return {
    child,
    dump: async () => { await run('callgrind_control', ['--dump', String(child.pid)]) },
    part: async (index) => {
      const file = join(dir, `cg.${child.pid}.${index}`)
      const summary = /^summary: (\d+)$/m.exec(await readFile(file, 'utf8'))
      if (summary === null) throw new Error(`${exportName}: no summary line in ${file}`)
      return Number(summary[1])
    },
    close: async () => {
      await child.close()
      await rm(dir, { recursive: true, force: true })
    }
  }
}

/** Runs `jobs` two at a time (this machine kind has two cores; counts do not depend on the load). */
export async function inPairs<T> (jobs: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(jobs.length)
  let next = 0
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++
      results[index] = await jobs[index]()
    }
  }
  await Promise.all([worker(), worker()])
  return results
}
