// Audit log: whether the hash chain holds (AdminService.VerifyAudit) and the entries, newest
// first, 100 a page (ListAuditEntries). Both need the admin scope.
import {call} from '../api.js';
import {fill, h, table} from '../dom.js';
import {count, time} from '../format.js';
import {problem} from '../refresh.js';

// Green for what went through, red for a refusal or a failure, plain for the rest.
function outcomeClass(outcome) {
  if (/^(OK|approved|done|ok)$/.test(outcome)) return 'state ok';
  if (/^[A-Z][A-Z_]+$/.test(outcome) || /denied|failed|refused|error/i.test(outcome)) {
    return 'state error';
  }
  return '';
}

export function renderAudit(main) {
  const verdict = h('div', {id: 'audit-verdict', 'aria-live': 'polite'});
  const verify = h('button', {type: 'button'}, 'Verify again');
  const entries = h('div', {});
  const older = h('button', {type: 'button', hidden: true}, 'Older entries');
  main.append(h('h1', {}, 'Audit log'), verdict, verify, entries, older);

  const check = async () => {
    fill(verdict, h('p', {}, 'Verifying the chain…'));
    try {
      const report = await call('herald.v1.AdminService/VerifyAudit');
      fill(verdict, report.ok
        ? h('p', {class: 'verdict ok'}, `The chain holds: ${count(report.entries)} entries verified.`)
        : h('p', {class: 'verdict error'}, `The chain is broken at entry ` +
            `${report.firstBadEntry}: ${report.problem} (${count(report.entries)} entries before ` +
            `it are good).`));
    } catch (error) {
      fill(verdict, h('p', {class: 'error'}, problem(error)));
    }
  };
  verify.addEventListener('click', check);

  let rows = [];
  let nextToken = '';
  const load = async (pageToken) => {
    let page;
    try {
      page = await call('herald.v1.AdminService/ListAuditEntries', {pageSize: 100, pageToken});
    } catch (error) {
      fill(entries, h('p', {class: 'error'}, problem(error)));
      return;
    }
    rows = rows.concat(page.entries || []);
    nextToken = page.nextPageToken || '';
    older.hidden = !nextToken;
    fill(entries, rows.length === 0 ? h('p', {class: 'empty'}, 'No entries.')
      : table('Audit entries, newest first', [
        ['#', (entry) => entry.seq, {class: 'nowrap'}],
        ['Time', (entry) => time(entry.time), {class: 'nowrap'}],
        ['Who', (entry) => entry.actor],
        ['Did', (entry) => entry.action],
        ['To', (entry) => entry.target],
        ['Outcome', (entry) => h('span', {class: outcomeClass(entry.outcome)}, entry.outcome)],
        ['Detail', (entry) => entry.detail],
      ], rows));
  };
  older.addEventListener('click', () => load(nextToken));
  check();
  load('');
  return () => {};
}
