"""The book's Neovim screenshots, taken from a real Neovim (screen.py) with
the plugin loaded as tests/minimal_init.lua loads it and the server
$PROMPTFORGE_BIN. Run by editors/nvim/ci.sh:

    python screenshot.py --nvim NVIM --out DIR

- trace.png: examples/echo-draft.md run offline (:PromptForgeRunOffline),
  then :PromptForgeTrace beside it, the round's request fold opened;
- test-quickfix.png: :PromptForgeTest on a copy of examples/word-stats's
  test file with one expectation changed, so that a case fails, and the
  quickfix list it opens.

Each step waits for what it should put on the screen (the trace's title
line, the request's messages, the quickfix entry); when it never shows, the
script saves the screen as NAME-failed.png, prints it and exits 1. Before a
picture is painted, its grid is compared with Neovim's screenstring() of
every cell (Screen.check).
"""

import argparse
import os
import re
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
from screen import Screen, ScreenError  # noqa: E402 (after the line above)

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(TESTS, '..', '..', '..'))
COLS, ROWS = 155, 45  # 1395 x 900 pixels: 9 x 20 pixel cells of 15 px DejaVu Sans Mono

# setup() as a user's config calls it, with the server the tests use.
SETUP = "require('promptforge').setup({ cmd = { ..., 'lsp' } })"


def start(nvim, cwd, env, log):
    screen = Screen([nvim, '--embed', '-i', 'NONE', '-u', os.path.join(TESTS, 'minimal_init.lua')],
                    COLS, ROWS, env=env, cwd=cwd, stderr=log)
    screen.lua(SETUP, env['PROMPTFORGE_BIN'])
    return screen


def wait_client(screen, timeout=20):
    """Waits until the promptforge client is attached to the current buffer
    and initialized."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if screen.lua("local c = vim.lsp.get_clients({ bufnr = 0, name = 'promptforge' })[1]\n"
                      "return c ~= nil and c.initialized == true"):
            return
        time.sleep(0.05)
    raise ScreenError(f'the promptforge client never attached to the buffer in {timeout} s')


def trace_png(screen):
    """examples/echo-draft.md run offline, its trace beside it."""
    screen.command('edit examples/echo-draft.md')
    wait_client(screen)
    screen.command('PromptForgeRunOffline Can we meet on Friday?')
    screen.wait_text('Result:')
    screen.command('PromptForgeTrace')
    # The trace comes from the server: wait for its window, then make it wide
    # enough for the title line (the prompt's lines wrap instead).
    screen.wait_text('Trace of run')
    screen.lua("assert(vim.bo.filetype == 'promptforge-trace', 'the trace window is not the current one')\n"
               "vim.cmd('vertical resize 88')")
    screen.wait_for('the trace\'s title line',
                    lambda text: 'Trace of run' in text and 'examples/echo-draft.md (offline)' in text)
    screen.wait_text('chat writer (echo echo)')
    # Open the round's request: its first line below the `request` heading.
    screen.lua("local row = vim.fn.search('^      request$', 'nw')\n"
               "assert(row > 0, 'no request line in the trace')\n"
               "vim.api.nvim_win_set_cursor(0, { row + 1, 0 })\n"
               "vim.cmd('normal! zo')\n"
               "vim.api.nvim_win_set_cursor(0, { row, 0 })")
    screen.wait_text('"content": "Write a short, friendly reply."')


def test_quickfix_png(screen):
    """:PromptForgeTest on a test file with a failing case (cwd holds a copy
    of examples/word-stats)."""
    screen.command('edit word-stats.test.yaml')
    wait_client(screen)
    screen.command('PromptForgeTest')
    screen.wait_text('counts four words: expect.result: the result differs')
    screen.wait_text('[Quickfix List]')
    screen.wait_for('the summary', lambda text: re.search(r'PromptForge: \d+ passed, 1 failed', text))


def word_stats_copy():
    """A folder holding examples/word-stats.md and its test file, whose first
    case now expects "4 letters per word" where the prompt says "4.0"."""
    folder = tempfile.mkdtemp(prefix='pf-screenshot-')
    shutil.copy(os.path.join(REPO, 'examples', 'word-stats.md'), folder)
    with open(os.path.join(REPO, 'examples', 'word-stats.test.yaml'), encoding='utf-8') as f:
        tests = f.read()
    right = '      result: "4 words, 16 letters, 4.0 letters per word"\n'
    if right not in tests:
        raise ScreenError('examples/word-stats.test.yaml no longer has the line this script changes: ' + right)
    tests = tests.replace(right, right.replace('4.0 letters', '4 letters'), 1)
    with open(os.path.join(folder, 'word-stats.test.yaml'), 'w', encoding='utf-8') as f:
        f.write(tests)
    return folder


def take(name, scene, nvim, cwd, env, out):
    started = time.monotonic()
    failed = os.path.join(out, name + '-failed.png')
    if os.path.exists(failed):
        os.remove(failed)
    with open(os.path.join(out, name + '.nvim.log'), 'w') as log:
        screen = start(nvim, cwd, env, log)
        try:
            scene(screen)
            screen.check()
            screen.png(os.path.join(out, name + '.png'))
        except ScreenError:
            screen.png(failed)
            raise
        finally:
            screen.close()
    print(f'screenshot {name}.png ({time.monotonic() - started:.1f} s)')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--nvim', required=True, help='the Neovim to drive')
    parser.add_argument('--out', default=os.path.join(REPO, 'target', 'editor-artifacts', 'nvim'))
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    env = dict(os.environ)
    env['PROMPTFORGE_BIN'] = os.path.abspath(
        os.path.join(REPO, env.get('PROMPTFORGE_BIN', 'target/release/promptforge')))
    scratch = tempfile.mkdtemp(prefix='pf-screenshot-home-')
    for var in ('XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME'):
        env.setdefault(var, os.path.join(scratch, var.lower()))
    words = word_stats_copy()
    try:
        take('trace', trace_png, options.nvim, REPO, env, options.out)
        take('test-quickfix', test_quickfix_png, options.nvim, words, env, options.out)
    except ScreenError as err:
        print(f'nvim screenshots: {err}', file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(words, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
