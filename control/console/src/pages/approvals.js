// Approvals: what runs are waiting for (SkillService.ListPendingActions), oldest first, with
// Approve and Deny for a tool call that needs a person's yes. Credentials are never typed into
// a web page: the console says which secrets a run waits for and how to give them.
import {call} from '../api.js';
import {announce, fill, h} from '../dom.js';
import {time} from '../format.js';
import {every, problem} from '../refresh.js';

function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function renderApprovals(main) {
  const body = h('div', {});
  main.append(h('h1', {}, 'Approvals'), body);
  let load;
  const decide = async (action, method, verb) => {
    try {
      await call(`herald.v1.SkillService/${method}`, {actionId: action.actionId});
      announce(`${verb} ${action.skill} for ${action.conversation}.`, 'ok');
    } catch (error) {
      announce(problem(error), 'error');
    }
    await load();
  };
  load = async () => {
    let list;
    try {
      list = await call('herald.v1.SkillService/ListPendingActions');
    } catch (error) {
      fill(body, h('p', {class: 'error'}, problem(error)));
      return;
    }
    const actions = list.actions || [];
    fill(body, actions.length === 0 ? h('p', {class: 'empty'}, 'Nothing is waiting.')
      : h('ul', {class: 'cards'}, actions.map((action) => {
        const kind = action.kind || '';
        const heading = `${action.skill || 'plan'} in ${action.conversation}`;
        return h('li', {class: 'card', 'data-action': action.actionId},
          h('h2', {}, heading),
          action.description ? h('p', {}, action.description) : null,
          action.argumentsJson ? h('pre', {class: 'arguments'}, prettyJson(action.argumentsJson))
                               : null,
          h('p', {class: 'meta'}, `Asked ${time(action.created)}; expires ${time(action.expires)}.`,
            action.runId ? [' ', h('a', {href: `#/run/${encodeURIComponent(action.runId)}`},
                                   'See the run')] : null),
          kind === 'REQUIRED_ACTION_KIND_CREDENTIALS'
            ? h('p', {}, `Waits for the secrets ${(action.credentials || []).join(', ')} of ` +
                         `${action.owner}: give them with heraldctl skills credentials --action ` +
                         `${action.actionId}.`)
            : h('div', {class: 'actions'},
              kind === 'REQUIRED_ACTION_KIND_APPROVAL'
                ? h('button', {type: 'button', class: 'approve', 'aria-label': `Approve ${heading}`,
                               onclick: () => decide(action, 'Approve', 'Approved')}, 'Approve')
                : null,
              h('button', {type: 'button', class: 'deny', 'aria-label': `Deny ${heading}`,
                           onclick: () => decide(action, 'Deny', 'Denied')}, 'Deny')));
      })));
  };
  return every(2000, load);
}
