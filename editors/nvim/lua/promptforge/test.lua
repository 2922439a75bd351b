-- `:PromptForgeTest [PATH...]`: runs `promptforge test --format json` in the
-- background (vim.system; the UI never waits), then puts every failure in the
-- quickfix list (titled M.TITLE, opened when something failed), sets them as
-- diagnostics (namespace `promptforge.test`) on each test file until the next
-- run, and says the closing line (`N passed, N failed`) with vim.notify.
--
-- Without a path: the current test file; in a prompt, the test file beside it
-- (`summarize.md` -> `summarize.test.yaml`, as the server's `Run tests` lens);
-- anywhere else the current directory (every `*.test.yaml` below it). The
-- binary is the language server's (config.subcommand), with `--trust` when
-- Neovim's trust database trusts every promptforge.toml the run reads.
--
-- The report's shape is `promptforge test --format json`'s (testing.md):
-- `files[]` with `file`, `problems` (check's JSON problems) and `cases[]`,
-- each with `name`, `status` and `failures[]` (`what`, `message`, `line`,
-- `column` in characters, `text`); `passed`, `failed`, `skipped`; `errors[]`
-- (`path`, `message`) for paths it could not use, and `error` (`kind`,
-- `message`) when it refused to run at all.
local config = require('promptforge.config')
local trust = require('promptforge.trust')

local M = {}

M.TITLE = 'PromptForge tests'
M.namespace = vim.api.nvim_create_namespace('promptforge.test')

-- Folders a walk of the CLI never enters (besides hidden ones), so the
-- promptforge.toml files there are not asked about either.
local SKIPPED = { target = true, node_modules = true }

-- Flags of `promptforge test` whose next word is their value, not a path.
local TAKES_VALUE = { ['--filter'] = true, ['--shard'] = true, ['--config'] = true }

-- The run going on: { id, process } (a new run stops it).
local current = nil
local generation = 0

local function notify(msg, level)
  vim.notify('PromptForge: ' .. msg, level or vim.log.levels.INFO)
end

local function absolute(path)
  return vim.fs.normalize(vim.fn.fnamemodify(path, ':p'))
end

-- `path` (as given to the binary, or as it printed it) from the folder `cwd`.
function M.resolve(path, cwd)
  if path:sub(1, 1) == '/' or path:match('^%a:[/\\]') then
    return vim.fs.normalize(path)
  end
  return vim.fs.normalize(cwd .. '/' .. path)
end

-- The paths a run without arguments tests for `buf`, or nil and why none.
function M.default_paths(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  local kind = name ~= '' and config.kind(buf) or nil
  if kind == 'test' then
    return { absolute(name) }
  elseif kind == 'prompt' then
    local path = absolute(name)
    local beside = path:gsub('%.md$', '') .. '.test.yaml'
    if not vim.uv.fs_stat(beside) then
      return nil, ('%s has no test file beside it (%s)'):format(vim.fn.fnamemodify(path, ':~:.'),
        vim.fn.fnamemodify(beside, ':t'))
    end
    return { beside }
  end
  return { '.' }
end

-- The promptforge.toml files a run of `paths` (from `cwd`) reads: the nearest
-- upward from each path, and for a folder every one below it (hidden folders,
-- target and node_modules skipped, as the CLI's walk skips them).
function M.config_files(paths, cwd)
  local seen, files = {}, {}
  local function add(file)
    if file and not seen[file] then
      seen[file] = true
      table.insert(files, file)
    end
  end
  for _, path in ipairs(paths) do
    local full = M.resolve(path, cwd)
    local stat = vim.uv.fs_stat(full)
    local is_dir = stat and stat.type == 'directory'
    add(trust.config_file(is_dir and full or vim.fs.dirname(full)))
    if is_dir then
      local skip = function(dir)
        local base = vim.fs.basename(dir)
        return base:sub(1, 1) ~= '.' and not SKIPPED[base]
      end
      for rel, type in vim.fs.dir(full, { depth = 32, skip = skip }) do
        if type == 'file' and vim.fs.basename(rel) == 'promptforge.toml' then
          add(vim.fs.normalize(full .. '/' .. rel))
        end
      end
    end
  end
  return files
end

-- The command line's arguments, `%` and `~` expanded in paths (not in the
-- values of --filter, --shard, --config), and which of them are paths.
function M.split_args(fargs)
  local args, paths = {}, {}
  local value_next = false
  for _, arg in ipairs(fargs or {}) do
    if value_next then
      table.insert(args, arg)
      value_next = false
    elseif arg:sub(1, 1) == '-' then
      table.insert(args, arg)
      value_next = TAKES_VALUE[arg] == true
    else
      local path = vim.fn.expand(arg)
      path = path ~= '' and path or arg
      table.insert(args, path)
      table.insert(paths, path)
    end
  end
  return args, paths
end

-- The report in `stdout`, or nil and why it is not one.
function M.parse(stdout)
  local ok, report = pcall(vim.json.decode, stdout or '', { luanil = { object = true, array = true } })
  if not ok then
    return nil, 'its output is not JSON'
  end
  if type(report) ~= 'table' or type(report.files) ~= 'table' or type(report.passed) ~= 'number'
    or type(report.failed) ~= 'number' then
    return nil, 'its output is not a test report'
  end
  return report
end

-- The command that tests `paths` (from `cwd`), with the words `args` (the
-- paths among them): the server's binary with `test --format json -q`, and
-- `--trust` when Neovim's trust database trusts every promptforge.toml the
-- run reads (it may ask about one it has no answer for, as opening a prompt
-- does).
function M.command(args, paths, cwd)
  local configs = M.config_files(paths, cwd)
  local trusted = #configs > 0
  for _, file in ipairs(configs) do
    trusted = trust.trusted_file(file) and trusted
  end
  local cmd = config.subcommand('test', trusted)
  vim.list_extend(cmd, { '--format', 'json', '-q' })
  return vim.list_extend(cmd, args)
end

-- The 0-based byte column of the 1-based character `column` on the 1-based
-- `line` of the file at `path` (its buffer's text when it is loaded).
local function byte_column(path, line, column)
  if type(line) ~= 'number' or type(column) ~= 'number' or column <= 1 then
    return 0
  end
  local text
  local buf = vim.fn.bufnr(path)
  if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
    text = vim.api.nvim_buf_get_lines(buf, line - 1, line, false)[1]
  else
    local ok, lines = pcall(vim.fn.readfile, path, '', line)
    text = ok and lines[line] or nil
  end
  if not text then
    return column - 1
  end
  local ok, byte = pcall(vim.str_byteindex, text, 'utf-32', column - 1, false)
  if not ok then
    ok, byte = pcall(vim.str_byteindex, text, column - 1) -- Neovim 0.10
  end
  return ok and byte or (column - 1)
end

local SEVERITY = {
  error = vim.diagnostic.severity.ERROR,
  warning = vim.diagnostic.severity.WARN,
  information = vim.diagnostic.severity.INFO,
  hint = vim.diagnostic.severity.HINT,
}
local QF_TYPE = {
  [vim.diagnostic.severity.ERROR] = 'E',
  [vim.diagnostic.severity.WARN] = 'W',
  [vim.diagnostic.severity.INFO] = 'I',
  [vim.diagnostic.severity.HINT] = 'N',
}

local function first_line(text)
  return (tostring(text):gsub('\n.*', ''))
end

-- What the report says went wrong, in file order: { path (absolute), line
-- (1-based), col (0-based bytes), severity, text (one line, for the
-- quickfix list), message (the whole rendering, for the diagnostic), case }.
-- Paths are relative to `cwd`, where the binary ran.
function M.findings(report, cwd)
  local found = {}
  for _, file in ipairs(report.files) do
    local test_path = M.resolve(tostring(file.file or ''), cwd)
    for _, problem in ipairs(file.problems or {}) do
      local path = M.resolve(tostring(problem.path or file.file or ''), cwd)
      local line = type(problem.line) == 'number' and problem.line or 1
      local severity = SEVERITY[problem.severity] or vim.diagnostic.severity.ERROR
      local text = ('%s: %s'):format(problem.code or 'problem', problem.message or '')
      table.insert(found, {
        path = path,
        line = line,
        col = byte_column(path, line, problem.column),
        severity = severity,
        text = first_line(text),
        message = text,
        code = problem.code,
      })
    end
    for _, case in ipairs(file.cases or {}) do
      for _, failure in ipairs(case.failures or {}) do
        local line = type(failure.line) == 'number' and failure.line or 1
        table.insert(found, {
          path = test_path,
          line = line,
          col = byte_column(test_path, line, failure.column),
          severity = vim.diagnostic.severity.ERROR,
          text = first_line(('%s: %s: %s'):format(case.name or '', failure.what or '', failure.message or '')),
          message = ('%s: %s'):format(case.name or '', failure.text or failure.message or ''),
          code = failure.what,
          case = case.name,
        })
      end
    end
  end
  return found
end

-- The closing line, as the text format prints it.
function M.summary(report)
  local line = ('%d passed, %d failed'):format(report.passed, report.failed)
  if type(report.skipped) == 'number' and report.skipped > 0 then
    line = line .. (', %d skipped'):format(report.skipped)
  end
  return line
end

-- Clears what the last run showed: the diagnostics of every buffer.
function M.clear()
  vim.diagnostic.reset(M.namespace)
end

-- Shows `found`: the quickfix list (replacing the last run's list when it is
-- still the current one, else a new list), opened when it has entries; the
-- diagnostics per test file.
local function show(found)
  local items, by_buf = {}, {}
  for _, f in ipairs(found) do
    table.insert(items, {
      filename = f.path,
      lnum = f.line,
      col = f.col + 1,
      text = f.text,
      type = QF_TYPE[f.severity],
    })
    local buf = vim.fn.bufadd(f.path)
    by_buf[buf] = by_buf[buf] or {}
    table.insert(by_buf[buf], {
      lnum = f.line - 1,
      col = f.col,
      severity = f.severity,
      message = f.message,
      source = 'promptforge test',
      code = f.code,
    })
  end
  local action = vim.fn.getqflist({ title = 0 }).title == M.TITLE and 'r' or ' '
  vim.fn.setqflist({}, action, { title = M.TITLE, items = items })
  for buf, diagnostics in pairs(by_buf) do
    vim.diagnostic.set(M.namespace, buf, diagnostics)
  end
  if #items > 0 then
    vim.cmd('botright copen')
  end
end

-- What the run printed on stderr, trimmed (the progress bar is off: -q).
local function said(stderr)
  return vim.trim(stderr or '')
end

-- Handles the end of the run `id`.
local function finished(id, cwd, result)
  if not current or current.id ~= id then
    return -- a later run replaced it
  end
  current = nil
  local report, why = M.parse(result.stdout)
  local stderr = said(result.stderr)
  if not report then
    local detail = stderr ~= '' and stderr or ('exit status ' .. tostring(result.code))
    notify(('`promptforge test` gave no report (%s): %s'):format(why, detail), vim.log.levels.ERROR)
    return
  end
  local found = M.findings(report, cwd)
  show(found)
  -- The binary's own `promptforge: ...` lines: the report's `errors` (paths it
  -- could not use) and `error` (why nothing ran), and anything on stderr.
  local lines = {}
  for _, e in ipairs(type(report.errors) == 'table' and report.errors or {}) do
    table.insert(lines, ('promptforge: %s: %s'):format(e.path, e.message))
  end
  if type(report.error) == 'table' and type(report.error.message) == 'string' then
    table.insert(lines, 'promptforge: ' .. report.error.message)
  end
  if stderr ~= '' then
    table.insert(lines, stderr)
  end
  if #lines > 0 then
    vim.notify(table.concat(lines, '\n'), vim.log.levels.ERROR)
  end
  notify(M.summary(report), (report.failed > 0 or result.code ~= 0) and vim.log.levels.WARN or vim.log.levels.INFO)
  vim.api.nvim_exec_autocmds('User', { pattern = 'PromptForgeTestDone', modeline = false,
    data = { report = report, code = result.code } })
end

-- True when `file` is one of `paths` or below one of them (all absolute).
local function tested(file, paths)
  for _, path in ipairs(paths) do
    if file == path or vim.startswith(file, path:gsub('/$', '') .. '/') then
      return true
    end
  end
  return false
end

-- The binary reads the files: the modified buffers of the prompts and test
-- files the run tests (and a tested test file's prompt beside it) are written
-- first, as :PromptForgeDebug writes its prompt.
local function save_modified(paths, cwd)
  local full = {}
  for _, path in ipairs(paths) do
    local abs = M.resolve(path, cwd)
    table.insert(full, abs)
    if abs:match('%.test%.yaml$') then
      table.insert(full, (abs:gsub('%.test%.yaml$', '.md')))
    end
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if name ~= '' and vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified and vim.bo[buf].buftype == ''
      and tested(vim.fs.normalize(name), full) and config.kind(buf) ~= nil then
      local ok, err = pcall(vim.api.nvim_buf_call, buf, function() vim.cmd('silent update') end)
      if not ok then
        notify(('could not save %s before testing (%s): the saved text is tested'):format(
          vim.fn.fnamemodify(name, ':~:.'), err), vim.log.levels.WARN)
      end
    end
  end
end

-- True while a run goes on.
function M.running()
  return current ~= nil
end

-- `:PromptForgeTest` with the command line's words `fargs`, for `buf`.
function M.run(fargs, buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local args, paths = M.split_args(fargs)
  if #paths == 0 then
    local defaults, why = M.default_paths(buf)
    if not defaults then
      notify(why, vim.log.levels.ERROR)
      return
    end
    paths = defaults
    vim.list_extend(args, defaults)
  end
  local cwd = vim.fn.getcwd()
  local cmd = M.command(args, paths, cwd)

  save_modified(paths, cwd)
  if current then
    pcall(current.process.kill, current.process, 15)
    current = nil
  end
  M.clear()
  generation = generation + 1
  local id = generation
  local ok, process = pcall(vim.system, cmd, { cwd = cwd, text = true }, function(result)
    vim.schedule(function() finished(id, cwd, result) end)
  end)
  if not ok then
    notify(('cannot run %s: %s. :checkhealth promptforge says where the binary is looked for.'):format(
      tostring(cmd[1]), first_line(process)), vim.log.levels.ERROR)
    return
  end
  current = { id = id, process = process }
  notify('testing ' .. table.concat(vim.tbl_map(function(p) return vim.fn.fnamemodify(p, ':~:.') end, paths), ' '))
end

return M
