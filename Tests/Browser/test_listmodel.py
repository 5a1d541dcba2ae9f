"""Web/listmodel.js passes every shared batch case (Tests/Fixtures/batch-cases.json) in headless Chromium."""
import os
import unittest

from webdriver import Browser, StaticServer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class ListModelCases(unittest.TestCase):
    def test_every_shared_batch_case(self):
        with StaticServer(ROOT) as server, Browser() as browser:
            browser.get(f"{server.url}/Tests/Browser/listmodel.html")
            result = browser.wait_for("return window.caseResult", what="the cases to run")
            errors = [entry for entry in browser.console() if entry["level"] == "SEVERE"]
        self.assertEqual(errors, [])
        self.assertGreaterEqual(result["cases"], 40)
        self.assertEqual(result["failures"], [])


if __name__ == "__main__":
    unittest.main()
