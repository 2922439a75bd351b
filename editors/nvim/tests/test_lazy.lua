-- The README's lazy.nvim spec, with the real lazy.nvim when $PF_LAZY_NVIM
-- names a checkout of it (nothing here downloads it; skipped otherwise). Each
-- case starts a Neovim of its own whose init is a user's: lazy.nvim and the
-- spec, read from README.md's block as it is (`url` pointed at a local clone
-- of this repository, or `dir` at it). Its `build`, :PromptForgeInstallBinary,
-- waits for cargo here (no UI). `cargo` is a stand-in on PATH that
-- records where and how it was run and puts the real server in
-- $CARGO_HOME/bin, as `cargo install` does (a real install is a build of
-- minutes). No promptforge is on PATH.
local H = require('helpers')

local lazy = vim.env.PF_LAZY_NVIM
local SKIP = 'PF_LAZY_NVIM not set (a checkout of lazy.nvim)'

-- The spec block of README.md: the first ```lua block after the marker.
local function readme_spec()
  local text = table.concat(vim.fn.readfile(H.plugin .. '/README.md'), '\n')
  local marker = text:find('<!-- tests/test_lazy.lua loads the next block', 1, true)
  assert(marker, 'no marker before the lazy.nvim spec in README.md')
  local block = text:match('```lua\n(.-)\n```', marker)
  assert(block, 'no ```lua block after the marker')
  return block
end

-- A git repository holding this checkout's committed tree with the plugin's
-- folder as it is now (so uncommitted edits are tested too): what lazy.nvim clones.
local function remote()
  local dir = vim.fn.tempname()
  local function git(args)
    local result = vim.system(vim.list_extend({ 'git', '-c', 'user.name=test', '-c', 'user.email=test@localhost',
      '-c', 'commit.gpgsign=false' }, args), { text = true }):wait()
    assert(result.code == 0, table.concat(args, ' ') .. ': ' .. (result.stderr or ''))
    return result
  end
  vim.fn.mkdir(dir, 'p')
  local archive = vim.system({ 'sh', '-c', 'git -C "$1" archive HEAD | tar -x -C "$2"', 'sh', H.repo, dir }):wait()
  assert(archive.code == 0, 'git archive: ' .. (archive.stderr or ''))
  vim.system({ 'cp', '-R', H.plugin .. '/.', dir .. '/editors/nvim/' }):wait()
  git({ 'init', '-q', dir })
  git({ '-C', dir, 'add', '-A' })
  git({ '-C', dir, 'commit', '-q', '--allow-empty', '-m', 'the plugin as tested' })
  return dir
end

-- Runs a Neovim whose init bootstraps lazy.nvim with the spec (`where`: its
-- url or dir), then `check` (Lua source, run after startup, which writes its
-- findings as JSON to the file `RESULT`). Returns the findings, the fake
-- cargo's record (nil when it did not run) and the scratch folder.
local function user_session(where, check)
  local scratch = vim.fn.tempname()
  vim.fn.mkdir(scratch .. '/bin', 'p')
  local cargo_home = scratch .. '/cargo'
  local cargo_log = scratch .. '/cargo.log'
  vim.fn.writefile({
    '#!/bin/sh',
    'printf "%s\\n%s\\n" "$PWD" "$*" > "$PF_FAKE_CARGO_LOG"',
    'mkdir -p "$CARGO_HOME/bin" && ln -sf "$PF_REAL_BIN" "$CARGO_HOME/bin/promptforge"',
  }, scratch .. '/bin/cargo')
  vim.uv.fs_chmod(scratch .. '/bin/cargo', tonumber('755', 8))
  local spec_file = scratch .. '/spec.lua'
  vim.fn.writefile(vim.split('local spec = ' .. readme_spec() .. '\nreturn spec', '\n'), spec_file)
  local init = scratch .. '/init.lua'
  vim.fn.writefile({
    ('vim.opt.rtp:prepend(%q)'):format(lazy),
    ('local spec = dofile(%q)'):format(spec_file),
    ('spec.url, spec.dir = %s, %s'):format(vim.inspect(where.url), vim.inspect(where.dir)),
    'vim.o.swapfile = false',
    "require('lazy').setup({ spec }, {",
    ('  root = %q, lockfile = %q,'):format(scratch .. '/lazy', scratch .. '/lazy-lock.json'),
    '  install = { colorscheme = {} }, checker = { enabled = false },',
    '  change_detection = { enabled = false }, rocks = { enabled = false },',
    '})',
  }, init)
  local check_file = scratch .. '/check.lua'
  local result = scratch .. '/result.json'
  vim.fn.writefile(vim.split(([[
package.path = %q .. '/?.lua;' .. package.path
local H = require('helpers')
local RESULT = %q
local out = {}
local ok, err = pcall(function()
%s
end)
out.error = not ok and tostring(err) or nil
vim.fn.writefile({ vim.json.encode(out) }, RESULT)
for _, client in ipairs(vim.lsp.get_clients()) do vim.lsp.stop_client(client.id) end
vim.wait(5000, function() return #vim.lsp.get_clients() == 0 end, 20)
vim.cmd('qall!')
]]):format(H.tests, result, check), '\n'), check_file)
  local env = {
    PATH = scratch .. '/bin:/usr/bin:/bin',
    HOME = scratch .. '/home',
    CARGO_HOME = cargo_home,
    XDG_CONFIG_HOME = scratch .. '/config',
    XDG_DATA_HOME = scratch .. '/data',
    XDG_STATE_HOME = scratch .. '/state',
    XDG_CACHE_HOME = scratch .. '/cache',
    PF_FAKE_CARGO_LOG = cargo_log,
    PF_REAL_BIN = H.bin,
    PROMPTFORGE_BIN = H.bin,
  }
  local run = vim.system({ vim.v.progpath, '--headless', '-i', 'NONE', '-u', init, '-c', 'luafile ' .. check_file },
    { env = env, clear_env = true, text = true, cwd = scratch }):wait(120000)
  assert(vim.uv.fs_stat(result), ('the user session wrote no result (exit %s)\nstdout (end): %s\nstderr: %s'):format(
    tostring(run.code), (run.stdout or ''):sub(-3000), run.stderr or ''))
  local found = vim.json.decode(table.concat(vim.fn.readfile(result), '\n'))
  assert(not found.error, found.error)
  local log = vim.uv.fs_stat(cargo_log) and vim.fn.readfile(cargo_log) or nil
  return found, log, scratch
end

-- What the user session checks after startup: a prompt opened attaches the
-- server, which runs it; the commands exist; :checkhealth names the binary.
local OPEN_AND_RUN = [[
  local dir = H.scratch({ ['p.md'] = H.prompt("return 'from lazy'") }, { config = false })
  local buf, client = H.open(dir .. '/p.md')
  out.cmd = client.config.cmd
  out.plugin_dir = require('lazy.core.config').plugins.promptforge.dir
  out.after = vim.fn.exists(':PromptForgeRun') == 2
  vim.cmd('PromptForgeRun')
  out.output = H.wait_output(buf, 'Result:\nfrom lazy')
  vim.cmd('checkhealth promptforge')
  out.health = H.wait('the health report', function()
    local t = H.text(0)
    return t:find('PromptForge debugger', 1, true) and t
  end)
]]

H.run('lazy', {
  { "the README's spec: lazy.nvim clones the repository, its build (:PromptForgeInstallBinary) runs cargo install "
    .. 'in the clone, and editors/nvim is loaded',
    function()
      if not lazy then H.skip(SKIP) end
      local found, cargo, scratch = user_session({ url = 'file://' .. remote() }, OPEN_AND_RUN)
      local clone = scratch .. '/lazy/promptforge'
      H.eq(clone, found.plugin_dir, 'the clone')
      H.eq({ clone, 'install --locked --profile dist --path server/cli' }, cargo, 'the build: where cargo ran, and how')
      H.eq(true, found.after, 'the commands once loaded')
      H.eq(scratch .. '/cargo/bin/promptforge', found.cmd[1], 'the server: the binary cargo installed')
      assert(found.health:find('OK server binary ' .. vim.pesc(scratch .. '/cargo/bin/promptforge')
        .. ' %(found in %$CARGO_HOME/bin, where cargo install puts it%)'), found.health)
      assert(not found.health:find('ERROR', 1, true), found.health)
    end },

  { "the spec with dir (a clone kept by hand): no build at startup, :Lazy build promptforge runs it there", function()
    if not lazy then H.skip(SKIP) end
    local clone = remote()
    local found, cargo = user_session({ dir = clone }, [[
      out.cargo_before = vim.uv.fs_stat(vim.env.PF_FAKE_CARGO_LOG) ~= nil
      vim.cmd('Lazy! build promptforge')
]] .. OPEN_AND_RUN)
    H.eq(false, found.cargo_before, 'cargo run at startup')
    H.eq({ clone, 'install --locked --profile dist --path server/cli' }, cargo, 'the build: where cargo ran, and how')
    H.eq(clone, found.plugin_dir, 'the plugin')
    assert(found.output:find('Result:\nfrom lazy', 1, true), found.output)
  end },
})
