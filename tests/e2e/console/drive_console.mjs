// The web console's browser test (tests/e2e/test_console.py runs it): Debian's Chromium,
// headless, driven by playwright-core, goes through the console the way an operator would.
//
//   node drive_console.mjs BASE_URL TOKEN [SCREENSHOT_DIR]
//
// It talks to the Python side, which holds the XMPP client, in lines: it prints
// "WAIT <step>" when the Python side must do something (send a chat message, read the
// answer) and reads "GO <step>" back; "PASS <check>" for each check that held; on the first
// one that does not it prints "FAIL <what>" and exits 1. Every wait is for a condition on the
// page, bounded by kTimeout.
import {chromium} from 'playwright-core';
import {createInterface} from 'node:readline';

const [baseUrl, token, screenshots] = process.argv.slice(2);
const kTimeout = 20000;
const lines = createInterface({input: process.stdin})[Symbol.asyncIterator]();

async function wait(step) {
  console.log(`WAIT ${step}`);
  const {value, done} = await lines.next();
  if (done || value !== `GO ${step}`) throw new Error(`expected "GO ${step}", got ${value}`);
}

function pass(check) {
  console.log(`PASS ${check}`);
}

async function shoot(page, name) {
  if (screenshots) await page.screenshot({path: `${screenshots}/${name}.png`});
}

// Opens a page from the navigation.
async function openPage(page, name) {
  await page.getByRole('navigation', {name: 'Console'}).getByRole('link', {name, exact: true})
      .click();
}

// The value of today's bar in the "tokens by day" chart.
async function tokensToday(page) {
  const bars = page.locator('#usage-by-day rect.bar');
  await bars.last().waitFor({timeout: kTimeout});
  return Number(await bars.last().getAttribute('data-value'));
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--no-first-run'],
});
const problems = [];
let failed = false;
try {
  const context = await browser.newContext({viewport: {width: 1200, height: 860}});
  const page = await context.newPage();
  page.setDefaultTimeout(kTimeout);
  // Any script error or refused load (a CSP violation is a console error) fails the test.
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400 && ![401, 403].includes(response.status())) {
      problems.push(`HTTP ${response.status()} for ${response.url()}`);
    }
  });
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 40[13]/.test(message.text())) {
      problems.push(`console error: ${message.text()}`);
    }
  });

  // Sign in: a wrong token is refused, the right one opens the status page.
  await page.goto(`${baseUrl}/console/`);
  await page.getByLabel('Control token').waitFor();
  await shoot(page, 'sign-in');
  await page.getByLabel('Control token').fill('not-a-token');
  await page.getByRole('button', {name: 'Sign in'}).click();
  await page.getByText('Herald does not know this token.').waitFor();
  pass('a wrong token is refused');
  await page.getByLabel('Control token').fill(token);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', {name: 'Status'}).waitFor();
  await page.locator('#status-facts .state.online').waitFor();
  pass('signed in; the status page says online');
  await shoot(page, 'status');
  const stored = await page.evaluate(() => [sessionStorage.length, localStorage.length,
                                            document.cookie]);
  if (stored[0] !== 1 || stored[1] !== 0 || stored[2] !== '') {
    throw new Error(`the token must be in session storage only: ${JSON.stringify(stored)}`);
  }
  pass('the token is in session storage only');

  // Conversations: search, then open the one alice's real XMPP client made.
  await openPage(page, 'Conversations');
  await page.getByLabel('Search conversations').fill('alice');
  await page.getByRole('button', {name: 'Search'}).click();
  await page.getByRole('link', {name: 'alice@localhost'}).click();
  await page.getByRole('heading', {name: 'History'}).waitFor();
  await page.locator('.history .entry.user .text', {hasText: 'hello console'}).waitFor();
  await page.locator('.history .entry.assistant').first().waitFor();
  pass('the conversation shows alice\'s message and the answer');
  await shoot(page, 'conversation');
  await openPage(page, 'Conversations');
  await page.getByLabel('Search conversations').fill('nobody-like-this');
  await page.getByRole('button', {name: 'Search'}).click();
  await page.getByText('No conversation matches').waitFor();
  pass('a search without matches says so');

  // Usage: today's tokens grow after a message.
  await openPage(page, 'Usage');
  const before = await tokensToday(page);
  if (!(before > 0)) throw new Error(`today's tokens before: ${before}`);
  await shoot(page, 'usage');
  await wait('send-another-message');
  await page.getByRole('button', {name: 'Refresh'}).click();
  await page.waitForFunction((was) => {
    const bars = document.querySelectorAll('#usage-by-day rect.bar');
    return bars.length && Number(bars[bars.length - 1].getAttribute('data-value')) > was;
  }, before, {timeout: kTimeout});
  pass(`today's tokens grew from ${before} to ${await tokensToday(page)}`);

  // Approvals: a run waits for a yes; approving it lets it finish.
  await openPage(page, 'Approvals');
  await wait('ask-for-the-time');
  const card = page.locator('.card', {hasText: 'current_time'});
  await card.waitFor();
  await shoot(page, 'approvals');
  await card.getByRole('button', {name: 'Approve'}).focus();
  await page.keyboard.press('Enter');  // by keyboard
  await page.getByText('Approved current_time').waitFor();
  await page.getByText('Nothing is waiting.').waitFor();
  pass('the pending action was approved');
  await wait('the-answer-arrived');

  // Runs: the approved run finished, with its tool call and the wait for the approval.
  await openPage(page, 'Runs');
  const newest = page.locator('tbody tr').first();
  await newest.locator('.state.ok').waitFor();
  await newest.getByRole('link').click();
  await page.locator('.timeline li[data-span="tool current_time"]').waitFor();
  await page.locator('.timeline li[data-span="approval wait"]').waitFor();
  await page.locator('.summary .state.ok').waitFor();
  const tool = page.locator('.timeline li[data-span="tool current_time"]');
  await tool.locator('summary').click();
  await tool.locator('dt', {hasText: 'gen_ai.tool.name'}).waitFor();
  pass('the run\'s timeline shows the tool call and the approval wait, finished');
  await shoot(page, 'run');

  // Access: add a JID to the allowlist, see it, remove it.
  await openPage(page, 'Access');
  await page.getByLabel('Add a JID').fill('carol@localhost');
  await page.getByLabel('Add a JID').press('Enter');
  await page.getByRole('button', {name: 'Remove carol@localhost'}).waitFor();
  await shoot(page, 'access');
  await page.getByRole('button', {name: 'Remove carol@localhost'}).click();
  await page.getByText('Removed carol@localhost.').waitFor();
  await page.getByRole('button', {name: 'Remove carol@localhost'}).waitFor({state: 'detached'});
  pass('a JID was added to the allowlist and removed');

  // Audit log: the chain holds, and the approval is in it, by the token's name.
  await openPage(page, 'Audit log');
  await page.locator('#audit-verdict .verdict.ok').waitFor();
  await page.locator('tbody tr', {hasText: '/herald.v1.SkillService/Approve'})
      .filter({hasText: 'ops'}).first().waitFor();
  pass('the audit log verifies and holds the approval');
  await shoot(page, 'audit');

  // Signing out forgets the token.
  await page.getByRole('button', {name: 'Sign out'}).click();
  await page.getByLabel('Control token').waitFor();
  if (await page.evaluate(() => sessionStorage.length) !== 0) {
    throw new Error('the token is still stored after signing out');
  }
  pass('signing out forgets the token');
  if (problems.length) throw new Error(problems.join('\n'));
  pass('no script errors and no refused loads');
} catch (error) {
  failed = true;
  console.log(`FAIL ${String(error.message || error).replace(/\n/g, ' | ')}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
