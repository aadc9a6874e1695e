// The live connection: one WebSocket for the whole console. The token goes as the "bearer.<token>"
// subprotocol (a browser cannot set headers on a WebSocket, and a token in the URL would end up in
// logs). Events arrive batched (an array every 200 ms) or alone (log entries, activity items).
// Pages subscribe to topics and receive each event; on reconnect the topics are asked for again.

import { accessToken, refresh } from "./api.js";

const handlers = new Set();
const topics = new Set();
let socket = null;
let retryMs = 500;
let retryTimer = null;
let wanted = false;
const statusListeners = new Set();
export let status = "offline";

function setStatus(next) {
  status = next;
  document.documentElement.dataset.live = next; // tests and styles read it
  for (const listener of statusListeners) listener(next);
}

export function onStatus(listener) {
  statusListeners.add(listener);
  listener(status);
  return () => statusListeners.delete(listener);
}

export function connect() {
  wanted = true;
  if (socket && socket.readyState <= 1) return;
  const token = accessToken();
  if (!token) return;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws`, ["hausbox", `bearer.${token}`]);
  setStatus("connecting");
  let opened = false;
  socket.onopen = () => {
    opened = true;
    retryMs = 500;
    setStatus("online");
    sendTopics();
  };
  socket.onmessage = (message) => {
    let data;
    try {
      data = JSON.parse(message.data);
    } catch {
      return;
    }
    for (const event of Array.isArray(data) ? data : [data]) {
      for (const handler of handlers) {
        try {
          handler(event);
        } catch (error) {
          console.warn("live handler failed", error);
        }
      }
    }
  };
  socket.onclose = () => {
    socket = null;
    setStatus("offline");
    if (!wanted) return;
    // Refused before it opened: most likely a token that expired while the tab slept (the server
    // answers the upgrade with 401, which a browser only shows as a failed connection).
    const again = () => connect();
    retryTimer = setTimeout(() => (opened ? again() : refresh().then(again, again)), retryMs);
    retryMs = Math.min(retryMs * 2, 10_000);
  };
}

export function disconnect() {
  wanted = false;
  clearTimeout(retryTimer);
  if (socket) socket.close();
  socket = null;
}

// A new access token: the open socket keeps its authentication, but the next one needs the new token.
export function reconnect() {
  if (!wanted) return;
  if (socket) socket.close(); // onclose reconnects with the current token
  else connect();
}

function sendTopics() {
  if (socket && socket.readyState === 1 && topics.size) socket.send(JSON.stringify({ type: "subscribe", topics: [...topics] }));
}

// subscribe(["equipments", "zones"], handler) -> unsubscribe function. Topics stay subscribed on
// the server (a page switch is cheap); only the handler goes.
export function subscribe(names, handler) {
  let added = false;
  for (const name of names) {
    if (!topics.has(name)) {
      topics.add(name);
      added = true;
    }
  }
  if (added) sendTopics();
  handlers.add(handler);
  return () => handlers.delete(handler);
}
