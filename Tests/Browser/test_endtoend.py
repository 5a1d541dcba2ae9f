"""The web page against a real gateway: `chatfeedd --listen` on a temporary database with dev tokens,
random trusted writes over the daemon's stdin faster than the page's animations, and headless
Chromium on `/?user=U`. Whenever the page is idle its rows and badges equal `chats.list`; rows at
rest sit at their slots; a reload during traffic resumes with batches; resets stay rare; the
console stays free of errors.
"""
import json
import os
import random
import re
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request

from webdriver import Browser, StaticServer, free_port, stop_process

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
USER = "me"
OTHERS = ["ann", "bob", "cat", "dan"]
LIMIT = 1000

# The page's state as the test reads it: rows in display order with their badges, and whether
# each row at rest sits at its slot (no transform left, one row height below the previous one).
PAGE_STATE = """
const list = document.querySelector('[data-chat-list]');
const rows = [...list.querySelectorAll('[data-chat-id]')];
const top = list.getBoundingClientRect().top;
const misplaced = [];
rows.forEach((row, index) => {
  const y = row.getBoundingClientRect().top - top;
  const expected = index * row.offsetHeight;
  if (Math.abs(y - expected) > 1 || row.getAnimations().length > 0) misplaced.push([row.dataset.chatId, index, y, expected]);
});
return {
  idle: window.chatfeed?.idle === true,
  stats: window.chatfeed?.stats ?? null,
  rows: rows.map((row) => [row.dataset.chatId, row.querySelector('[data-unread]')?.textContent ?? '']),
  badge: document.querySelector('[data-list-badge]')?.textContent ?? null,
  leaving: list.querySelectorAll('[data-leaving]').length,
  misplaced,
};
"""


class Gateway:
    """`chatfeedd --listen` on a temporary database; its stdin/stdout is a trusted session."""

    def __init__(self, directory, port=None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        secret = os.path.join(directory, "secret")
        with open(secret, "w") as f:
            f.write("browser-test-secret-" + "x" * 32)
        config = os.path.join(directory, "chatfeed.json")
        with open(config, "w") as f:
            json.dump({"devTokens": True, "tokenSecretFile": secret, "webRoot": os.path.join(ROOT, "Web"),
                       "durability": "normal"}, f)
        database = os.path.join(directory, "chat.sqlite")
        chatfeedd = os.environ.get("CHATFEEDD", os.path.join(ROOT, ".build", "debug", "chatfeedd"))
        command = [chatfeedd, "--database", database, "--config", config, "--listen", f"127.0.0.1:{self.port}"]
        self.log = open(os.path.join(directory, "gateway.log"), "w")
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.log, text=True, bufsize=1)
        self.answers = {}
        self.condition = threading.Condition()
        self.next_id = 1
        self.write_lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=2).read()
                break
            except Exception:
                if time.time() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"the gateway did not start: {command}")
                time.sleep(0.2)

    def _read(self):
        for line in self.process.stdout:
            message = json.loads(line)
            if "id" in message:
                with self.condition:
                    self.answers[message["id"]] = message
                    self.condition.notify_all()

    def send(self, method, **params):
        """Sends a trusted request and returns its id (the answer is collected by `answer`)."""
        with self.write_lock:
            request_id = self.next_id
            self.next_id += 1
            self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n")
            self.process.stdin.flush()
        return request_id

    def answer(self, request_id, timeout=30):
        with self.condition:
            if not self.condition.wait_for(lambda: request_id in self.answers, timeout):
                raise AssertionError(f"no answer to request {request_id}")
            return self.answers.pop(request_id)

    def call(self, method, **params):
        message = self.answer(self.send(method, **params))
        if "error" in message:
            raise AssertionError(f"{method} {params}: {message['error']}")
        return message["result"]

    def close(self):
        self.process.stdin.close()
        stop_process(self.process, timeout=20)
        self.reader.join(10)
        self.process.stdout.close()
        self.log.close()


class Traffic:
    """Random trusted writes: posts from others (unread), posts by the user, reads, pins, mutes,
    archives, new chats. Ids and times are its own; it never waits for an answer between writes."""

    def __init__(self, gateway, seed):
        self.gateway = gateway
        self.random = random.Random(seed)
        self.chats = []
        self.clock = 1_763_884_800_000
        self.count = 0

    def now(self):
        self.clock += self.random.randint(1, 60_000)
        return self.clock

    def create_chat(self):
        chat = f"chat-{len(self.chats):03d}"
        self.chats.append(chat)
        return self.gateway.send("chat.create", chat=chat, title=f"{self.random.choice(OTHERS).title()} {len(self.chats)}", createdAt=self.now())

    def write(self):
        self.count += 1
        r = self.random.random()
        chat = self.random.choice(self.chats)
        if r < 0.55:
            sender = self.random.choice(OTHERS) if self.random.random() < 0.8 else USER
            return self.gateway.send("message.post", chat=chat, id=f"m{self.count}", sender=sender,
                                     text=f"message {self.count}", sentAt=self.now())
        if r < 0.65:
            return self.gateway.send("chat.markRead", chat=chat)
        if r < 0.73:
            return self.gateway.send(self.random.choice(["chat.pin", "chat.unpin"]), chat=chat)
        if r < 0.81:
            return self.gateway.send(self.random.choice(["chat.mute", "chat.unmute"]), chat=chat)
        if r < 0.9:
            return self.gateway.send(self.random.choice(["chat.archive", "chat.unarchive", "chat.unarchive"]), chat=chat)
        if r < 0.95:
            return self.create_chat()
        return self.gateway.send("chat.rename", chat=chat, title=f"Renamed {self.count}")

    def populate(self, chats, writes):
        """Creates `chats` chats, then makes `writes` writes at once; returns when all are answered."""
        for request_id in [self.create_chat() for _ in range(chats)]:
            self.gateway.answer(request_id)
        self.burst(writes, 0)

    def burst(self, writes, interval):
        """`writes` writes `interval` seconds apart (far faster than the 250 ms animations)."""
        ids = []
        for _ in range(writes):
            ids.append(self.write())
            time.sleep(interval)
        for request_id in ids:
            self.gateway.answer(request_id)  # errors (a sixth pin, a pin of an archived chat) are fine


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory(prefix="chatfeed-browser-")
        self.gateway = Gateway(self.directory.name)
        self.addCleanup(self.directory.cleanup)
        self.addCleanup(self.gateway.close)

    def expected(self, user=USER):
        result = self.gateway.call("chats.list", list="main", limit=LIMIT, user=user)
        rows = [[chat["id"], str(chat["unread"]) if chat["unread"] > 0 else ""] for chat in result["items"]]
        badge = result["unread"]["unmutedMessages"]
        return rows, str(badge) if badge > 0 else ""

    def settle(self, browser, timeout=60, user=USER):
        """Waits until the page is idle, has stayed so for a moment, and equals chats.list."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            state = browser.run(PAGE_STATE)
            if state["idle"]:
                time.sleep(0.3)
                again = browser.run(PAGE_STATE)
                rows, badge = self.expected(user)
                if again["idle"] and again["rows"] == state["rows"] and again["rows"] == rows and again["badge"] == badge:
                    return again
                last = (again, rows, badge)
            time.sleep(0.1)
        state, rows, badge = last if last else (browser.run(PAGE_STATE), *self.expected(user))
        self.assertEqual(state["rows"], rows, "the idle page's rows and badges differ from chats.list")
        self.assertEqual(state["badge"], badge, "the list's badge differs from chats.list's unmutedMessages")
        self.fail(f"the page did not become idle within {timeout} s: {state}")

    def check_at_rest(self, state):
        self.assertEqual(state["misplaced"], [], "rows at rest not at their slots")
        self.assertEqual(state["leaving"], 0, "rows that left are still in the list")

    def test_random_traffic_with_a_reload(self):
        traffic = Traffic(self.gateway, seed=21)
        traffic.populate(chats=30, writes=40)

        with Browser() as browser:
            browser.get(f"{self.gateway.url}/?user={USER}")
            state = self.settle(browser)
            self.assertEqual(state["stats"]["snapshots"], 1)
            totals = dict(state["stats"])

            for round_number in range(8):
                traffic.burst(25, 0.02)
                state = self.settle(browser)
                self.check_at_rest(state)
            before_reload = dict(state["stats"])

            # A reload while writes go on: the saved rows come back at once and the page resumes
            # with batches (a catch-up, not a snapshot).
            writer = threading.Thread(target=traffic.burst, args=(60, 0.02))
            writer.start()
            time.sleep(0.3)
            browser.refresh()
            shown_at_once = browser.wait_for("return window.chatfeed?.list?.restoredRows", timeout=10, what="the saved rows")
            writer.join()
            state = self.settle(browser)
            self.check_at_rest(state)
            after_reload = state["stats"]
            self.assertGreater(shown_at_once, 0, "the saved rows were not shown at once")
            self.assertEqual(after_reload["snapshots"], 0, f"the reload subscribed for a snapshot: {after_reload}")
            self.assertGreater(after_reload["batches"], 0)

            for round_number in range(4):
                traffic.burst(25, 0.02)
                state = self.settle(browser)
                self.check_at_rest(state)

            errors = [entry for entry in browser.console() if entry["level"] == "SEVERE"]
            self.assertEqual(errors, [], "console errors")
            stats = {key: before_reload[key] + state["stats"][key] for key in before_reload}
            self.assertEqual(stats["errors"], 0, f"batches that did not apply: {stats}")
            self.assertGreater(stats["batches"], 20, f"{stats}")
            self.assertLessEqual(stats["resets"], 0.05 * stats["batches"], f"too many resets: {stats}")
            print(f"\nend-to-end: {traffic.count} writes; the page applied {stats} (first page {totals})")

    def test_readme_example(self):
        """docs/WEB.md's chatfeed.js example, run as it is (its gateway address and import path aside)."""
        with open(os.path.join(ROOT, "docs", "WEB.md")) as f:
            section = f.read()
        example = re.search(r"```js\n(.*?)```", section, re.S).group(1)
        example = example.replace('"./chatfeed.js"', '"/Web/chatfeed.js"')
        example = example.replace("ws://127.0.0.1:8080", self.gateway.url.replace("http://", "ws://"))
        self.gateway.call("chat.create", chat="general", title="General", createdAt=1_763_884_800_000)
        traffic = Traffic(self.gateway, seed=7)
        traffic.populate(chats=5, writes=20)
        token = json.load(urllib.request.urlopen(f"{self.gateway.url}/dev/token?user={USER}"))["token"]
        prologue = f"const token = {json.dumps(token)};\nconst showBadge = (badge) => {{ window.badge = badge; }};\n"
        epilogue = "\nwindow.example = { result, list };\n"
        with StaticServer(ROOT) as server, Browser() as browser:
            browser.get(f"{server.url}/Tests/Browser/blank.html")
            browser.run("const script = document.createElement('script'); script.type = 'module';"
                        "script.textContent = arguments[0]; document.body.append(script);", prologue + example + epilogue)
            browser.wait_for("return window.example !== undefined && window.example.list.idle", what="the example to run")
            time.sleep(0.5)
            traffic.burst(10, 0.02)
            expected = self.gateway.call("chats.list", list="main", limit=100)
            browser.wait_for(f"return window.example.list.idle && window.badge === {expected['unread']['unmutedMessages']}"
                             f" && JSON.stringify(window.example.list.rows.map((c) => c.id)) === {json.dumps(json.dumps([c['id'] for c in expected['items']], separators=(',', ':')))}",
                             what="the example's list to equal chats.list")
            shown = browser.run("return [...document.querySelectorAll('ul [data-chat-id]')].map((row) => row.dataset.chatId)")
            result = browser.run("return window.example.result")
            errors = [entry for entry in browser.console() if entry["level"] == "SEVERE"]
        self.assertEqual(shown, [chat["id"] for chat in expected["items"]])
        self.assertIn("items", result)
        self.assertEqual(errors, [])

    def test_gateway_restart_resumes_with_batches(self):
        """The gateway stops (1012) and starts again on the same database and port: the page
        reconnects with backoff and catches up from its rows by batches, without a snapshot."""
        traffic = Traffic(self.gateway, seed=5)
        traffic.populate(chats=20, writes=30)
        with Browser() as browser:
            browser.get(f"{self.gateway.url}/?user={USER}")
            first = self.settle(browser)["stats"]
            browser.console()
            port = self.gateway.port
            self.gateway.close()
            browser.wait_for("return window.chatfeed.idle === false", timeout=10, what="the page to notice")
            self.gateway = Gateway(self.directory.name, port=port)
            self.addCleanup(self.gateway.close)
            traffic.gateway = self.gateway
            traffic.burst(30, 0.02)
            state = self.settle(browser)
            self.check_at_rest(state)
            # While the gateway was down the browser logged the refused connections; nothing else.
            errors = [entry for entry in browser.console() if entry["level"] == "SEVERE"
                      and "ERR_CONNECTION_REFUSED" not in entry["message"] and "WebSocket connection to" not in entry["message"]]
        self.assertEqual(first["snapshots"], 1)
        self.assertEqual(state["stats"]["snapshots"], 1, f"the page reloaded after the restart: {state['stats']}")
        self.assertGreater(state["stats"]["batches"], first["batches"])
        self.assertEqual(state["stats"]["errors"], 0)
        self.assertEqual(errors, [])

    def test_two_users_chat(self):
        """Two windows as two users of one chat: a message typed in one reaches the other's list
        (unread badge, the list's badge) and, once opened there, its messages; the reply comes back."""
        for user in ["ann", "bob"]:
            self.gateway.call("user.create", user=user, name=user.title())
        self.gateway.call("chat.create", chat="ab", title="Ann and Bob", members=["ann", "bob"], createdAt=1_763_884_800_000)
        for index, user in enumerate(["ann", "bob", "ann", "bob"]):
            self.gateway.call("chat.create", chat=f"own-{index}", title=f"Notes {index}", members=[user], createdAt=1_763_884_900_000 + index)
        with Browser() as ann, Browser() as bob:
            ann.get(f"{self.gateway.url}/?user=ann")
            bob.get(f"{self.gateway.url}/?user=bob")
            self.settle(ann, user="ann")
            self.settle(bob, user="bob")

            ann.run("document.querySelector('[data-chat-id=\"ab\"] button').click()")
            ann.wait_for("return document.querySelector('#chat:not([hidden])')", what="ann's chat to open")
            ann.run("const form = document.querySelector('#composer'); form.elements.text.value = 'hello bob'; form.requestSubmit();")
            bob.wait_for("return document.querySelector('[data-chat-id=\"ab\"] [data-unread]')?.textContent === '1'"
                         " && document.querySelector('[data-list-badge]').textContent === '1'", what="bob's badges")
            state = self.settle(bob, user="bob")
            self.assertEqual(state["rows"][0], ["ab", "1"], "the chat with a new message is bob's top row")

            bob.run("document.querySelector('[data-chat-id=\"ab\"] button').click()")
            bob.wait_for("return [...document.querySelectorAll('#message-list .text')].some((m) => m.textContent === 'hello bob')",
                         what="ann's message in bob's chat")
            bob.wait_for("return document.querySelector('[data-list-badge]').textContent === ''", what="bob's chat to be read")
            bob.run("const form = document.querySelector('#composer'); form.elements.text.value = 'hi ann'; form.requestSubmit();")
            ann.wait_for("return [...document.querySelectorAll('#message-list .text')].some((m) => m.textContent === 'hi ann')",
                         what="bob's reply in ann's open chat")
            ann_state = self.settle(ann, user="ann")
            bob_state = self.settle(bob, user="bob")
            errors = [entry for browser in (ann, bob) for entry in browser.console() if entry["level"] == "SEVERE"]
        self.assertEqual(ann_state["rows"][0], ["ab", ""], "ann has the chat open: bob's reply is read at once")
        self.assertEqual(bob_state["badge"], "")
        self.assertEqual(errors, [])

    def test_saved_rows_are_kept_per_user(self):
        """Two users signed in one after the other in one browser (one localStorage): a page never
        shows the other user's saved rows, and each user's page comes back from its own."""
        for user in ["ann", "bob"]:
            self.gateway.call("user.create", user=user, name=user.title())
            for index in range(3):
                self.gateway.call("chat.create", chat=f"{user}-{index}", title=f"{user.title()} {index}", members=[user],
                                  createdAt=1_763_884_800_000 + index)
        with Browser() as browser:
            browser.get(f"{self.gateway.url}/?user=ann")
            ann = self.settle(browser, user="ann")
            self.assertEqual(ann["stats"]["snapshots"], 1)

            browser.get(f"{self.gateway.url}/?user=bob")
            restored = browser.run("return window.chatfeed?.list?.restoredRows ?? 0")
            bob = self.settle(browser, user="bob")
            self.assertEqual(restored, 0, "bob's page started from ann's saved rows")
            self.assertEqual(bob["stats"]["snapshots"], 1, f"bob's first page: {bob['stats']}")
            self.assertTrue(all(chat.startswith("bob-") for chat, _ in bob["rows"]), f"{bob['rows']}")

            browser.get(f"{self.gateway.url}/?user=ann")
            shown = browser.wait_for("return window.chatfeed?.list?.restoredRows", timeout=10, what="ann's saved rows")
            again = self.settle(browser, user="ann")
            keys = browser.run("return Object.keys(localStorage).filter((key) => key.startsWith('chatfeed:'))")
            errors = [entry for entry in browser.console() if entry["level"] == "SEVERE"]
        self.assertEqual(shown, 3, "ann's page did not come back from her saved rows")
        self.assertEqual(again["stats"]["snapshots"], 0, f"ann's page subscribed for a snapshot again: {again['stats']}")
        self.assertEqual(sorted(":ann:" in key for key in keys), [False, True], f"one saved list per user: {keys}")
        self.assertEqual(errors, [])

    def test_page_actions(self):
        """A chat's messages paged with the cursor, mark read on open, the composer, and the pin,
        mute and archive actions, each seen in the list and in chats.list."""
        for index in range(4):
            self.gateway.call("chat.create", chat=f"c{index}", title=f"Chat {index}", createdAt=1_763_884_800_000 + index)
        for step in range(45):
            self.gateway.call("message.post", chat="c0", id=f"m{step:02d}", sender="ann", text=f"message {step:02d}",
                              sentAt=1_763_884_900_000 + step)
        click = "document.querySelector(arguments[0]).click()"
        texts = "[...document.querySelectorAll('#message-list .text')].map((m) => m.textContent)"
        with Browser() as browser:
            browser.get(f"{self.gateway.url}/?user={USER}")
            state = self.settle(browser)
            self.assertEqual(state["rows"][0], ["c0", "45"])
            self.assertEqual(state["badge"], "45")

            browser.run(click, '[data-chat-id="c0"] button')
            browser.wait_for(f"return {texts}.length === 30", what="the newest page")
            self.assertEqual(browser.run(f"return {texts}")[-1], "message 44")
            state = self.settle(browser)
            self.assertEqual(state["rows"][0], ["c0", ""], "opening a chat marks it read")
            browser.run(click, "#older")
            browser.wait_for(f"return {texts}.length === 45", what="the older page")
            self.assertEqual(browser.run(f"return {texts}")[0], "message 00")
            self.assertTrue(browser.run("return document.querySelector('#older').hidden"), "no page after the last")

            browser.run(click, '[data-chat-id="c2"] button')
            browser.wait_for("return document.querySelector('#chat-title').textContent === 'Chat 2'", what="chat 2")
            browser.run(click, "#pin")
            browser.wait_for("return document.querySelector('[data-chat-list] > li')?.dataset.chatId === 'c2'"
                             " && document.querySelector('[data-chat-id=\"c2\"] [aria-label=Pinned]') !== null", what="c2 pinned on top")
            browser.run(click, "#mute")
            browser.wait_for("return document.querySelector('[data-chat-id=\"c2\"] [aria-label=Muted]') !== null", what="c2 muted")
            self.assertEqual([chat["id"] for chat in self.gateway.call("chats.list")["items"]][0], "c2")
            browser.run(click, "#archive")
            browser.wait_for("return document.querySelector('[data-chat-id=\"c2\"]') === null", what="c2 to leave the main list")
            browser.run(click, '[data-tab="archive"]')
            browser.wait_for("return window.chatfeed.idle && document.querySelector('[data-chat-id=\"c2\"]') !== null", what="c2 in the archive")
            archived = self.gateway.call("chats.list", list="archive")["items"]
            self.assertEqual([(chat["id"], chat["muted"]) for chat in archived], [("c2", True)])

            browser.run(click, '[data-tab="main"]')
            browser.wait_for("return window.chatfeed.idle", what="the main list")
            browser.run(click, '[data-chat-id="c1"] button')
            browser.wait_for("return document.querySelector('#chat-title').textContent === 'Chat 1'", what="chat 1")
            browser.run("const form = document.querySelector('#composer'); form.elements.text.value = 'sent from the page'; form.requestSubmit();")
            browser.wait_for(f"return {texts}.includes('sent from the page')", what="the message in the open chat")
            state = self.settle(browser)
            self.assertEqual(state["rows"][0], ["c1", ""], "the chat with the newest message is on top")
            errors = [entry for entry in browser.console() if entry["level"] == "SEVERE"]
        self.assertEqual(errors, [])


if __name__ == "__main__":
    unittest.main()
