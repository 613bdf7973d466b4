/**
 * The operator inbox (browser side). Talks to the operator API of the gateway that served it; the key is kept in
 * sessionStorage (this tab only) and sent as a Bearer header, never in a URL. Everything a caller or an agent wrote
 * is put on the page as text (textContent), never as HTML. The live list follows GET /api/v1/agents/:id/events,
 * read with fetch (EventSource cannot send an Authorization header). The knowledge-gaps view (docs/knowledge-gaps.md)
 * reads GET …/answers and …/answers/unanswered and draws its chart itself, as SVG elements (no library, no inline
 * style: colours are classes of inbox.css). The Agents view is agents.ts.
 */
import { agentsView } from './agents.js'

type Owner = 'ai_owned' | 'human_owned'
type View = 'conversations' | 'gaps' | 'agents'

interface Entry {
  contextId: string
  ownership: Owner
  lastActivityAt: string
  needsPerson: string[]
  lastTurn?: { role: string, at: string, text: string }
  version: number
}

interface Envelope {
  author?: string
  answerCoverage?: { availability: string, coverage?: string, reason?: string }
  ownership?: { state: Owner, suppressed: boolean }
  routine?: Routine
  invocation?: { toolName: string, outcome: string }
  citations?: Array<{ title: string, sourceUrl?: string, documentId: string }>
}

interface Routine {
  name: string
  toolName?: string
  status: string
  pendingInput: Array<{ key: string, type: string, required: boolean, description: string }>
}

interface Trace {
  contextId: string
  /** The authenticated caller the conversation belongs to; absent for a walk-in's. */
  caller?: { id: string, contextId: string }
  ownership: Owner
  needsPerson: string[]
  routine?: Routine
  turns: Array<{ id: string, at: string, role: 'user' | 'agent' | 'human', text: string, author?: string, envelope?: Envelope }>
  version: number
}

type Verdict = 'answered' | 'partial' | 'unanswered' | 'unclear' | 'notAssessed'
type Counts = Record<Verdict, number>

interface Series {
  window: string
  from: string
  to: string
  bucketMs: number
  buckets: Array<Counts & { start: string }>
  totals: Counts
}

interface QuestionGroup {
  key: string
  text: string
  count: number
  partial: number
  lastAskedAt: string
  conversations: string[]
}

const VERDICTS: Verdict[] = ['answered', 'partial', 'unanswered', 'unclear', 'notAssessed']
const VERDICT_LABELS: Record<Verdict, string> = {
  answered: 'answered', partial: 'partial', unanswered: 'unanswered', unclear: 'unclear', notAssessed: 'not assessed'
}
const WINDOW_LABELS: Record<string, string> = { '24h': 'the last 24 hours', '7d': 'the last 7 days' }
const SVG = 'http://www.w3.org/2000/svg'
/** A live change refreshes the open knowledge-gaps view at most this often. */
const GAPS_REFRESH_MS = 3000

const KEY_STORAGE = 'a2a-converse.operator-key'
const RETRY_MS = 2000

const NEEDS_LABELS: Record<string, string> = {
  waiting_for_approval: 'waits for approval',
  unanswered: 'unanswered',
  scope_boundary: 'out of scope',
  waiting_for_reply: 'waits for a reply'
}
const OWNER_LABELS: Record<Owner, string> = { ai_owned: 'the assistant', human_owned: 'a person' }
const AUTHOR_LABELS: Record<string, string> = { user: 'Caller', agent: 'Assistant', human: 'Person' }

function element<T extends HTMLElement> (id: string): T {
  return document.getElementById(id) as T
}

const ui = {
  live: element('live'),
  signOut: element<HTMLButtonElement>('sign-out'),
  signIn: element('sign-in'),
  signInForm: element<HTMLFormElement>('sign-in-form'),
  key: element<HTMLInputElement>('key'),
  signInError: element('sign-in-error'),
  workspace: element('workspace'),
  agent: element<HTMLSelectElement>('agent'),
  owner: element<HTMLSelectElement>('owner'),
  needsPerson: element<HTMLInputElement>('needs-person'),
  list: element<HTMLUListElement>('conversations'),
  listEmpty: element('list-empty'),
  more: element<HTMLButtonElement>('more'),
  listError: element('list-error'),
  conversation: element('conversation'),
  title: element('conversation-title'),
  caller: element('caller'),
  ownerState: element('owner-state'),
  needs: element('needs'),
  routine: element('routine'),
  takeover: element<HTMLButtonElement>('takeover'),
  release: element<HTMLButtonElement>('release'),
  turns: element<HTMLOListElement>('turns'),
  replyForm: element<HTMLFormElement>('reply-form'),
  reply: element<HTMLTextAreaElement>('reply'),
  send: element<HTMLButtonElement>('send'),
  replyHint: element('reply-hint'),
  conversationError: element('conversation-error'),
  views: element('views'),
  showConversations: element<HTMLButtonElement>('show-conversations'),
  showGaps: element<HTMLButtonElement>('show-gaps'),
  showAgents: element<HTMLButtonElement>('show-agents'),
  agents: element('agents'),
  gaps: element('gaps'),
  gapsTitle: element('gaps-title'),
  gapsAgent: element<HTMLSelectElement>('gaps-agent'),
  gapsWindow: element<HTMLSelectElement>('gaps-window'),
  gapsRefresh: element<HTMLButtonElement>('gaps-refresh'),
  gapsChart: element('gaps-chart'),
  gapsSummary: element('gaps-summary'),
  gapsLegend: element<HTMLUListElement>('gaps-legend'),
  questions: element<HTMLOListElement>('questions'),
  questionsEmpty: element('questions-empty'),
  questionsMore: element<HTMLButtonElement>('questions-more'),
  gapsError: element('gaps-error')
}

const state = {
  key: sessionStorage.getItem(KEY_STORAGE) ?? '',
  agent: '',
  entries: new Map<string, Entry>(),
  next: undefined as string | undefined,
  open: undefined as string | undefined,
  openVersion: 0,
  /** Ends the current live stream (a new agent, a sign-out). */
  stopLive: undefined as (() => void) | undefined,
  /** The knowledge-gaps view is shown (instead of the conversations). */
  gapsShown: false,
  /** The view shown (showView). */
  view: 'conversations' as View,
  questionsNext: undefined as string | undefined,
  /** A refresh of the knowledge-gaps view waiting (live changes come in bursts). */
  gapsTimer: undefined as number | undefined
}

class Refused extends Error {}

const agents = agentsView({ key: () => state.key, refused: () => { signOut('The key was refused.') } })

async function api (path: string, init: RequestInit = {}): Promise<any> {
  const headers: Record<string, string> = { authorization: `Bearer ${state.key}` }
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`/api/v1/agents${path}`, { ...init, headers, cache: 'no-store' })
  if (response.status === 401) throw new Refused('the key was refused')
  const body = await response.json().catch(() => ({}))
  if (!response.ok) throw new Error(typeof body.message === 'string' ? body.message : `HTTP ${response.status}`)
  return body
}

function text (tag: string, content: string, className?: string): HTMLElement {
  const node = document.createElement(tag)
  node.textContent = content
  if (className !== undefined) node.className = className
  return node
}

function when (iso: string): string {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString()
}

// ---- sign in / out -------------------------------------------------------------------------------------------

interface ServedAgent { id: string, served?: number | string | null }

/** The agents this instance serves: conversations are theirs (a published agent not yet served has none here). */
async function servedAgents (): Promise<ServedAgent[]> {
  return ((await api('')).agents as ServedAgent[]).filter((agent) => agent.served !== null)
}

/** The conversations' and the gaps' agent menus, keeping what each had chosen where it is still served. */
function fillAgentMenus (agents: ServedAgent[]): void {
  for (const select of [ui.agent, ui.gapsAgent]) {
    const chosen = select.value
    select.replaceChildren(...agents.map((agent) => {
      const option = text('option', agent.id) as HTMLOptionElement
      option.value = agent.id
      return option
    }))
    if (agents.some((agent) => agent.id === chosen)) select.value = chosen
  }
}

/**
 * Back from the Agents view: agents published or unpublished there (or elsewhere: changes are live) join or leave
 * the menus; a conversation list whose agent is gone moves to the first one served.
 */
async function refreshAgentMenus (): Promise<void> {
  const before = ui.agent.value
  try {
    fillAgentMenus(await servedAgents())
  } catch (error) {
    failed(error, ui.live)
    return
  }
  if (ui.agent.value !== before) selectAgent(ui.agent.value)
}

async function signIn (key: string): Promise<void> {
  state.key = key
  ui.signInError.textContent = ''
  let agents: ServedAgent[]
  try {
    agents = await servedAgents()
  } catch (error) {
    signOut(error instanceof Refused ? 'The key was refused.' : `Cannot reach the gateway: ${(error as Error).message}`)
    return
  }
  sessionStorage.setItem(KEY_STORAGE, key)
  fillAgentMenus(agents)
  ui.signIn.hidden = true
  ui.views.hidden = false
  showView('conversations')
  ui.signOut.hidden = false
  ui.key.value = ''
  selectAgent(ui.agent.value)
}

function signOut (message = ''): void {
  state.stopLive?.()
  state.key = ''
  sessionStorage.removeItem(KEY_STORAGE)
  ui.workspace.hidden = true
  ui.gaps.hidden = true
  ui.agents.hidden = true
  agents.reset()
  ui.views.hidden = true
  ui.signOut.hidden = true
  ui.signIn.hidden = false
  ui.live.textContent = ''
  ui.signInError.textContent = message
  ui.key.focus()
}

function failed (error: unknown, where: HTMLElement): void {
  if (error instanceof Refused) signOut('The key was refused.')
  else where.textContent = (error as Error).message
}

// ---- the list ------------------------------------------------------------------------------------------------

function selectAgent (agent: string): void {
  state.stopLive?.()
  state.agent = agent
  ui.agent.value = agent
  ui.gapsAgent.value = agent
  closeConversation()
  follow(agent)
  if (state.gapsShown) loadGaps()
}

function filters (): URLSearchParams {
  const query = new URLSearchParams()
  if (ui.owner.value !== '') query.set('owner', ui.owner.value)
  if (ui.needsPerson.checked) query.set('needsPerson', 'true')
  return query
}

function passes (entry: Entry): boolean {
  if (ui.owner.value !== '' && entry.ownership !== ui.owner.value) return false
  return !ui.needsPerson.checked || entry.needsPerson.length > 0
}

async function loadList (more = false): Promise<void> {
  const query = filters()
  if (more && state.next !== undefined) query.set('cursor', state.next)
  try {
    const page = await api(`/${encodeURIComponent(state.agent)}/conversations?${query.toString()}`)
    if (!more) state.entries.clear()
    for (const entry of page.conversations as Entry[]) state.entries.set(entry.contextId, entry)
    state.next = page.next
    ui.listError.textContent = ''
    renderList()
  } catch (error) {
    failed(error, ui.listError)
  }
}

function renderList (): void {
  const entries = [...state.entries.values()].sort((a, b) => b.lastActivityAt.localeCompare(a.lastActivityAt))
  ui.list.replaceChildren(...entries.map((entry) => {
    const button = document.createElement('button')
    button.type = 'button'
    button.dataset.contextId = entry.contextId
    button.setAttribute('aria-current', String(entry.contextId === state.open))
    button.append(text('span', entry.contextId, 'context'))
    const badges = document.createElement('span')
    badges.append(text('span', entry.ownership === 'human_owned' ? 'person' : 'assistant', 'badge'))
    for (const reason of entry.needsPerson) badges.append(text('span', NEEDS_LABELS[reason] ?? reason, 'badge needs'))
    badges.append(text('span', when(entry.lastActivityAt)))
    button.append(badges)
    if (entry.lastTurn !== undefined) {
      button.append(text('span', `${AUTHOR_LABELS[entry.lastTurn.role] ?? entry.lastTurn.role}: ${entry.lastTurn.text}`, 'preview'))
    }
    button.addEventListener('click', () => { openConversation(entry.contextId) })
    const item = document.createElement('li')
    item.append(button)
    return item
  }))
  ui.listEmpty.hidden = entries.length > 0
  ui.more.hidden = state.next === undefined
}

/** A conversation changed (live): the newer entry wins; the open conversation is reloaded. */
function changed (entry: Entry): void {
  const known = state.entries.get(entry.contextId)
  if (known !== undefined && known.version >= entry.version) return
  if (passes(entry)) state.entries.set(entry.contextId, entry)
  else state.entries.delete(entry.contextId)
  renderList()
  if (entry.contextId === state.open && entry.version > state.openVersion) loadConversation()
}

/** Reads the live stream; on `ready` the list is (re)loaded, so nothing that happened meanwhile is missed. */
function follow (agent: string): void {
  const controller = new AbortController()
  let stopped = false
  let retry: number | undefined
  state.stopLive = () => {
    stopped = true
    clearTimeout(retry)
    controller.abort()
  }
  const again = (): void => {
    if (stopped) return
    ui.live.textContent = 'Reconnecting…'
    retry = window.setTimeout(() => { if (!stopped) follow(agent) }, RETRY_MS)
  }
  fetch(`/api/v1/agents/${encodeURIComponent(agent)}/events`, {
    headers: { authorization: `Bearer ${state.key}` },
    signal: controller.signal,
    cache: 'no-store'
  }).then(async (response) => {
    if (response.status === 401) throw new Refused('the key was refused')
    if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status}`)
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      buffer += value
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        frame(buffer.slice(0, end))
        buffer = buffer.slice(end + 2)
      }
    }
    again()
  }).catch((error: unknown) => {
    if (error instanceof Refused) signOut('The key was refused.')
    else again()
  })
}

function frame (raw: string): void {
  let name = 'message'
  let data = ''
  for (const line of raw.split('\n')) {
    if (line.startsWith('event: ')) name = line.slice(7)
    else if (line.startsWith('data: ')) data += line.slice(6)
  }
  if (name === 'ready') {
    ui.live.textContent = 'Live'
    loadList()
    if (state.open !== undefined) loadConversation()
  } else if (name === 'conversation') {
    changed(JSON.parse(data) as Entry)
    if (state.gapsShown) refreshGapsSoon()
  } else if (name === 'removed') {
    state.entries.delete((JSON.parse(data) as { contextId: string }).contextId)
    renderList()
  }
}

// ---- one conversation ----------------------------------------------------------------------------------------

function conversationPath (suffix = ''): string {
  return `/${encodeURIComponent(state.agent)}/conversations/${encodeURIComponent(state.open as string)}${suffix}`
}

function openConversation (contextId: string): void {
  state.open = contextId
  state.openVersion = 0
  ui.conversation.hidden = false
  ui.conversationError.textContent = ''
  renderList()
  loadConversation().then(() => { ui.title.focus() })
}

function closeConversation (): void {
  state.open = undefined
  ui.conversation.hidden = true
}

async function loadConversation (): Promise<void> {
  const contextId = state.open
  try {
    const trace = await api(conversationPath('/trace')) as Trace
    if (contextId !== state.open) return
    state.openVersion = trace.version
    renderConversation(trace)
  } catch (error) {
    failed(error, ui.conversationError)
  }
}

function routineText (routine: Routine): string {
  const pending = routine.pendingInput.map((slot) => `${slot.key}${slot.required ? '' : ' (optional)'}`)
  return `${routine.name}: ${routine.status.replaceAll('_', ' ')}${pending.length > 0 ? ` — waiting for ${pending.join(', ')}` : ''}`
}

function renderConversation (trace: Trace): void {
  const human = trace.ownership === 'human_owned'
  ui.title.textContent = `Conversation ${trace.contextId}`
  ui.caller.textContent = trace.caller === undefined ? 'a walk-in (no credential)' : trace.caller.id
  ui.ownerState.textContent = OWNER_LABELS[trace.ownership]
  ui.needs.textContent = trace.needsPerson.length === 0 ? 'no' : trace.needsPerson.map((reason) => NEEDS_LABELS[reason] ?? reason).join(', ')
  ui.routine.textContent = trace.routine === undefined ? 'none' : routineText(trace.routine)
  ui.takeover.disabled = human
  ui.release.disabled = !human
  ui.send.disabled = !human
  ui.reply.disabled = !human
  ui.replyHint.textContent = human ? 'The caller receives your reply as the agent\'s answer, marked as written by a person.' : 'Take the conversation over to reply.'
  ui.turns.replaceChildren(...trace.turns.map((turn) => {
    const item = document.createElement('li')
    item.className = `turn ${turn.role}`
    item.append(text('div', `${AUTHOR_LABELS[turn.role]} · ${when(turn.at)}`, 'who'))
    item.append(text('p', turn.text, 'text'))
    if (turn.envelope !== undefined) item.append(...envelopeDetails(turn.envelope))
    return item
  }))
  const suppressed = trace.ownership === 'human_owned' && trace.turns.at(-1)?.role === 'user'
  if (suppressed) {
    const note = document.createElement('li')
    note.className = 'turn'
    note.append(text('p', 'The assistant did not answer this turn: it waits for your reply.', 'meta'))
    ui.turns.append(note)
  }
}

function envelopeDetails (envelope: Envelope): HTMLElement[] {
  const out: HTMLElement[] = []
  const coverage = envelope.answerCoverage
  if (coverage !== undefined) {
    const verdict = coverage.availability === 'assessed' ? `${coverage.coverage ?? ''} (${coverage.reason ?? ''})` : coverage.availability.replaceAll('_', ' ')
    out.push(text('p', `Coverage: ${verdict}`, 'meta'))
  }
  if (envelope.routine !== undefined) out.push(text('p', `Routine ${routineText(envelope.routine)}`, 'meta'))
  if (envelope.invocation !== undefined) out.push(text('p', `Call ${envelope.invocation.toolName}: ${envelope.invocation.outcome}`, 'meta'))
  if (envelope.citations !== undefined && envelope.citations.length > 0) {
    const list = document.createElement('ul')
    list.setAttribute('aria-label', 'Citations')
    for (const citation of envelope.citations) {
      const item = document.createElement('li')
      const url = safeUrl(citation.sourceUrl)
      if (url !== undefined) {
        const link = text('a', citation.title) as HTMLAnchorElement
        link.href = url
        link.rel = 'noopener noreferrer'
        link.target = '_blank'
        item.append(link)
      } else {
        item.textContent = citation.title
      }
      list.append(item)
    }
    out.push(list)
  }
  return out
}

/** Only http(s) links: a `javascript:` sourceUrl stays text. */
function safeUrl (value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined
  } catch {
    return undefined
  }
}

async function act (suffix: string, body?: unknown): Promise<boolean> {
  ui.conversationError.textContent = ''
  try {
    await api(conversationPath(suffix), { method: 'POST', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
    await loadConversation()
    return true
  } catch (error) {
    failed(error, ui.conversationError)
    return false
  }
}

// ---- where the knowledge falls short -------------------------------------------------------------------------

/** Shows one view: the conversations, the knowledge gaps or the agents (the live list keeps following). */
function showView (view: View): void {
  if (state.view === 'agents' && view !== 'agents') refreshAgentMenus()
  state.view = view
  state.gapsShown = view === 'gaps'
  ui.workspace.hidden = view !== 'conversations'
  ui.gaps.hidden = view !== 'gaps'
  ui.agents.hidden = view !== 'agents'
  ui.showConversations.setAttribute('aria-pressed', String(view === 'conversations'))
  ui.showGaps.setAttribute('aria-pressed', String(view === 'gaps'))
  ui.showAgents.setAttribute('aria-pressed', String(view === 'agents'))
  if (view === 'gaps') loadGaps()
  if (view === 'agents') agents.show()
}

function refreshGapsSoon (): void {
  if (state.gapsTimer !== undefined) return
  state.gapsTimer = window.setTimeout(() => {
    state.gapsTimer = undefined
    if (state.gapsShown) loadGaps()
  }, GAPS_REFRESH_MS)
}

function answersPath (suffix = '', query = new URLSearchParams()): string {
  query.set('window', ui.gapsWindow.value)
  return `/${encodeURIComponent(state.agent)}/answers${suffix}?${query.toString()}`
}

/** The chart and the first page of questions, for the agent and period picked. */
async function loadGaps (): Promise<void> {
  const agent = state.agent
  ui.gapsTitle.textContent = `Where the knowledge falls short · ${agent}`
  try {
    const [series, page] = await Promise.all([api(answersPath()) as Promise<Series>, api(answersPath('/unanswered'))])
    if (agent !== state.agent) return
    ui.gapsError.textContent = ''
    renderChart(series)
    state.questionsNext = page.next
    renderQuestions(page.questions as QuestionGroup[], false)
  } catch (error) {
    failed(error, ui.gapsError)
  }
}

async function loadMoreQuestions (): Promise<void> {
  const query = new URLSearchParams()
  if (state.questionsNext !== undefined) query.set('cursor', state.questionsNext)
  try {
    const page = await api(answersPath('/unanswered', query))
    state.questionsNext = page.next
    renderQuestions(page.questions as QuestionGroup[], true)
  } catch (error) {
    failed(error, ui.gapsError)
  }
}

function svg (tag: string, attributes: Record<string, string | number>, content?: string): SVGElement {
  const node = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value))
  if (content !== undefined) node.textContent = content
  return node
}

function countsText (counts: Counts): string {
  return VERDICTS.map((verdict) => `${counts[verdict]} ${VERDICT_LABELS[verdict]}`).join(', ')
}

function bucketLabel (iso: string, bucketMs: number): string {
  const date = new Date(iso)
  return bucketMs <= 60 * 60 * 1000
    ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
}

/** Stacked bars, one per bucket, one colour per verdict; each bar's title says its counts. */
function renderChart (series: Series): void {
  const barWidth = 16
  const gap = 4
  const left = 28
  const top = 8
  const height = 120
  const width = left + series.buckets.length * (barWidth + gap)
  const totalOf = (counts: Counts): number => VERDICTS.reduce((sum, verdict) => sum + counts[verdict], 0)
  const highest = Math.max(1, ...series.buckets.map(totalOf))
  const chart = svg('svg', { viewBox: `0 0 ${width} ${top + height + 18}`, role: 'img', 'aria-labelledby': 'gaps-summary' })
  chart.append(svg('line', { x1: left, x2: width, y1: top + height, y2: top + height, class: 'grid' }))
  chart.append(svg('line', { x1: left, x2: width, y1: top, y2: top, class: 'grid' }))
  chart.append(svg('text', { x: left - 4, y: top + 4, 'text-anchor': 'end', class: 'axis' }, String(highest)))
  chart.append(svg('text', { x: left - 4, y: top + height, 'text-anchor': 'end', class: 'axis' }, '0'))
  series.buckets.forEach((bucket, index) => {
    const x = left + index * (barWidth + gap) + gap / 2
    const bar = svg('g', { class: 'bar', 'data-start': bucket.start })
    bar.append(svg('title', {}, `${bucketLabel(bucket.start, series.bucketMs)}: ${countsText(bucket)}`))
    let y = top + height
    for (const verdict of VERDICTS) {
      if (bucket[verdict] === 0) continue
      const size = (bucket[verdict] / highest) * height
      y -= size
      bar.append(svg('rect', { x, y, width: barWidth, height: size, class: `cov-${verdict}`, 'data-verdict': verdict, 'data-count': bucket[verdict] }))
    }
    chart.append(bar)
  })
  const first = series.buckets[0]
  const last = series.buckets.at(-1)
  if (first !== undefined && last !== undefined) {
    chart.append(svg('text', { x: left, y: top + height + 14, class: 'axis' }, bucketLabel(first.start, series.bucketMs)))
    chart.append(svg('text', { x: width, y: top + height + 14, 'text-anchor': 'end', class: 'axis' }, bucketLabel(last.start, series.bucketMs)))
  }
  ui.gapsChart.replaceChildren(chart)
  const total = totalOf(series.totals)
  ui.gapsSummary.textContent = total === 0
    ? `No answers in ${WINDOW_LABELS[series.window] ?? series.window}.`
    : `${total} answers in ${WINDOW_LABELS[series.window] ?? series.window}: ${countsText(series.totals)}.`
  ui.gapsLegend.replaceChildren(...VERDICTS.map((verdict) => {
    const item = document.createElement('li')
    item.append(text('span', '', `swatch cov-${verdict}`), document.createTextNode(`${VERDICT_LABELS[verdict]} (${series.totals[verdict]})`))
    return item
  }))
}

/** Opens a conversation a question was asked in, in the conversations view. */
function openFromGaps (contextId: string): void {
  showView('conversations')
  openConversation(contextId)
}

function renderQuestions (groups: QuestionGroup[], more: boolean): void {
  const items = groups.map((group) => {
    const item = document.createElement('li')
    item.dataset.key = group.key
    const open = document.createElement('button')
    open.type = 'button'
    open.className = 'open'
    open.dataset.contextId = group.conversations[0]
    open.append(text('span', group.text, 'question'))
    const facts = document.createElement('span')
    facts.append(text('span', group.count === 1 ? 'asked once' : `asked ${group.count} times`, 'badge needs'))
    if (group.partial > 0) facts.append(text('span', `${group.partial} partly answered`, 'badge'))
    facts.append(text('span', `last ${when(group.lastAskedAt)}`))
    open.append(facts)
    open.addEventListener('click', () => { openFromGaps(group.conversations[0]) })
    item.append(open)
    if (group.conversations.length > 1) {
      const also = document.createElement('p')
      also.className = 'also'
      also.append(text('span', 'Also asked in:'))
      for (const contextId of group.conversations.slice(1)) {
        const button = text('button', contextId) as HTMLButtonElement
        button.type = 'button'
        button.dataset.contextId = contextId
        button.addEventListener('click', () => { openFromGaps(contextId) })
        also.append(button)
      }
      item.append(also)
    }
    return item
  })
  if (more) ui.questions.append(...items)
  else ui.questions.replaceChildren(...items)
  ui.questionsEmpty.hidden = ui.questions.childElementCount > 0
  ui.questionsMore.hidden = state.questionsNext === undefined
}

// ---- wiring --------------------------------------------------------------------------------------------------

ui.signInForm.addEventListener('submit', (event) => {
  event.preventDefault()
  signIn(ui.key.value)
})
ui.signOut.addEventListener('click', () => { signOut() })
ui.agent.addEventListener('change', () => { selectAgent(ui.agent.value) })
ui.gapsAgent.addEventListener('change', () => { selectAgent(ui.gapsAgent.value) })
ui.showConversations.addEventListener('click', () => { showView('conversations') })
ui.showGaps.addEventListener('click', () => { showView('gaps') })
ui.showAgents.addEventListener('click', () => { showView('agents') })
ui.gapsWindow.addEventListener('change', () => { loadGaps() })
ui.gapsRefresh.addEventListener('click', () => { loadGaps() })
ui.questionsMore.addEventListener('click', () => { loadMoreQuestions() })
ui.owner.addEventListener('change', () => { loadList() })
ui.needsPerson.addEventListener('change', () => { loadList() })
ui.more.addEventListener('click', () => { loadList(true) })
ui.takeover.addEventListener('click', () => { act('/takeover') })
ui.release.addEventListener('click', () => { act('/release') })
ui.replyForm.addEventListener('submit', (event) => {
  event.preventDefault()
  const reply = ui.reply.value
  act('/messages', { text: reply }).then((sent) => { if (sent) ui.reply.value = '' })
})

if (state.key !== '') signIn(state.key)
