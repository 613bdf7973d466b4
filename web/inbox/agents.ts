/**
 * The inbox's Agents view (docs/agents.md, "The Agents view"): every agent the operator API lists with its state,
 * publish from JSON or YAML, edit with If-Match, open or close to walk-ins, add or remove a document, unpublish
 * (confirmed inside the page), an agent's versions. AGENTS_FILE's agents are shown read-only (the API refuses to
 * change them). Everything the API returns is put on the page as text (textContent), never as HTML.
 */
import { AgentsApi, describeFailure, RequestFailed } from './agents-api.js'
import type { AgentDocument, AgentEntry, AgentVersion } from './agents-api.js'

export interface AgentsViewOptions {
  /** The operator key the page signed in with. */
  key: () => string
  /** The key was refused (401): the page signs out. */
  refused: () => void
}

function element<T extends HTMLElement> (id: string): T {
  return document.getElementById(id) as T
}

function text (tag: string, content: string, className?: string): HTMLElement {
  const node = document.createElement(tag)
  node.textContent = content
  if (className !== undefined) node.className = className
  return node
}

function when (iso: string | undefined): string {
  if (iso === undefined) return ''
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString()
}

/**
 * `served` as the API reports it: a store version, "file", or null (this instance does not serve it yet); anything
 * else as the API wrote it (the field is the API's to evolve).
 */
function servedText (served: AgentEntry['served']): string {
  if (served === null) return 'not yet'
  if (served === 'file') return 'from AGENTS_FILE'
  return typeof served === 'number' ? `version ${served}` : JSON.stringify(served)
}

const ui = {
  title: element('agents-title'),
  summary: element('agents-summary'),
  status: element('agents-status'),
  list: element<HTMLUListElement>('agents-list'),
  listError: element('agents-error'),
  agent: element('agent-detail'),
  agentTitle: element('agent-title'),
  readOnly: element('agent-read-only'),
  facts: element('agent-facts'),
  actions: element('agent-actions'),
  edit: element<HTMLButtonElement>('agent-edit'),
  open: element<HTMLButtonElement>('agent-open'),
  close: element<HTMLButtonElement>('agent-close'),
  unpublish: element<HTMLButtonElement>('agent-unpublish'),
  confirm: element('unpublish-confirm'),
  question: element('unpublish-question'),
  yes: element<HTMLButtonElement>('unpublish-yes'),
  no: element<HTMLButtonElement>('unpublish-no'),
  documents: element<HTMLUListElement>('agent-documents'),
  documentsEmpty: element('agent-documents-empty'),
  documentForm: element<HTMLFormElement>('document-form'),
  versions: element<HTMLOListElement>('agent-versions'),
  versionsTitle: element('agent-versions-title'),
  agentError: element('agent-error'),
  editor: element<HTMLFormElement>('editor-form'),
  editorTitle: element('editor-title'),
  definition: element<HTMLTextAreaElement>('definition'),
  submit: element<HTMLButtonElement>('editor-submit'),
  reload: element<HTMLButtonElement>('editor-reload'),
  cancel: element<HTMLButtonElement>('editor-cancel'),
  editorError: element('editor-error')
}
/** The page's key and its sign-out, given by agentsView. */
let options: AgentsViewOptions = { key: () => '', refused: () => {} }
const api = new AgentsApi(() => options.key())
const state = {
  agents: [] as AgentEntry[],
  /** The agent shown in detail. */
  selected: undefined as string | undefined,
  /** The agent being edited and the ETag of the version loaded into the editor. */
  editing: undefined as { id: string, etag: string } | undefined
}

/** Shows a failure where it happened (a 401 signs out). */
const failed = (error: unknown, where: HTMLElement): void => {
  if (error instanceof RequestFailed && error.status === 401) options.refused()
  else where.textContent = describeFailure(error)
}

const said = (message: string): void => { ui.status.textContent = message }

async function load (): Promise<void> {
  try {
    const { agents, maxAgents } = await api.list()
    state.agents = agents
    ui.listError.textContent = ''
    ui.summary.textContent = `${agents.length} ${agents.length === 1 ? 'agent' : 'agents'}; the store holds at most ${maxAgents} published ones.`
    renderList()
    if (state.selected !== undefined) await loadAgent(state.selected)
  } catch (error) {
    failed(error, ui.listError)
  }
}

function renderList (): void {
  ui.list.replaceChildren(...state.agents.map((agent) => {
    const button = document.createElement('button')
    button.type = 'button'
    button.dataset.agentId = agent.id
    button.setAttribute('aria-current', String(agent.id === state.selected))
    button.append(text('span', agent.name ?? agent.id, 'agent-name'), text('span', agent.id, 'agent-id'))
    const badges = document.createElement('span')
    badges.append(text('span', agent.source === 'file' ? 'AGENTS_FILE · read-only' : `published · version ${agent.version ?? ''}`, 'badge'))
    badges.append(text('span', agent.walkIn ? 'walk-ins open' : 'walk-ins closed', agent.walkIn ? 'badge' : 'badge needs'))
    badges.append(text('span', `served: ${servedText(agent.served)}`, 'badge'))
    if (agent.tools.length > 0) badges.append(text('span', `tools: ${agent.tools.join(', ')}`, 'badge'))
    button.append(badges)
    button.addEventListener('click', () => { select(agent.id) })
    const item = document.createElement('li')
    item.append(button)
    return item
  }))
}

function select (id: string): void {
  state.selected = id
  ui.confirm.hidden = true
  ui.agentError.textContent = ''
  renderList()
  loadAgent(id).then(() => { ui.agentTitle.focus() })
}

async function loadAgent (id: string): Promise<void> {
  try {
    const { agent } = await api.get(id)
    // The audit is the store's: AGENTS_FILE's agents have none (the API answers 409).
    const versions = agent.source === 'store' ? await api.versions(id) : []
    if (id === state.selected) renderAgent(agent, versions)
  } catch (error) {
    if (!(error instanceof RequestFailed && error.status === 404)) return failed(error, ui.agentError)
    // Unpublished meanwhile (another operator, another tab): the list says so.
    state.selected = undefined
    ui.agent.hidden = true
    said(`${id} is not published any more.`)
    await load()
  }
}

function renderAgent (agent: AgentEntry, versions: AgentVersion[]): void {
  const stored = agent.source === 'store'
  ui.agent.hidden = false
  ui.agentTitle.textContent = `${agent.name ?? agent.id} (${agent.id})`
  ui.readOnly.hidden = stored
  const facts: Array<[string, string]> = [
    ['Source', stored ? 'published (the state store)' : 'AGENTS_FILE'],
    ['Version', stored ? String(agent.version) : 'the file\'s'],
    ['Served here', servedText(agent.served)],
    ['Walk-ins', agent.walkIn ? 'open: anyone may call it' : 'closed: a caller needs a credential'],
    ['Tools', agent.tools.length > 0 ? agent.tools.join(', ') : 'none'],
    ['Updated', stored ? `${when(agent.updatedAt)} by ${agent.updatedBy ?? ''}` : '']
  ]
  ui.facts.replaceChildren(...facts.filter(([, value]) => value !== '').flatMap(([term, value]) => [text('dt', term), text('dd', value)]))
  ui.actions.hidden = !stored
  ui.open.hidden = agent.walkIn
  ui.close.hidden = !agent.walkIn
  ui.documentForm.hidden = !stored || agent.definition.upstream !== undefined
  const documents = Array.isArray(agent.definition.documents) ? agent.definition.documents : []
  ui.documents.replaceChildren(...documents.map((known) => {
    const item = documentItem(known)
    if (stored) {
      const remove = text('button', `Remove ${known.title}`) as HTMLButtonElement
      remove.type = 'button'
      remove.addEventListener('click', () => { change(api.removeDocument(agent.id, known.id), `Removed the document ${known.id}.`) })
      item.append(remove)
    }
    return item
  }))
  ui.documentsEmpty.textContent = typeof agent.definition.documents === 'string'
    ? 'A folder of Markdown documents (AGENTS_FILE).'
    : 'No inline documents.'
  ui.documentsEmpty.hidden = documents.length > 0
  ui.versionsTitle.hidden = !stored
  ui.versions.replaceChildren(...versions.map((entry) =>
    text('li', `Version ${entry.version}: ${entry.change}${entry.detail !== undefined ? ` ${entry.detail}` : ''} by ${entry.by}, ${when(entry.at)}`)))
}

function documentItem (known: AgentDocument): HTMLLIElement {
  const item = document.createElement('li')
  item.dataset.documentId = known.id
  item.append(text('span', known.title, 'document-title'), text('span', ` · ${known.id}`))
  if (known.sourceUrl !== undefined) item.append(text('span', ` · ${known.sourceUrl}`, 'document-source'))
  return item
}

/** A change of the selected agent: the list and the agent reloaded after it, or the API's refusal shown. */
async function change (request: Promise<{ version?: number }>, message: string): Promise<boolean> {
  ui.agentError.textContent = ''
  try {
    const { version } = await request
    said(`${message} Now version ${version ?? ''}.`)
    await load()
    return true
  } catch (error) {
    failed(error, ui.agentError)
    return false
  }
}

/** Unpublishes the version listed (a change made meanwhile is a 412, not unpublished unseen). */
async function unpublish (id: string): Promise<void> {
  ui.agentError.textContent = ''
  try {
    await api.unpublish(id, state.agents.find((entry) => entry.id === id)?.version)
    state.selected = undefined
    ui.confirm.hidden = true
    ui.agent.hidden = true
    said(`Unpublished ${id}.`)
    await load()
    ui.title.focus()
  } catch (error) {
    failed(error, ui.agentError)
    // Changed since listed: list it again, so what the operator confirms next is the current version.
    if (error instanceof RequestFailed && error.status === 412) await load()
  }
}

// ---- the editor: publish, or replace a loaded version ------------------------------------------------------

function startPublish (): void {
  state.editing = undefined
  ui.editorTitle.textContent = 'Publish an agent'
  ui.submit.textContent = 'Publish'
  ui.reload.hidden = true
  ui.cancel.hidden = true
  ui.editorError.textContent = ''
}

async function startEdit (id: string): Promise<void> {
  ui.editorError.textContent = ''
  try {
    const { agent, etag } = await api.get(id)
    // The ETag names the version loaded (a replace over any other is a 412); the version is the same tag.
    state.editing = { id, etag: etag ?? `"${agent.version ?? ''}"` }
    ui.definition.value = JSON.stringify(agent.definition, null, 2)
    ui.editorTitle.textContent = `Edit ${id} (version ${agent.version ?? ''})`
    ui.submit.textContent = 'Save a new version'
    ui.reload.hidden = false
    ui.cancel.hidden = false
    ui.definition.focus()
  } catch (error) {
    failed(error, ui.editorError)
  }
}

async function submit (): Promise<void> {
  ui.editorError.textContent = ''
  const editing = state.editing
  try {
    if (editing === undefined) {
      const { agent } = await api.publish(ui.definition.value)
      said(`Published ${agent.id} (version ${agent.version ?? ''}).`)
      ui.definition.value = ''
      state.selected = agent.id
    } else {
      const { agent } = await api.replace(editing.id, ui.definition.value, editing.etag)
      said(`Saved ${agent.id}: now version ${agent.version ?? ''}.`)
      ui.definition.value = ''
      startPublish()
    }
    await load()
  } catch (error) {
    failed(error, ui.editorError)
  }
}

/** The view picked: the list (re)loaded. */
function show (): void {
  said('')
  load()
}

/** Signed out: nothing of the session stays on the page (a definition being written included). */
function reset (): void {
  state.agents = []
  state.selected = undefined
  ui.list.replaceChildren()
  ui.agent.hidden = true
  ui.definition.value = ''
  ui.documentForm.reset()
  startPublish()
  said('')
}

// ---- wiring --------------------------------------------------------------------------------------------------

/** Wires the view's controls once; the page calls `show` when the view is picked and `reset` on a sign-out. */
export function agentsView (given: AgentsViewOptions): { show: () => void, reset: () => void } {
  options = given

  const selected = (): string => state.selected as string
  ui.edit.addEventListener('click', () => { startEdit(selected()) })
  ui.open.addEventListener('click', () => { change(api.access(selected(), 'open'), `Opened ${selected()} to walk-ins.`) })
  ui.close.addEventListener('click', () => { change(api.access(selected(), 'close'), `Closed ${selected()} to walk-ins.`) })
  ui.unpublish.addEventListener('click', () => {
    ui.question.textContent = `Unpublish ${selected()}? Its card and endpoints answer 404 from then on; its conversations are kept.`
    ui.confirm.hidden = false
    ui.no.focus()
  })
  ui.no.addEventListener('click', () => {
    ui.confirm.hidden = true
    ui.unpublish.focus()
  })
  ui.yes.addEventListener('click', () => { unpublish(selected()) })
  ui.documentForm.addEventListener('submit', (event) => {
    event.preventDefault()
    const fields = new FormData(ui.documentForm)
    const sourceUrl = String(fields.get('sourceUrl'))
    const added: AgentDocument = {
      id: String(fields.get('id')),
      title: String(fields.get('title')),
      body: String(fields.get('body')),
      ...(sourceUrl !== '' ? { sourceUrl } : {})
    }
    change(api.addDocument(selected(), added), `Added the document ${added.id}.`).then((done) => { if (done) ui.documentForm.reset() })
  })
  ui.editor.addEventListener('submit', (event) => {
    event.preventDefault()
    submit()
  })
  ui.reload.addEventListener('click', () => { startEdit((state.editing as { id: string }).id) })
  ui.cancel.addEventListener('click', () => {
    ui.definition.value = ''
    startPublish()
  })

  return { show, reset }
}
