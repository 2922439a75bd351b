-- Finding the server binary (config.locate): an explicit `cmd` wins, then
-- `promptforge` on PATH, then the plugin's checkout's target/release and
-- target/dist, then $CARGO_HOME/bin (~/.cargo/bin). Fake executables in
-- scratch folders stand for each place; a copy of the plugin's lua/ in a
-- scratch repository stands for a checkout (its config.lua finds the checkout
-- from its own path, as the real one does). Then :checkhealth with the binary
-- found and missing, and opening a prompt with the binary missing, then
-- installed.
local H = require('helpers')

local real_path, real_home, real_cargo_home = vim.env.PATH, vim.env.HOME, vim.env.CARGO_HOME
local real_install_root = vim.env.CARGO_INSTALL_ROOT
local sys_path = '/usr/bin:/bin' -- sh and coreutils, never a promptforge

local function fake(path, label)
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  vim.fn.writefile({ '#!/bin/sh', ('echo "promptforge 0.0.0-%s"'):format(label) }, path)
  vim.uv.fs_chmod(path, tonumber('755', 8))
  return path
end

-- A scratch repository holding a copy of the plugin's lua/ (and, unless
-- `checkout` is false, the server/cli/Cargo.toml that makes it a checkout);
-- returns its root and its copy of config.lua, loaded afresh.
local function scratch_repo(checkout)
  local root = vim.fn.tempname()
  vim.fn.mkdir(root .. '/editors/nvim', 'p')
  root = vim.uv.fs_realpath(root)
  vim.fn.system({ 'cp', '-R', H.plugin .. '/lua', root .. '/editors/nvim/lua' })
  if checkout ~= false then
    vim.fn.mkdir(root .. '/server/cli', 'p')
    vim.fn.writefile({ '[package]', 'name = "promptforge"' }, root .. '/server/cli/Cargo.toml')
  end
  return root, dofile(root .. '/editors/nvim/lua/promptforge/config.lua')
end

-- Every place holding a fake binary; `env` sets PATH, HOME and CARGO_HOME.
local places = {}
local function env(o)
  vim.env.PATH = o.path or sys_path
  vim.env.HOME = o.home or places.home
  vim.env.CARGO_HOME = o.cargo_home
  vim.env.CARGO_INSTALL_ROOT = o.install_root
end

local root, config = scratch_repo()
places.bin = vim.fn.tempname()
places.home = vim.fn.tempname()
places.cargo_home = vim.fn.tempname()
local on_path = fake(places.bin .. '/promptforge', 'path')
local release = fake(root .. '/target/release/promptforge', 'release')
local dist = fake(root .. '/target/dist/promptforge', 'dist')
local cargo = fake(places.cargo_home .. '/bin/promptforge', 'cargo')
local home_cargo = fake(places.home .. '/.cargo/bin/promptforge', 'home-cargo')
local all = { path = places.bin .. ':' .. sys_path, cargo_home = places.cargo_home }

local function located(cmd)
  local found = config.locate(cmd or { 'promptforge', 'lsp' }, 'the test')
  return found.path, found.source, found
end

local function restore()
  vim.env.PATH, vim.env.HOME, vim.env.CARGO_HOME = real_path, real_home, real_cargo_home
  vim.env.CARGO_INSTALL_ROOT = real_install_root
end

-- The advice of the health report's ERROR (its indented lines after it).
local function health_text()
  vim.cmd('checkhealth promptforge')
  local text = H.wait('the health report', function()
    local t = H.text(0)
    return t:find('PromptForge debugger', 1, true) and t
  end)
  vim.cmd('bwipeout!')
  return text
end

-- A stand-in `cargo` in a folder of its own: records its folder and
-- arguments in `log`, prints a line as cargo does, and then either exits 101
-- with a compile error (`fail`) or puts the real server in $CARGO_HOME/bin.
local function fake_cargo(log, fail)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local body = fail and { 'echo "error: could not compile promptforge-engine" >&2', 'exit 101' }
    or { ('mkdir -p "$CARGO_HOME/bin" && ln -sf %s "$CARGO_HOME/bin/promptforge"'):format(vim.fn.shellescape(H.bin)) }
  vim.fn.writefile(vim.list_extend({
    '#!/bin/sh',
    ('echo "$PWD" > %s; echo "$*" >> %s'):format(vim.fn.shellescape(log), vim.fn.shellescape(log)),
    'echo "   Compiling promptforge v0.1.0" >&2',
  }, body), dir .. '/cargo')
  vim.uv.fs_chmod(dir .. '/cargo', tonumber('755', 8))
  return dir
end

-- Runs `fn(notes, root)` with vim.notify recorded into `notes`, the real
-- plugin's checkout a scratch one with nothing built (`root`), and no binary
-- anywhere; restores all after.
local function without_binary(fn, cargo_dir)
  local real = require('promptforge.config')
  local checkout = real.checkout
  local root = scratch_repo()
  real.checkout = function() return root end
  real.told_missing = false
  env({ path = (cargo_dir and (cargo_dir .. ':') or '') .. sys_path, cargo_home = vim.fn.tempname() })
  local notes = {}
  local notify = vim.notify
  vim.notify = function(msg, level) table.insert(notes, { msg, level }) end
  local ok, err = pcall(fn, notes, root)
  vim.notify = notify
  restore()
  real.checkout = checkout
  if not ok then error(err, 0) end
end

local function note_with(notes, needle)
  for _, note in ipairs(notes) do
    if note[1]:find(needle, 1, true) then
      return note
    end
  end
end

H.run('binary', {
  { 'the real plugin finds its checkout from its own path', function()
    local real = require('promptforge.config')
    H.eq(vim.uv.fs_realpath(H.repo), real.checkout(), 'checkout root')
    H.eq(root, config.checkout(), 'the scratch copy finds the scratch repository')
    -- Linked into a package folder (pack/*/start/promptforge -> editors/nvim): the links are resolved.
    local link = vim.fn.tempname()
    vim.uv.fs_symlink(H.plugin, link)
    local linked = dofile(link .. '/lua/promptforge/config.lua')
    H.eq(vim.uv.fs_realpath(H.plugin), linked.plugin_dir(), 'the plugin folder through a link')
    H.eq(vim.uv.fs_realpath(H.repo), linked.checkout(), 'the checkout through a link')
    local _, copy_of_nowhere = scratch_repo(false)
    local none, not_root = copy_of_nowhere.checkout()
    assert(none == nil and not_root, 'a copy outside a repository has no checkout')
  end },

  { 'PATH beats the checkout, which beats the cargo bin folder', function()
    env(all)
    local path, source = located()
    H.eq({ on_path, 'PATH' }, { path, source }, 'all present')
    env({ cargo_home = places.cargo_home })
    path, source = located()
    H.eq({ release, 'checkout' }, { path, source }, 'not on PATH')
    os.remove(release)
    path, source = located()
    H.eq({ dist, 'checkout' }, { path, source }, 'no target/release')
    os.remove(dist)
    path, source = located()
    H.eq({ cargo, 'cargo' }, { path, source }, 'no checkout binary: $CARGO_HOME/bin')
    env({}) -- CARGO_HOME unset: ~/.cargo/bin
    path, source = located()
    H.eq({ home_cargo, 'cargo' }, { path, source }, 'no CARGO_HOME: ~/.cargo/bin')
    local install_root = fake(vim.fn.tempname() .. '/bin/promptforge', 'install-root')
    env({ cargo_home = places.cargo_home, install_root = vim.fs.dirname(vim.fs.dirname(install_root)) })
    path, source = located()
    H.eq({ install_root, 'cargo' }, { path, source }, '$CARGO_INSTALL_ROOT/bin before $CARGO_HOME/bin')
    fake(release, 'release')
    fake(dist, 'dist')
    restore()
  end },

  { 'the command keeps its other words; the lookup records what it tried', function()
    env({ cargo_home = places.cargo_home })
    local path, _, found = located({ 'promptforge', '--config', 'x.toml', 'lsp' })
    H.eq({ release, '--config', 'x.toml', 'lsp' }, found.cmd, 'cmd')
    H.eq(release, path, 'path')
    H.eq({ 'PATH', 'checkout' }, vim.tbl_map(function(c) return c.source end, found.tried), 'tried')
    H.eq({ false, true }, vim.tbl_map(function(c) return c.found end, found.tried), 'found')
    restore()
  end },

  { 'an explicit cmd beats every place, and is not replaced when missing', function()
    env(all)
    local explicit = fake(vim.fn.tempname() .. '/my-promptforge', 'explicit')
    local path, source, found = located({ explicit, 'lsp' })
    H.eq({ explicit, 'setting' }, { path, source }, 'an explicit path')
    H.eq({ explicit, 'lsp' }, found.cmd, 'its command')
    path, source, found = located({ '/nonexistent/promptforge', 'lsp' })
    H.eq({ nil, 'setting' }, { path, source }, 'a missing explicit path is not looked up elsewhere')
    H.eq('/nonexistent/promptforge', found.cmd[1], 'its command is kept')
    restore()
  end },

  { 'a file that is not executable is passed over', function()
    env({ cargo_home = places.cargo_home })
    vim.uv.fs_chmod(release, tonumber('644', 8))
    local path = located()
    H.eq(dist, path, 'target/release not executable: target/dist')
    vim.uv.fs_chmod(release, tonumber('755', 8))
    restore()
  end },

  { 'nothing found: no path, and every place tried', function()
    local empty_root, empty = scratch_repo()
    env({ cargo_home = vim.fn.tempname() })
    local found = empty.locate({ 'promptforge', 'lsp' })
    H.eq(nil, found.path, 'path')
    H.eq({ 'promptforge', 'lsp' }, found.cmd, 'the command is left as it was')
    H.eq({ 'PATH', empty_root .. '/target/release/promptforge', empty_root .. '/target/dist/promptforge',
      vim.env.CARGO_HOME .. '/bin/promptforge' }, vim.tbl_map(function(c) return c.where end, found.tried), 'tried')
    restore()
  end },

  { ':checkhealth with the binary found on PATH: its path, where from, its version; no ERROR or WARNING', function()
    -- The default cmd (bare `promptforge`), the real server on PATH.
    local bin_dir = vim.fn.tempname()
    vim.fn.mkdir(bin_dir, 'p')
    vim.uv.fs_symlink(H.bin, bin_dir .. '/promptforge')
    require('promptforge').setup({})
    env({ path = bin_dir .. ':' .. sys_path, cargo_home = vim.fn.tempname() })
    local text = health_text()
    restore()
    assert(not text:find('ERROR', 1, true) and not text:find('WARNING', 1, true), text)
    assert(text:find('OK server binary ' .. vim.pesc(bin_dir .. '/promptforge') .. ' %(found on PATH%): promptforge %d'),
      text)
  end },

  { ':checkhealth with the binary in $CARGO_HOME/bin only says so, without ERROR or WARNING', function()
    require('promptforge').setup({})
    local real = require('promptforge.config')
    local checkout = real.checkout
    local empty_root = scratch_repo()
    real.checkout = function() return empty_root end -- a checkout with nothing built
    local cargo_home = vim.fn.tempname()
    vim.fn.mkdir(cargo_home .. '/bin', 'p')
    vim.uv.fs_symlink(H.bin, cargo_home .. '/bin/promptforge')
    env({ cargo_home = cargo_home })
    local text = health_text()
    restore()
    real.checkout = checkout
    assert(not text:find('ERROR', 1, true) and not text:find('WARNING', 1, true), text)
    assert(text:find('OK server binary ' .. vim.pesc(cargo_home .. '/bin/promptforge')
      .. ' %(found in %$CARGO_HOME/bin, where cargo install puts it%): promptforge %d'), text)
    assert(text:find('looked up before it, not there: on PATH, ' .. vim.pesc(empty_root .. '/target/release/promptforge'),
      1), text)
  end },

  { ':checkhealth without a binary: an ERROR naming where it looked and the install commands', function()
    require('promptforge').setup({})
    local real = require('promptforge.config')
    local checkout = real.checkout
    local empty_root = scratch_repo()
    real.checkout = function() return empty_root end -- a checkout with nothing built
    local cargo_home = vim.fn.tempname()
    env({ cargo_home = cargo_home })
    local text = health_text()
    restore()
    real.checkout = checkout
    assert(text:find('ERROR server binary `promptforge` not found: looked on PATH, '
      .. vim.pesc(empty_root .. '/target/release/promptforge, ' .. empty_root .. '/target/dist/promptforge, '
        .. cargo_home .. '/bin/promptforge')), text)
    assert(text:find(("cd '%s' && cargo install --locked --profile dist --path server/cli"):format(empty_root), 1, true),
      text)
    assert(text:find(':PromptForgeInstallBinary runs it in the background', 1, true), text)
    assert(text:find("build = ':PromptForgeInstallBinary'", 1, true), text)
    assert(text:find(':Lazy build promptforge', 1, true), text)
  end },

  { ':checkhealth with an explicit cmd that is not executable: an ERROR saying it was set explicitly', function()
    require('promptforge').setup({ cmd = { '/nonexistent/promptforge', 'lsp' } })
    local text = health_text()
    assert(text:find('ERROR server command `/nonexistent/promptforge` not executable: set explicitly: '
      .. 'setup({ cmd = ... })', 1, true), text)
    assert(text:find('cargo install --locked --profile dist --path server/cli', 1, true), text)
  end },

  { ':PromptForgeInstallBinary in the background: cargo install in the checkout, then the open prompt gets its server',
    function()
      local log = vim.fn.tempname()
      without_binary(function(notes, root)
        require('promptforge').setup({})
        local dir = H.scratch({ ['p.md'] = H.prompt("return 'installed'") })
        vim.cmd.edit(dir .. '/p.md')
        local buf = vim.api.nvim_get_current_buf()
        H.eq(0, #vim.lsp.get_clients({ bufnr = buf }), 'clients before the install')
        assert(note_with(notes, 'binary was not found'), vim.inspect(notes))
        assert(vim.fn.exists(':PromptForgeInstallBinary') == 2, 'the command')
        H.eq(true, require('promptforge.install').install({ wait = false }), 'started')
        assert(note_with(notes, ("installing the binary: cd '%s' && cargo install --locked --profile dist --path "
          .. 'server/cli'):format(root)), vim.inspect(notes))
        local done = H.wait('the install', function() return note_with(notes, 'installed the binary: ') end)
        assert(done[1]:find(vim.env.CARGO_HOME .. '/bin/promptforge', 1, true), done[1])
        H.eq({ root, 'install --locked --profile dist --path server/cli' }, vim.fn.readfile(log), 'cargo: where, how')
        H.wait('the server on the prompt opened before', function()
          local c = vim.lsp.get_clients({ bufnr = buf, name = 'promptforge' })[1]
          return c and c.initialized
        end)
        vim.cmd('PromptForgeRun')
        H.wait_output(buf, 'Result:\ninstalled')
        assert(table.concat(vim.fn.readfile(require('promptforge.install').log_file()), '\n')
          :find('Compiling promptforge', 1, true), 'the log')
        for _, client in ipairs(vim.lsp.get_clients()) do
          vim.lsp.stop_client(client.id)
        end
        H.wait('the servers to stop', function() return #vim.lsp.get_clients() == 0 end)
      end, fake_cargo(log))
    end },

  { ':PromptForgeInstallBinary that fails: an error with the end of cargo\'s output and the log', function()
    without_binary(function(notes)
      H.eq(true, require('promptforge.install').install({ wait = false }), 'started')
      local failed = H.wait('the failure', function() return note_with(notes, 'installing the binary failed') end)
      H.eq(vim.log.levels.ERROR, failed[2], 'level')
      assert(failed[1]:find('cargo exited 101', 1, true) and failed[1]:find('could not compile', 1, true)
        and failed[1]:find(require('promptforge.install').log_file(), 1, true), failed[1])
    end, fake_cargo(vim.fn.tempname(), true))
  end },

  { ':PromptForgeInstallBinary without cargo, or outside a checkout: an error saying what to do', function()
    without_binary(function(notes)
      H.eq(false, require('promptforge.install').install({ wait = false }), 'not started')
      local note = note_with(notes, 'cargo is not on PATH')
      assert(note and note[1]:find('rustup', 1, true), vim.inspect(notes))
    end)
    without_binary(function(notes)
      require('promptforge.config').checkout = function() return nil, '/somewhere' end
      H.eq(false, require('promptforge.install').install({ wait = false }), 'not started')
      assert(note_with(notes, '/somewhere is not a PromptForge repository'), vim.inspect(notes))
    end, fake_cargo(vim.fn.tempname()))
  end },

  { 'a prompt opened without a binary: one error pointing at :checkhealth, no server; installed, it starts', function()
    local real = require('promptforge.config')
    local checkout = real.checkout
    local empty_root = scratch_repo()
    real.checkout = function() return empty_root end -- a checkout with nothing built
    local cargo_home = vim.fn.tempname()
    env({ cargo_home = cargo_home })
    local notes = {}
    local notify = vim.notify
    vim.notify = function(msg, level) table.insert(notes, { msg, level }) end
    real.told_missing = false
    require('promptforge').setup({})
    local dir = H.scratch({ ['a.md'] = H.prompt("return 'a'"), ['b.md'] = H.prompt("return 'b'") })
    local ok, err = pcall(function()
      vim.cmd.edit(dir .. '/a.md')
      vim.cmd.edit(dir .. '/b.md')
      H.eq(0, #vim.lsp.get_clients({ name = 'promptforge' }), 'clients')
      H.eq(1, #notes, 'notifications: ' .. vim.inspect(notes))
      H.eq(vim.log.levels.ERROR, notes[1][2], 'level')
      assert(notes[1][1]:find('`promptforge` binary was not found', 1, true)
        and notes[1][1]:find(':PromptForgeInstallBinary', 1, true)
        and notes[1][1]:find(':checkhealth promptforge', 1, true), notes[1][1])
      -- `cargo install` puts it in $CARGO_HOME/bin (not on PATH): the next prompt starts the server.
      vim.fn.mkdir(cargo_home .. '/bin', 'p')
      vim.uv.fs_symlink(H.bin, cargo_home .. '/bin/promptforge')
      vim.cmd('bwipeout!')
      local buf, client = H.open(dir .. '/b.md')
      H.eq(cargo_home .. '/bin/promptforge', client.config.cmd[1], 'the server command')
      vim.cmd('PromptForgeRun')
      H.wait_output(buf, 'Result:\nb')
    end)
    vim.notify = notify
    restore()
    real.checkout = checkout
    if not ok then error(err, 0) end
  end },
})
