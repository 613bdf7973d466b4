/**
 * The inbox's Agents view in headless Chromium (Debian's `chromium` through playwright-core, as inbox.test.ts)
 * against a real gateway on a real port (memory state, as the other browser tests): AGENTS_FILE's agent
 * listed read-only; publish from JSON and from YAML (each sent with its own Content-Type); a bad definition shows
 * the API's 400 naming the field, a duplicate its 409; an edit over a stale version shows the 412 as "changed since
 * you loaded it — reload", and saves after a reload; close and open walk-ins (the API agrees); add and remove a
 * document; the versions; unpublish after a confirm inside the page (a 412 when changed since listed); an agent
 * unpublished elsewhere; a sign-out leaves nothing. Markup in a name stays text, and the page reports no CSP
 * violation. Without a browser the test reports a skip with the reason.
 *
 * AGENTS_VIEW_SCREENSHOT=<file> saves a screenshot of the view (docs/agents-view.png was made so).
 */
import t from 'tap'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { AUTH, OPERATOR_KEY } from '../../fixtures/conversation-gateway.js'
import { startGateway } from '../../fixtures/gateway-helpers.js'
import { ROOT } from '../../fixtures/gateway-process.js'
import { compileInboxScripts } from '../../fixtures/inbox-script.js'
import type { Page } from 'playwright-core'

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'
]

type Json = Record<string, any>

/** A name an XSS would run from, were it put on the page as HTML. */
const MARKUP = '<img src=x onerror="globalThis.injected=1"><b>Shop</b> & co'

const SHOP = {
  id: 'shop',
  name: MARKUP,
  description: 'Answers questions about the shop.',
  documents: [{ id: 'returns', title: 'Returns policy', body: 'You can return any item within 30 days of delivery.' }],
  routines: [{ name: 'order status', description: 'Looks an order up', exposed: true, toolName: 'order_status', slots: [{ key: 'order', type: 'string', description: 'the order number', required: true }] }]
}

const FAQ_YAML = `# published as YAML
id: faq
name: Questions and answers
description: Answers the questions people ask most.
documents:
  - id: hours
    title: Opening hours
    body: We are open from 9 to 5 on weekdays.
`

async function untilText (page: Page, id: string, expected: string | RegExp): Promise<void> {
  const [source, flags] = expected instanceof RegExp ? [expected.source, expected.flags] : [undefined, '']
  await page.waitForFunction(([id, expected, source, flags]) => {
    const actual = (globalThis as any).document.getElementById(id)?.textContent ?? ''
    return source !== undefined ? new RegExp(source, flags).test(actual) : actual === expected
  }, [id, typeof expected === 'string' ? expected : '', source, flags] as const)
}

/** The agents listed, by id. */
async function listed (page: Page): Promise<string[]> {
  return await page.locator('#agents-list button').evaluateAll((buttons) => buttons.map((button) => button.getAttribute('data-agent-id') as string))
}

if (!existsSync(chromiumPath)) {
  t.test('the Agents view in a browser', { skip: `no Chromium at ${chromiumPath} (apt-get install -y chromium, or set CHROMIUM_PATH)` }, async () => {})
} else {
  await compileInboxScripts()
  const { chromium } = await import('playwright-core')

  t.test('the Agents view in headless Chromium', async (t) => {
    const { base } = await startGateway(t, {
      OPERATOR_API_KEY: OPERATOR_KEY,
      AGENTS_FILE: join(ROOT, 'examples/demo/agent.json'),
      // Credentials, so an agent can be closed to walk-ins; walk-in stays the default.
      A2A_API_KEYS: 'key-a:secret-key-a-0123456789',
      A2A_AUTH: 'walk-in',
      MAX_AGENT_BYTES: '4096'
    })
    const agentApi = async (method: string, path: string): Promise<{ status: number, body: Json }> => {
      const response = await fetch(`${base}/api/v1/agents${path}`, { method, headers: AUTH })
      return { status: response.status, body: response.status === 204 ? {} : await response.json() as Json }
    }

    const browser = await chromium.launch({ executablePath: chromiumPath, args: ARGS })
    t.teardown(() => browser.close())
    const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } })
    const problems: string[] = []
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()) })
    page.on('pageerror', (error) => { problems.push(error.message) })
    const failed: string[] = []
    page.on('response', (response) => { if (response.status() >= 400) failed.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`) })
    const sent: string[] = []
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/v1/agents') sent.push(request.headers()['content-type'])
    })
    // Reported by the page itself: what its CSP refused (none expected).
    await page.addInitScript(() => {
      const page = globalThis as any
      page.violations = []
      page.document.addEventListener('securitypolicyviolation', (event: any) => { page.violations.push(`${event.violatedDirective} ${event.blockedURI}`) })
    })

    await page.goto(`${base}/inbox`)
    await page.getByLabel('Operator key').fill(OPERATOR_KEY)
    await page.getByLabel('Operator key').press('Enter')
    await untilText(page, 'live', 'Live')
    // The view is a button of the page's nav, reached with the keyboard.
    await page.getByRole('button', { name: 'Agents', exact: true }).focus()
    await page.keyboard.press('Enter')
    await untilText(page, 'agents-summary', '1 agent; the store holds at most 1000 published ones.')
    t.equal(await page.isHidden('#workspace'), true, 'the view replaces the conversations')
    t.equal(await page.getByRole('button', { name: 'Agents', exact: true }).getAttribute('aria-pressed'), 'true')

    // AGENTS_FILE's agent: listed, read-only (no action, no document form).
    t.same(await listed(page), ['demo'])
    t.match(await page.locator('#agents-list button').first().textContent(), /^Demo shop assistantdemoAGENTS_FILE · read-onlywalk-ins openserved: from AGENTS_FILEtools: book_table/)
    await page.locator('#agents-list button[data-agent-id="demo"]').click()
    await untilText(page, 'agent-title', 'Demo shop assistant (demo)')
    t.equal(await page.isVisible('#agent-read-only'), true, 'said to be read-only')
    t.equal(await page.isHidden('#agent-actions'), true, 'no edit, open, close or unpublish')
    t.equal(await page.isHidden('#document-form'), true, 'no document form')
    t.equal(await page.locator('#agent-documents button').count(), 0, 'no remove button')
    t.equal(await page.locator('#agent-documents-empty').textContent(), 'A folder of Markdown documents (AGENTS_FILE).')
    t.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), 'agent-title', 'the focus follows to the agent')

    // Publish from JSON.
    await page.getByLabel('Definition (JSON or YAML)').fill(JSON.stringify(SHOP, null, 2))
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await untilText(page, 'agents-status', 'Published shop (version 1).')
    await untilText(page, 'agent-title', `${MARKUP} (shop)`)
    t.same(await listed(page), ['demo', 'shop'])
    t.equal(await page.locator('#agents-list button[data-agent-id="shop"] .agent-name').textContent(), MARKUP, 'the markup of a name is text')
    t.equal(await page.locator('#agents img, #agents b').count(), 0, 'no element made of it')
    t.equal(await page.evaluate(() => (globalThis as any).injected), undefined, 'nothing of it ran')
    t.match(await page.locator('#agents-list button[data-agent-id="shop"]').textContent(), /published · version 1walk-ins openserved: .+tools: order_status$/)
    t.equal(await page.locator('#definition').inputValue(), '', 'the editor is emptied')

    // Publish from YAML: sent as YAML, as typed.
    await page.getByLabel('Definition (JSON or YAML)').fill(FAQ_YAML)
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await untilText(page, 'agents-status', 'Published faq (version 1).')
    t.same(await listed(page), ['demo', 'faq', 'shop'])
    t.same(sent, ['application/json', 'application/yaml'], 'each with its own Content-Type')
    t.match((await agentApi('GET', '/faq')).body, { source: 'store', version: 1, name: 'Questions and answers', definition: { documents: [{ id: 'hours' }] } })
    await untilText(page, 'agents-summary', '3 agents; the store holds at most 1000 published ones.')

    // Changes are live: back in the conversations, the published agents are in the agent menus (and the knowledge
    // gaps' menu), the agent chosen before still chosen.
    const menu = async (): Promise<string[]> => await page.locator('#agent option').evaluateAll((options: any[]) => options.map((option) => option.value))
    await page.getByRole('button', { name: 'Conversations', exact: true }).click()
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#agent option').length === 3)
    t.same(await menu(), ['demo', 'faq', 'shop'], 'the published agents join the menu')
    t.equal(await page.locator('#agent').inputValue(), 'demo', 'the agent chosen stays chosen')
    t.equal(await page.locator('#gaps-agent option').count(), 3)
    await page.getByRole('button', { name: 'Agents', exact: true }).click()

    // Refusals: the API's message, naming the field; a duplicate id.
    await page.getByLabel('Definition (JSON or YAML)').fill('{ "id": "bad", "name": 5, "description": "Bad." }')
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await untilText(page, 'editor-error', 'Refused (400): agent.name must be string')
    await page.getByLabel('Definition (JSON or YAML)').fill('id: bad\nname: Bad\ndescription: Bad.\ndocuments:\n  - id: a b\n    title: A\n    body: text\n')
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await untilText(page, 'editor-error', /^Refused \(400\): agent\.documents\.0\.id /)
    await page.getByLabel('Definition (JSON or YAML)').fill(JSON.stringify(SHOP))
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await untilText(page, 'editor-error', /^Conflict \(409\): .*shop/)
    await page.getByLabel('Definition (JSON or YAML)').fill(JSON.stringify({ ...SHOP, id: 'big', documents: [{ id: 'long', title: 'Long', body: 'x'.repeat(5000) }] }))
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await untilText(page, 'editor-error', /^Too large \(413\): agent is \d+ bytes of JSON; MAX_AGENT_BYTES is 4096$/)
    t.same(await listed(page), ['demo', 'faq', 'shop'], 'nothing published by a refusal')

    // Edit: the definition loaded with its ETag; a change made meanwhile makes the save a 412; reload, save.
    await page.locator('#agents-list button[data-agent-id="shop"]').click()
    await untilText(page, 'agent-title', `${MARKUP} (shop)`)
    await page.getByRole('button', { name: 'Edit the definition' }).click()
    await untilText(page, 'editor-title', 'Edit shop (version 1)')
    t.same(JSON.parse(await page.locator('#definition').inputValue()), SHOP, 'the definition loaded')
    t.equal((await agentApi('POST', '/shop/close')).status, 200, 'changed meanwhile (another operator)')
    await page.getByLabel('Definition (JSON or YAML)').fill(JSON.stringify({ ...SHOP, name: 'The shop' }))
    await page.getByRole('button', { name: 'Save a new version' }).click()
    await untilText(page, 'editor-error', 'Changed since you loaded it — reload. (agent "shop" is at version 2 (ETag "2"))')
    await page.getByRole('button', { name: 'Reload' }).click()
    await untilText(page, 'editor-title', 'Edit shop (version 2)')
    t.equal(JSON.parse(await page.locator('#definition').inputValue()).auth, 'required', 'the current version loaded')
    await page.getByLabel('Definition (JSON or YAML)').fill(JSON.stringify({ ...SHOP, name: 'The shop', auth: 'required' }))
    await page.getByRole('button', { name: 'Save a new version' }).click()
    await untilText(page, 'agents-status', 'Saved shop: now version 3.')
    await untilText(page, 'agent-title', 'The shop (shop)')
    t.equal(await page.locator('#editor-title').textContent(), 'Publish an agent', 'the editor publishes again')
    t.match((await agentApi('GET', '/shop')).body, { version: 3, name: 'The shop', walkIn: false })

    // Walk-ins: closed (as the API left it); open, then close again; the API agrees each time.
    t.match(await page.locator('#agent-facts').textContent(), /Walk-insclosed: a caller needs a credential/)
    t.equal(await page.isHidden('#agent-close'), true)
    await page.getByRole('button', { name: 'Open to walk-ins' }).click()
    await untilText(page, 'agents-status', 'Opened shop to walk-ins. Now version 4.')
    await untilText(page, 'agent-facts', /Walk-insopen: anyone may call it/)
    t.match((await agentApi('GET', '/shop')).body, { version: 4, walkIn: true })
    t.match(await page.locator('#agents-list button[data-agent-id="shop"]').textContent(), /walk-ins open/)
    await page.getByRole('button', { name: 'Close to walk-ins' }).click()
    await untilText(page, 'agents-status', 'Closed shop to walk-ins. Now version 5.')
    t.match((await agentApi('GET', '/shop')).body, { version: 5, walkIn: false })
    await untilText(page, 'agent-facts', /Walk-insclosed/)

    // A document: added, listed, in the API's definition; then removed.
    await page.getByLabel('Id (no spaces or #)').fill('shipping')
    await page.getByLabel('Title', { exact: true }).fill('Shipping <times>')
    await page.getByLabel('Text or Markdown').fill('# Shipping\n\nWe ship within **two** working days.')
    await page.getByLabel('Source URL (optional, http or https)').fill('https://shop.example.com/shipping')
    await page.getByRole('button', { name: 'Add the document' }).click()
    await untilText(page, 'agents-status', 'Added the document shipping. Now version 6.')
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#agent-documents li').length === 2)
    t.same(await page.locator('#agent-documents li .document-title').allTextContents(), ['Returns policy', 'Shipping <times>'])
    t.match((await agentApi('GET', '/shop')).body.definition.documents, [{ id: 'returns' }, { id: 'shipping', title: 'Shipping <times>', sourceUrl: 'https://shop.example.com/shipping' }])
    t.equal(await page.getByLabel('Id (no spaces or #)').inputValue(), '', 'the form emptied')
    await page.getByRole('button', { name: 'Remove Returns policy' }).click()
    await untilText(page, 'agents-status', 'Removed the document returns. Now version 7.')
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#agent-documents li').length === 1)
    t.same((await agentApi('GET', '/shop')).body.definition.documents.map((document: Json) => document.id), ['shipping'])

    // The versions: newest first, who and what.
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#agent-versions li').length === 7)
    t.match(await page.locator('#agent-versions li').allTextContents(), [
      /^Version 7: remove-document returns by operator, /, /^Version 6: add-document shipping by operator, /, /^Version 5: close by operator/,
      /^Version 4: open /, /^Version 3: replace /, /^Version 2: close /, /^Version 1: publish by operator, /
    ])

    await page.setViewportSize({ width: 360, height: 800 })
    t.equal(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth), true, 'no horizontal scrolling at 360 px')
    await page.setViewportSize({ width: 1200, height: 1000 })
    if (process.env.AGENTS_VIEW_SCREENSHOT !== undefined) await page.screenshot({ path: process.env.AGENTS_VIEW_SCREENSHOT, fullPage: true })

    // An edit given up: the editor publishes again, empty.
    await page.getByRole('button', { name: 'Edit the definition' }).click()
    await untilText(page, 'editor-title', 'Edit shop (version 7)')
    await page.getByRole('button', { name: 'Cancel' }).click()
    t.equal(await page.locator('#editor-title').textContent(), 'Publish an agent')
    t.equal(await page.locator('#definition').inputValue(), '')

    // Unpublish: a confirm inside the page; "Keep it" keeps it.
    await page.getByRole('button', { name: 'Unpublish…' }).click()
    await untilText(page, 'unpublish-question', 'Unpublish shop? Its card and endpoints answer 404 from then on; its conversations are kept.')
    t.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), 'unpublish-no', 'the safe answer has the focus')
    await page.keyboard.press('Enter')
    t.equal(await page.isHidden('#unpublish-confirm'), true)
    t.equal((await agentApi('GET', '/shop')).status, 200, 'kept')
    // Changed since listed (another operator opened it): the unpublish is a 412, the list is read again, and the
    // next confirm unpublishes the current version.
    t.equal((await agentApi('POST', '/shop/open')).status, 200)
    await page.getByRole('button', { name: 'Unpublish…' }).click()
    await page.getByRole('button', { name: 'Yes, unpublish it' }).click()
    await untilText(page, 'agent-error', 'Changed since you loaded it — reload. (agent "shop" is at version 8 (ETag "8"))')
    await untilText(page, 'agent-facts', /^SourcePublished|Version8/)
    t.equal((await agentApi('GET', '/shop')).status, 200, 'not unpublished unseen')
    await page.getByRole('button', { name: 'Yes, unpublish it' }).click()
    await untilText(page, 'agents-status', 'Unpublished shop.')
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#agents-list li').length === 2)
    t.same(await listed(page), ['demo', 'faq'], 'gone from the list')
    t.equal(await page.isHidden('#agent-detail'), true, 'its details closed')
    t.equal((await agentApi('GET', '/shop')).status, 404, 'the API agrees')
    // The conversations' menu follows: an unpublished agent leaves it.
    await page.getByRole('button', { name: 'Conversations', exact: true }).click()
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#agent option').length === 2)
    t.same(await menu(), ['demo', 'faq'], 'an unpublished agent leaves the menu')
    t.equal(await page.locator('#agent').inputValue(), 'demo')
    // The view lists the agents again when picked: that read answered before faq goes, so faq is listed.
    await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'GET' && new URL(response.url()).pathname === '/api/v1/agents'),
      page.getByRole('button', { name: 'Agents', exact: true }).click()
    ])

    // Unpublished by another operator while listed here: picking it says so and lists again.
    t.equal((await agentApi('DELETE', '/faq')).status, 204)
    await page.locator('#agents-list button[data-agent-id="faq"]').click()
    await untilText(page, 'agents-status', 'faq is not published any more.')
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#agents-list li').length === 1)
    t.equal(await page.isHidden('#agent-detail'), true)

    // Signed out, nothing of the session stays: not even a definition being written.
    await page.getByLabel('Definition (JSON or YAML)').fill('id: draft')
    await page.getByRole('button', { name: 'Sign out' }).click()
    t.equal(await page.isHidden('#agents'), true)
    t.equal(await page.locator('#definition').inputValue(), '', 'the editor emptied')
    t.equal(await page.locator('#agents-list li').count(), 0, 'the list emptied')

    t.same(await page.evaluate(() => (globalThis as any).violations), [], 'no CSP violation reported by the page')
    t.same(problems.filter((problem) => !problem.startsWith('Failed to load resource')), [], 'no script error or CSP violation')
    t.same(failed, ['400 POST /api/v1/agents', '400 POST /api/v1/agents', '409 POST /api/v1/agents', '413 POST /api/v1/agents', '412 PUT /api/v1/agents/shop', '412 DELETE /api/v1/agents/shop',
      '404 GET /api/v1/agents/faq'], 'only the refusals asked for, and the agent unpublished elsewhere')
  })
}
