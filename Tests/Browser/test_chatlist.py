"""Web/chatfeed.js's ChatList against a scripted connection in headless Chromium: snapshots, batches
acknowledged when their animation has ended, a batch that does not apply (counted, reported, and
caught up by a resubscribe with the rows shown as `known`), a gap in `seq`, a reset, and saved rows
shown at once and sent as `known`."""
import os
import unittest

from webdriver import Browser, StaticServer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

SCRIPT = """
const done = arguments[arguments.length - 1];
const { connection, errors, chat, unread, make, ids, idle } = window.scripted;
const storage = { items: new Map(), getItem(key) { return this.items.get(key) ?? null; }, setItem(key, value) { this.items.set(key, value); } };
const log = {};
const sent = (method) => connection.sent.filter((entry) => entry.method === method);
const batch = (seq, fields) => ({ subscription: "s1", seq, count: fields.count, total: fields.count, unread,
  deletes: fields.deletes ?? [], inserts: fields.inserts ?? [], moves: fields.moves ?? [], updates: fields.updates ?? [] });
(async () => {
  // A plain subscribe: a snapshot.
  connection.answers.push({ subscription: "s1", seq: 0, count: 3, total: 3, unread, items: [chat("a"), chat("b"), chat("c")] });
  const list = make(storage);
  connection.open();
  await idle(list);
  log.snapshot = { ids: ids(), stats: { ...list.stats }, subscribe: sent("feed.subscribe")[0].params };

  // A move, acknowledged only when its animation has ended.
  const pushed = performance.now();
  connection.push("feed.batch", batch(1, { count: 3, moves: [{ from: 2, to: 0 }] }));
  await idle(list);
  const ack = sent("feed.ack")[0];
  log.move = { ids: ids(), ack: ack.params, ackAfterMs: ack.at - pushed };

  // The deferred update: redrawn in place.
  connection.push("feed.batch", batch(2, { count: 3, updates: [{ index: 0, chat: { id: "c", revision: 2, title: "C!" } }] }));
  await idle(list);
  log.update = { ids: ids(), text: document.querySelector('[data-chat-id="c"]').textContent, acks: sent("feed.ack").map((e) => e.params.seq) };

  // A batch that does not apply: nothing changes, it is reported, and the list resubscribes with
  // what it shows; the answer's batches catch it up.
  connection.answers.push({ subscription: "s2", seq: 0, count: 4, total: 4, unread,
    batches: [{ deletes: [], inserts: [{ index: 3, chat: chat("d") }], moves: [], updates: [] }] });
  connection.push("feed.batch", batch(3, { count: 3, deletes: [7] }));
  await idle(list);
  await new Promise((resolve) => setTimeout(resolve, 50));
  await idle(list);
  log.bad = { ids: ids(), errors: [...errors], stats: { ...list.stats },
    unsubscribed: sent("feed.unsubscribe").map((e) => e.params.subscription),
    resubscribe: sent("feed.subscribe")[1]?.params, acks: sent("feed.ack").map((e) => e.params.seq) };

  // A late notification of the old subscription is ignored; a gap in seq is an error.
  connection.push("feed.batch", { ...batch(4, { count: 3 }), subscription: "s1" });
  connection.answers.push({ subscription: "s3", seq: 0, count: 4, total: 4, unread, batches: [] });
  connection.push("feed.batch", { ...batch(5, { count: 4 }), subscription: "s2" });
  await new Promise((resolve) => setTimeout(resolve, 50));
  await idle(list);
  log.gap = { errors: [...errors], subscribes: sent("feed.subscribe").length };

  // A reset replaces the rows without animation and is acknowledged.
  connection.push("feed.reset", { subscription: "s3", seq: 1, count: 2, total: 2, unread, items: [chat("x"), chat("y")] });
  await idle(list);
  log.reset = { ids: ids(), stats: { ...list.stats }, lastAck: sent("feed.ack").at(-1).params };

  // Saved rows: a new list shows them at once and sends them as known.
  list.close();
  document.getElementById("list").replaceChildren();
  connection.answers.push({ subscription: "s4", seq: 0, count: 2, total: 2, unread, batches: [] });
  const again = make(storage);
  log.restored = { ids: ids(), restoredRows: again.restoredRows };
  await idle(again);
  log.restored.known = sent("feed.subscribe").at(-1).params.known;
  done(log);
})().catch((error) => done({ failure: String(error) }));
"""


class ChatListBehaviour(unittest.TestCase):
    def test_scripted_feed(self):
        with StaticServer(ROOT) as server, Browser() as browser:
            browser.get(f"{server.url}/Tests/Browser/chatlist.html")
            browser.wait_for("return window.scriptedReady", what="the page")
            browser.set_script_timeout(30)
            log = browser.run_async(SCRIPT)
            errors = [entry for entry in browser.console() if entry["level"] == "SEVERE"]
        self.assertNotIn("failure", log)
        self.assertEqual(log["snapshot"]["ids"], ["a", "b", "c"])
        self.assertEqual(log["snapshot"]["stats"], {"snapshots": 1, "batches": 0, "resets": 0, "errors": 0})
        self.assertNotIn("known", log["snapshot"]["subscribe"], "nothing saved: a plain subscribe")
        self.assertEqual(log["move"]["ids"], ["c", "a", "b"])
        self.assertEqual(log["move"]["ack"], {"subscription": "s1", "seq": 1})
        self.assertGreaterEqual(log["move"]["ackAfterMs"], 140, "acknowledged before the 150 ms animation ended")
        self.assertEqual(log["update"]["ids"], ["c", "a", "b"])
        self.assertEqual(log["update"]["text"], "C!")
        self.assertEqual(log["update"]["acks"], [1, 2])
        bad = log["bad"]
        self.assertEqual(bad["errors"], ["indexOutOfRange"])
        self.assertEqual(bad["unsubscribed"], ["s1"])
        self.assertEqual(bad["resubscribe"]["known"], [{"id": "c", "revision": 2}, {"id": "a", "revision": 1}, {"id": "b", "revision": 1}])
        self.assertEqual(bad["ids"], ["c", "a", "b", "d"])
        self.assertEqual(bad["acks"], [1, 2], "the refused batch is not acknowledged")
        self.assertEqual(bad["stats"], {"snapshots": 1, "batches": 3, "resets": 0, "errors": 1})
        self.assertEqual(log["gap"], {"errors": ["indexOutOfRange", "seqGap"], "subscribes": 3})
        self.assertEqual(log["reset"]["ids"], ["x", "y"])
        self.assertEqual(log["reset"]["stats"]["resets"], 1)
        self.assertEqual(log["reset"]["lastAck"], {"subscription": "s3", "seq": 1})
        self.assertEqual(log["restored"]["ids"], ["x", "y"])
        self.assertEqual(log["restored"]["restoredRows"], 2)
        self.assertEqual(log["restored"]["known"], [{"id": "x", "revision": 1}, {"id": "y", "revision": 1}])
        self.assertEqual(errors, [])


if __name__ == "__main__":
    unittest.main()
