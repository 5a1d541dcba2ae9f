"""`chatfeed watch --demo --listen HOST:PORT`: the demo's gateway serves the web client with dev
tokens; the pages it prints open as their users, and their lists animate with the demo's traffic."""
import os
import re
import subprocess
import tempfile
import time
import unittest

from webdriver import Browser, free_port, stop_process

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHATFEED = os.environ.get("CHATFEED", os.path.join(ROOT, ".build", "debug", "chatfeed"))


class Demo(unittest.TestCase):
    def test_listen_needs_demo(self):
        outcome = subprocess.run([CHATFEED, "watch", "--listen", "127.0.0.1:1"], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(outcome.returncode, 0)
        self.assertIn("--listen", outcome.stderr)

    def test_demo_serves_the_web_client(self):
        port = free_port()
        with tempfile.TemporaryFile("w+") as stderr:
            watch = subprocess.Popen([CHATFEED, "watch", "--demo", "--listen", f"127.0.0.1:{port}", "--duration", "30"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, cwd=ROOT)
            try:
                deadline = time.time() + 60
                urls = []
                while not urls and time.time() < deadline and watch.poll() is None:
                    time.sleep(0.2)
                    stderr.seek(0)
                    urls = re.findall(r"http://\S+\?user=\w+", stderr.read())
                self.assertEqual(urls, [f"http://127.0.0.1:{port}/?user={user}" for user in ["me", "ann", "zoe"]])
                with Browser() as browser:
                    browser.get(urls[1])
                    browser.wait_for("return window.chatfeed?.idle", timeout=30, what="ann's page")
                    rows = browser.run("return [...document.querySelectorAll('[data-chat-id]')].map((row) => row.textContent)")
                    self.assertEqual(len(rows), 2, f"ann's chats: the group and her chat with me: {rows}")
                    browser.get(urls[0])
                    browser.wait_for("return window.chatfeed?.idle && window.chatfeed.stats.batches >= 3", timeout=30,
                                     what="me's list to animate the demo's traffic")
                    errors = [entry for entry in browser.console() if entry["level"] == "SEVERE"]
                self.assertEqual(errors, [])
            finally:
                stop_process(watch, timeout=20)


if __name__ == "__main__":
    unittest.main()
