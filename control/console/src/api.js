// The console's one way to Herald: the HTTP/JSON API on the same listener (docs/http-api.md),
// with the control token the operator signed in with. The token lives in this tab's session
// storage only: closing the tab forgets it, and no cookie carries it (so no other site can
// make the browser use it).

const kTokenKey = 'herald.console.token';

export function token() {
  return sessionStorage.getItem(kTokenKey) || '';
}

export function signIn(value) {
  sessionStorage.setItem(kTokenKey, value);
}

export function signOut() {
  sessionStorage.removeItem(kTokenKey);
}

export class ApiError extends Error {
  constructor(httpStatus, body) {
    super(body.message || `HTTP ${httpStatus}`);
    this.httpStatus = httpStatus;
    this.status = body.status || '';
  }
}

// Calls `method` ("herald.v1.AdminService/GetStatus") with `request`; the response message
// as an object (protobuf's JSON mapping: lowerCamelCase names, 64-bit numbers as strings).
export async function call(method, request = {}) {
  const response = await fetch(`/api/${method}`, {
    method: 'POST',
    headers: {'Content-Type': 'application/json', 'Authorization': `Bearer ${token()}`},
    body: JSON.stringify(request),
    cache: 'no-store',
  });
  const text = await response.text();
  let body;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = {message: text.slice(0, 200)};
  }
  if (!response.ok) {
    const error = new ApiError(response.status, body);
    if (response.status === 401) window.dispatchEvent(new CustomEvent('herald:unauthorized'));
    throw error;
  }
  return body;
}

// Every page of a list call: `field` is the repeated field, `limit` caps how many are read.
export async function callAll(method, request, field, limit = 10000) {
  const items = [];
  let pageToken = '';
  do {
    const page = await call(method, {...request, pageSize: 1000, pageToken});
    items.push(...(page[field] || []));
    pageToken = page.nextPageToken || '';
  } while (pageToken && items.length < limit);
  return items;
}
