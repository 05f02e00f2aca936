// The console's frame: signing in with a control token, the navigation, and which page the
// address (#/runs, #/conversations?q=alice, ...) shows. Each page renders into <main> and
// returns what stops its refreshing when another page is opened.
import {ApiError, call, signIn, signOut, token} from './api.js';
import {announce, fill, h} from './dom.js';
import {renderApprovals} from './pages/approvals.js';
import {renderAudit} from './pages/audit.js';
import {renderAccess} from './pages/access.js';
import {renderConversation, renderConversations} from './pages/conversations.js';
import {renderRun, renderRuns} from './pages/runs.js';
import {renderStatus} from './pages/status.js';
import {renderUsage} from './pages/usage.js';

const kPages = [
  ['status', 'Status', renderStatus],
  ['conversations', 'Conversations', renderConversations],
  ['runs', 'Runs', renderRuns],
  ['approvals', 'Approvals', renderApprovals],
  ['usage', 'Usage', renderUsage],
  ['access', 'Access', renderAccess],
  ['audit', 'Audit log', renderAudit],
];
const kDetailPages = {conversation: renderConversation, run: renderRun};

let stopPage = () => {};
let signedIn = false;  // a page is shown (not the sign-in form)

// "#/run/abc?x=1" -> {name: 'run', rest: 'abc', params: URLSearchParams}
function route() {
  const hash = window.location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = hash.split('?');
  const [name, ...rest] = path.split('/');
  return {name: name || 'status', rest: rest.map(decodeURIComponent).join('/'),
          params: new URLSearchParams(query)};
}

function showNavigation(current) {
  const nav = document.getElementById('nav');
  nav.hidden = false;
  document.getElementById('sign-out').hidden = false;
  const section = current === 'conversation' ? 'conversations' : current === 'run' ? 'runs' : current;
  fill(nav, h('ul', {}, kPages.map(([name, title]) =>
    h('li', {}, h('a', {href: `#/${name}`, 'aria-current': name === section ? 'page' : false},
                  title)))));
}

function showSignIn(message) {
  signedIn = false;
  stopPage();
  stopPage = () => {};
  document.getElementById('nav').hidden = true;
  document.getElementById('sign-out').hidden = true;
  const input = h('input', {id: 'token', name: 'token', type: 'password', required: true,
                            autocomplete: 'off', spellcheck: 'false',
                            'aria-describedby': 'token-help'});
  const error = h('p', {class: 'error', role: 'alert'}, message || '');
  const form = h('form', {class: 'sign-in', onsubmit: async (event) => {
    event.preventDefault();
    signIn(input.value.trim());
    try {
      await call('herald.v1.AdminService/GetStatus');
      show();
    } catch (caught) {
      signOut();
      error.textContent = caught instanceof ApiError && caught.httpStatus === 401
          ? 'Herald does not know this token.'
          : `Signing in failed: ${caught.message}`;
      input.focus();
    }
  }},
  h('h1', {}, 'Sign in'),
  h('label', {for: 'token'}, 'Control token'),
  input,
  h('p', {id: 'token-help', class: 'help'},
    'A token from [[control.tokens]] in herald.toml. It stays in this tab only and is ',
    'forgotten when the tab closes.'),
  h('button', {type: 'submit'}, 'Sign in'),
  error);
  fill(document.getElementById('main'), form);
  input.focus();
}

function show() {
  if (!token()) return showSignIn();
  signedIn = true;
  stopPage();
  const {name, rest, params} = route();
  showNavigation(name);
  const main = document.getElementById('main');
  const page = kDetailPages[name] || (kPages.find(([known]) => known === name) || kPages[0])[2];
  fill(main);
  announce('');
  stopPage = page(main, {rest, params}) || (() => {});
  main.focus({preventScroll: true});
}

window.addEventListener('hashchange', show);
window.addEventListener('herald:unauthorized', () => {
  if (!signedIn) return;  // the sign-in form says it itself
  signOut();
  showSignIn('Herald no longer accepts this token; sign in again.');
});
document.getElementById('sign-out').addEventListener('click', () => {
  signOut();
  announce('Signed out.');
  showSignIn();
});
show();
