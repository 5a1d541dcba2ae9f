// The chatfeed web page: a user's chat lists (main, archive, unread), a chat's messages and a
// composer, over Web/chatfeed.js. What tests rely on (README, The web client): `?user=U`, `[data-chat-list]`,
// `[data-chat-id]`, `[data-unread]`, `[data-list-badge]`, `window.chatfeed.stats` and `.idle`.

import { ChatfeedConnection, ChatList } from "./chatfeed.js";

const $ = (selector) => document.querySelector(selector);
const params = new URLSearchParams(location.search);
const LIMIT = Math.max(1, Number.parseInt(params.get("limit") ?? "", 10) || 1000);
const PAGE = 30;

/** The user a token is for: its `sub` (the gateway checks the signature; this only reads it). */
function tokenUser(token) {
  try {
    const payload = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload)).sub ?? null;
  } catch {
    return null;
  }
}

/** The gateway refused a dev token (no dev tokens there, or no such user): ask for a token instead. */
class NoDevToken extends Error {}

/** A dev token from the gateway; a network failure throws as it is (the connection retries). */
async function devToken(user) {
  const response = await fetch(`/dev/token?user=${encodeURIComponent(user)}`);
  if (!response.ok) throw new NoDevToken(`${response.status} ${(await response.text()).trim()}`);
  return (await response.json()).token;
}

/** Shows the sign-in form and resolves with the token pasted there. */
function askForToken(reason) {
  const form = $("#sign-in");
  $("#sign-in .sign-in-error").textContent = reason ?? "";
  form.hidden = false;
  return new Promise((resolve) => {
    form.addEventListener("submit", function submit(event) {
      event.preventDefault();
      const token = form.elements.token.value.trim();
      if (!tokenUser(token)) {
        $("#sign-in .sign-in-error").textContent = "That is not a token (a JWT with a 'sub').";
        return;
      }
      form.removeEventListener("submit", submit);
      sessionStorage.setItem("chatfeed:token", token);
      form.hidden = true;
      resolve(token);
    });
  });
}

/**
 * Who signs in and how each connect gets its token. `?user=U` is known at once (the saved rows
 * show before any request) and asks `/dev/token` at every connect; when the gateway has no dev
 * tokens, or without `?user`, the page asks for a token.
 */
async function signIn() {
  const user = params.get("user");
  const pasted = () => sessionStorage.getItem("chatfeed:token");
  if (user) {
    return {
      user,
      getToken: async () => {
        try {
          return await devToken(user);
        } catch (error) {
          if (!(error instanceof NoDevToken)) throw error;
          if (pasted() && tokenUser(pasted()) === user) return pasted();
          return askForToken(`No dev token for '${user}' from this gateway (${error.message}): paste a token for ${user}.`);
        }
      },
    };
  }
  const token = pasted() && tokenUser(pasted()) ? pasted() : await askForToken();
  return { user: tokenUser(token), getToken: async () => pasted() ?? token };
}

// Rows.

const palette = ["#e17076", "#7bc862", "#65aadd", "#a695e7", "#ee7aae", "#6ec9cb", "#faa774"];
function colorOf(id) {
  let hash = 0;
  for (const character of id) hash = (hash * 31 + character.codePointAt(0)) >>> 0;
  return palette[hash % palette.length];
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// Marks drawn as SVG (no emoji font needed): a pin and a crossed-out bell.
const ICONS = {
  pinned: "M9 2h6l-1 6 4 4v2h-5v6l-1 2-1-2v-6H6v-2l4-4z",
  muted: "M12 3a5 5 0 0 0-5 5v4l-2 3h14l-2-3V8a5 5 0 0 0-5-5zm-2 14a2 2 0 0 0 4 0zM3 3l18 18-1.4 1.4L1.6 4.4z",
};
function icon(name, title) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", `mark mark-${name}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", title);
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", ICONS[name]);
  svg.append(path);
  return svg;
}

function timeText(ms) {
  const date = new Date(ms);
  return Math.abs(Date.now() - ms) < 20 * 3_600_000
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleDateString([], { month: "short", day: "numeric" });
}

/** Draws one chat's row (chatfeed.js keeps `data-chat-id` and the order). */
function renderRow(chat, row) {
  const button = element("button", "row");
  button.type = "button";
  const avatar = element("span", "avatar", (chat.title || chat.id).slice(0, 1).toUpperCase());
  avatar.style.background = colorOf(chat.id);
  const lines = element("span", "lines");
  const top = element("span", "top");
  top.append(element("span", "title", chat.title || chat.id));
  if (chat.muted) top.append(icon("muted", "Muted"));
  if (chat.pinned) top.append(icon("pinned", "Pinned"));
  top.append(element("span", "when", timeText(chat.lastMessageDate)));
  const bottom = element("span", "bottom");
  const last = chat.lastMessage;
  bottom.append(element("span", "preview", last ? `${last.sender === session.user ? "You" : last.sender}: ${last.text}` : "No messages yet"));
  const badge = element("span", chat.muted ? "badge muted" : "badge", chat.unread > 0 ? String(chat.unread) : "");
  badge.dataset.unread = "";
  bottom.append(badge);
  lines.append(top, bottom);
  button.append(avatar, lines);
  button.addEventListener("click", () => openChat(chat.id));
  row.replaceChildren(button);
  row.setAttribute("aria-current", String(chat.id === openChatId));
}

// The page's state.

let session;
let connection;
let list = null;
let tab = "main";
let openChatId = null;
let messages = [];
let nextCursor = null;
const stats = { snapshots: 0, batches: 0, resets: 0, errors: 0 };

window.chatfeed = {
  stats,
  get idle() { return connection?.isOpen === true && list?.idle === true; },
  get list() { return list; },
  get connection() { return connection; },
  get user() { return session?.user; },
};

function listOptions(name) {
  return name === "unread" ? { list: "main", unreadOnly: true } : { list: name, unreadOnly: false };
}

function showTab(name) {
  tab = name;
  for (const button of document.querySelectorAll("[data-tab]")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === name));
  }
  list?.close();
  const view = $("[data-chat-list]");
  view.replaceChildren();
  list = new ChatList(connection, view, {
    user: session.user, ...listOptions(name), limit: LIMIT, renderRow, stats,
  });
  list.addEventListener("change", (event) => showCounts(event.detail));
  list.addEventListener("batcherror", (event) => showBanner(`A batch did not apply (${event.detail.message}); the list caught up from the server.`));
  showCounts({ rows: list.rows, unread: list.unread });
}

function showCounts({ rows, unread }) {
  const badge = unread?.unmutedMessages ?? 0;
  $("[data-list-badge]").textContent = badge > 0 ? String(badge) : "";
  document.title = `${badge > 0 ? `(${badge}) ` : ""}chatfeed · ${session.user}`;
  $("#empty").hidden = rows.length > 0;
  const current = rows.find((chat) => chat.id === openChatId);
  if (current) showChatHeader(current);
}

let bannerTimer;
function showBanner(text) {
  const banner = $("#banner");
  banner.textContent = text;
  banner.hidden = false;
  clearTimeout(bannerTimer);
  bannerTimer = setTimeout(() => { banner.hidden = true; }, 6000);
}

function showStatus(state, text) {
  const status = $("#status");
  status.dataset.state = state;
  status.textContent = text;
}

// A chat: messages paged with the cursor, the composer, mark read, pin, mute and archive.

let openChatRow = null;
function showChatHeader(chat) {
  openChatRow = chat;
  $("#chat-title").textContent = chat.title || chat.id;
  $("#pin").textContent = chat.pinned ? "Unpin" : "Pin";
  $("#mute").textContent = chat.muted ? "Unmute" : "Mute";
  $("#archive").textContent = chat.list === "archive" ? "Unarchive" : "Archive";
  if (chat.unread > 0 && document.visibilityState === "visible") markRead(chat.id);
  if (chat.lastMessage && !messages.some((message) => message.id === chat.lastMessage.id)) refreshMessages();
}

let marking = null;
function markRead(id) {
  if (marking === id) return;
  marking = id;
  connection.call("chat.markRead", { chat: id }).catch(reportError).finally(() => { marking = null; });
}

function reportError(error) {
  showBanner(error.message);
}

async function openChat(id) {
  openChatId = id;
  messages = [];
  nextCursor = null;
  for (const row of document.querySelectorAll("[data-chat-id]")) row.setAttribute("aria-current", String(row.dataset.chatId === id));
  $("#chat").hidden = false;
  $("#no-chat").hidden = true;
  $("#message-list").replaceChildren();
  const chat = list.rows.find((row) => row.id === id);
  if (chat) showChatHeader(chat);
  else markRead(id);
  await refreshMessages();
}

async function refreshMessages() {
  const id = openChatId;
  try {
    const page = await connection.call("messages.list", { chat: id, limit: PAGE });
    if (id !== openChatId) return;
    if (messages.length === 0) nextCursor = page.nextCursor;
    const byId = new Map(messages.map((message) => [message.id, message]));
    for (const message of page.items) byId.set(message.id, message);
    messages = [...byId.values()].sort(bySentAt);
    drawMessages(true);
  } catch (error) {
    reportError(error);
  }
}

/** Oldest first: (sentAt, id) ascending, the reverse of messages.list's order. */
function bySentAt(a, b) {
  return a.sentAt - b.sentAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

async function olderMessages() {
  if (!nextCursor) return;
  const id = openChatId;
  try {
    const page = await connection.call("messages.list", { chat: id, limit: PAGE, cursor: nextCursor });
    if (id !== openChatId) return;
    nextCursor = page.nextCursor;
    messages = [...[...page.items].reverse(), ...messages];
    drawMessages(false);
  } catch (error) {
    reportError(error);
  }
}

function drawMessages(toBottom) {
  const pane = $("#messages");
  const fromBottom = pane.scrollHeight - pane.scrollTop;
  $("#message-list").replaceChildren(...messages.map((message) => {
    const item = element("li", message.sender === session.user ? "message mine" : "message");
    item.dataset.messageId = message.id;
    if (message.sender !== session.user) item.append(element("div", "sender", message.sender));
    const text = element("span", "text", message.text);
    const meta = element("span", "meta", `${timeText(message.sentAt)}${message.editedAt ? " · edited" : ""}`);
    item.append(text, meta);
    return item;
  }));
  $("#older").hidden = !nextCursor;
  pane.scrollTop = toBottom ? pane.scrollHeight : pane.scrollHeight - fromBottom;
}

async function send(event) {
  event.preventDefault();
  const input = event.target.elements.text;
  const text = input.value.trim();
  if (!text || !openChatId) return;
  input.value = "";
  const message = { chat: openChatId, id: crypto.randomUUID(), text, sentAt: Date.now() };
  try {
    await connection.call("message.post", message);
    await refreshMessages();
  } catch (error) {
    input.value = text;
    reportError(error);
  }
}

function toggle(action) {
  const chat = openChatRow;
  if (!chat) return;
  const method = {
    pin: chat.pinned ? "chat.unpin" : "chat.pin",
    mute: chat.muted ? "chat.unmute" : "chat.mute",
    archive: chat.list === "archive" ? "chat.unarchive" : "chat.archive",
  }[action];
  connection.call(method, { chat: chat.id }).then(showChatHeader, reportError);
}

// Start.

session = await signIn();
$("#me").textContent = session.user;
$("#app").hidden = false;
const scheme = location.protocol === "https:" ? "wss" : "ws";
connection = new ChatfeedConnection({ url: `${scheme}://${location.host}/v1/feed`, getToken: session.getToken });
connection.addEventListener("open", () => showStatus("live", "live"));
connection.addEventListener("close", () => showStatus("offline", "offline, reconnecting…"));
for (const button of document.querySelectorAll("[data-tab]")) button.addEventListener("click", () => showTab(button.dataset.tab));
$("#older").addEventListener("click", olderMessages);
$("#composer").addEventListener("submit", send);
for (const action of ["pin", "mute", "archive"]) $(`#${action}`).addEventListener("click", () => toggle(action));
addEventListener("pagehide", () => list?.save());
showTab("main");
connection.start();
