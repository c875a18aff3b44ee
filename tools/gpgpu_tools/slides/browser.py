"""Open decks in headless Chromium and ask reveal.js what it shows, through the DevTools protocol.

The protocol runs over a pipe (`--remote-debugging-pipe`: JSON messages ending in a NUL byte,
commands on fd 3, replies on fd 4), so this needs only the standard library: no port, no
websocket, no driver. The page is put offline, and every request it makes is recorded, so a
test can assert that a deck loads nothing but files from disk.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]

# Runs in the deck once reveal.js is ready: what the first slide shows, then every slide visited
# in turn for its height and for code cut off at the right.
INSPECT = """(async () => {
  if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
  await document.fonts.ready;
  const config = Reveal.getConfig();
  const first = Reveal.getCurrentSlide();
  const heading = first.querySelector('h1');
  const result = {
    ready: Reveal.isReady(), total: Reveal.getTotalSlides(), indices: Reveal.getIndices(),
    title: heading ? heading.textContent.replace('\\u00b6', '').trim() : '',
    notes: document.querySelectorAll('aside.notes').length,
    notesPlugin: Reveal.hasPlugin('notes'), width: config.width, height: config.height,
    overflow: [], plots: [], underControls: [], headless: [], characters: []
  };
  const controls = document.querySelector('.reveal .controls').getBoundingClientRect();
  const meets = (r, c) => r.width > 0 && r.height > 0 && r.left < c.right && r.right > c.left
                          && r.top < c.bottom && r.bottom > c.top;
  Reveal.configure({transition: 'none', backgroundTransition: 'none'});
  Reveal.getSlides().forEach((slide, n) => {
    const at = Reveal.getIndices(slide);
    Reveal.slide(at.h, at.v, Infinity);  // every fragment shown: the slide at its fullest
    const first = slide.innerText.trim().split('\\n')[0].slice(0, 60);
    result.characters.push(slide.innerText.replace(/\\s+/g, ' ').trim().length);
    const cut = [...slide.querySelectorAll('pre')]
      .filter(pre => pre.scrollWidth > pre.clientWidth + 1);
    if (slide.scrollHeight > config.height || slide.scrollWidth > config.width || cut.length)
      result.overflow.push({slide: n + 1, h: at.h, v: at.v, height: slide.scrollHeight,
        width: slide.scrollWidth, cutCode: cut.length, text: first});
    slide.querySelectorAll('.jp-OutputArea-output img').forEach(img =>
      result.plots.push({slide: n + 1, width: img.offsetWidth, natural: img.naturalWidth,
                         text: first}));
    const boxes = slide.querySelectorAll(
      'p, li, pre, img, table, h1, h2, h3, svg, .jp-RenderedText');
    const hidden = [...boxes].filter(box => meets(box.getBoundingClientRect(), controls));
    if (hidden.length)
      result.underControls.push({slide: n + 1, h: at.h, v: at.v,
        what: hidden[0].tagName.toLowerCase() + ': '
              + (hidden[0].innerText || '').trim().slice(0, 40)});
    if (!slide.querySelector('h1, h2, h3, h4')) result.headless.push({slide: n + 1, text: first});
  });
  Reveal.slide(0, 0, -1);
  return result;
})()"""


# How long one answer from Chromium may take on an idle machine, in seconds: printing a 66-slide
# deck to PDF took 70 s on an idle 2-core machine. GPGPU_SLIDES_TIMEOUT replaces it.
BASE_TIMEOUT = 120.0
TIMEOUT_VARIABLE = "GPGPU_SLIDES_TIMEOUT"


def scaled_timeout(base: float | None = None) -> float:
    """`base` seconds (GPGPU_SLIDES_TIMEOUT, else BASE_TIMEOUT), times the load per core when the
    machine is busier than one runnable process per core: a load of 40 on 2 cores waits 20x."""
    if base is None:
        setting = os.environ.get(TIMEOUT_VARIABLE, "").strip()
        try:
            base = float(setting) if setting else BASE_TIMEOUT
        except ValueError:
            raise ValueError(
                f"{TIMEOUT_VARIABLE}={setting!r} is not a number of seconds: set it to e.g. 300"
            ) from None
    try:
        load = os.getloadavg()[0]
    except OSError:  # not on this platform
        return base
    return base * max(1.0, load / (os.cpu_count() or 1))


def find_chromium() -> str | None:
    """The Chromium to use: $CHROMIUM, else chromium (Debian) or chromium-browser on the PATH."""
    return (
        os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )


class Chromium:
    """One headless Chromium with one page; `inspect(deck)` opens a deck and reports on it."""

    def __init__(
        self, executable: str, width: int = 1280, height: int = 720, timeout: float | None = None
    ):
        self._timeout = timeout  # None: scaled_timeout(), read again before every wait
        self.patience = 1.0  # a multiplier of the timeout, raised by print_pdf's retry
        self.profile = tempfile.TemporaryDirectory(prefix="gpgpu-slides-chromium-")
        # The child's ends are first copied to fds >= 10, so that placing them on 3 and 4 cannot
        # overwrite one with the other; copies made with dup2 are the only fds the exec keeps.
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()
        child_read, child_write = (
            fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (commands_read, replies_write)
        )
        os.close(commands_read)
        os.close(replies_write)

        def wire_pipes():  # in the child: commands come in on fd 3, replies go out on fd 4
            os.dup2(child_read, 3)
            os.dup2(child_write, 4)

        try:
            self.process = subprocess.Popen(
                [
                    executable,
                    *FLAGS,
                    f"--user-data-dir={self.profile.name}",
                    f"--window-size={width},{height}",
                ],
                close_fds=False,
                preexec_fn=wire_pipes,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        finally:
            os.close(child_read)
            os.close(child_write)
        self._buffer, self._next_id, self.events = b"", 0, []
        try:
            target = self.send("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)[
                "sessionId"
            ]
            for method in ("Page.enable", "Network.enable", "Runtime.enable"):
                self.send(method, session=self.session)
            self.send(
                "Network.emulateNetworkConditions",
                session=self.session,
                offline=True,
                latency=0,
                downloadThroughput=-1,
                uploadThroughput=-1,
            )
            self.send(
                "Emulation.setDeviceMetricsOverride",
                session=self.session,
                width=width,
                height=height,
                deviceScaleFactor=1,
                mobile=False,
            )
        except BaseException:
            self.close()
            raise

    @property
    def timeout(self) -> float:
        """Seconds to wait for one answer: the fixed timeout, or one that scales with the load."""
        return self.patience * (self._timeout if self._timeout is not None else scaled_timeout())

    def send(self, method: str, session: str | None = None, **params) -> dict:
        """Send one command (to the browser, or to a page's session) and wait for its reply;
        events that arrive meanwhile go to self.events."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        try:
            os.write(self._commands, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise RuntimeError(
                f"Chromium is not running (exit status {self.process.poll()})"
            ) from None
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def _receive(self) -> dict:
        waited = self.timeout
        deadline = time.monotonic() + waited
        while b"\0" not in self._buffer:
            if not select.select([self._replies], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise TimeoutError(
                    f"Chromium did not answer within {waited:.0f} s (load average "
                    f"{_load():.1f} on {os.cpu_count()} cores); set {TIMEOUT_VARIABLE}=SECONDS "
                    f"(on an idle machine; default {BASE_TIMEOUT:.0f}) to wait longer"
                )
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe (did it start?)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def evaluate(self, expression: str, session: str | None = None):
        result = self.send(
            "Runtime.evaluate",
            session=session or self.session,
            expression=expression,
            awaitPromise=True,
            returnByValue=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:40]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def inspect(self, deck: Path) -> dict:
        """Open a deck from disk: reveal's state, a PNG of the first slide, requests, errors."""
        self.events.clear()
        self.send("Page.navigate", session=self.session, url=Path(deck).resolve().as_uri())
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._receive())
        deadline = time.monotonic() + self.timeout
        while not self.evaluate("typeof Reveal !== 'undefined' && Reveal.isReady()"):
            if time.monotonic() > deadline:
                return {"ready": False, **self._log()}
            time.sleep(0.1)
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        png = base64.b64decode(
            self.send("Page.captureScreenshot", session=self.session, format="png")["data"]
        )
        return {**self.evaluate(INSPECT), "screenshot": png, **self._log()}

    def pdf(self, deck: Path, width: int = 1280, height: int = 720) -> bytes:
        """The deck in reveal.js's print layout as a PDF: one page per slide, fragments shown."""
        self.events.clear()
        self.send(
            "Page.navigate", session=self.session, url=Path(deck).resolve().as_uri() + "?print-pdf"
        )
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._receive())
        deadline = time.monotonic() + self.timeout
        while not self.evaluate("typeof Reveal !== 'undefined' && Reveal.isReady()"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"reveal.js did not start in {deck} (print layout)")
            time.sleep(0.1)
        self.evaluate(
            "(async () => { if (window.MathJax && MathJax.startup) await MathJax.startup.promise;"
            " await document.fonts.ready; await new Promise(r => setTimeout(r, 300)); })()"
        )
        printed = self.send(
            "Page.printToPDF",
            session=self.session,
            printBackground=True,
            paperWidth=width / 96,
            paperHeight=height / 96,
            marginTop=0,
            marginBottom=0,
            marginLeft=0,
            marginRight=0,
            preferCSSPageSize=True,
        )
        return base64.b64decode(printed["data"])

    def screenshot(self, slide: int) -> bytes:
        """A PNG of the open deck's slide `slide` (1-based, in reading order), fragments shown."""
        self.evaluate(f"""(async () => {{
          Reveal.configure({{transition: 'none', backgroundTransition: 'none'}});
          const at = Reveal.getIndices(Reveal.getSlides()[{slide - 1}]);
          Reveal.slide(at.h, at.v, Infinity);
          await new Promise(r => setTimeout(r, 400));  // fragments fade in
        }})()""")
        return base64.b64decode(
            self.send("Page.captureScreenshot", session=self.session, format="png")["data"]
        )

    def speaker_view(self, has_notes: bool = True) -> str:
        """Press S in the open deck, as a presenter would; return the text of reveal's speaker view
        once it shows its notes panel, with the current slide's notes in it if `has_notes`."""
        for kind in ("keyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                session=self.session,
                type=kind,
                key="s",
                code="KeyS",
                windowsVirtualKeyCode=83,
                **({"text": "s"} if kind == "keyDown" else {}),
            )
        deadline = time.monotonic() + self.timeout
        views = []
        while not views and time.monotonic() < deadline:
            views = [
                t["targetId"]
                for t in self.send("Target.getTargets")["targetInfos"]
                if t["type"] == "page" and t["title"] == "reveal.js - Speaker View"
            ]
            time.sleep(0.1)
        if not views:
            return ""
        view = self.send("Target.attachToTarget", targetId=views[0], flatten=True)["sessionId"]
        try:
            notes = "document.querySelector('.speaker-controls-notes .value')"
            while time.monotonic() < deadline and not self.evaluate(
                f"!!{notes} && ({notes}.innerText.trim() !== '' || {str(not has_notes).lower()})",
                session=view,
            ):
                time.sleep(0.1)
            return self.evaluate("document.body.innerText", session=view)
        finally:
            self.send("Target.closeTarget", targetId=views[0])

    def _log(self) -> dict:
        """The URLs the page asked for, the loads that failed, and uncaught JavaScript errors."""

        def params(method):
            return [e["params"] for e in self.events if e.get("method") == method]

        urls = {
            p["requestId"]: p["request"]["url"][:200] for p in params("Network.requestWillBeSent")
        }
        return {
            "requests": list(urls.values()),
            "failed": [
                f"{urls.get(p['requestId'], '?')}: {p.get('errorText', '')}"
                for p in params("Network.loadingFailed")
            ],
            "errors": [
                p["exceptionDetails"]
                .get("exception", {})
                .get("description", p["exceptionDetails"]["text"])
                for p in params("Runtime.exceptionThrown")
            ],
        }

    def close(self):
        try:
            self.send("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._commands)
        os.close(self._replies)
        self.profile.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def print_pdf(chromium: Chromium, deck: Path, attempts: int = 2) -> bytes:
    """`chromium.pdf(deck)`, tried again with twice the patience when Chromium times out (a loaded
    machine can stall one print); the last attempt's TimeoutError is raised."""
    for attempt in range(1, attempts + 1):
        try:
            return chromium.pdf(deck)
        except TimeoutError as problem:
            if attempt == attempts:
                raise
            chromium.patience *= 2
            print(f"{Path(deck).name}: {problem}; trying again, waiting twice as long")
    raise ValueError(f"attempts must be at least 1, not {attempts}")
