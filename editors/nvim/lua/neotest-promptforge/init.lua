-- A neotest (https://github.com/nvim-neotest/neotest) adapter for prompt tests:
--
--   require('neotest').setup({ adapters = { require('neotest-promptforge') } })
--
-- Test files are `*.test.yaml`; their cases are read from the file
-- (neotest-promptforge.cases) as neotest positions `PATH::NAME`. A run is
-- `promptforge test --format json -q` (the binary and `--trust` as
-- :PromptForgeTest finds them) on the file or folder, and on one case with
-- `--filter NAME` (which also runs the cases whose names contain NAME; their
-- results are reported too). Each failure becomes an error at its line of the
-- test file (neotest shows them as diagnostics); a test file with errors of
-- its own fails as a whole.
local cases = require('neotest-promptforge.cases')
local pftest = require('promptforge.test')

local adapter = { name = 'neotest-promptforge' }

-- Folders never searched for test files (besides hidden ones), as the CLI's walk.
local SKIPPED = { target = true, node_modules = true }

-- The project root of `dir`: the nearest folder with a promptforge.toml or a
-- .git, upward.
function adapter.root(dir)
  return vim.fs.root(dir, { 'promptforge.toml', '.git' })
end

function adapter.filter_dir(name)
  return name:sub(1, 1) ~= '.' and not SKIPPED[name]
end

-- True for a `*.test.yaml` file (a name with something before the suffix).
function adapter.is_test_file(file_path)
  local name = vim.fs.basename(file_path or '')
  return name:match('.%.test%.yaml$') ~= nil
end

-- The file's tree: the file, and each case whose name could be read.
function adapter.discover_positions(file_path)
  local lib = require('neotest.lib')
  local ok, text = pcall(lib.files.read, file_path)
  if not ok then
    return nil
  end
  local lines = vim.split(text, '\n', { plain = true })
  local positions = {
    { type = 'file', path = file_path, name = vim.fs.basename(file_path), range = { 0, 0, #lines, 0 } },
  }
  for _, case in ipairs(cases.read(lines)) do
    table.insert(positions, { type = 'test', path = file_path, name = case.name, range = case.range })
  end
  return lib.positions.parse_tree(positions)
end

-- The command for a position: its file or folder, with --filter for a case.
function adapter.build_spec(args)
  local position = args.tree:data()
  if position.type == 'namespace' then
    return nil
  end
  local cwd = vim.fn.getcwd()
  local words = vim.list_extend({}, args.extra_args or {})
  if position.type == 'test' then
    table.insert(words, '--filter=' .. position.name)
  end
  table.insert(words, position.path)
  local command = pftest.command(words, { position.path }, cwd)
  return { command = command, cwd = cwd }
end

-- The report in a run's output: the binary's JSON, which comes last (its
-- stderr lines, on the same terminal, come before it; a terminal ends lines
-- with \r\n, which is JSON's whitespace too).
function adapter.report_of(output)
  local start = output:find('\n{%s*\n') or (output:sub(1, 1) == '{' and 0 or nil)
  if not start then
    return nil, 'its output holds no report'
  end
  return pftest.parse(output:sub(start + 1))
end

local STATUS = { ok = 'passed', failed = 'failed', skipped = 'skipped' }

-- neotest's results: one per case reported (`PATH::NAME`); a test file with
-- errors of its own fails with them; output that is no report fails the
-- position run, saying why.
function adapter.results(spec, result, tree)
  local lib = require('neotest.lib')
  local ok, output = pcall(lib.files.read, result.output)
  output = ok and output or ''
  local report, why = adapter.report_of(output)
  if not report then
    local short = ('promptforge test gave no report (%s), exit status %s:\n%s'):format(why, tostring(result.code),
      vim.trim(output))
    local failed = {}
    for _, node in tree:iter_nodes() do
      failed[node:data().id] = { status = 'failed', output = result.output, short = short }
    end
    return failed
  end
  local results = {}
  local cwd = spec.cwd or vim.uv.cwd()
  for _, file in ipairs(report.files) do
    local path = pftest.resolve(tostring(file.file or ''), cwd)
    local problems = {}
    for _, problem in ipairs(file.problems or {}) do
      if problem.severity == 'error' then
        table.insert(problems, {
          message = ('%s: %s'):format(problem.code or 'problem', problem.message or ''),
          line = type(problem.line) == 'number' and problem.line - 1 or 0,
        })
      end
    end
    if #problems > 0 then
      results[path] = { status = 'failed', output = result.output, errors = problems,
        short = table.concat(vim.tbl_map(function(e) return e.message end, problems), '\n') }
    end
    for _, case in ipairs(file.cases or {}) do
      local errors, texts = {}, {}
      for _, failure in ipairs(case.failures or {}) do
        table.insert(errors, { message = failure.text or failure.message, line = (failure.line or 1) - 1 })
        table.insert(texts, ('%d:%d: %s'):format(failure.line or 0, failure.column or 0, failure.text or ''))
      end
      local status = STATUS[case.status] or 'failed'
      results[path .. '::' .. case.name] = {
        status = status,
        output = result.output,
        errors = #errors > 0 and errors or nil,
        short = ('%s %s%s'):format(status == 'passed' and 'ok' or status:upper(), case.name,
          #texts > 0 and ('\n' .. table.concat(texts, '\n')) or ''),
      }
    end
  end
  return results
end

return adapter
