"""A real Neovim driven as an external UI, its screen kept as a cell grid and
painted to a PNG.

`Screen` starts `nvim --embed`, speaks msgpack-RPC to it over its stdin and
stdout, attaches as a UI with `ext_linegrid` and RGB colours, and applies the
`redraw` events Neovim sends (grid_resize, grid_line, grid_clear,
grid_scroll, grid_cursor_goto, hl_attr_define, default_colors_set, flush) to
a grid of cells. What is painted is what Neovim drew, cell by cell: the text
and highlight attributes of each cell as of the last `flush`.
"""

import os
import subprocess
import threading
import time

import msgpack
from PIL import Image, ImageDraw, ImageFont

FONT_DIR = '/usr/share/fonts/truetype/dejavu'
FONT_FILES = {
    (False, False): 'DejaVuSansMono.ttf',
    (True, False): 'DejaVuSansMono-Bold.ttf',
    (False, True): 'DejaVuSansMono-Oblique.ttf',
    (True, True): 'DejaVuSansMono-BoldOblique.ttf',
}


class ScreenError(Exception):
    """Neovim answered an RPC request with an error, exited, or the screen
    never showed what was waited for."""


class Grid:
    """The cells of Neovim's one grid (no ext_multigrid): each row a list of
    [text, highlight id]; a double-width character's right half is ''."""

    def __init__(self):
        self.width = 0
        self.height = 0
        self.rows = []
        self.cursor = (0, 0)
        self.attrs = {0: {}}
        self.default_fg = 0xFFFFFF
        self.default_bg = 0x000000
        self.default_sp = 0xFF0000

    def resize(self, width, height):
        self.rows = [
            (self.rows[r][:width] if r < len(self.rows) else []) for r in range(height)
        ]
        for row in self.rows:
            row.extend([' ', 0] for _ in range(width - len(row)))
        self.width, self.height = width, height

    def clear(self):
        self.rows = [[[' ', 0] for _ in range(self.width)] for _ in range(self.height)]

    def line(self, row, col, cells):
        hl = 0
        for cell in cells:
            text = cell[0]
            if len(cell) > 1:
                hl = cell[1]
            repeat = cell[2] if len(cell) > 2 else 1
            for _ in range(repeat):
                if col < self.width:
                    self.rows[row][col] = [text, hl]
                col += 1

    def scroll(self, top, bot, left, right, rows):
        # Rows move up by `rows` (down when negative) inside the region; the
        # rows left behind are redrawn by grid_line events that follow.
        if rows > 0:
            for r in range(top, bot - rows):
                self.rows[r][left:right] = [list(c) for c in self.rows[r + rows][left:right]]
        else:
            for r in range(bot - 1, top - rows - 1, -1):
                self.rows[r][left:right] = [list(c) for c in self.rows[r + rows][left:right]]

    def text(self):
        """The screen as text, one line per row (wide characters once)."""
        return '\n'.join(''.join(cell[0] for cell in row) for row in self.rows)


class Screen:
    """A Neovim started with `argv` (which must hold --embed) and attached to
    as a `cols` x `rows` UI."""

    def __init__(self, argv, cols, rows, env=None, cwd=None, stderr=None):
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr or subprocess.DEVNULL, env=env, cwd=cwd)
        self.grid = Grid()
        self.shown = Grid()  # the grid as of the last flush
        self.flushes = 0
        self.lock = threading.Condition()
        self.writing = threading.Lock()
        self.responses = {}
        self.next_id = 0
        self.closed = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.request('nvim_ui_attach', cols, rows, {'rgb': True, 'ext_linegrid': True})

    # --- msgpack-RPC --------------------------------------------------------

    def _read(self):
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        fd = self.proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            unpacker.feed(chunk)
            for message in unpacker:
                self._dispatch(message)
        with self.lock:
            self.closed = True
            self.lock.notify_all()

    def _dispatch(self, message):
        kind = message[0]
        if kind == 1:  # response: [1, id, error, result]
            with self.lock:
                self.responses[message[1]] = (message[2], message[3])
                self.lock.notify_all()
        elif kind == 2 and message[1] == 'redraw':
            with self.lock:
                for batch in message[2]:
                    self._apply(batch[0], batch[1:])
                self.lock.notify_all()
        elif kind == 0:  # a request to this UI: none is served
            self._send([1, message[1], 'not served by this UI', None])

    def _send(self, message):
        data = msgpack.packb(message, use_bin_type=True)
        with self.writing:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def request(self, method, *params, timeout=30):
        """Calls API function `method`; returns its result or raises
        ScreenError with Neovim's error message."""
        with self.lock:
            msgid = self.next_id
            self.next_id += 1
        self._send([0, msgid, method, list(params)])
        with self.lock:
            deadline = time.monotonic() + timeout
            while msgid not in self.responses:
                if self.closed:
                    raise ScreenError(f'Neovim exited during {method}')
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ScreenError(f'no answer to {method} in {timeout} s')
                self.lock.wait(left)
            error, result = self.responses.pop(msgid)
        if error is not None:
            raise ScreenError(f'{method}: {error[1] if isinstance(error, list) else error}')
        return result

    def command(self, text):
        """Runs an Ex command, as typed after ':'."""
        return self.request('nvim_command', text)

    def lua(self, code, *args):
        """Runs Lua `code` (its `...` are `args`); returns its value."""
        return self.request('nvim_exec_lua', code, list(args))

    def input(self, keys):
        """Types `keys` (with <CR>-style notation)."""
        return self.request('nvim_input', keys)

    def close(self):
        try:
            self.request('nvim_command', 'qall!', timeout=5)
        except ScreenError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    # --- redraw events ------------------------------------------------------

    def _apply(self, name, calls):
        grid = self.grid
        for args in calls:
            if name == 'grid_resize':
                grid.resize(args[1], args[2])
            elif name == 'grid_clear':
                grid.clear()
            elif name == 'grid_line':
                grid.line(args[1], args[2], args[3])
            elif name == 'grid_scroll':
                _, top, bot, left, right, rows, _cols = args
                grid.scroll(top, bot, left, right, rows)
            elif name == 'grid_cursor_goto':
                grid.cursor = (args[1], args[2])
            elif name == 'hl_attr_define':
                grid.attrs[args[0]] = args[1]
            elif name == 'default_colors_set':
                fg, bg, sp = args[0], args[1], args[2]
                grid.default_fg = fg if fg >= 0 else 0xFFFFFF
                grid.default_bg = bg if bg >= 0 else 0x000000
                grid.default_sp = sp if sp >= 0 else 0xFF0000
            elif name == 'flush':
                self.shown = _copy(grid)
                self.flushes += 1

    # --- waiting on the screen ----------------------------------------------

    def text(self):
        """The screen's text as of the last flush."""
        with self.lock:
            return self.shown.text()

    def wait_for(self, what, test, timeout=20):
        """Waits until `test(screen text)` is true after a flush; raises
        ScreenError naming `what`, with the screen, when it never is."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                if test(self.shown.text()):
                    return
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise ScreenError(
                        f'the screen never showed {what} in {timeout} s; it showed:\n'
                        + self.shown.text())
                self.lock.wait(min(left, 0.5))

    def wait_text(self, needle, timeout=20):
        """Waits until `needle` is on the screen."""
        self.wait_for(repr(needle), lambda text: needle in text, timeout)

    def settle(self, quiet=0.3, timeout=10):
        """Waits until no flush came for `quiet` seconds (the screen is done
        redrawing), at most `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self.lock:
            seen = self.flushes
            while time.monotonic() < deadline:
                self.lock.wait(quiet)
                if self.flushes == seen:
                    return
                seen = self.flushes

    def check(self, attempts=3):
        """Compares the grid, cell by cell, with Neovim's own idea of its
        screen (screenstring()); raises ScreenError at the first difference
        that persists after the screen settles again."""
        lua = ('local rows = {}\n'
               'for r = 1, vim.o.lines do\n'
               '  local row = {}\n'
               '  for c = 1, vim.o.columns do row[c] = vim.fn.screenstring(r, c) end\n'
               '  rows[r] = row\n'
               'end\n'
               'return rows')
        for attempt in range(attempts):
            self.settle()
            theirs = self.lua(lua)
            with self.lock:
                ours = [[cell[0] for cell in row] for row in self.shown.rows]
            difference = _first_difference(ours, theirs)
            if difference is None:
                return
        row, col, mine, nvims = difference
        raise ScreenError(f'the grid differs from Neovim\'s screen at row {row}, column {col}: '
                          f'{mine!r} here, {nvims!r} in Neovim')

    # --- painting -----------------------------------------------------------

    def png(self, path, size=15, cursor=True):
        """Paints the screen as of the last flush to the PNG `path`."""
        with self.lock:
            grid = _copy(self.shown)
        paint(grid, size, cursor).save(path)


def _first_difference(ours, theirs):
    if (len(ours), len(ours[0]) if ours else 0) != (len(theirs), len(theirs[0]) if theirs else 0):
        return (len(ours), len(ours[0]) if ours else 0, 'the size', 'another size')
    for r, (mine, nvims) in enumerate(zip(ours, theirs)):
        for c, (a, b) in enumerate(zip(mine, nvims)):
            # A wide character's right half: '' here, Neovim varies.
            if a != '' and a != b:
                return (r, c, a, b)
    return None


def _copy(grid):
    copy = Grid()
    copy.width, copy.height = grid.width, grid.height
    copy.rows = [[list(cell) for cell in row] for row in grid.rows]
    copy.cursor = grid.cursor
    copy.attrs = dict(grid.attrs)
    copy.default_fg, copy.default_bg, copy.default_sp = grid.default_fg, grid.default_bg, grid.default_sp
    return copy


def _rgb(value):
    return ((value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF)


def _blend(fg, bg, percent):
    # `blend` is the background's share, 0 to 100.
    return tuple(round(f * (100 - percent) / 100 + b * percent / 100) for f, b in zip(fg, bg))


def paint(grid, size=15, cursor=True):
    """The grid as an image: each cell's background, then its character in
    DejaVu Sans Mono (bold, oblique as its attributes say), then underlines;
    the cursor as a reversed cell."""
    fonts = {key: ImageFont.truetype(os.path.join(FONT_DIR, name), size)
             for key, name in FONT_FILES.items()}
    regular = fonts[(False, False)]
    cell_w = round(regular.getlength('M'))
    ascent, descent = regular.getmetrics()
    cell_h = ascent + descent + 2
    image = Image.new('RGB', (grid.width * cell_w, grid.height * cell_h), _rgb(grid.default_bg))
    draw = ImageDraw.Draw(image)
    for r, row in enumerate(grid.rows):
        for c, (text, hl) in enumerate(row):
            if text == '':
                continue  # the right half of a wide character
            attr = grid.attrs.get(hl, {})
            fg = _rgb(attr.get('foreground', grid.default_fg))
            bg = _rgb(attr.get('background', grid.default_bg))
            sp = _rgb(attr.get('special', grid.default_sp))
            if attr.get('reverse'):
                fg, bg = bg, fg
            if cursor and (r, c) == tuple(grid.cursor):
                fg, bg = bg, fg
            if 'blend' in attr:
                fg = _blend(fg, bg, attr['blend'])
            wide = c + 1 < len(row) and row[c + 1][0] == ''
            x, y = c * cell_w, r * cell_h
            w = cell_w * (2 if wide else 1)
            draw.rectangle([x, y, x + w - 1, y + cell_h - 1], fill=bg)
            if text.strip():
                font = fonts[(bool(attr.get('bold')), bool(attr.get('italic')))]
                draw.text((x, y + 1), text, font=font, fill=fg)
            if attr.get('strikethrough'):
                draw.line([x, y + cell_h // 2, x + w - 1, y + cell_h // 2], fill=fg)
            line_y = y + ascent + 2
            if attr.get('underline'):
                draw.line([x, line_y, x + w - 1, line_y], fill=sp if 'special' in attr else fg)
            elif attr.get('undercurl'):
                for dx in range(0, w, 4):
                    draw.line([x + dx, line_y, x + dx + 2, line_y - 1], fill=sp)
                    draw.line([x + dx + 2, line_y - 1, x + dx + 4, line_y], fill=sp)
    return image
