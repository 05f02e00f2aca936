// Usage: tokens by day (the last 7 UTC days), by user and by model (today), with the limits
// that apply (QuotaService.GetUsage with window DAY for each day, ListLimits).
import {call, callAll} from '../api.js';
import {barChart} from '../chart.js';
import {fill, h, table} from '../dom.js';
import {count, enumName} from '../format.js';
import {every, problem} from '../refresh.js';

const kDays = 7;
const kTopUsers = 10;

function tokensOf(row) {
  return Number(row.inputTokens || 0) + Number(row.outputTokens || 0);
}

function dayLabel(date) {
  return date.toISOString().slice(0, 10);
}

function sumBy(rows, key) {
  const sums = new Map();
  for (const row of rows) sums.set(row[key], (sums.get(row[key]) || 0) + tokensOf(row));
  return [...sums.entries()].sort((a, b) => b[1] - a[1]);
}

export function renderUsage(main) {
  const refresh = h('button', {type: 'button', id: 'refresh-usage'}, 'Refresh');
  const body = h('div', {});
  main.append(h('h1', {}, 'Usage'),
    h('p', {}, 'Tokens (input and output) by UTC day. ', refresh), body);
  const load = async () => {
    try {
      const today = new Date();
      const days = [];
      for (let i = kDays - 1; i >= 0; --i) {
        const day = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(),
                                      today.getUTCDate() - i, 12));
        days.push(day);
      }
      const perDay = await Promise.all(days.map((day) => callAll(
        'herald.v1.QuotaService/GetUsage',
        {window: 'USAGE_WINDOW_DAY', at: day.toISOString()}, 'rows')));
      const todayRows = perDay[perDay.length - 1];
      const users = sumBy(todayRows, 'jid');
      const limitStates = await Promise.all(users.slice(0, kTopUsers).map(([jid]) =>
        call('herald.v1.QuotaService/ListLimits', {jid}).then(
          (answer) => answer.limits || [], () => [])));
      const dailyLimit = (states) => {
        const day = states.filter((state) => state.limit.window === 'USAGE_WINDOW_DAY' &&
                                             !state.limit.model);
        return day.length ? Math.min(...day.map((state) => Number(state.limit.maxTokens))) : 0;
      };
      const configured = (await call('herald.v1.QuotaService/ListLimits')).limits || [];
      const byDay = days.map((day, i) => ({
        label: dayLabel(day), value: perDay[i].reduce((sum, row) => sum + tokensOf(row), 0)}));
      const byUser = users.map(([jid, value], i) => ({
        label: jid, value, limit: i < kTopUsers ? dailyLimit(limitStates[i]) : 0}));
      const byModel = sumBy(todayRows, 'model').map(([model, value]) => ({label: model, value}));
      fill(body,
        h('div', {class: 'charts'},
          h('div', {id: 'usage-by-day'}, barChart('Tokens by day', byDay)),
          h('div', {id: 'usage-by-user'}, barChart('Tokens by user today', byUser)),
          h('div', {id: 'usage-by-model'}, barChart('Tokens by model today', byModel))),
        h('h2', {}, 'Limits'),
        configured.length === 0
          ? h('p', {class: 'empty'}, 'No limits besides the [quota] default.')
          : table('Configured limits', [
            ['Who', (state) => state.limit.jid || 'anyone'],
            ['Model', (state) => state.limit.model || 'any'],
            ['Window', (state) => enumName(state.limit.window, 'USAGE_WINDOW_')],
            ['Tokens', (state) => count(state.limit.maxTokens)],
            ['When reached', (state) => enumName(state.limit.mode, 'LIMIT_MODE_')],
          ], configured));
    } catch (error) {
      fill(body, h('p', {class: 'error'}, problem(error)));
    }
  };
  refresh.addEventListener('click', load);
  return every(10000, load);
}
