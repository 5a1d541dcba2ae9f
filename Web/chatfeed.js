// chatfeed's browser client: a plain ES module, no build step, no framework. Any web app can take it.
//
//   import { ChatfeedConnection, ChatList } from "./chatfeed.js";
//   const connection = new ChatfeedConnection({ url: "ws://127.0.0.1:8080/v1/feed", getToken });
//   const list = new ChatList(connection, document.querySelector("[data-chat-list]"), {
//     user: "ann", list: "main", limit: 100, renderRow: (chat, element) => { element.textContent = chat.title; },
//   });
//   connection.start();
//
// The connection speaks JSON-RPC 2.0 over a WebSocket (one message per text frame; docs/PROTOCOL.md)
// and reconnects with jittered backoff. A ChatList subscribes, applies every batch to its keyed
// ListModel under UIKit's rules (a batch that does not apply is reported and the list resubscribes
// from what it shows: never a silent drift), animates it (FLIP for moves, fades for inserts and
// deletes, updates redrawn in place) and acknowledges each batch when its animation has ended, so
// the server's flow control spaces batches by the animations and a burst arrives coalesced. It
// keeps its rows in localStorage, shows them at once on reload and resumes with them as `known`.

import { ListModel, BatchRuleViolation } from "./listmodel.js";

export { ListModel, BatchRuleViolation, BatchRule, applyBatch, validateBatch } from "./listmodel.js";

/** An error answer of the server: `code` is the JSON-RPC code (−32007 forbidden, −32001 not found…). */
export class RPCError extends Error {
  constructor(method, error) {
    super(`${method}: ${error.message} (${error.code})`);
    this.name = "RPCError";
    this.code = error.code;
    this.data = error.data;
  }
}

/** The connection was closed before the answer came. */
export class ConnectionClosedError extends Error {
  constructor(method) {
    super(`${method}: the connection closed before the answer`);
    this.name = "ConnectionClosedError";
  }
}

/**
 * One WebSocket to a chatfeed gateway, reopened with jittered exponential backoff when it closes.
 *
 * Events: `open`, `close` (`detail`: `{code, reason}`), `notification` (`detail`: the message).
 */
export class ChatfeedConnection extends EventTarget {
  /**
   * @param {object} options
   * @param {string} options.url the feed's WebSocket address, e.g. `ws://host:8080/v1/feed`
   * @param {() => Promise<string>} options.getToken asked for a token before each connect (a
   *   token may have expired meanwhile)
   * @param {number} [options.minDelayMs] first reconnect delay (250 ms), doubled up to `maxDelayMs` (10 s)
   * @param {number} [options.requestTimeoutMs] a request without an answer fails after this (30 s)
   */
  constructor({ url, getToken, minDelayMs = 250, maxDelayMs = 10_000, requestTimeoutMs = 30_000 }) {
    super();
    this.url = url;
    this.getToken = getToken;
    this.minDelayMs = minDelayMs;
    this.maxDelayMs = maxDelayMs;
    this.requestTimeoutMs = requestTimeoutMs;
    this.socket = null;
    this.isOpen = false;
    this.stopped = true;
    this.attempt = 0;
    this.nextId = 1;
    this.pending = new Map();
    this.retryTimer = null;
  }

  /** Connects, and keeps reconnecting until `stop()`. */
  start() {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  /** Closes the connection for good (no reconnect). */
  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.socket?.close(1000, "closed by the page");
  }

  async connect() {
    if (this.socket !== null || this.stopped) return;
    let token;
    try {
      token = await this.getToken();
    } catch (error) {
      console.warn(`chatfeed: no token (${error.message}); retrying`);
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) return;
    const separator = this.url.includes("?") ? "&" : "?";
    const socket = new WebSocket(`${this.url}${separator}access_token=${encodeURIComponent(token)}`);
    this.socket = socket;
    socket.onopen = () => {
      this.attempt = 0;
      this.isOpen = true;
      this.dispatchEvent(new Event("open"));
    };
    socket.onmessage = (event) => this.receive(event.data);
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.isOpen = false;
      for (const [, request] of this.pending) {
        clearTimeout(request.timer);
        request.reject(new ConnectionClosedError(request.method));
      }
      this.pending.clear();
      this.dispatchEvent(new CustomEvent("close", { detail: { code: event.code, reason: event.reason } }));
      this.scheduleReconnect();
    };
  }

  scheduleReconnect() {
    if (this.stopped) return;
    // Equal jitter (half the ceiling plus a random half) over an exponential ceiling: a gateway restart does not get every client at once.
    const ceiling = Math.min(this.maxDelayMs, this.minDelayMs * 2 ** this.attempt);
    this.attempt += 1;
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      console.warn("chatfeed: a frame that is not JSON", text.slice(0, 200));
      return;
    }
    if (message.method !== undefined) {
      this.dispatchEvent(new CustomEvent("notification", { detail: message }));
      return;
    }
    const request = this.pending.get(message.id);
    if (request === undefined) return;
    this.pending.delete(message.id);
    clearTimeout(request.timer);
    if (message.error) request.reject(new RPCError(request.method, message.error));
    else request.resolve(message.result);
  }

  /**
   * Sends a request and returns its result. While the connection is (re)opening the request waits
   * for it, within the time limit; a request in flight when the connection closes fails with
   * `ConnectionClosedError` (a write may or may not have been applied). Other failures reject with
   * `RPCError` (the server's answer) or a time-out error.
   */
  call(method, params = {}) {
    return new Promise((resolve, reject) => {
      const deadline = Date.now() + this.requestTimeoutMs;
      const timedOut = () => reject(new Error(`${method}: no answer within ${this.requestTimeoutMs} ms`));
      const send = () => {
        if (this.stopped) {
          reject(new ConnectionClosedError(method));
          return;
        }
        if (!this.isOpen) {
          const wait = setTimeout(() => { this.removeEventListener("open", opened); timedOut(); }, deadline - Date.now());
          const opened = () => { clearTimeout(wait); send(); };
          this.addEventListener("open", opened, { once: true });
          return;
        }
        const id = this.nextId++;
        const timer = setTimeout(() => { this.pending.delete(id); timedOut(); }, Math.max(0, deadline - Date.now()));
        this.pending.set(id, { method, resolve, reject, timer });
        this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      };
      send();
    });
  }

  /** Sends a notification (no answer), e.g. `feed.ack`. Dropped when the connection is closed. */
  notify(method, params = {}) {
    if (this.isOpen) this.socket.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }
}

/** Whether animations should run: not in a hidden tab (they would wait there), not for reduced motion. */
function animationsEnabled() {
  if (typeof document === "undefined" || document.hidden) return false;
  return !globalThis.matchMedia?.("(prefers-reduced-motion: reduce)").matches;
}

/**
 * A live chat list in an element: subscribes, applies and animates batches, acks them when their
 * animation has ended, saves its rows and resumes with them.
 *
 * The element's children are the rows, `[data-chat-id]` in display order (a row fading out loses
 * the attribute). Events: `change` (rows or counters changed; `detail`: `{rows, total, unread,
 * count}`), `batcherror` (`detail`: the `BatchRuleViolation`), `state` (`subscribed` or not).
 */
export class ChatList extends EventTarget {
  /**
   * @param {ChatfeedConnection} connection
   * @param {HTMLElement} element the list; its children are managed here
   * @param {object} options
   * @param {string} options.user the signed-in user (part of the storage key)
   * @param {string} [options.list] `main` (default) or `archive`
   * @param {boolean} [options.unreadOnly]
   * @param {number} [options.limit] a window of the first rows (default: the whole list)
   * @param {number} [options.maxInFlight] unacknowledged batches the server may send (1)
   * @param {(chat: object, element: HTMLElement) => void} [options.renderRow] draws a row's content
   * @param {number} [options.moveMs] how long a move or fade takes (250 ms)
   * @param {Storage|null} [options.storage] where rows are kept (`localStorage`; null: nowhere)
   * @param {object} [options.stats] counters to add to (`snapshots`, `batches`, `resets`, `errors`),
   *   e.g. one object for a page's successive lists
   */
  constructor(connection, element, options) {
    super();
    this.connection = connection;
    this.element = element;
    this.user = options.user;
    this.listName = options.list ?? "main";
    this.unreadOnly = options.unreadOnly ?? false;
    this.limit = options.limit;
    this.maxInFlight = options.maxInFlight ?? 1;
    this.renderRow = options.renderRow ?? ((chat, row) => { row.textContent = chat.title ?? chat.id; });
    this.moveMs = options.moveMs ?? 250;
    this.storage = options.storage === undefined ? globalThis.localStorage ?? null : options.storage;
    this.storageKey = [
      "chatfeed:v1", new URL(connection.url, globalThis.location?.href).host, this.user,
      this.listName, this.unreadOnly ? "unread" : "all", this.limit ?? "all",
    ].join(":");

    this.model = new ListModel();
    this.total = 0;
    this.unread = { chats: 0, messages: 0, unmutedChats: 0, unmutedMessages: 0 };
    this.stats = options.stats ?? { snapshots: 0, batches: 0, resets: 0, errors: 0 };
    this.subscription = null;
    this.expectedSeq = 1;
    this.subscribing = false;
    this.queue = [];
    this.early = [];
    this.busy = false;
    this.generation = 0;
    this.closed = false;
    this.saveTimer = null;
    this.failures = 0;
    /** How many saved rows were shown at once, before any request (0: none were saved). */
    this.restoredRows = 0;
    // Rows that fade out are placed absolutely over the list while the others close the gap.
    if (globalThis.getComputedStyle?.(element).position === "static") element.style.position = "relative";

    this.restore();
    this.onOpen = () => this.subscribe();
    this.onClose = () => this.lost();
    this.onNotification = (event) => this.receive(event.detail);
    connection.addEventListener("open", this.onOpen);
    connection.addEventListener("close", this.onClose);
    connection.addEventListener("notification", this.onNotification);
    if (connection.isOpen) this.subscribe();
  }

  /** The rows shown, in display order. */
  get rows() { return this.model.rows; }

  /** True when subscribed, no animation runs and no batch waits. */
  get idle() { return this.subscription !== null && !this.subscribing && !this.busy && this.queue.length === 0; }

  /** Stops following the list: unsubscribes, and leaves the element as it is. */
  close() {
    this.closed = true;
    this.generation += 1;
    this.connection.removeEventListener("open", this.onOpen);
    this.connection.removeEventListener("close", this.onClose);
    this.connection.removeEventListener("notification", this.onNotification);
    if (this.subscription !== null) this.connection.notify("feed.unsubscribe", { subscription: this.subscription });
    this.subscription = null;
    this.queue = [];
    this.save();
  }

  // Saved rows: shown at once, then sent as `known`.

  restore() {
    let saved = null;
    try {
      saved = JSON.parse(this.storage?.getItem(this.storageKey) ?? "null");
    } catch {
      saved = null;
    }
    if (!Array.isArray(saved?.rows)) return;
    try {
      this.model.replace(saved.rows);
    } catch {
      return;
    }
    this.total = saved.total ?? saved.rows.length;
    this.unread = saved.unread ?? this.unread;
    this.restoredRows = saved.rows.length;
    this.redraw();
    this.changed();
  }

  save() {
    clearTimeout(this.saveTimer);
    this.saveTimer = null;
    try {
      this.storage?.setItem(this.storageKey, JSON.stringify({ rows: this.model.rows, total: this.total, unread: this.unread }));
    } catch (error) {
      console.warn(`chatfeed: cannot save the rows (${error.message})`);
    }
  }

  saveSoon() {
    if (this.saveTimer === null) this.saveTimer = setTimeout(() => this.save(), 300);
  }

  // Subscribing and resuming.

  async subscribe() {
    if (this.closed || this.subscribing) return;
    const generation = ++this.generation;
    this.subscribing = true;
    this.subscription = null;
    this.queue = [];
    this.early = [];
    this.emitState();
    const params = { list: this.listName, unreadOnly: this.unreadOnly, maxInFlight: this.maxInFlight };
    if (this.limit !== undefined) params.limit = this.limit;
    // Resume from the rows shown (the server takes at most 10,000); after repeated errors, or
    // with more rows than that, start over from a snapshot instead.
    const rows = this.model.rows.length;
    if (rows > 0 && rows <= 10_000 && this.failures < 2) params.known = this.model.known();
    let result;
    try {
      result = await this.connection.call("feed.subscribe", params);
    } catch (error) {
      if (generation !== this.generation) return;
      this.subscribing = false;
      this.emitState();
      if (error instanceof ConnectionClosedError) return;  // the next open subscribes again
      // Refused (a limit reached) or no answer: try again on this connection a little later.
      console.warn(`chatfeed: subscribe failed: ${error.message}; retrying`);
      setTimeout(() => {
        if (generation === this.generation && !this.closed && this.connection.isOpen) this.subscribe();
      }, 2000 + Math.random() * 2000);
      return;
    }
    if (generation !== this.generation) {
      // Closed or lost meanwhile: this subscription is nobody's.
      this.connection.notify("feed.unsubscribe", { subscription: result.subscription });
      return;
    }
    this.subscribing = false;
    this.subscription = result.subscription;
    this.expectedSeq = 1;
    // The answer carries either a snapshot (`items`) or the batches from `known` (animated, not acked).
    this.queue.push({ kind: "answer", result });
    for (const message of this.early) if (message.params.subscription === this.subscription) this.queue.push({ kind: "note", message });
    this.early = [];
    this.emitState();
    this.pump();
  }

  lost() {
    this.generation += 1;
    this.subscription = null;
    this.subscribing = false;
    this.queue = [];
    this.early = [];
    this.emitState();
  }

  receive(message) {
    if (message.method !== "feed.batch" && message.method !== "feed.reset") return;
    if (this.subscribing) {
      this.early.push(message);
      return;
    }
    if (message.params?.subscription !== this.subscription || this.subscription === null) return;
    this.queue.push({ kind: "note", message });
    this.pump();
  }

  // One batch at a time: apply, animate, then ack; the next waits for the animation.

  async pump() {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.queue.length > 0) {
        const generation = this.generation;
        const item = this.queue.shift();
        try {
          await this.handle(item, generation);
          this.failures = 0;
        } catch (error) {
          this.report(error instanceof BatchRuleViolation ? error : new BatchRuleViolation("malformed", error.message));
          this.failures += 1;
          if (generation === this.generation) this.resubscribe();
        }
      }
    } finally {
      this.busy = false;
      this.emitState();
    }
  }

  async handle(item, generation) {
    if (item.kind === "answer") {
      const { result } = item;
      this.total = result.total ?? this.total;
      this.unread = result.unread ?? this.unread;
      if (Array.isArray(result.items)) {
        this.model.replace(result.items);
        this.stats.snapshots += 1;
        this.redraw();
      } else {
        for (const batch of result.batches ?? []) {
          await this.applyAnimated(batch, undefined);
          if (generation !== this.generation) return;
        }
      }
      if (result.count !== undefined && result.count !== this.model.rows.length) {
        throw new BatchRuleViolation("countMismatch", `${this.model.rows.length} rows after the subscribe answer, the server counts ${result.count}`);
      }
      this.changed();
      this.saveSoon();
      return;
    }
    const { method, params } = item.message;
    if (params.seq !== this.expectedSeq) {
      throw new BatchRuleViolation("seqGap", `notification seq ${params.seq}, expected ${this.expectedSeq}`);
    }
    this.expectedSeq += 1;
    this.total = params.total ?? this.total;
    this.unread = params.unread ?? this.unread;
    if (method === "feed.reset") {
      this.model.replace(params.items);
      this.stats.resets += 1;
      this.redraw();
    } else {
      await this.applyAnimated(params, params.count);
    }
    this.changed();
    this.saveSoon();
    if (generation === this.generation && this.subscription === params.subscription) {
      this.connection.notify("feed.ack", { subscription: params.subscription, seq: params.seq });
    }
  }

  resubscribe() {
    // Resume from what the page shows: the server answers with batches that take it to the list.
    if (this.subscription !== null) this.connection.notify("feed.unsubscribe", { subscription: this.subscription });
    this.subscription = null;
    if (this.connection.isOpen) this.subscribe();
  }

  report(error) {
    this.stats.errors += 1;
    console.warn(`chatfeed: ${error.message}; resubscribing from the rows shown`);
    this.dispatchEvent(new CustomEvent("batcherror", { detail: error }));
  }

  changed() {
    this.dispatchEvent(new CustomEvent("change", {
      detail: { rows: this.model.rows, total: this.total, unread: this.unread, count: this.model.rows.length },
    }));
  }

  emitState() {
    this.dispatchEvent(new CustomEvent("state", { detail: { subscribed: this.subscription !== null, idle: this.idle } }));
  }

  // Drawing.

  rowElements() {
    const elements = new Map();
    for (const child of this.element.children) {
      const id = child.dataset.chatId;
      if (id !== undefined) elements.set(id, child);
    }
    return elements;
  }

  makeRow(chat) {
    const row = document.createElement("li");
    row.dataset.chatId = chat.id;
    row.dataset.revision = String(chat.revision);
    this.renderRow(chat, row);
    return row;
  }

  drawRow(row, chat) {
    if (row.dataset.revision === String(chat.revision)) return false;
    row.dataset.revision = String(chat.revision);
    this.renderRow(chat, row);
    return true;
  }

  /** Draws the rows without animation (a snapshot, a reset, saved rows). */
  redraw() {
    const existing = this.rowElements();
    const rows = this.model.rows.map((chat) => {
      const row = existing.get(chat.id) ?? this.makeRow(chat);
      this.drawRow(row, chat);
      row.getAnimations?.().forEach((animation) => animation.cancel());
      return row;
    });
    this.element.replaceChildren(...rows);
  }

  /**
   * Applies a batch to the model (throws and changes nothing when it does not apply), then
   * animates the element to it; resolves when every animation has ended.
   */
  async applyAnimated(batch, count) {
    const change = this.model.apply(batch, count);
    this.stats.batches += 1;
    if (!change.structural) {
      const existing = this.rowElements();
      const redrawn = [];
      for (const update of batch.updates ?? []) {
        const row = existing.get(update.chat.id);
        if (row !== undefined && this.drawRow(row, update.chat)) redrawn.push(row);
      }
      if (animationsEnabled() && redrawn.length > 0) {
        await Promise.all(redrawn.map((row) => row.animate(
          [{ backgroundColor: "var(--chatfeed-flash, rgba(255, 220, 120, 0.55))" }, { backgroundColor: "transparent" }],
          { duration: this.moveMs, easing: "ease-out" },
        ).finished.catch(() => {})));
      }
      return;
    }
    const animate = animationsEnabled();
    const existing = this.rowElements();
    const containerTop = this.element.getBoundingClientRect().top;
    // First: where every row is now (relative to the list, so a scroll does not count).
    const first = new Map();
    if (animate) for (const [id, row] of existing) first.set(id, row.getBoundingClientRect().top - containerTop);

    // Rows that leave fade out where they were, out of the flow, without their id.
    const leaving = [];
    for (const id of change.deleted) {
      const row = existing.get(id);
      if (row === undefined) continue;
      existing.delete(id);
      if (!animate) {
        row.remove();
        continue;
      }
      const top = row.offsetTop;
      row.removeAttribute("data-chat-id");
      row.dataset.leaving = id;
      row.style.position = "absolute";
      row.style.top = `${top}px`;
      row.style.left = "0";
      row.style.right = "0";
      row.style.pointerEvents = "none";
      leaving.push(row);
    }
    // Last: the rows in their new order (moved DOM nodes, inserted new ones); leaving rows stay last.
    const entering = [];
    const ordered = change.after.map((chat) => {
      let row = existing.get(chat.id);
      if (row === undefined) {
        row = this.makeRow(chat);
        entering.push(row);
      } else {
        this.drawRow(row, chat);
      }
      return row;
    });
    this.element.replaceChildren(...ordered, ...leaving);
    if (!animate) return;

    // Invert and play: each row that moved slides from where it was; new rows fade in.
    const viewport = globalThis.innerHeight ?? 1e9;
    const animations = [];
    for (const row of ordered) {
      row.getAnimations().forEach((animation) => animation.cancel());
      const before = first.get(row.dataset.chatId);
      if (before === undefined) continue;
      const now = row.getBoundingClientRect().top - containerTop;
      const delta = before - now;
      if (Math.abs(delta) < 0.5) continue;
      const onScreen = (y) => containerTop + y > -200 && containerTop + y < viewport + 200;
      if (!onScreen(before) && !onScreen(now)) continue;
      animations.push(row.animate(
        [{ transform: `translateY(${delta}px)` }, { transform: "translateY(0)" }],
        { duration: this.moveMs, easing: "cubic-bezier(0.2, 0, 0, 1)" },
      ));
    }
    for (const row of entering) {
      animations.push(row.animate([{ opacity: 0 }, { opacity: 1 }], { duration: this.moveMs, easing: "ease-out" }));
    }
    for (const row of leaving) {
      animations.push(row.animate([{ opacity: 1 }, { opacity: 0 }], { duration: this.moveMs, easing: "ease-in", fill: "forwards" }));
    }
    // A row that moves passes over the rows it overtakes (they only shift by a row or two).
    const movers = change.moved.map((id) => existing.get(id)).filter((row) => row !== undefined);
    for (const row of movers) {
      row.style.position = "relative";
      row.style.zIndex = "1";
    }
    await Promise.all(animations.map((animation) => animation.finished.catch(() => {})));
    for (const row of movers) {
      row.style.position = "";
      row.style.zIndex = "";
    }
    for (const row of leaving) row.remove();
  }
}
