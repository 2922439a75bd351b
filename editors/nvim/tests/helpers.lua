-- What the headless tests share: the server binary, scratch workspaces, waiting
-- on conditions (never fixed sleeps) and the runner that sets the exit code.
local H = {}

H.tests = vim.fs.dirname(vim.fs.normalize(debug.getinfo(1, 'S').source:sub(2)))
H.plugin = vim.fs.dirname(H.tests)
H.repo = vim.fs.normalize(H.plugin .. '/../..')
H.bin = vim.fn.fnamemodify(vim.env.PROMPTFORGE_BIN or (H.repo .. '/target/release/promptforge'), ':p')
H.timeout = 20000

-- A prompt with this Lua in its one section `## Go`.
function H.prompt(lua, frontmatter)
  return ('---\nname: p\ndescription: d\npromptforge: 0\n%s---\n\n# T\n\n## Go\n\n```lua\n%s\n```\n'):format(frontmatter or '', lua)
end

-- Records the user's answer about `path` in Neovim's trust database, as they
-- would give it: 'allow' is `:trust` in a buffer holding the file, 'deny' is
-- `:trust ++deny FILE`.
function H.trust(path, answer)
  if answer == 'allow' then
    local buf = vim.fn.bufadd(path)
    vim.fn.bufload(buf)
    vim.api.nvim_buf_call(buf, function() vim.cmd('trust') end)
    vim.api.nvim_buf_delete(buf, { force = true })
  else
    vim.cmd('trust ++deny ' .. vim.fn.fnameescape(path))
  end
end

-- A scratch folder holding `files` (name -> text) and a promptforge.toml
-- with a comment, which the user allowed (`:trust`) unless `opts.trust` is
-- false; `opts.config` false leaves the promptforge.toml out.
function H.scratch(files, opts)
  opts = opts or {}
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  if opts.config ~= false then
    files = vim.tbl_extend('keep', files or {}, { ['promptforge.toml'] = '# scratch\n' })
  end
  for name, text in pairs(files or {}) do
    vim.fn.writefile(vim.split(text, '\n', { plain = true }), dir .. '/' .. name, 'b')
  end
  if opts.config ~= false and opts.trust ~= false then
    H.trust(dir .. '/promptforge.toml', 'allow')
  end
  return dir
end

-- Waits until `cond()` is true, or fails naming `what`.
function H.wait(what, cond, ms)
  local last
  local ok = vim.wait(ms or H.timeout, function()
    local good, value = pcall(cond)
    last = value
    return good and value
  end, 20)
  if not ok then
    error('timed out waiting for ' .. what .. (last and (' (last: ' .. vim.inspect(last) .. ')') or ''), 2)
  end
  return last
end

function H.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(('%s: want %s, got %s'):format(what or 'value', vim.inspect(want), vim.inspect(got)), 2)
  end
end

function H.setup(opts)
  require('promptforge').setup(vim.tbl_extend('force', { cmd = { H.bin, 'lsp' } }, opts or {}))
end

-- Opens `path` and waits for the promptforge client to be attached and initialized.
function H.open(path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local client = H.wait('the promptforge client on ' .. path, function()
    local c = vim.lsp.get_clients({ bufnr = buf, name = 'promptforge' })[1]
    return c and c.initialized and c
  end)
  return buf, client
end

function H.text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

-- The output buffer of the document in `buf` (nil before its first run).
function H.output(buf)
  local name = 'promptforge://' .. vim.api.nvim_buf_get_name(buf) .. '.output'
  local out = vim.fn.bufnr(name)
  return out ~= -1 and out or nil
end

-- Waits until the output of `buf`'s document contains `needle` (plain text).
function H.wait_output(buf, needle)
  return H.wait(vim.inspect(needle) .. ' in the output', function()
    local out = H.output(buf)
    return out and H.text(out):find(needle, 1, true) ~= nil and H.text(out)
  end)
end

-- Runs the lens titled `title` on the cursor line (vim.lsp.codelens.run asks
-- with vim.ui.select when the line has several).
function H.run_lens(buf, row, title)
  H.wait('the lens ' .. title, function()
    for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
      if lens.command.title == title and lens.range.start.line == row then
        return true
      end
    end
  end)
  vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    for _, item in ipairs(items) do
      if opts.format_item(item) == title then
        return on_choice(item)
      end
    end
    error('no lens ' .. title .. ' offered')
  end
  local ok, err = pcall(vim.lsp.codelens.run)
  vim.ui.select = select
  if not ok then
    error(err, 0)
  end
end

function H.line_of(buf, pattern)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:find(pattern) then
      return i - 1, line
    end
  end
  error('no line matches ' .. pattern)
end

-- Ends the current case as skipped, saying why (H.run counts it apart).
local SKIP = {}
function H.skip(reason)
  error(setmetatable({ reason = reason }, SKIP), 0)
end

-- Runs the named cases in order, prints `ok`/`not ok`/`skip` for each and a
-- closing `N passed, N failed` (`, N skipped` when some were), and quits with
-- status 1 when one failed.
function H.run(name, cases)
  local passed, failed, skipped = 0, 0, 0
  for _, case in ipairs(cases) do
    local started = vim.uv.hrtime()
    local ok, err = xpcall(case[2], function(e)
      return getmetatable(e) == SKIP and e or debug.traceback(e, 2)
    end)
    local ms = (vim.uv.hrtime() - started) / 1e6
    if ok then
      passed = passed + 1
      io.stdout:write(('ok     %s: %s (%d ms)\n'):format(name, case[1], ms))
    elseif getmetatable(err) == SKIP then
      skipped = skipped + 1
      io.stdout:write(('skip   %s: %s: skipped: %s\n'):format(name, case[1], err.reason))
    else
      failed = failed + 1
      io.stdout:write(('not ok %s: %s (%d ms)\n  %s\n'):format(name, case[1], ms, tostring(err):gsub('\n', '\n  ')))
    end
  end
  io.stdout:write(('%s: %d passed, %d failed%s\n'):format(name, passed, failed,
    skipped > 0 and (', %d skipped'):format(skipped) or ''))
  io.stdout:flush()
  -- Stop the servers first so the exit is clean, then quit with the status.
  for _, client in ipairs(vim.lsp.get_clients()) do
    vim.lsp.stop_client(client.id)
  end
  vim.wait(5000, function() return #vim.lsp.get_clients() == 0 end, 20)
  vim.cmd((failed > 0 and 'cquit 1' or 'qall!'))
end

return H
