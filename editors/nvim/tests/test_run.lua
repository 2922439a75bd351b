-- Running from the editor: :PromptForgeRun into the output split, progress,
-- code lenses (with `Run with arguments…`, `Run tests`), :PromptForgeStop
-- (:PromptForgeTest is test_test.lua's).
-- The server must stay up throughout (quick runs once crashed it).
local H = require('helpers')

-- $/progress reaches Neovim's progress machinery (LspProgress, vim.lsp.status()).
local progress = {}
vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(args)
    table.insert(progress, args.data.params.value)
  end,
})

local run_lens = H.run_lens

H.setup()
local stats = H.repo .. '/examples/word-stats.md'

-- The server still answers after a quick run (its progress-create request may
-- be answered after the run ended: the server takes such late answers).
local function server_alive(buf)
  local answers = vim.lsp.buf_request_sync(buf, 'textDocument/codeLens', { textDocument = { uri = vim.uri_from_bufnr(buf) } }, 5000)
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'promptforge' })[1]
  assert(client and answers and answers[client.id] and answers[client.id].result, 'the server is gone (see lsp.log)')
end

H.run('run', {
  { ':PromptForgeRun streams the run into a split and ends with the result', function()
    local buf = H.open(stats)
    vim.cmd('PromptForgeRun The quick brown fox')
    local text = H.wait_output(buf, 'Result:\n4 words, 16 letters, 4.0 letters per word')
    assert(text:find('§ Measure', 1, true) and text:find('  measured 4 words', 1, true), text)
    assert(text:find('^Running examples/word%-stats%.md with "The quick brown fox"'), text)
    assert(vim.fn.bufwinid(H.output(buf)) ~= -1, 'the output is shown in a window')
    H.eq(buf, vim.api.nvim_get_current_buf(), 'the prompt keeps the focus')
    server_alive(buf)
    -- A progress that began also ended.
    local begun = #vim.tbl_filter(function(v) return v.kind == 'begin' end, progress)
    H.wait('every begun progress ended', function()
      return #vim.tbl_filter(function(v) return v.kind == 'end' end, progress) == begun
    end)
  end },

  { 'code lenses appear; `Run with arguments…` asks with vim.ui.input', function()
    local buf = vim.fn.bufnr(stats)
    local row = H.line_of(buf, '^# Word stats')
    H.wait('Run, Debug, Run with arguments…, Run tests', function()
      local titles = vim.tbl_map(function(l) return l.command.title end, vim.lsp.codelens.get(buf))
      return vim.deep_equal(titles, { 'Run', 'Debug', 'Run with arguments…', 'Run tests' })
    end)
    local input = vim.ui.input
    vim.ui.input = function(_, on_confirm) on_confirm('Hello HELLO') end
    run_lens(buf, row, 'Run with arguments…')
    vim.ui.input = input
    H.wait_output(buf, 'Result:\n2 words, 10 letters, 5.0 letters per word')
    -- The same output buffer, reused: one per prompt.
    H.eq(1, #vim.tbl_filter(function(b) return vim.api.nvim_buf_get_name(b):find('word%-stats%.md%.output$') end,
      vim.api.nvim_list_bufs()), 'output buffers of word-stats.md')
  end },

  { 'the prompt\'s `Run tests` lens runs its cases into the output split', function()
    local buf = vim.fn.bufnr(stats)
    vim.api.nvim_set_current_buf(buf)
    run_lens(buf, H.line_of(buf, '^# Word stats'), 'Run tests')
    local text = H.wait_output(buf, 'Result:\n5 passed, 0 failed')
    assert(text:find('PASS counts four words', 1, true), text)
  end },

  { 'a test file has `Run all tests` and `Run test` lenses that run', function()
    local buf = H.open(H.repo .. '/examples/word-stats.test.yaml')
    run_lens(buf, 0, 'Run all tests')
    H.wait_output(buf, 'Result:\n5 passed, 0 failed')
    local row = H.line_of(buf, '^  %- name: counts four words')
    run_lens(buf, row, 'Run test')
    local text = H.wait_output(buf, 'Result:\n1 passed, 0 failed')
    assert(text:find('case "counts four words"', 1, true), text)
    server_alive(buf)
  end },

  { ':PromptForgeStop cancels a run that never ends', function()
    local dir = H.scratch({
      ['spin.md'] = H.prompt("log('spinning')\nwhile true do end"),
      ['promptforge.toml'] = '[limits]\nlua_instructions = 100000000000\n',
    })
    local buf = H.open(dir .. '/spin.md')
    vim.cmd('PromptForgeRun')
    H.wait_output(buf, '  spinning')
    -- A run that goes on shows its work-done progress.
    H.wait('progress of the section', function()
      local begin = vim.tbl_filter(function(v) return v.kind == 'begin' and v.title == 'Running p' end, progress)
      local last = progress[#progress]
      return #begin == 1 and (last.message or ''):find('section: Go', 1, true)
    end)
    -- ... echoed by the plugin.
    H.wait('the progress in the echo area', function()
      return require('promptforge').progress_message:find('PromptForge: Running p: section: Go', 1, true)
    end)
    vim.cmd('PromptForgeStop')
    H.wait_output(buf, 'Failed: Cancelled')
    H.wait('the end of the progress', function() return progress[#progress].kind == 'end' end)
  end },
})
