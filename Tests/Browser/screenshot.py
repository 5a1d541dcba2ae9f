"""Takes the README's picture of the web client (docs/web-client.png): chatfeedd --listen on a
temporary database with a few chats and messages, the page in headless Chromium with one chat open.

    python3 Tests/Browser/screenshot.py [docs/web-client.png]
"""
import os
import sys
import tempfile
import time

from test_endtoend import ROOT, USER, Gateway
from webdriver import Browser

PEOPLE = [("ann", "Ann Lee"), ("bob", "Bob Stone"), ("cat", "Cat Moreno"), ("dan", "Dan Okafor"),
          ("eve", "Eve Walsh"), ("fay", "Fay Ito"), ("gus", "Gus Berg"), ("hal", "Hal Novak")]
LINES = ["Are we still on for Friday?", "I pushed the fix, can you check it?", "Lunch at noon?",
         "The build is green again", "Sent you the slides", "Running ten minutes late",
         "Thanks, that worked!", "Can we move the call to 3?", "New designs are up", "See you tomorrow"]


def main(path):
    with tempfile.TemporaryDirectory(prefix="chatfeed-screenshot-") as directory:
        gateway = Gateway(directory)
        try:
            now = int(time.time() * 1000)
            for index, (chat, title) in enumerate(PEOPLE):
                gateway.call("chat.create", chat=chat, title=title, createdAt=now - 86_400_000 + index)
            clock = now - 41 * 60_000
            for step in range(40):
                chat = PEOPLE[(step * 3) % len(PEOPLE)][0]
                clock += 60_000
                sender = USER if step % 3 == 1 else chat
                gateway.call("message.post", chat=chat, id=f"m{step}", sender=sender, text=LINES[step % len(LINES)], sentAt=clock)
            for chat in ["ann", "bob", "dan", "eve"]:
                gateway.call("chat.markRead", chat=chat)
            gateway.call("chat.pin", chat="eve")
            gateway.call("chat.mute", chat="gus")
            with Browser(1100, 640) as browser:
                browser.get(f"{gateway.url}/?user={USER}")
                browser.wait_for("return window.chatfeed && window.chatfeed.idle", what="the page")
                browser.run("document.querySelector('[data-chat-id=\"ann\"] button').click()")
                time.sleep(1.5)
                browser.screenshot(path)
        finally:
            gateway.close()
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "web-client.png"))
