-- The neotest adapter (lua/neotest-promptforge).
--
-- Always: test files, the cases read from a test file (names plain, quoted,
-- on the item's line or below it, a flow list left out), the report found in a
-- terminal's output.
--
-- Then with the real neotest when $PF_NEOTEST and $PF_NVIM_NIO name checkouts
-- of neotest and nvim-nio (put on 'runtimepath' here), else those cases are
-- skipped: the file's cases discovered as positions, a run of the file with
-- one passing and one failing case (statuses, the failure's error at its line,
-- neotest's diagnostic there), a run of one case, and a test file with errors
-- of its own.
local H = require('helpers')
local adapter = require('neotest-promptforge')
local cases = require('neotest-promptforge.cases')

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

local PROMPT = '---\nname: p\ndescription: d\npromptforge: 0\n---\n\n# T\n\n## Go\n\n```lua\n'
  .. 'log("é")\nreturn "héllo " .. args\n```\n'
local TESTS = table.concat({
  'cases:',
  '  - name: greets',
  '    args: "wörld"',
  '    expect:',
  '      result: "héllo wörld"',
  '  - name: greets wrongly',
  '    args: "wörld"',
  '    expect: { log_contains: ["é"], result: "héllo wörld!" }',
  '',
}, '\n')

H.setup()
local dir = H.scratch({
  ['p.md'] = PROMPT,
  ['p.test.yaml'] = TESTS,
  ['broken.test.yaml'] = 'prompt: missing.md\ncases:\n  - name: never runs\n    args: x\n',
})
local tests_path = vim.fs.normalize(dir .. '/p.test.yaml')

local neotest_dir = vim.env.PF_NEOTEST ~= '' and vim.env.PF_NEOTEST or nil
local nio_dir = vim.env.PF_NVIM_NIO ~= '' and vim.env.PF_NVIM_NIO or nil
local neotest
local client
local runs = {} -- each results event: { results, partial }

-- neotest for a case (skipped without PF_NEOTEST and PF_NVIM_NIO), set up once
-- with this adapter and a consumer that records the results.
local function need_neotest()
  if not (neotest_dir and nio_dir) then
    H.skip('PF_NEOTEST and PF_NVIM_NIO not both set')
  end
  if not neotest then
    assert(vim.uv.fs_stat(neotest_dir .. '/lua/neotest/init.lua'), 'PF_NEOTEST=' .. neotest_dir .. ' holds no neotest')
    assert(vim.uv.fs_stat(nio_dir .. '/lua/nio/init.lua'), 'PF_NVIM_NIO=' .. nio_dir .. ' holds no nvim-nio')
    vim.opt.runtimepath:prepend(nio_dir)
    vim.opt.runtimepath:prepend(neotest_dir)
    -- The scratch folder is the project neotest discovers (not the repository).
    vim.cmd.cd(vim.fn.fnameescape(dir))
    neotest = require('neotest')
    neotest.setup({
      adapters = { adapter },
      log_level = vim.log.levels.WARN,
      consumers = {
        recorder = function(c)
          client = c
          c.listeners.results = function(_, results, partial)
            table.insert(runs, { results = results, partial = partial })
          end
          return {}
        end,
      },
    })
  end
  return neotest
end

-- The position `id` as neotest's client knows it (nil before its discovery):
-- the client's methods are asynchronous, so it is asked in a nio task.
local function position(id)
  local done, value = false, nil
  require('nio').run(function() return client:get_position(id) end, function(ok, result)
    done, value = true, ok and result or nil
  end)
  H.wait("neotest's answer about " .. id, function() return done end)
  return value
end

-- Waits until neotest has discovered the file `path`; returns its tree.
local function discovered(path)
  return H.wait('neotest discovering ' .. path, function() return position(path) end, 30000)
end

-- Waits for the results of a run started after `from` runs were seen that
-- hold `id`; returns them.
local function wait_results(from, id)
  return H.wait('neotest results for ' .. id, function()
    for i = from + 1, #runs do
      if not runs[i].partial and runs[i].results[id] then
        return runs[i].results
      end
    end
  end, 30000)
end

H.run('neotest', {
  { 'test files are *.test.yaml', function()
    assert(adapter.is_test_file('/a/p.test.yaml'))
    assert(not adapter.is_test_file('/a/.test.yaml'))
    assert(not adapter.is_test_file('/a/p.md'))
    assert(not adapter.is_test_file('/a/p.test.yml'))
    assert(adapter.filter_dir('examples') and not adapter.filter_dir('.git') and not adapter.filter_dir('target'))
  end },

  { 'the cases are read with their names and lines', function()
    local lines = vim.split(TESTS, '\n', { plain = true })
    H.eq({
      { name = 'greets', range = { 1, 4, 4, 29 } },
      { name = 'greets wrongly', range = { 5, 4, 7, 62 } },
    }, cases.read(lines), 'word cases')
    local other = {
      'prompt: x.md # the prompt',
      'cases: # two',
      "- name: 'it''s'   # quoted",
      '  args: x',
      '-',
      '  args: y',
      '  name: "q\\"uote"',
      '',
      '# the end',
      'seed: 3',
    }
    H.eq({ "it's", 'q"uote' }, vim.tbl_map(function(c) return c.name end, cases.read(other)), 'names')
    H.eq({ 4, 0, 6, 17 }, cases.read(other)[2].range, 'range of a case under a lone -')
    H.eq({}, cases.read({ 'cases: [ { name: a } ]' }), 'a flow list')
    H.eq('plain', cases.scalar('plain # comment'), 'plain scalar')
    H.eq(nil, cases.scalar('|'), 'block scalar')
  end },

  { 'the report is the JSON after what the terminal showed first', function()
    local report = adapter.report_of('promptforge: x: no such file\r\n{\r\n  "files": [],\r\n  "passed": 0,\r\n'
      .. '  "failed": 0,\r\n  "skipped": 0\r\n}\r\n')
    H.eq({ files = {}, passed = 0, failed = 0, skipped = 0 }, report, 'report')
    local none, why = adapter.report_of('error: unexpected argument\r\n')
    H.eq(nil, none, 'no report')
    H.eq('its output holds no report', why, 'why')
  end },

  { 'neotest discovers the cases and runs the file', function()
    local nt = need_neotest()
    vim.cmd.edit(vim.fn.fnameescape(tests_path))
    local buf = vim.api.nvim_get_current_buf()
    local tree = discovered(tests_path)
    local names = {}
    for _, pos in tree:iter() do
      table.insert(names, pos.type .. ' ' .. pos.name)
    end
    H.eq({ 'file p.test.yaml', 'test greets', 'test greets wrongly' }, names, 'positions')

    local from = #runs
    nt.run.run(tests_path)
    local results = wait_results(from, tests_path .. '::greets wrongly')
    H.eq('passed', results[tests_path .. '::greets'].status, 'greets')
    local failed = results[tests_path .. '::greets wrongly']
    H.eq('failed', failed.status, 'greets wrongly')
    H.eq(7, failed.errors[1].line, 'line of the failure (0-based)')
    assert(failed.errors[1].message:find('expect.result: the result differs\n  expected: "héllo wörld!"', 1, true),
      failed.errors[1].message)
    -- neotest's diagnostic consumer puts it on the test file.
    local diags = H.wait('neotest diagnostics', function()
      local found = vim.diagnostic.get(buf, { namespace = vim.api.nvim_create_namespace('neotest') })
      return #found > 0 and found
    end)
    H.eq(7, diags[1].lnum, 'diagnostic line')
  end },

  { 'neotest runs one case (with --filter: the cases whose names contain its name)', function()
    local nt = need_neotest()
    local from = #runs
    nt.run.run(tests_path .. '::greets wrongly')
    local results = wait_results(from, tests_path .. '::greets wrongly')
    H.eq('failed', results[tests_path .. '::greets wrongly'].status, 'greets wrongly')
    H.eq(nil, results[tests_path .. '::greets'], 'the other case ran')
    from = #runs
    nt.run.run(tests_path .. '::greets')
    results = wait_results(from, tests_path .. '::greets')
    H.eq('passed', results[tests_path .. '::greets'].status, 'greets')
    H.eq('failed', results[tests_path .. '::greets wrongly'].status, 'greets wrongly, whose name contains greets')
  end },

  { 'a test file with errors of its own fails as a whole', function()
    local nt = need_neotest()
    local broken = vim.fs.normalize(dir .. '/broken.test.yaml')
    vim.cmd.edit(vim.fn.fnameescape(broken))
    discovered(broken)
    local from = #runs
    nt.run.run(broken)
    local results = wait_results(from, broken)
    H.eq('failed', results[broken].status, 'the file')
    assert(results[broken].errors[1].message:find('missing.md', 1, true), vim.inspect(results[broken]))
  end },
})
