#!/usr/bin/python3
"""The planner page in a real browser: Debian's headless Chromium, driven by
chromium-driver through python3-selenium, loads build-wasm/web/ from a server
on 127.0.0.1 (a free port; stopped pass or fail), and

- pasting a real `nvidia-smi -q` capture and picking a model gives the plan
  the CLI gives for the same capture imported (`hwaccel capture --import`);
- a garbage paste shows a clear message, and a 50 MB paste too, with the page
  still answering the next plan;
- the screenshot is not blank;
- `hwaccel serve --web WEB_DIR` on a fixture machine serves the page at /,
  which starts from that node's devices (its /registry) and plans as
  `hwaccel plan --fixture` does; unknown paths are 404.

usage: page_test.py HWACCEL_CLI WEB_DIR [SHARED_REAL_DIR]
Without the shared captures only the `hwaccel serve` part runs.
"""
import functools
import http.server
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CAPTURE = 'nvidia/gls-8x-h100-sxm-565/nvidia-smi-a.txt'
MODEL = 'llama-3.1-70b'
SERVED_FIXTURE = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'machines', 'dgx-h100-8x-nvswitch')
SERVED_MODEL = 'llama-3.1-8b'  # the page's first plan


def cli_plan(hwaccel, text):
    """The CLI's plan on `text` imported as the output of `nvidia-smi -q`."""
    with tempfile.TemporaryDirectory() as work:
        transcript = os.path.join(work, 'transcript.txt')
        with open(transcript, 'w', encoding='utf-8') as f:
            f.write('$ nvidia-smi -q\n' + text)
        fixture = os.path.join(work, 'fixture')
        subprocess.run([hwaccel, 'capture', '--import', transcript, '--out', fixture], check=True, capture_output=True)
        run = subprocess.run([hwaccel, 'plan', '--fixture', fixture, '--model', MODEL, '--json'], capture_output=True,
                             text=True)
        if run.returncode not in (0, 1):
            sys.exit(f'hwaccel plan exited {run.returncode}: {run.stderr}')
        return json.loads(run.stdout)


def png_is_blank(png):
    """Whether every pixel of an 8-bit RGB(A) PNG is the same colour."""
    pos, idat, width, channels = 8, b'', 0, 0
    while pos < len(png):
        length, kind = struct.unpack('>I4s', png[pos:pos + 8])
        data = png[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            width, _, depth, colour = struct.unpack('>IIBB', data[:10])
            channels = {2: 3, 6: 4}.get(colour, 0)
            if depth != 8 or not channels:
                return False  # not a layout read here: not called blank
        elif kind == b'IDAT':
            idat += data
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + width * channels
    first = raw[1:1 + channels]
    # Filter bytes aside, a uniform image's rows decode to one repeated pixel;
    # any row with another byte value after unfiltering is enough (filters 0
    # and 2 on a uniform image give the pixel or zeros).
    for row in range(len(raw) // stride):
        line = raw[row * stride + 1:(row + 1) * stride]
        if any(line[i:i + channels] not in (first, bytes(channels)) for i in range(0, len(line), channels)):
            return False
    return True


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, '.wasm': 'application/wasm',
                      '.js': 'text/javascript'}

    def log_message(self, *args):
        pass


def served_page(driver, hwaccel, web_dir, failures):
    """`hwaccel serve --web`: the page at / starts from the node's devices."""
    run = subprocess.run([hwaccel, 'plan', '--fixture', SERVED_FIXTURE, '--model', SERVED_MODEL, '--json'],
                         capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f'hwaccel plan exited {run.returncode}: {run.stderr}')
    expected = json.loads(run.stdout)
    serve = subprocess.Popen([hwaccel, 'serve', '--listen', '127.0.0.1:0', '--fixture', SERVED_FIXTURE, '--no-watch',
                              '--web', web_dir], stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in serve.stderr:
            if 'the planner page is at ' in line:
                url = line.split('the planner page is at ', 1)[1].strip()
                break
        if not url:
            failures.append('hwaccel serve --web did not say where the page is')
            return
        for path, status, kind in (('/hwaccel.wasm', 200, 'application/wasm'), ('/page.js', 200, 'text/javascript'),
                                   ('/nothing.js', 404, None), ('/../meson.build', 404, None)):
            try:
                with urllib.request.urlopen(url.rstrip('/') + path, timeout=10) as r:
                    got_status, got_kind = r.status, r.headers.get('content-type', '')
            except urllib.error.HTTPError as e:
                got_status, got_kind = e.code, ''
            if got_status != status or (kind and not got_kind.startswith(kind)):
                failures.append(f'GET {path}: {got_status} {got_kind!r}, expected {status} {kind or ""}')
        driver.get(url)
        wait = WebDriverWait(driver, 60)
        wait.until(lambda d: d.find_element(By.TAG_NAME, 'body').get_attribute('data-node') == 'true'
                   and d.find_element(By.ID, 'status').text.startswith(('Planned', 'No plan')))
        got = json.loads(driver.find_element(By.ID, 'plan-json').get_attribute('textContent'))
        if got != expected:
            failures.append('the served page\'s first plan differs from `hwaccel plan --fixture` of the served node')
        wait.until(lambda d: d.find_element(By.TAG_NAME, 'body').get_attribute('data-first-plan-ms'))
        print('served by hwaccel serve: first plan shown',
              driver.find_element(By.TAG_NAME, 'body').get_attribute('data-first-plan-ms'), 'ms after navigation started')
    finally:
        serve.terminate()
        try:
            serve.wait(timeout=10)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()


def main():
    hwaccel, web_dir = sys.argv[1], sys.argv[2]
    shared = sys.argv[3] if len(sys.argv) > 3 else os.environ.get(
        'HWACCEL_SHARED_FIXTURES', os.path.join(os.path.dirname(__file__), '..', '..', '..', 'shared', 'fixtures', 'real'))
    capture = os.path.join(shared, CAPTURE)
    pasted = None
    if os.path.exists(capture):
        with open(capture, encoding='utf-8') as f:
            pasted = f.read()
    else:
        print(f'the paste part is skipped: {capture} is not there')

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(QuietHandler, directory=web_dir))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = '/usr/bin/chromium'
    for flag in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1200,1600'):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path='/usr/bin/chromedriver'), options=options)
    failures = []
    try:
        served_page(driver, hwaccel, web_dir, failures)
        if pasted is not None:
            pasted_plans(driver, hwaccel, server, pasted, failures)
    finally:
        driver.quit()
        server.shutdown()
    for f in failures:
        print('FAIL:', f)
    if failures:
        sys.exit(1)
    print('ok: the page plans a pasted nvidia-smi -q as the CLI does; bad pastes are refused; '
          'hwaccel serve --web serves it with the node\'s devices')


def pasted_plans(driver, hwaccel, server, pasted, failures):
    """The page on a static server: pasted tool output, garbage, a 50 MB paste."""
    expected = cli_plan(hwaccel, pasted)
    driver.set_script_timeout(60)
    wait = WebDriverWait(driver, 60)
    driver.get(f'http://127.0.0.1:{server.server_address[1]}/index.html')
    wait.until(lambda d: d.find_element(By.TAG_NAME, 'body').get_attribute('data-first-plan-ms'))
    print('static server: first plan shown', driver.find_element(By.TAG_NAME, 'body').get_attribute('data-first-plan-ms'),
          'ms after navigation started')

    def plan_with(paste_text):
        driver.execute_script("""
          document.querySelector('input[name=source][value=paste]').click();
          document.getElementById('paste').value = arguments[0];
          document.getElementById('model').value = arguments[1];
          document.getElementById('status').textContent = '';
          document.getElementById('plan-button').click();""", paste_text, MODEL)
        wait.until(lambda d: d.find_element(By.ID, 'status').text.startswith(('Planned', 'No plan')))

    plan_with(pasted)
    got = json.loads(driver.find_element(By.ID, 'plan-json').get_attribute('textContent'))
    if got != expected:
        failures.append('the page\'s plan differs from `hwaccel plan` on the imported capture')
    verdict = driver.find_element(By.ID, 'verdict').text
    if not verdict.startswith('Fits') and expected['fits']:
        failures.append(f'verdict {verdict!r} for a plan that fits')
    png = driver.get_screenshot_as_png()
    if png_is_blank(png):
        failures.append('the screenshot is blank')

    plan_with('this is not nvidia-smi output\n')
    error = driver.find_element(By.ID, 'error').text
    if 'not a tool output' not in error:
        failures.append(f'garbage paste: message {error!r}')

    driver.execute_script("document.getElementById('paste').value = 'GPU 0: x (UUID: GPU-0)\\n'.repeat(2200000);")
    driver.execute_script("document.getElementById('status').textContent = ''; document.getElementById('plan-button').click();")
    wait.until(lambda d: d.find_element(By.ID, 'status').text.startswith(('Planned', 'No plan')))
    error = driver.find_element(By.ID, 'error').text
    if 'MiB' not in error and 'bytes' not in error:
        failures.append(f'50 MB paste: message {error!r}')

    plan_with(pasted)  # still answers
    if json.loads(driver.find_element(By.ID, 'plan-json').get_attribute('textContent')) != expected:
        failures.append('after the large paste the page no longer plans')


if __name__ == '__main__':
    main()
