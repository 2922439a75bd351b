-- :PromptForgeTest: `promptforge test --format json` run in the background,
-- its failures in the quickfix list and as diagnostics on the test file (until
-- the next run), the closing line through vim.notify; a test file's own
-- problems; a test file not open; the default target in a test file, in its
-- prompt and elsewhere; paths and flags on the command line;
-- unsaved edits written first; bad output and a missing binary said plainly.
local H = require('helpers')
local pftest = require('promptforge.test')
local config = require('promptforge.config')

-- Every notification, as { msg, level } (kept from the screen: in a headless
-- Neovim an error message inside vim.cmd() would raise).
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

-- Waits for a notification after the first `from` that contains `needle`;
-- returns it.
local function wait_note(from, needle)
  return H.wait(vim.inspect(needle) .. ' notified', function()
    for i = from + 1, #notes do
      if notes[i].msg:find(needle, 1, true) then
        return notes[i]
      end
    end
  end)
end

-- Runs `command` and waits for the notification after it that contains `needle`.
local function run_until(command, needle)
  local from = #notes
  vim.cmd(command)
  return wait_note(from, needle)
end

local function test_diagnostics(buf)
  return vim.diagnostic.get(buf, { namespace = pftest.namespace })
end

-- The prompt logs `é` and greets; the first case passes, the second expects a
-- `!` that is not there. Its failure is at line 8, character 44 of the test
-- file, which is byte 45 (`é` is two bytes), after a non-ASCII character.
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
local dir = H.scratch({ ['p.md'] = PROMPT, ['p.test.yaml'] = TESTS, ['alone.md'] = H.prompt("return 'x'") })
local tests_path = vim.fs.normalize(dir .. '/p.test.yaml')

H.run('test', {
  { 'a failing case is in the quickfix list and a diagnostic of its test file', function()
    vim.cmd.edit(vim.fn.fnameescape(tests_path))
    local buf = vim.api.nvim_get_current_buf()
    local from = #notes
    local done = {}
    vim.api.nvim_create_autocmd('User', {
      pattern = 'PromptForgeTestDone',
      once = true,
      callback = function(ev) table.insert(done, ev.data) end,
    })
    vim.cmd('PromptForgeTest')
    -- The command returned before the run ended: the run is in the background.
    assert(pftest.running(), 'the run ended inside the command: it blocked')
    local note = wait_note(from, '1 passed, 1 failed')
    H.eq('PromptForge: 1 passed, 1 failed', note.msg, 'summary')
    H.eq(vim.log.levels.WARN, note.level, 'level of the summary')
    H.wait('User PromptForgeTestDone', function() return #done == 1 end)
    H.eq({ 1, 1, 1 }, { done[1].code, done[1].report.passed, done[1].report.failed }, 'its data')

    local qf = vim.fn.getqflist({ title = 0, items = 0 })
    H.eq(pftest.TITLE, qf.title, 'quickfix title')
    H.eq(1, #qf.items, 'quickfix entries')
    local item = qf.items[1]
    H.eq(tests_path, vim.fs.normalize(vim.api.nvim_buf_get_name(item.bufnr)), 'entry file')
    H.eq(8, item.lnum, 'entry line')
    H.eq(45, item.col, 'entry column (bytes, 1-based)')
    H.eq('greets wrongly: expect.result: the result differs', item.text, 'entry text')
    H.eq('E', item.type, 'entry type')
    -- Opened, since something failed.
    H.eq(1, vim.fn.getqflist({ winid = 0 }).winid ~= 0 and 1 or 0, 'quickfix window open')

    local diags = test_diagnostics(buf)
    H.eq(1, #diags, 'diagnostics on the test file')
    H.eq(7, diags[1].lnum, 'diagnostic line (0-based)')
    H.eq(44, diags[1].col, 'diagnostic column (0-based bytes)')
    H.eq(vim.diagnostic.severity.ERROR, diags[1].severity, 'diagnostic severity')
    H.eq('expect.result', diags[1].code, 'diagnostic code')
    assert(diags[1].message:find('greets wrongly: expect.result: the result differs\n  expected: "héllo wörld!"', 1, true),
      diags[1].message)
  end },

  { 'the next run clears them; unsaved edits of the test file are written first', function()
    local buf = vim.fn.bufnr(tests_path)
    vim.api.nvim_set_current_buf(buf)
    local row = H.line_of(buf, 'wörld!')
    vim.api.nvim_buf_set_lines(buf, row, row + 1, false, { '    expect: { log_contains: ["é"], result: "héllo wörld" }' })
    assert(vim.bo[buf].modified)
    local note = run_until('PromptForgeTest', '2 passed, 0 failed')
    H.eq(vim.log.levels.INFO, note.level, 'level of the summary')
    assert(not vim.bo[buf].modified, 'the test file was not written')
    H.eq({}, test_diagnostics(buf), 'diagnostics after a clean run')
    local qf = vim.fn.getqflist({ title = 0, items = 0, nr = 0, nr_last = '$' })
    H.eq(pftest.TITLE, qf.title, 'quickfix title')
    H.eq({}, qf.items, 'quickfix entries after a clean run')
    -- Put the failing case back for the next cases.
    vim.api.nvim_buf_set_lines(buf, row, row + 1, false, { '    expect: { log_contains: ["é"], result: "héllo wörld!" }' })
    vim.cmd('silent write')
  end },

  { 'from a prompt, its test file beside it runs; a prompt without one is told', function()
    vim.cmd.edit(vim.fn.fnameescape(dir .. '/p.md'))
    run_until('PromptForgeTest', '1 passed, 1 failed')
    H.eq(8, vim.fn.getqflist()[1].lnum, 'entry line')
    H.eq(1, #test_diagnostics(vim.fn.bufnr(tests_path)), 'diagnostics on the test file')

    vim.cmd.edit(vim.fn.fnameescape(dir .. '/alone.md'))
    local note = run_until('PromptForgeTest', 'has no test file beside it')
    H.eq(vim.log.levels.ERROR, note.level, 'level')
    assert(note.msg:find('(alone.test.yaml)', 1, true), note.msg)
  end },

  { 'paths and flags on the command line; elsewhere the current directory', function()
    vim.cmd.enew()
    run_until('PromptForgeTest ' .. vim.fn.fnameescape(dir) .. ' --filter greets\\ wrongly', '0 passed, 1 failed')
    H.eq(1, #vim.fn.getqflist(), 'quickfix entries')
    run_until('PromptForgeTest --filter nothing\\ matches ' .. vim.fn.fnameescape(dir), '0 passed, 0 failed')
    H.eq({}, vim.fn.getqflist(), 'quickfix entries')
    -- No path, a buffer that is no PromptForge document: the current directory.
    local back = vim.fn.getcwd()
    vim.cmd.cd(vim.fn.fnameescape(dir))
    local ok, err = pcall(run_until, 'PromptForgeTest', '1 passed, 1 failed')
    vim.cmd.cd(vim.fn.fnameescape(back))
    assert(ok, err)
    local item = vim.fn.getqflist()[1]
    H.eq(tests_path, vim.fs.normalize(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(item.bufnr), ':p')), 'entry file')
    -- A path that does not exist: the binary's own message.
    local nope = dir .. '/nope.test.yaml'
    local note = run_until('PromptForgeTest ' .. vim.fn.fnameescape(nope), 'promptforge: ' .. nope)
    H.eq('promptforge: ' .. nope .. ': no such file or folder', note.msg, 'message')
    H.eq(vim.log.levels.ERROR, note.level, 'level')
  end },

  { 'a test file that is not open gets its diagnostics, shown when it opens', function()
    local other = H.scratch({ ['p.md'] = PROMPT, ['p.test.yaml'] = TESTS })
    local path = vim.fs.normalize(other .. '/p.test.yaml')
    H.eq(-1, vim.fn.bufnr(path), 'a buffer of the test file before the run')
    run_until('PromptForgeTest ' .. vim.fn.fnameescape(other), '1 passed, 1 failed')
    local buf = vim.fn.bufnr(path)
    assert(buf ~= -1 and not vim.api.nvim_buf_is_loaded(buf), 'the test file was loaded')
    H.eq(1, #test_diagnostics(buf), 'diagnostics of the unloaded test file')
    vim.cmd.edit(vim.fn.fnameescape(path))
    H.eq(buf, vim.api.nvim_get_current_buf(), 'the buffer opened')
    local diags = test_diagnostics(buf)
    H.eq({ 1, 7, 44 }, { #diags, diags[1].lnum, diags[1].col }, 'diagnostics once open')
  end },

  { "a test file's own problem is an entry and a diagnostic too", function()
    local broken = H.scratch({ ['b.test.yaml'] = 'prompt: missing.md\ncases:\n  - name: never runs\n    args: x\n' })
    run_until('PromptForgeTest ' .. vim.fn.fnameescape(broken), '0 passed, 1 failed')
    local items = vim.fn.getqflist()
    H.eq(1, #items, 'entries')
    -- The binary names the prompt by its path as the run saw it (here absolute).
    H.eq({ 1, 9, 'E', ('TestFile: the prompt %s/missing.md cannot be read: no such file'):format(broken) },
      { items[1].lnum, items[1].col, items[1].type, items[1].text }, 'the entry')
    local diags = test_diagnostics(items[1].bufnr)
    H.eq({ 1, 0, 8, 'TestFile' }, { #diags, diags[1].lnum, diags[1].col, diags[1].code }, 'the diagnostic')
  end },

  { '--trust when vim.secure trusts the promptforge.toml; else the binary refuses what needs trust', function()
    -- A raised limit is one of the keys only a trusted configuration may set.
    local raised = '[limits]\nlua_instructions = 100000000000\n'
    local allowed = H.scratch({ ['p.md'] = PROMPT, ['p.test.yaml'] = TESTS, ['promptforge.toml'] = raised })
    run_until('PromptForgeTest ' .. vim.fn.fnameescape(allowed), '1 passed, 1 failed')
    local denied = H.scratch({ ['p.md'] = PROMPT, ['p.test.yaml'] = TESTS, ['promptforge.toml'] = raised },
      { trust = false })
    H.trust(denied .. '/promptforge.toml', 'deny')
    local note = run_until('PromptForgeTest ' .. vim.fn.fnameescape(denied), 'is not trusted')
    H.eq(vim.log.levels.ERROR, note.level, 'level')
    assert(note.msg:find('lua_instructions', 1, true), note.msg)
  end },

  { 'the promptforge.toml files a run reads: upward, and below a folder (not hidden ones)', function()
    local root = H.scratch({ ['a.md'] = H.prompt("return 'a'") })
    for _, sub in ipairs({ 'sub', '.hidden', 'node_modules' }) do
      vim.fn.mkdir(root .. '/' .. sub, 'p')
      vim.fn.writefile({ '# nested' }, root .. '/' .. sub .. '/promptforge.toml')
    end
    local found = pftest.config_files({ '.' }, root)
    table.sort(found)
    H.eq({ vim.fs.normalize(root .. '/promptforge.toml'), vim.fs.normalize(root .. '/sub/promptforge.toml') }, found,
      'configuration files')
    H.eq({ vim.fs.normalize(root .. '/promptforge.toml') }, pftest.config_files({ root .. '/a.md' }, '/'), 'of a file')
  end },

  { 'output that is no report, and a missing binary, are said plainly', function()
    local fake = vim.fn.tempname()
    vim.fn.writefile({ '#!/bin/sh', 'echo "this is not JSON"', 'echo "something broke" >&2', 'exit 3' }, fake)
    vim.fn.setfperm(fake, 'rwx------')
    local saved = config.options.cmd
    config.options.cmd = { fake, 'lsp' }
    local ok, err = pcall(function()
      local note = run_until('PromptForgeTest ' .. vim.fn.fnameescape(tests_path), 'gave no report')
      H.eq(vim.log.levels.ERROR, note.level, 'level')
      H.eq('PromptForge: `promptforge test` gave no report (its output is not JSON): something broke', note.msg, 'message')
      config.options.cmd = { dir .. '/no-such-binary', 'lsp' }
      note = run_until('PromptForgeTest ' .. vim.fn.fnameescape(tests_path), 'cannot run')
      H.eq(vim.log.levels.ERROR, note.level, 'level')
      assert(note.msg:find(dir .. '/no-such-binary', 1, true), note.msg)
      assert(not pftest.running(), 'a run is said to go on')
    end)
    config.options.cmd = saved
    assert(ok, err)
  end },
})
