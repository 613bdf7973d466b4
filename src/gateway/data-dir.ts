/**
 * DATA_DIR, the embedded state's folder: held by one gateway (its lock), private to the gateway's user (folders
 * 0700, files 0600), the embedded database's files in `pgdata/` and the generated secrets key beside them in
 * `secrets.key` — outside the files the database writes, so that a copy of the database (its WAL included) holds
 * sealed push credentials without the key that opens them (docs/state.md).
 */
import { mkdir, open, readdir, readFile, rename, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { lockFolder, LOCK_FILE } from 'a2a-converse/postgres'
import { octal, privateFolder } from 'a2a-converse/postgres'
import { generateSecretsKey, parseSecretsKey, SecretBox, SecretsKeyError } from 'a2a-converse/push'
import type { SecretsConfig } from './config.js'

/** The embedded database's folder in DATA_DIR. */
export const DATABASE_FOLDER = 'pgdata'
/** The generated secrets key's file in DATA_DIR (without SECRETS_KEY). */
export const SECRETS_KEY_FILE = 'secrets.key'
/** Where an earlier version's database files are gathered before they become DATABASE_FOLDER (a move cut short resumes). */
const MOVING_FOLDER = 'pgdata.moving'

export interface DataDirLogger {
  info (obj: Record<string, unknown>, msg: string): void
  warn (obj: Record<string, unknown>, msg: string): void
}

export interface PreparedDataDir {
  /** The embedded database's folder. */
  databaseFolder: string
  /** Releases DATA_DIR's lock. */
  release: () => Promise<void>
}

async function exists (path: string): Promise<boolean> {
  return await stat(path).then(() => true, () => false)
}

/**
 * Takes DATA_DIR (created 0700 when missing; refused while another gateway holds it), makes what group or others
 * could reach private (one warning line says what was), and moves an earlier version's database files (kept in
 * DATA_DIR itself) into `pgdata/`.
 */
export async function prepareDataDir (dataDir: string, logger: DataDirLogger): Promise<PreparedDataDir> {
  const release = await lockFolder(dataDir)
  try {
    const opened = await privateFolder(dataDir)
    if (opened.length > 0) {
      logger.warn({ dataDir, opened: opened.length, path: opened[0].path, mode: octal(opened[0].mode) },
        `DATA_DIR ${dataDir}: ${opened.length} files and folders were open to group or others (${opened[0].path} was ${octal(opened[0].mode)}); ` +
        `made private (chmod -R go-rwx ${dataDir})`)
    }
    await moveEarlierLayout(dataDir, logger)
  } catch (error) {
    await release()
    throw error
  }
  return { databaseFolder: join(dataDir, DATABASE_FOLDER), release }
}

/** Before this layout the database's files were DATA_DIR's own (PG_VERSION at its top). Renames: one file system. */
async function moveEarlierLayout (dataDir: string, logger: DataDirLogger): Promise<void> {
  const moving = join(dataDir, MOVING_FOLDER)
  if (!await exists(join(dataDir, 'PG_VERSION')) && !await exists(moving)) return
  await mkdir(moving, { recursive: true, mode: 0o700 })
  const ours = new Set([LOCK_FILE, SECRETS_KEY_FILE, DATABASE_FOLDER, MOVING_FOLDER])
  // PG_VERSION last: while it is at the top, a start cut short knows there is more to move.
  const names = (await readdir(dataDir)).filter((name) => !ours.has(name))
    .sort((a, b) => Number(a === 'PG_VERSION') - Number(b === 'PG_VERSION'))
  for (const name of names) await rename(join(dataDir, name), join(moving, name))
  await rename(moving, join(dataDir, DATABASE_FOLDER))
  logger.info({ dataDir }, `DATA_DIR ${dataDir}: the embedded database's files moved into ${DATABASE_FOLDER}/ (the secrets key is kept beside it)`)
}

/**
 * The embedded state's secret box: SECRETS_KEY when set (with SECRETS_KEY_PREVIOUS, and a generated key file left
 * from before, for reading), else the key in DATA_DIR/secrets.key — generated (0600) at the first start. The log
 * says which key seals, and where a generated one is.
 */
export async function embeddedSecretBox (dataDir: string, secrets: SecretsConfig, logger: DataDirLogger): Promise<SecretBox> {
  const file = join(dataDir, SECRETS_KEY_FILE)
  const stored = await readFile(file, 'utf8').then((text) => {
    try {
      return parseSecretsKey(text)
    } catch (error) {
      throw new SecretsKeyError(`${file} ${(error as Error).message}; restore the key file, or remove it if no push config was stored with it`)
    }
  }, (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  if (secrets.key !== undefined) {
    if (stored !== undefined) logger.info({ file }, `push credentials sealed with SECRETS_KEY; the generated key in ${file} is read until every row is re-sealed (then it may be deleted)`)
    return new SecretBox(secrets.key, stored === undefined ? secrets.previous : [...secrets.previous, stored])
  }
  if (stored !== undefined) {
    logger.info({ file }, `push credentials sealed with the generated key in ${file} (SECRETS_KEY unset)`)
    return new SecretBox(stored)
  }
  const generated = generateSecretsKey()
  const handle = await open(file, 'wx', 0o600)
  await handle.writeFile(`${generated}\n`)
  await handle.sync()
  await handle.close()
  logger.info({ file }, `push credentials sealed with a key generated into ${file} (SECRETS_KEY unset): keep it with DATA_DIR, or the stored push configs cannot be read`)
  return new SecretBox(parseSecretsKey(generated))
}
