// The REST client and the session. Tokens live in localStorage so that a reload keeps the user
// signed in. The access token is refreshed shortly before it expires (and once more if a request is
// refused with 401), through one shared refresh at a time: the server rotates refresh tokens, so two
// parallel refreshes with the same token would sign the user out.

const BASE = "/api/v1";
const KEY = "hausbox.session";
const EARLY_MS = 60_000; // refresh this long before expiry, or at 80 % of a shorter lifetime

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

let session = load();
let refreshing = null;
let timer = null;
const listeners = new Set();

function load() {
  try {
    return JSON.parse(localStorage.getItem(KEY)) || null;
  } catch {
    return null;
  }
}

function save(next) {
  session = next;
  if (next) localStorage.setItem(KEY, JSON.stringify(next));
  else localStorage.removeItem(KEY);
  schedule();
  for (const listener of listeners) listener(session);
}

export function onSession(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function currentSession() {
  return session;
}

export function accessToken() {
  return session && session.accessToken;
}

// A token pair from setup, login, MFA verify or refresh. expiresIn is in seconds; without it the
// token's own exp claim is read.
export function signedIn(pair) {
  const lifetimeMs = pair.expiresIn ? pair.expiresIn * 1000 : tokenExpiry(pair.accessToken) - Date.now();
  save({ accessToken: pair.accessToken, refreshToken: pair.refreshToken, expiresAt: Date.now() + lifetimeMs, lifetimeMs });
}

function tokenExpiry(token) {
  try {
    const claims = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    return claims.exp * 1000;
  } catch {
    return Date.now() + 15 * 60_000;
  }
}

function schedule() {
  clearTimeout(timer);
  if (!session) return;
  const early = Math.min(EARLY_MS, session.lifetimeMs * 0.2);
  // A few random seconds apart, so that tabs opened together do not refresh at the same instant.
  const jitter = Math.random() * Math.min(5000, early / 2);
  timer = setTimeout(() => refresh().catch(() => {}), Math.max(1000, session.expiresAt - early - Date.now()) + jitter);
}

// Another tab of the console shares the session (localStorage): when it refreshes, this one takes
// the new pair instead of refreshing with a token the server has already rotated out, which it
// would take for a stolen token and end the session of both.
window.addEventListener("storage", (event) => {
  if (event.key !== KEY) return;
  session = load();
  schedule();
  for (const listener of listeners) listener(session);
});

export function refresh() {
  if (refreshing) return refreshing;
  refreshing = (async () => {
    const release = await refreshLock();
    try {
      const stored = load();
      if (!stored || !session) throw new ApiError(401, { error: "Not signed in" });
      if (stored.refreshToken !== session.refreshToken) {
        session = stored; // another tab refreshed while this one waited: take its pair
        schedule();
        return stored;
      }
      const pair = await raw("POST", "/auth/refresh", { refreshToken: session.refreshToken }, null);
      signedIn(pair);
      return pair;
    } catch (error) {
      if (error.status === 401 || error.status === 400) save(null); // the session is over: sign in again
      throw error;
    } finally {
      release();
      refreshing = null;
    }
  })();
  return refreshing;
}

// One tab refreshes at a time. There is no cross-tab lock on a plain-HTTP page (Web Locks need a
// secure context, and the box is usually http://hausbox.local), so: a claim in localStorage, read
// back after a moment (of two tabs writing at once, the last one wins and the other sees it), held
// at most 5 s.
const LOCK = "hausbox.refreshLock";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function refreshLock() {
  const me = Math.random().toString(36).slice(2);
  const holder = () => {
    try {
      return JSON.parse(localStorage.getItem(LOCK));
    } catch {
      return null;
    }
  };
  for (let attempt = 0; attempt < 60; attempt++) {
    const held = holder();
    if (!held || held.until < Date.now()) {
      localStorage.setItem(LOCK, JSON.stringify({ me, until: Date.now() + 5000 }));
      await sleep(40);
      if ((holder() || {}).me === me) {
        return () => {
          if ((holder() || {}).me === me) localStorage.removeItem(LOCK);
        };
      }
    }
    await sleep(100 + Math.random() * 50);
  }
  return () => {}; // a lock never released (a tab closed mid-refresh) expires; go on without it
}

export async function signOut() {
  const token = session && session.refreshToken;
  if (token) await raw("POST", "/auth/logout", { refreshToken: token }, accessToken()).catch(() => {});
  save(null);
}

async function raw(method, path, body, token, options = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  let payload;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined && body !== null) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const response = await fetch(BASE + path, { method, headers, body: payload });
  if (options.blob && response.ok) return response;
  const text = await response.text();
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { error: text };
    }
  }
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

// An authenticated request; a 401 (token expired while the tab slept) refreshes once and retries.
export async function api(method, path, body, options) {
  if (session && session.expiresAt - Date.now() < 5000) await refresh().catch(() => {});
  try {
    return await raw(method, path, body, accessToken(), options);
  } catch (error) {
    if (error.status !== 401 || !session) throw error;
    await refresh();
    return raw(method, path, body, accessToken(), options);
  }
}

export const get = (path) => api("GET", path);
export const post = (path, body) => api("POST", path, body ?? {});
export const put = (path, body) => api("PUT", path, body ?? {});
export const del = (path) => api("DELETE", path);
export const publicPost = (path, body) => raw("POST", path, body, null);
export const publicGet = (path) => raw("GET", path, undefined, null);

schedule();
