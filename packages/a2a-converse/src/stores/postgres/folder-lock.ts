/**
 * One process per data folder. PGlite has no lock of its own, and two processes writing one folder corrupt it, so
 * the folder holds a lock file with its holder's pid (`<folder>/gateway.lock`), created exclusively. A lock whose
 * process is gone (a SIGKILL leaves it behind) is taken over; one whose process runs refuses the second opener. A lock
 * naming this very process is a leftover too (a container restarted: the gateway is pid 1 again); this process's
 * own open folders are known in memory.
 */
import { mkdir, open, readFile, rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { ConverseError, ERROR_CODES } from '../../core/errors.js'

export const LOCK_FILE = 'gateway.lock'

const heldHere = new Set<string>()

/** The folder is held by another running process. */
export class FolderInUseError extends ConverseError {
  readonly pid: number
  constructor (folder: string, pid: number) {
    super(ERROR_CODES.FOLDER_IN_USE, `${folder} is in use by another running process (pid ${pid})`)
    this.pid = pid
  }
}

/** Signals a process (`process.kill`): signal 0 only asks whether it exists. Injectable so tests reach every answer. */
export type SignalProcess = (pid: number, signal: 0) => void

/** Whether the process runs: signal 0 reaches it, or it exists but belongs to another user (EPERM). */
export function running (pid: number, signal: SignalProcess = process.kill): boolean {
  try {
    signal(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Creates the folder if missing (0700) and takes its lock (a 0600 file); resolves to the release. Throws
 * FolderInUseError, or the fs error.
 */
export async function lockFolder (folder: string, signal: SignalProcess = process.kill): Promise<() => Promise<void>> {
  await mkdir(folder, { recursive: true, mode: 0o700 })
  const path = join(resolve(folder), LOCK_FILE)
  if (heldHere.has(path)) throw new FolderInUseError(folder, process.pid)
  // Again after removing a lock its process left behind (another opener may take it first: its lock is then read).
  for (;;) {
    try {
      const file = await open(path, 'wx', 0o600)
      await file.writeFile(String(process.pid))
      await file.close()
      heldHere.add(path)
      return async () => {
        heldHere.delete(path)
        await rm(path, { force: true })
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10)
    if (Number.isInteger(pid) && pid !== process.pid && running(pid, signal)) throw new FolderInUseError(folder, pid)
    await rm(path, { force: true })
  }
}
