/**
 * The inbox page driven in headless Chromium (Debian's `chromium`, through playwright-core; no browser download):
 * a wrong key is refused; sign in; a conversation a caller starts over A2A appears live; take it over; the caller's
 * next turn is suppressed; the person's reply reaches the caller's SubscribeToTask stream; hand back; a message
 * whose text is HTML shows as text. Without a browser the test reports a skip with the reason.
 *
 * Code that runs in the page reaches the DOM through `globalThis` (this file is type-checked for Node, without DOM
 * types); it is passed as functions, since the page's CSP refuses what a string would need (eval).
 * CHROMIUM_PATH overrides /usr/bin/chromium. INBOX_SCREENSHOT=<file> saves a screenshot of the page at the end
 * (docs/inbox.png was made so).
 */
import t from 'tap'
import { existsSync } from 'node:fs'
import { OPERATOR_KEY, stream, statusMessageOf, URI } from '../../fixtures/conversation-gateway.js'
import { rpc, startGateway, userMessage } from '../../fixtures/gateway-helpers.js'
import { contextIdOf } from '../../fixtures/context-ids.js'
import { compileInboxScripts } from '../../fixtures/inbox-script.js'
import type { Page } from 'playwright-core'

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
/** Walk-in conversations: their contextIds are UUIDs (test/library/auth/walk-ins.test.ts). */
const BROWSER_1 = contextIdOf('browser-1')
const BROWSER_2 = contextIdOf('browser-2')
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'
]

type Json = Record<string, any>

/** Waits until the element's text is `expected`. */
async function untilText (page: Page, id: string, expected: string): Promise<void> {
  await page.waitForFunction(([id, expected]) => (globalThis as any).document.getElementById(id)?.textContent === expected, [id, expected])
}

/** Signs in with the keyboard (type the key, Enter) and waits for the live list. */
async function signIn (page: Page): Promise<void> {
  await page.getByLabel('Operator key').fill(OPERATOR_KEY)
  await page.getByLabel('Operator key').press('Enter')
  await untilText(page, 'live', 'Live')
}

/** A caller's turn over A2A; with `key`, as the caller that key names. */
async function send (base: string, text: string, contextId: string, key?: string): Promise<Json> {
  const response = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI, ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    body: rpc('SendMessage', { message: userMessage(text, { contextId }) })
  })
  const body = await response.json() as Json
  if (body.error !== undefined) throw new Error(JSON.stringify(body.error))
  return body.result
}

if (!existsSync(chromiumPath)) {
  t.test('the inbox in a browser', { skip: `no Chromium at ${chromiumPath} (apt-get install -y chromium, or set CHROMIUM_PATH)` }, async () => {})
} else {
  // The page's script, compiled as `npm run build` does.
  await compileInboxScripts()
  const { chromium } = await import('playwright-core')

  t.test('the inbox in headless Chromium', async (t) => {
    const { base } = await startGateway(t, { OPERATOR_API_KEY: OPERATOR_KEY })
    const browser = await chromium.launch({ executablePath: chromiumPath, args: ARGS })
    t.teardown(() => browser.close())
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    // CSP violations and script errors show up here; there must be none.
    const problems: string[] = []
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()) })
    page.on('pageerror', (error) => { problems.push(error.message) })
    page.on('dialog', (dialog) => {
      problems.push(`a dialog opened: ${dialog.message()}`)
      dialog.dismiss()
    })
    const requests: string[] = []
    page.on('request', (request) => { requests.push(request.url()) })
    const failed: string[] = []
    page.on('response', (response) => { if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`) })

    await page.goto(`${base}/inbox`)
    await page.getByLabel('Operator key').fill('wrong-key-0123456789')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await untilText(page, 'sign-in-error', 'The key was refused.')
    t.equal(await page.isHidden('#workspace'), true, 'a wrong key is refused')
    t.equal(await page.evaluate(() => (globalThis as any).sessionStorage.length), 0, 'and not kept')

    await signIn(page)
    t.same(await page.locator('#agent option').allTextContents(), ['demo'], 'the agents to pick from')
    t.equal(await page.evaluate(() => Object.values((globalThis as any).sessionStorage).length), 1, 'the key is in sessionStorage')
    t.equal(await page.getByLabel('Operator key').inputValue(), '', 'and not left in the form')

    // A caller starts a conversation over A2A: it appears in the list without a reload.
    await send(base, 'Where is my parcel?', BROWSER_1)
    const entry = page.locator(`[data-context-id="${BROWSER_1}"]`)
    await entry.waitFor()
    t.match(await entry.textContent(), new RegExp(`${BROWSER_1}.*assistant`), 'live, owned by the assistant')
    await entry.click()
    await untilText(page, 'conversation-title', `Conversation ${BROWSER_1}`)
    t.equal(await page.locator('#caller').textContent(), 'a walk-in (no credential)', 'no credential, no caller named')
    t.same(await page.locator('#turns .who').allTextContents().then((all) => all.map((who) => who.split(' · ')[0])), ['Caller', 'Assistant'])
    t.match(await page.locator('#turns .turn.agent .meta').first().textContent(), /^Coverage: /, 'the agent turn"s coverage verdict')
    t.equal(await page.isDisabled('#send'), true, 'no reply before a takeover')

    await page.getByRole('button', { name: 'Take over' }).click()
    await untilText(page, 'owner-state', 'a person')
    t.equal(await page.isEnabled('#send'), true)

    // The caller's next turn is suppressed: the task waits for a person; the page says so, live.
    const held = await send(base, 'Can a person help me?', BROWSER_1)
    t.equal(held.task.status.state, 'TASK_STATE_WORKING')
    t.same(statusMessageOf({ result: { statusUpdate: { status: held.task.status } } }).metadata[URI].ownership, { state: 'human_owned', suppressed: true })
    await untilText(page, 'needs', 'waits for a reply')
    t.match(await page.locator('#turns').textContent(), /The assistant did not answer this turn/)

    // The reply reaches the caller's SubscribeToTask stream, written by a person.
    const subscription = stream(base, 'SubscribeToTask', { id: held.task.id })
    t.teardown(() => { subscription.close() })
    await subscription.next((event) => event.result?.task !== undefined)
    await page.getByLabel('Reply as a person').fill('Hi, Sam here. It left the warehouse today.')
    await page.getByRole('button', { name: 'Send reply' }).click()
    const replied = statusMessageOf(await subscription.next((event) => statusMessageOf(event)?.metadata?.[URI]?.author === 'human'))
    t.equal(replied.parts[0].text, 'Hi, Sam here. It left the warehouse today.', 'the caller"s stream gets the reply')
    t.equal(replied.role, 'ROLE_AGENT')
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#turns .turn.human').length === 1)
    t.equal(await page.getByLabel('Reply as a person').inputValue(), '', 'the form is cleared')

    // Hand back: the held task ends, the caller's stream with it.
    await page.getByRole('button', { name: 'Hand back to the assistant' }).click()
    await untilText(page, 'owner-state', 'the assistant')
    await subscription.done
    t.equal(statusMessageOf(subscription.events.at(-1))?.metadata?.[URI]?.ownership?.state, 'ai_owned', 'the stream ends with the hand-back')

    // Text is text: markup a caller sends is shown as written, never parsed.
    const markup = '<img src=x onerror=alert(1)>'
    await send(base, markup, BROWSER_2)
    await page.locator(`[data-context-id="${BROWSER_2}"]`).click()
    await page.waitForFunction((text) => (globalThis as any).document.querySelector('#turns .turn.user .text')?.textContent === text, markup)
    t.equal(await page.locator('#turns img, #conversations img').count(), 0, 'no element made from the text')

    // A narrow window: nothing wider than the viewport.
    await page.setViewportSize({ width: 360, height: 800 })
    t.equal(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth), true, 'no horizontal scrolling at 360 px')
    await page.setViewportSize({ width: 1200, height: 900 })
    await page.locator(`[data-context-id="${BROWSER_1}"]`).click()
    await untilText(page, 'conversation-title', `Conversation ${BROWSER_1}`)
    if (process.env.INBOX_SCREENSHOT !== undefined) await page.screenshot({ path: process.env.INBOX_SCREENSHOT, fullPage: true })

    // (The browser logs every failed response as an error too: those are checked one by one.)
    t.same(problems.filter((problem) => !problem.startsWith('Failed to load resource')), [], 'no script error, CSP violation or dialog')
    t.same(failed, ['401 /api/v1/agents'], 'the only failed request of the page: the wrong key')
    t.same(requests.filter((url) => !url.startsWith(base)), [], 'no request to another origin')
    t.notOk(requests.some((url) => url.includes(OPERATOR_KEY)), 'the key never in a URL')
  })
  t.test('the inbox names the authenticated caller of a conversation', async (t) => {
    const aliceKey = 'alice-key-0123456789abcdef'
    const { base } = await startGateway(t, { OPERATOR_API_KEY: OPERATOR_KEY, A2A_API_KEYS: `alice:${aliceKey}` })
    const browser = await chromium.launch({ executablePath: chromiumPath, args: ARGS })
    t.teardown(() => browser.close())
    const page = await browser.newPage()
    await page.goto(`${base}/inbox`)
    await signIn(page)

    await send(base, 'Where is my parcel?', 'browser-3', aliceKey)
    // The operator API addresses a caller's conversation as <caller>/<contextId>.
    await page.locator('[data-context-id="alice/browser-3"]').click()
    await untilText(page, 'conversation-title', 'Conversation alice/browser-3')
    await untilText(page, 'caller', 'alice')
    t.equal(await page.locator('#caller').textContent(), 'alice', 'the page names the caller the credential identified')
  })
}
