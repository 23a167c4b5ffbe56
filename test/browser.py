"""
A headless Chromium driven over the DevTools protocol, for the browser view's tests (issue 33).

Debian's chromium (installed by the set-up for ``make test``) runs headless with SwiftShader's
software WebGL; this module talks to it through its DevTools websocket with the ``websockets``
client viser already brings: open a page, run JavaScript in it, take a screenshot as an RGB
array.  ``available()`` says whether it can run here.
"""
import base64
import io
import itertools
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

import numpy as np

#: The browser window, pixels: the view's canvas fills it.
WIDTH, HEIGHT = 1000, 700


def available():
    """Return the chromium executable, or None."""
    return shutil.which('chromium') or shutil.which('chromium-browser')


def view_url(process):
    """Return the URL a jointsim_view process prints (``view: http://...``); echo the rest."""
    for line in process.stdout:
        if line.startswith('view: http'):
            return line.strip().split('view: ')[1]
        print(line.rstrip())
    raise RuntimeError('jointsim_view ended before it served')


def free_port():
    """Return a TCP port free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class Browser:
    """One headless Chromium with one page; close() ends it."""

    def __init__(self, width=WIDTH, height=HEIGHT, niceness=0, like_a_user=False):
        """
        Start the browser (at ``niceness``, 0-19, as nice(1) does: 19 the lowest priority).

        Run as root, Chromium raises its browser and GPU processes to niceness -8 (it may, with
        CAP_SYS_NICE), ahead of every process of the simulation; ``like_a_user`` takes that
        capability away (util-linux's setpriv), as a desktop user's browser runs without it.
        """
        from websockets.sync.client import connect
        self.width, self.height = width, height
        port = free_port()
        # its helper processes may still write to the profile as the browser ends: whatever
        # is left then goes with the next cleanup of /tmp, not as an error of the test
        self._profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        prefix = []
        if like_a_user and os.geteuid() == 0 and shutil.which('setpriv'):
            prefix = ['setpriv', '--inh-caps=-sys_nice', '--bounding-set=-sys_nice']
        self.process = subprocess.Popen(
            [*prefix, available(), '--headless=new', '--no-sandbox', '--use-angle=swiftshader',
             '--enable-unsafe-swiftshader', '--hide-scrollbars', '--mute-audio',
             f'--remote-debugging-port={port}', f'--window-size={width},{height}',
             f'--user-data-dir={self._profile.name}', '--remote-allow-origins=*',
             'about:blank'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=(lambda: os.nice(niceness)) if niceness else None)
        deadline = time.monotonic() + 30.0
        target = None
        while target is None:
            try:
                with urllib.request.urlopen(f'http://127.0.0.1:{port}/json', timeout=2) as r:
                    target = next(t for t in json.load(r) if t.get('type') == 'page')
            except (OSError, StopIteration, ValueError):
                if time.monotonic() > deadline:
                    self.close()
                    raise RuntimeError('chromium did not open its DevTools port')
                time.sleep(0.2)
        self._ws = connect(target['webSocketDebuggerUrl'], max_size=None, open_timeout=10)
        self._ids = itertools.count(1)
        self.call('Emulation.setDeviceMetricsOverride', width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        # a page the browser counts as in front and focused draws every frame (a background
        # page's animation frames are throttled, and viser's scene then fades in half-way)
        self.call('Page.bringToFront')
        self.call('Emulation.setFocusEmulationEnabled', enabled=True)

    def call(self, method, **params):
        """Send a DevTools command; return its result (events in between are dropped)."""
        number = next(self._ids)
        self._ws.send(json.dumps({'id': number, 'method': method, 'params': params}))
        while True:
            message = json.loads(self._ws.recv(timeout=60))
            if message.get('id') == number:
                if 'error' in message:
                    raise RuntimeError(f'{method}: {message["error"]}')
                return message.get('result', {})

    def load(self, url, timeout=60.0):
        """Load a page; return once its document is complete (a loaded machine takes seconds)."""
        self.call('Page.enable')
        self.call('Page.navigate', url=url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.evaluate('document.readyState') == 'complete':
                    return
            except RuntimeError:        # the navigation is still under way
                pass
            time.sleep(0.2)
        raise AssertionError(f'{url} did not load in {timeout:g} s')

    def evaluate(self, expression):
        """Run JavaScript in the page; return its value."""
        result = self.call('Runtime.evaluate', expression=expression, returnByValue=True)
        return result.get('result', {}).get('value')

    def screenshot(self):
        """Return the page as an (height, width, 3) uint8 RGB array."""
        from PIL import Image
        for attempt in range(20):
            try:
                shot = self.call('Page.captureScreenshot', format='png')
                break
            except RuntimeError:        # 'Not attached to an active page' while it loads
                if attempt == 19:
                    raise
                time.sleep(0.5)
        data = base64.b64decode(shot['data'])
        return np.asarray(Image.open(io.BytesIO(data)).convert('RGB'))

    def click_button(self, label):
        """Click the page's button whose text is ``label``; return whether there was one."""
        return bool(self.evaluate(
            '(() => { const b = [...document.querySelectorAll("button")]'
            f'.find(e => e.textContent.trim() === {json.dumps(label)});'
            ' if (b) { b.click(); return true; } return false; })()'))

    def close(self):
        """End the browser."""
        try:
            self._ws.close()
        except Exception:  # noqa: B902 (closing: nothing to save)
            pass
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        for _ in range(10):   # a helper still writing: 'Directory not empty'
            self._profile.cleanup()
            if not os.path.exists(self._profile.name):
                break
            time.sleep(0.2)
