/**
 * A data folder for this process's user alone: the folder and every folder in it 0700, every file 0600. PGlite's
 * file system (Emscripten's NODEFS) sets the modes the WebAssembly side asks for with chmod — 0666 for the files a
 * first start writes, 0644 for the relation cache files — whatever the process umask, so its writes are followed by
 * `privateFolder`, which takes group's and others' bits away from whatever has them.
 */
import { chmod, lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'

/** A path of the folder group or others could reach, and the mode it had. */
export interface OpenedEntry {
  path: string
  mode: number
}

export function octal (mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0')
}

/**
 * Makes the folder and what is in it private (folders 0700, files 0600; symbolic links are neither followed nor
 * changed); resolves to the entries that group or others could read, write or enter before, folder first.
 */
export async function privateFolder (folder: string): Promise<OpenedEntry[]> {
  const opened: OpenedEntry[] = []
  const visit = async (path: string): Promise<void> => {
    // Gone meanwhile (a WAL segment recycled, a folder removed under a closing database): nothing to protect.
    const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw error
    })
    if (stats === undefined || stats.isSymbolicLink()) return
    const directory = stats.isDirectory()
    if ((stats.mode & 0o077) !== 0) {
      opened.push({ path, mode: stats.mode & 0o777 })
      // Another user's file: chmod fails (EPERM), which the caller reports naming the folder.
      await chmod(path, directory ? 0o700 : 0o600)
    }
    if (directory) for (const name of await readdir(path)) await visit(join(path, name))
  }
  await visit(folder)
  return opened
}
