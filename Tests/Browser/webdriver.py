"""A small W3C WebDriver client over Python's standard library, for headless Chromium.

It starts Debian's `chromedriver` on a free port and drives `chromium` headless: no package from
PyPI, so CI needs only `apt-get install chromium chromium-driver` and python3.
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(process, timeout=10):
    """SIGTERM, then SIGKILL when `process` has not ended within `timeout` seconds."""
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class WebDriverError(Exception):
    pass


def find_program(*names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    raise WebDriverError(f"none of {', '.join(names)} is installed (apt-get install chromium chromium-driver)")


class Browser:
    """One headless Chromium session. Use as a context manager."""

    def __init__(self, width=900, height=1000):
        self.port = free_port()
        self.profile = tempfile.mkdtemp(prefix="chatfeed-chromium-")
        self.log = open(os.path.join(self.profile, "chromedriver.log"), "w")
        self.driver = subprocess.Popen(
            [find_program("chromedriver"), f"--port={self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 30
        while True:
            try:
                self._request("GET", "/status")
                break
            except (urllib.error.URLError, ConnectionError):
                if time.time() > deadline or self.driver.poll() is not None:
                    raise WebDriverError("chromedriver did not start")
                time.sleep(0.1)
        capabilities = {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": find_program("chromium", "chromium-browser", "google-chrome"),
                "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         f"--window-size={width},{height}", f"--user-data-dir={self.profile}/profile"],
            },
        }
        answer = self._request("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})
        self.session = answer["value"]["sessionId"]

    def _request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            raise WebDriverError(f"{method} {path}: {error.code} {error.read().decode()[:2000]}") from None

    def command(self, method, path, body=None):
        return self._request(method, f"/session/{self.session}{path}", body)["value"]

    def get(self, url):
        self.command("POST", "/url", {"url": url})

    def run(self, script, *args):
        """Runs `script` (a function body; `arguments` holds args) and returns what it returns."""
        return self.command("POST", "/execute/sync", {"script": script, "args": list(args)})

    def run_async(self, script, *args):
        """Runs `script` whose last argument is a callback to call with the result."""
        return self.command("POST", "/execute/async", {"script": script, "args": list(args)})

    def set_script_timeout(self, seconds):
        self.command("POST", "/timeouts", {"script": int(seconds * 1000)})

    def refresh(self):
        self.command("POST", "/refresh", {})

    def screenshot(self, path):
        import base64
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.command("GET", "/screenshot")))

    def console(self):
        """The browser's console entries since the last call: [{level, message}]."""
        return self.command("POST", "/se/log", {"type": "browser"})

    def wait_for(self, script, timeout=30, interval=0.05, what="a condition"):
        deadline = time.time() + timeout
        while True:
            value = self.run(script)
            if value:
                return value
            if time.time() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            time.sleep(interval)

    def close(self):
        try:
            self._request("DELETE", f"/session/{self.session}")
        except Exception:
            pass
        stop_process(self.driver)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class StaticServer:
    """`python3 -m http.server` on a free port, serving `root` (the repository)."""

    def __init__(self, root):
        self.port = free_port()
        self.process = subprocess.Popen(
            ["python3", "-m", "http.server", str(self.port), "--bind", "127.0.0.1", "--directory", root],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 20
        while True:
            try:
                urllib.request.urlopen(self.url + "/", timeout=2).read()
                break
            except (urllib.error.URLError, ConnectionError):
                if time.time() > deadline:
                    raise RuntimeError("the static server did not start")
                time.sleep(0.1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        stop_process(self.process)
